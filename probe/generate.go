package probe

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpdiag/mcpdiag/client"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/wire"
)

// Kind names a probe: what it breaks. The argument kinds make arguments
// that break a tool's inputSchema in one place; the envelope kinds break
// the request around them.
type Kind string

// The argument kinds, one schema keyword each.
const (
	RequiredMissing    Kind = "required-missing"
	WrongType          Kind = "wrong-type"
	OutsideEnum        Kind = "outside-enum"
	BelowMinimum       Kind = "below-minimum"
	AboveMaximum       Kind = "above-maximum"
	TooLong            Kind = "too-long"
	TooShort           Kind = "too-short"
	PatternMismatch    Kind = "pattern-mismatch"
	ExtraProperty      Kind = "extra-property"
	NullValue          Kind = "null-value"
	EmptyArguments     Kind = "empty-arguments"
	ArgumentsNotObject Kind = "arguments-not-object"
)

// The envelope kinds: they name no listed tool (or send no tools/call).
const (
	UnknownTool  Kind = "unknown-tool"
	MissingName  Kind = "missing-name"
	IDString     Kind = "id-string"
	IDNumber     Kind = "id-number"
	Notification Kind = "notification"
	// ForeignOrigin sends tools/list with an Origin no server allows;
	// BadProtocolVersion with an MCP-Protocol-Version no revision has;
	// NoProtocolVersion without the MCP-Protocol-Version header (the
	// era's body, session and other headers unchanged); AcceptJSONOnly
	// with an Accept that lists application/json but not
	// text/event-stream.
	ForeignOrigin      Kind = "foreign-origin"
	BadProtocolVersion Kind = "bad-protocol-version"
	NoProtocolVersion  Kind = "no-protocol-version"
	AcceptJSONOnly     Kind = "accept-json-only"
)

// IsArgument reports a kind that sends a listed tool arguments that break
// its inputSchema: the answer must be an error, and the request reaches
// the tool's handler (ArgumentsNotObject breaks the CallToolRequest schema
// instead, but reaches the tool as well).
func (k Kind) IsArgument() bool {
	switch k {
	case RequiredMissing, WrongType, OutsideEnum, BelowMinimum, AboveMaximum, TooLong, TooShort,
		PatternMismatch, ExtraProperty, NullValue, EmptyArguments:
		return true
	}
	return false
}

// Probe is one request the probe run sends on purpose.
type Probe struct {
	// Index is the probe's place in the run (from 0): with the seed, it
	// makes the same probe again.
	Index int
	Kind  Kind
	// Tool is the listed tool called ("" for an envelope probe that calls
	// none; UnknownTool's name is in Name).
	Tool string
	// Property is the inputSchema property broken ("" for none).
	Property string
	// Detail says what was broken, in a few words.
	Detail string
	// Method, ID, Notification, Name and Params are the request.
	Method       string
	ID           wire.ID
	Notification bool
	Name         string
	Params       map[string]json.RawMessage
	// Header replaces the era's request headers of the same name.
	Header http.Header
}

// Request returns the probe as the client sends it in the run of this
// seed.
func (p Probe) Request(seed uint64) client.Request {
	// The probe's own headers, and record.ProbeHeader naming its kind,
	// the run's seed and its index: mcpdiag proxy then records it as the
	// same probe, from which it can be made again.
	h := make(http.Header, len(p.Header)+1)
	for k, v := range p.Header {
		h[k] = v
	}
	h[record.ProbeHeader] = []string{record.ProbeHeaderValue(string(p.Kind), seed, p.Index)}
	return client.Request{Method: p.Method, ID: p.ID, Notification: p.Notification, Name: p.Name, Params: p.Params, Header: h}
}

// rng returns the random source of one probe: a function of the seed, the
// tool and the probe's place among the tool's candidates only.
func rng(seed uint64, tool string, i int) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(tool))
	return rand.New(rand.NewPCG(seed, h.Sum64()^uint64(i)*0x9e3779b97f4a7c15))
}

// schema is the part of a JSON Schema the generator reads.
type schema struct {
	Type                 json.RawMessage
	Properties           map[string]json.RawMessage
	Required             []string
	AdditionalProperties json.RawMessage
	PatternProperties    json.RawMessage
	Enum                 []json.RawMessage
	Minimum              *json.Number
	Maximum              *json.Number
	ExclusiveMinimum     json.RawMessage
	ExclusiveMaximum     json.RawMessage
	MaxLength            *int
	MinLength            *int
	Pattern              *string
	composedBy           bool
}

