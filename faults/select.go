package faults

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"reflect"
	"sort"
	"strings"

	"github.com/mcpdiag/mcpdiag/wire"
)

// ErrUnknownScenario is returned for an id that is not in the catalogue.
var ErrUnknownScenario = errors.New("unknown scenario")

// Configured is one scenario of a Selection, with its params.
type Configured struct {
	ID       string
	Scenario Scenario
}

// Selection is a chain of scenarios, outermost first: "a+b" applies a to
// every request, and b to what a passes on. The empty Selection injects no
// fault.
type Selection []Configured

// String returns the selection as "a+b" ("" when empty).
func (s Selection) String() string {
	ids := make([]string, len(s))
	for i, c := range s {
		ids[i] = c.ID
	}
	return strings.Join(ids, "+")
}

// MarshalJSON writes the selection as [{"id":…,"params":{…}}, …].
func (s Selection) MarshalJSON() ([]byte, error) {
	type item struct {
		ID     string   `json:"id"`
		Params Scenario `json:"params"`
	}
	items := make([]item, len(s))
	for i, c := range s {
		items[i] = item{c.ID, c.Scenario}
	}
	return json.Marshal(items)
}

// UnmarshalJSON reads either a spec string ("a+b", default params) or the
// form MarshalJSON writes, for an HTTP endpoint (as Select).
func (s *Selection) UnmarshalJSON(b []byte) error {
	if wire.Kind(b) == '"' {
		var spec string
		if err := json.Unmarshal(b, &spec); err != nil {
			return err
		}
		sel, err := Select(spec, nil)
		*s = sel
		return err
	}
	var items []struct {
		ID     string          `json:"id"`
		Params json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(b, &items); err != nil {
		return fmt.Errorf("scenarios: want \"a+b\" or [{\"id\":…,\"params\":{…}}]: %w", err)
	}
	var sel Selection
	for _, it := range items {
		c, err := configure(TransportHTTP, it.ID, it.Params)
		if err != nil {
			return err
		}
		sel = append(sel, c)
	}
	*s = sel
	return nil
}

// Select builds a selection for an HTTP endpoint from a spec "a+b" and
// params. For one scenario params is its params object (or a list holding
// it); for several it is an array of params objects in order, or an object
// keyed by scenario id. Missing params are the defaults. Every scenario is
// validated; the error names the scenario and the param. A stdio scenario is
// refused: "stdio.drop applies to stdio servers (mcpdiag proxy --stdio)".
func Select(spec string, params json.RawMessage) (Selection, error) {
	return selectSpec(TransportHTTP, spec, params)
}

// SelectStdio is Select for a stdio server ([LineEndpoint]): it takes the
// stdio scenarios, and refuses the HTTP ones.
func SelectStdio(spec string, params json.RawMessage) (Selection, error) {
	return selectSpec(TransportStdio, spec, params)
}

func selectSpec(t Transport, spec string, params json.RawMessage) (Selection, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		// What GET /admin/scenario returns for the healthy server ("[]")
		// must PUT back unchanged.
		switch string(bytes.TrimSpace(params)) {
		case "", "{}", "null", "[]":
		default:
			return nil, errors.New("params given without a scenario")
		}
		return nil, nil
	}
	ids := strings.Split(spec, "+")
	per := make([]json.RawMessage, len(ids))
	params = bytes.TrimSpace(params)
	if len(ids) == 1 && wire.Kind(params) == '[' {
		// A one-element list, as GET /admin/scenario writes it.
		var list []json.RawMessage
		if json.Unmarshal(params, &list) == nil && len(list) == 1 {
			params = list[0]
		}
	}
	switch {
	case len(params) == 0 || string(params) == "null":
	case len(ids) == 1:
		per[0] = params
	case wire.Kind(params) == '[':
		var list []json.RawMessage
		if err := json.Unmarshal(params, &list); err != nil {
			return nil, fmt.Errorf("params: %w", err)
		}
		if len(list) > len(ids) {
			return nil, fmt.Errorf("params: %d params objects for %d scenarios", len(list), len(ids))
		}
		copy(per, list)
	case wire.Kind(params) == '{':
		var byID map[string]json.RawMessage
		if err := json.Unmarshal(params, &byID); err != nil {
			return nil, fmt.Errorf("params: %w", err)
		}
		for k, v := range byID {
			found := false
			for i, id := range ids {
				if id == k {
					per[i], found = v, true
				}
			}
			if !found {
				return nil, fmt.Errorf("params: %q is not one of the scenarios %s (for a composition, key params by scenario id or give an array)", k, spec)
			}
		}
	default:
		return nil, errors.New("params: want a JSON object")
	}
	var sel Selection
	for i, id := range ids {
		c, err := configure(t, strings.TrimSpace(id), per[i])
		if err != nil {
			return nil, err
		}
		sel = append(sel, c)
	}
	return sel, nil
}

