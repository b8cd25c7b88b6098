package faults

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
)

// Match selects the POSTs a scenario looks at. Only POSTs are matched: GET
// and DELETE always pass through. The zero Match selects every POST,
// including bodies that are not JSON-RPC.
type Match struct {
	// Method is a JSON-RPC method or a glob (path.Match syntax, such as
	// "tools/*"); several alternatives are separated by "|". Empty matches
	// any method.
	Method string `json:"method,omitempty"`
	// Tool is a tool (or prompt) name or glob, matched against params.name
	// of tools/call and prompts/get. Empty matches any; when set, requests
	// without a name do not match.
	Tool string `json:"tool,omitempty"`
	// Protocol restricts the match to one era: "2026-07-28" or
	// "2025-11-25". Empty matches both.
	Protocol string `json:"protocol,omitempty"`
}

// UnmarshalJSON replaces the whole Match: fields absent from the JSON are
// empty, not left at the scenario's defaults, so {} matches every POST.
func (m *Match) UnmarshalJSON(b []byte) error {
	type plain Match
	var p plain
	if err := strictUnmarshal(b, &p); err != nil {
		return fmt.Errorf("match: %w", err)
	}
	*m = Match(p)
	return nil
}

func (m Match) validate() error {
	for _, alt := range strings.Split(m.Method, "|") {
		if _, err := path.Match(alt, ""); err != nil {
			return fmt.Errorf("param match.method: bad glob %q: %v", alt, err)
		}
	}
	if _, err := path.Match(m.Tool, ""); err != nil {
		return fmt.Errorf("param match.tool: bad glob %q: %v", m.Tool, err)
	}
	switch m.Protocol {
	case "", Protocol2026, Protocol2025:
	default:
		return fmt.Errorf("param match.protocol: %q: want %q, %q or empty", m.Protocol, Protocol2026, Protocol2025)
	}
	return nil
}

// matches reports whether req is selected, and if not, why.
func (m Match) matches(req *Request) (bool, string) {
	if m.Method != "" && !globAny(m.Method, req.Method) {
		return false, fmt.Sprintf("method %q does not match %q", req.Method, m.Method)
	}
	if m.Tool != "" {
		if req.Name == "" || (req.Method != "tools/call" && req.Method != "prompts/get") {
			return false, fmt.Sprintf("not a call of a tool matching %q", m.Tool)
		}
		if ok, _ := path.Match(m.Tool, req.Name); !ok {
			return false, fmt.Sprintf("tool %q does not match %q", req.Name, m.Tool)
		}
	}
	if m.Protocol != "" && req.Protocol != m.Protocol {
		return false, fmt.Sprintf("protocol %q is not %s", req.Protocol, m.Protocol)
	}
	return true, ""
}

// globAny reports whether s matches one of the "|"-separated globs.
func globAny(globs, s string) bool {
	for _, g := range strings.Split(globs, "|") {
		if ok, _ := path.Match(g, s); ok {
			return true
		}
	}
	return false
}

// Schedule selects, among the POSTs a scenario matches, those it fires on.
// n is the 1-based number of the matching POST at this scenario. Every
// condition that is set must hold; the zero Schedule fires on every match.
type Schedule struct {
	// Nth fires only on matching POST number Nth.
	Nth int `json:"nth,omitempty"`
	// Every fires on every Every-th matching POST (n % Every == 0).
	Every int `json:"every,omitempty"`
	// First fires on the first First matching POSTs.
	First int `json:"first,omitempty"`
	// From and To fire on the window From ≤ n ≤ To (To 0: no end).
	From int `json:"from,omitempty"`
	To   int `json:"to,omitempty"`
	// P fires with probability P (0..1), drawn for every matching POST from
	// a generator seeded with Seed (the endpoint's seed when absent).
	P    *float64 `json:"p,omitempty"`
	Seed *uint64  `json:"seed,omitempty"`
}

// UnmarshalJSON replaces the whole Schedule: {} fires on every match.
func (s *Schedule) UnmarshalJSON(b []byte) error {
	type plain Schedule
	var p plain
	if err := strictUnmarshal(b, &p); err != nil {
		return fmt.Errorf("schedule: %w", err)
	}
	*s = Schedule(p)
	return nil
}