// readSchema reads the keywords it knows, by their exact names (JSON
// Schema keywords are case-sensitive; encoding/json's struct fields are
// not). A keyword of the wrong JSON type makes the schema unreadable.
func readSchema(raw json.RawMessage) (*schema, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil || m == nil {
		return nil, false
	}
	var s schema
	ok := true
	get := func(k string, v any) {
		b, has := m[k]
		if !has {
			return
		}
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		if d.Decode(v) != nil {
			ok = false
		}
	}
	s.Type, s.AdditionalProperties, s.PatternProperties = m["type"], m["additionalProperties"], m["patternProperties"]
	s.ExclusiveMinimum, s.ExclusiveMaximum = m["exclusiveMinimum"], m["exclusiveMaximum"]
	get("properties", &s.Properties)
	get("required", &s.Required)
	get("enum", &s.Enum)
	get("minimum", &s.Minimum)
	get("maximum", &s.Maximum)
	get("maxLength", &s.MaxLength)
	get("minLength", &s.MinLength)
	get("pattern", &s.Pattern)
	for _, k := range []string{"anyOf", "oneOf", "allOf", "$ref", "$dynamicRef", "if", "not"} {
		if _, has := m[k]; has {
			s.composedBy = true
		}
	}
	return &s, ok
}

// types returns the declared types (nil when none is declared, or when
// one is not a JSON Schema type name).
func (s *schema) types() []string {
	var many []string
	var one string
	switch {
	case json.Unmarshal(s.Type, &one) == nil:
		many = []string{one}
	case json.Unmarshal(s.Type, &many) == nil:
	default:
		return nil
	}
	for _, t := range many {
		switch t {
		case "string", "integer", "number", "boolean", "object", "array", "null":
		default:
			return nil
		}
	}
	return many
}

// composed reports a schema whose valid values depend on more than its own
// keywords (anyOf, oneOf, allOf, $ref, if, not): the generator does not
// break it, since a value it thinks invalid may be valid.
func (s *schema) composed() bool { return s.composedBy }

// candidates lists the argument probes of one tool, in a stable order:
// for each property (sorted by name) the keywords it has, then the
// object-level ones.
func candidates(t client.Tool, seed uint64) []Probe {
	s, ok := readSchema(t.InputSchema)
	if !ok || s.composed() {
		return nil
	}
	base := map[string]json.RawMessage{}
	if ex := client.ExampleArguments(t.InputSchema); ex != nil {
		_ = json.Unmarshal(ex, &base)
	}
	var out []Probe
	add := func(k Kind, prop, detail string, args map[string]json.RawMessage) {
		b, _ := json.Marshal(args)
		name, _ := json.Marshal(t.Name)
		out = append(out, Probe{Kind: k, Tool: t.Name, Property: prop, Detail: detail, Method: "tools/call", Name: t.Name,
			Params: map[string]json.RawMessage{"name": name, "arguments": b}})
	}
	with := func(prop string, v json.RawMessage) map[string]json.RawMessage {
		m := make(map[string]json.RawMessage, len(base)+1)
		for k, x := range base {
			m[k] = x
		}
		if v == nil {
			delete(m, prop)
		} else {
			m[prop] = v
		}
		return m
	}
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		ps, ok := readSchema(s.Properties[n])
		if !ok || ps.composed() {
			continue
		}
		r := rng(seed, t.Name+"\x00"+n, len(out))
		required := slices.Contains(s.Required, n)
		if required {
			add(RequiredMissing, n, "required property "+n+" left out", with(n, nil))
		}
		types := ps.types()
		if len(types) > 0 {
			if v, what, ok := wrongType(types, r); ok {
				add(WrongType, n, fmt.Sprintf("%s is %s, schema type %s", n, what, strings.Join(types, "|")), with(n, v))
			}
			if required && !slices.Contains(types, "null") {
				add(NullValue, n, n+" is null", with(n, json.RawMessage("null")))
			}
		}
		if len(ps.Enum) > 0 {
			v := outsideEnum(ps.Enum, r)
			add(OutsideEnum, n, fmt.Sprintf("%s is %s, not one of the %d enum values", n, v, len(ps.Enum)), with(n, v))
		}
		numeric := slices.Contains(types, "integer") || slices.Contains(types, "number")
		if numeric {
			if v, d, ok := belowMinimum(ps, r); ok {
				add(BelowMinimum, n, n+" is "+string(v)+", "+d, with(n, v))
			}
			if v, d, ok := aboveMaximum(ps, r); ok {
				add(AboveMaximum, n, n+" is "+string(v)+", "+d, with(n, v))
			}
		}
		if slices.Contains(types, "string") {
			if ps.MaxLength != nil && *ps.MaxLength >= 0 && *ps.MaxLength < 4096 {
				v, _ := json.Marshal(strings.Repeat("x", *ps.MaxLength+1+r.IntN(3)))
				add(TooLong, n, fmt.Sprintf("%s is %d characters, maxLength %d", n, len(v)-2, *ps.MaxLength), with(n, v))
			}
			if ps.MinLength != nil && *ps.MinLength > 0 {
				v, _ := json.Marshal(strings.Repeat("x", *ps.MinLength-1))
				add(TooShort, n, fmt.Sprintf("%s is %d characters, minLength %d", n, *ps.MinLength-1, *ps.MinLength), with(n, v))
			}
			if ps.Pattern != nil {
				if v, ok := notMatching(*ps.Pattern, r); ok {
					add(PatternMismatch, n, fmt.Sprintf("%s is %s, pattern %s", n, v, *ps.Pattern), with(n, v))
				}
			}
		}
	}
	// With patternProperties an extra name might match one of them.
	if bytes.Equal(bytes.TrimSpace(s.AdditionalProperties), []byte("false")) && len(s.PatternProperties) == 0 {
		extra := "mcpdiag_extra"
		for s.Properties[extra] != nil {
			extra += "_"
		}
		add(ExtraProperty, extra, "property "+extra+" not in the schema, additionalProperties false", with(extra, json.RawMessage(`1`)))
	}
	if len(s.Required) > 0 {
		add(EmptyArguments, "", fmt.Sprintf("arguments {} without the %d required properties", len(s.Required)), map[string]json.RawMessage{})
	}
	name, _ := json.Marshal(t.Name)
	notObject := []string{`"mcpdiag"`, `[]`, `7`}[rng(seed, t.Name, -1).IntN(3)]
	out = append(out, Probe{Kind: ArgumentsNotObject, Tool: t.Name, Detail: "arguments is " + notObject + ", not an object", Method: "tools/call", Name: t.Name,
		Params: map[string]json.RawMessage{"name": name, "arguments": json.RawMessage(notObject)}})
	return out
}