// SelectQuery builds a selection from a spec and a URL query: the key
// "params" holds the params as JSON (as for Select); for one scenario any
// other key sets one param, with dots for nested params (match.tool=echo,
// schedule.nth=2) and values read as JSON when they parse (2, true, [503,200])
// and as strings otherwise. The key "run" is ignored: it only tells two
// endpoints with the same params apart.
func SelectQuery(spec string, q url.Values) (Selection, error) {
	params := json.RawMessage(q.Get("params"))
	var keys []string
	for k := range q {
		if k != "params" && k != "run" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	if len(keys) > 0 {
		if strings.Contains(spec, "+") {
			return nil, fmt.Errorf("query param %q: a composition takes its params as params=JSON", keys[0])
		}
		obj := map[string]any{}
		if len(params) > 0 {
			if err := json.Unmarshal(params, &obj); err != nil {
				return nil, fmt.Errorf("query params: %w", err)
			}
		}
		e, _ := Lookup(spec)
		for _, k := range keys {
			v := q.Get(k)
			var val any = v
			var parsed any
			if !isStringParam(e, strings.Split(k, ".")) && json.Unmarshal([]byte(v), &parsed) == nil {
				val = parsed
			}
			if err := setPath(obj, strings.Split(k, "."), val); err != nil {
				return nil, fmt.Errorf("query param %q: %w", k, err)
			}
		}
		b, err := json.Marshal(obj)
		if err != nil {
			return nil, err
		}
		params = b
	}
	return Select(spec, params)
}

// isStringParam reports whether the param at path of entry e's scenario is
// a string (so that a query value such as 7 stays the string "7").
func isStringParam(e Entry, path []string) bool {
	if e.New == nil {
		return false
	}
	t := reflect.TypeOf(e.New())
	for _, name := range path {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return false
		}
		f, ok := jsonField(t, name)
		if !ok {
			return false
		}
		t = f.Type
	}
	return t.Kind() == reflect.String
}

// jsonField finds the field of struct type t named name in JSON, looking
// into embedded structs.
func jsonField(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && tag == "" && f.Type.Kind() == reflect.Struct {
			if g, ok := jsonField(f.Type, name); ok {
				return g, true
			}
			continue
		}
		if tag == name || (tag == "" && f.Name == name) {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

func setPath(obj map[string]any, path []string, v any) error {
	for _, p := range path[:len(path)-1] {
		next, ok := obj[p].(map[string]any)
		if !ok {
			if _, exists := obj[p]; exists {
				return fmt.Errorf("%s is not an object", p)
			}
			next = map[string]any{}
			obj[p] = next
		}
		obj = next
	}
	obj[path[len(path)-1]] = v
	return nil
}

// configure makes the scenario id with params over its defaults, for
// transport t.
func configure(t Transport, id string, params json.RawMessage) (Configured, error) {
	e, ok := Lookup(id)
	if !ok {
		return Configured{}, fmt.Errorf("%w %q (mcpdiag scenarios lists them)", ErrUnknownScenario, id)
	}
	if et := e.transport(); et != t {
		return Configured{}, fmt.Errorf("%s applies to %s, not to %s", id, et.Applies(), t.servers())
	}
	s, err := NewScenario(e, params)
	if err != nil {
		return Configured{}, err
	}
	return Configured{ID: id, Scenario: s}, nil
}

// NewScenario returns entry's scenario with params decoded over its
// defaults, validated.
func NewScenario(e Entry, params json.RawMessage) (Scenario, error) {
	s := e.New()
	params = bytes.TrimSpace(params)
	if len(params) > 0 && string(params) != "null" {
		if wire.Kind(params) != '{' {
			return nil, fmt.Errorf("%s: params: want a JSON object", e.ID)
		}
		if err := strictUnmarshal(params, s); err != nil {
			return nil, fmt.Errorf("%s: %w", e.ID, err)
		}
	}
	if err := Validate(s); err != nil {
		return nil, fmt.Errorf("%s: %w", e.ID, err)
	}
	return s, nil
}

// Validate checks a scenario's common rules and its own params.
func Validate(s Scenario) error {
	if r, ok := s.(ruled); ok {
		if err := r.CommonRules().validate(); err != nil {
			return err
		}
	}
	return s.Validate()
}

// ReadParams reads a --params value: a JSON text as it is, or "@FILE" for
// the contents of FILE. The empty string is no params (nil).
func ReadParams(s string) (json.RawMessage, error) {
	name, ok := strings.CutPrefix(s, "@")
	if !ok {
		if s == "" {
			return nil, nil
		}
		return json.RawMessage(s), nil
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("reading params: %w", err)
	}
	return b, nil
}