func (s Schedule) validate() error {
	for _, f := range []struct {
		name string
		v    int
	}{{"nth", s.Nth}, {"every", s.Every}, {"first", s.First}, {"from", s.From}, {"to", s.To}} {
		if f.v < 0 {
			return fmt.Errorf("param schedule.%s: %d: must be 0 (unset) or positive", f.name, f.v)
		}
	}
	if s.To > 0 && s.From > s.To {
		return fmt.Errorf("param schedule.to: %d is before schedule.from %d", s.To, s.From)
	}
	if s.P != nil && (*s.P < 0 || *s.P > 1) {
		return fmt.Errorf("param schedule.p: %v: must be between 0 and 1", *s.P)
	}
	if s.Seed != nil && s.P == nil {
		return fmt.Errorf("param schedule.seed: only meaningful with schedule.p")
	}
	return nil
}

// fires decides matching POST n. draw is the random draw for n (nil when P
// is unset). why says which condition decided.
func (s Schedule) fires(n int, draw *float64) (bool, string) {
	var conds []string
	fail := func(c string) (bool, string) { return false, fmt.Sprintf("n=%d: %s", n, c) }
	if s.Nth > 0 {
		if n != s.Nth {
			return fail(fmt.Sprintf("not nth=%d", s.Nth))
		}
		conds = append(conds, fmt.Sprintf("nth=%d", s.Nth))
	}
	if s.Every > 0 {
		if n%s.Every != 0 {
			return fail(fmt.Sprintf("not a multiple of every=%d", s.Every))
		}
		conds = append(conds, fmt.Sprintf("every=%d", s.Every))
	}
	if s.First > 0 {
		if n > s.First {
			return fail(fmt.Sprintf("past first=%d", s.First))
		}
		conds = append(conds, fmt.Sprintf("first=%d", s.First))
	}
	if s.From > 0 && n < s.From {
		return fail(fmt.Sprintf("before from=%d", s.From))
	}
	if s.To > 0 && n > s.To {
		return fail(fmt.Sprintf("after to=%d", s.To))
	}
	if s.From > 0 || s.To > 0 {
		conds = append(conds, fmt.Sprintf("window %d..%s", max(s.From, 1), endText(s.To)))
	}
	if s.P != nil && draw != nil {
		if *draw >= *s.P {
			return fail(fmt.Sprintf("draw %.6f ≥ p=%v", *draw, *s.P))
		}
		conds = append(conds, fmt.Sprintf("draw %.6f < p=%v", *draw, *s.P))
	}
	if len(conds) == 0 {
		return true, fmt.Sprintf("n=%d: always", n)
	}
	return true, fmt.Sprintf("n=%d: %s", n, strings.Join(conds, ", "))
}

func endText(to int) string {
	if to == 0 {
		return "∞"
	}
	return fmt.Sprint(to)
}

// strictUnmarshal decodes b into v, rejecting unknown fields with an error
// that names the param.
func strictUnmarshal(b []byte, v any) error {
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return paramError(err)
	}
	if dec.More() {
		return fmt.Errorf("params: trailing data after the JSON object")
	}
	return nil
}

// paramError rewrites encoding/json's errors so that they name the param.
func paramError(err error) error {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	msg := err.Error()
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &se):
		return fmt.Errorf("params: not JSON: %w", err)
	case strings.HasPrefix(msg, "json: unknown field "):
		return fmt.Errorf("unknown param %s", strings.TrimPrefix(msg, "json: unknown field "))
	case errors.As(err, &te):
		field := te.Field
		if field == "" {
			return fmt.Errorf("params: want a JSON object, got %s", te.Value)
		}
		return fmt.Errorf("param %s: got %s, want %s", field, te.Value, jsonKind(te.Type.String()))
	}
	return err
}

func jsonKind(goType string) string {
	switch {
	case strings.HasPrefix(goType, "[]"):
		return "an array"
	case strings.HasPrefix(goType, "map["):
		return "an object"
	case strings.Contains(goType, "int") || strings.Contains(goType, "float"):
		return "a number"
	case goType == "string":
		return "a string"
	case goType == "bool":
		return "true or false"
	}
	return goType
}
