package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mcpdiag/mcpdiag/faults"
)

// Config is the file `mcpdiag serve --config FILE` reads: the scenarios of
// the main endpoint and the seed, as one JSON object,
//
//	{"scenario": "a+b" or [{"id": …, "params": {…}}, …], "params": …, "seed": N}
//
// "params" go with a "scenario" string, as the --params flag does (an
// object, an array in order, or an object keyed by id for a+b); a scenario
// list carries its own params. Every member may be left out.
type Config struct {
	// Scenario is the spec string or the list, as written.
	Scenario json.RawMessage `json:"scenario,omitempty"`
	// Params are the params of a spec string.
	Params json.RawMessage `json:"params,omitempty"`
	// Seed seeds every endpoint (0: not set).
	Seed uint64 `json:"seed,omitempty"`
}

// ReadConfig reads and parses the config file at path; the error names the
// file and the problem.
func ReadConfig(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err // an *fs.PathError names the file
	}
	c, err := ParseConfig(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// ParseConfig parses a config file's contents. It refuses, each in one
// error that names the problem (with the line and column of a syntax
// error): anything but one JSON object, an unknown member, a member of the
// wrong type, a scenario that is neither a string nor a list, and params
// beside a scenario list. The scenarios themselves are checked by
// Selection.
func ParseConfig(b []byte) (*Config, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, errors.New("empty: want a JSON object such as {\"scenario\":\"errors.tool_error\"}")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var c Config
	if err := dec.Decode(&c); err != nil {
		return nil, configError(b, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%s: more after the JSON object", position(b, dec.InputOffset()))
	}
	if len(c.Scenario) > 0 {
		switch c.Scenario[0] {
		case '"':
		case '[':
			if len(c.Params) > 0 {
				return nil, errors.New("a scenario list carries its own params: move \"params\" into the list's entries")
			}
		default:
			return nil, fmt.Errorf("scenario: want \"a+b\" or a list of {\"id\":…,\"params\":{…}}, got %s", abbreviate(c.Scenario))
		}
	}
	return &c, nil
}

// Selection returns the scenarios of the main endpoint (Options.Selection)
// from a command line's scenario spec and params (flags; "" and nil for
// none) and the config c (nil for none): a scenario named in both is an
// error, params given on the command line take the place of the config's,
// and a scenario list takes no params. Every scenario is validated
// (faults.Select); the error names the scenario and the param.
func (c *Config) Selection(spec string, params json.RawMessage) (faults.Selection, error) {
	if c != nil && len(c.Scenario) > 0 {
		if spec != "" {
			return nil, errors.New("the command line and the config both name scenarios; give one")
		}
		if c.Scenario[0] == '[' {
			if len(params) > 0 {
				return nil, errors.New("a scenario list carries its own params; give no params with it")
			}
			var sel faults.Selection
			if err := json.Unmarshal(c.Scenario, &sel); err != nil {
				return nil, fmt.Errorf("config: %w", err)
			}
			return sel, nil
		}
		if err := json.Unmarshal(c.Scenario, &spec); err != nil {
			return nil, fmt.Errorf("config: scenario: %w", err)
		}
	}
	if c != nil && len(params) == 0 {
		params = c.Params
	}
	return faults.Select(spec, params)
}

// SeedOr returns seed when the command line set it, otherwise the config's
// seed (0: none, a random one).
func (c *Config) SeedOr(seed uint64, set bool) uint64 {
	if set || c == nil || c.Seed == 0 {
		return seed
	}
	return c.Seed
}

// configError turns a decoding error into one line naming the problem.
func configError(b []byte, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Errorf("%s: not JSON: %s", position(b, syn.Offset), strings.TrimPrefix(syn.Error(), "json: "))
	case errors.As(err, &typ):
		if typ.Field == "" {
			return fmt.Errorf("want a JSON object, got %s", typ.Value)
		}
		return fmt.Errorf("%s: want %s, got %s", typ.Field, kindOf(typ.Type.Kind().String()), typ.Value)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("the JSON object is not closed")
	}
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return fmt.Errorf("unknown field %s (want scenario, params or seed)", name)
	}
	return err
}

// kindOf names a Go kind the way a config author knows it.
func kindOf(k string) string {
	switch {
	case strings.HasPrefix(k, "uint"):
		return "a non-negative integer"
	case strings.HasPrefix(k, "int"), strings.HasPrefix(k, "float"):
		return "a number"
	}
	return k
}

// position is "line L, column C" of byte offset off in b (1-based).
func position(b []byte, off int64) string {
	off = min(max(off, 0), int64(len(b)))
	head := b[:off]
	line := bytes.Count(head, []byte("\n")) + 1
	col := int(off) - (bytes.LastIndexByte(head, '\n') + 1)
	if col == 0 {
		col = 1
	}
	return fmt.Sprintf("line %d, column %d", line, col)
}

// abbreviate shows a JSON value in an error, cut to 40 bytes.
func abbreviate(v []byte) string {
	if len(v) > 40 {
		return string(v[:40]) + "…"
	}
	return string(v)
}

// WithAuthServer puts the main endpoint behind the server's own OAuth 2.1
// authorization server (`mcpdiag serve --auth`): the auth.oauth scenario,
// outermost, then sel. A selection that already puts the endpoint behind
// an authorization server (a faults.AuthServerScenario) is refused, naming
// the scenario: two would answer each other's challenges.
func WithAuthServer(sel faults.Selection) (faults.Selection, error) {
	for _, c := range sel {
		if _, ok := c.Scenario.(faults.AuthServerScenario); ok {
			return nil, fmt.Errorf("the scenario %s already puts /mcp behind an authorization server", c.ID)
		}
	}
	oauth, err := faults.Select("auth.oauth", nil)
	if err != nil {
		return nil, err
	}
	return append(oauth, sel...), nil
}