// wrongType picks a value of a JSON type the schema's types do not allow.
func wrongType(types []string, r *rand.Rand) (json.RawMessage, string, bool) {
	all := []struct {
		typ, what string
		v         string
	}{
		{"string", "a string", `"mcpdiag"`},
		{"integer", "an integer", `7`},
		{"number", "a fraction", `7.5`},
		{"boolean", "a boolean", `true`},
		{"object", "an object", `{"mcpdiag":1}`},
		{"array", "an array", `["mcpdiag"]`},
	}
	var ok []int
	for i, c := range all {
		allowed := slices.Contains(types, c.typ) ||
			c.typ == "integer" && slices.Contains(types, "number")
		if !allowed {
			ok = append(ok, i)
		}
	}
	if len(ok) == 0 {
		return nil, "", false
	}
	c := all[ok[r.IntN(len(ok))]]
	return json.RawMessage(c.v), c.what, true
}

func outsideEnum(enum []json.RawMessage, r *rand.Rand) json.RawMessage {
	for n := r.IntN(1000); ; n++ {
		v, _ := json.Marshal("mcpdiag-" + strconv.Itoa(n))
		if !slices.ContainsFunc(enum, func(e json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(e), v) }) {
			return v
		}
	}
}

func num(raw json.RawMessage) (float64, bool) {
	var n json.Number
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if len(raw) == 0 || d.Decode(&n) != nil {
		return 0, false
	}
	f, err := n.Float64()
	return f, err == nil
}

func formatNum(f float64) json.RawMessage {
	return json.RawMessage(strconv.FormatFloat(f, 'f', -1, 64))
}

func belowMinimum(s *schema, r *rand.Rand) (json.RawMessage, string, bool) {
	step := float64(1 + r.IntN(5))
	if s.Minimum != nil {
		// A bound so large that the step is lost in float64 gets no probe.
		if m, err := s.Minimum.Float64(); err == nil && m-step < m {
			return formatNum(m - step), "minimum " + s.Minimum.String(), true
		}
	}
	if m, ok := num(s.ExclusiveMinimum); ok {
		return formatNum(m - step + 1), "exclusiveMinimum " + string(s.ExclusiveMinimum), true
	}
	return nil, "", false
}

func aboveMaximum(s *schema, r *rand.Rand) (json.RawMessage, string, bool) {
	step := float64(1 + r.IntN(5))
	if s.Maximum != nil {
		if m, err := s.Maximum.Float64(); err == nil && m+step > m {
			return formatNum(m + step), "maximum " + s.Maximum.String(), true
		}
	}
	if m, ok := num(s.ExclusiveMaximum); ok {
		return formatNum(m + step - 1), "exclusiveMaximum " + string(s.ExclusiveMaximum), true
	}
	return nil, "", false
}

// notMatching returns a string the pattern does not match, when Go's
// regexp reads the pattern (ECMA-262 syntax it does not know skips the
// probe: a value it thinks invalid might be valid).
func notMatching(pattern string, r *rand.Rand) (json.RawMessage, bool) {
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, false
	}
	cands := []string{"", " ", "!", "mcpdiag probe ✗", "0", "\t\n", "ZZZ-999"}
	start := r.IntN(len(cands))
	for i := range cands {
		c := cands[(start+i)%len(cands)]
		if !re.MatchString(c) {
			v, _ := json.Marshal(c)
			return v, true
		}
	}
	return nil, false
}
