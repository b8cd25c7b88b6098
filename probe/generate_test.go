package probe_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/mcpdiag/mcpdiag/client"
	"github.com/mcpdiag/mcpdiag/probe"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// schemas are inputSchemas the generator must break, each with the kinds
// it must produce: the fixture's, the bad server's, and one per keyword.
var schemas = []struct {
	schema string
	kinds  []probe.Kind
}{
	{`{"type":"object","properties":{"text":{"type":"string"}}}`, []probe.Kind{probe.WrongType, probe.ArgumentsNotObject}},
	{`{"type":"object","properties":{"name":{"type":"string"},"value":{"type":"integer"}},"required":["value"]}`,
		[]probe.Kind{probe.RequiredMissing, probe.WrongType, probe.NullValue, probe.EmptyArguments}},
	{`{"type":"object","properties":{"steps":{"type":"integer","minimum":0,"maximum":20}}}`, []probe.Kind{probe.BelowMinimum, probe.AboveMaximum}},
	{`{"type":"object","properties":{"n":{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":1}}}`, []probe.Kind{probe.BelowMinimum, probe.AboveMaximum}},
	{`{"type":"object","properties":{"q":{"type":"string","maxLength":5,"minLength":2}},"required":["q"],"additionalProperties":false}`,
		[]probe.Kind{probe.TooLong, probe.TooShort, probe.ExtraProperty, probe.RequiredMissing}},
	{`{"type":"object","properties":{"x":{"type":"number"}}}`, []probe.Kind{probe.WrongType}},
	{`{"type":"object","properties":{"lang":{"type":"string","enum":["en","fr"]}}}`, []probe.Kind{probe.OutsideEnum}},
	{`{"type":"object","properties":{"code":{"type":"string","pattern":"^[A-Z]{3}$"}}}`, []probe.Kind{probe.PatternMismatch}},
	{`{"type":"object","properties":{"v":{"type":["string","null"]},"w":{"type":["integer","boolean"]}},"required":["v"]}`,
		[]probe.Kind{probe.WrongType, probe.RequiredMissing}},
	{`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"a":{"type":"boolean"}},"required":["a"]}`,
		[]probe.Kind{probe.RequiredMissing, probe.WrongType, probe.NullValue}},
}

// TestArgumentProbesAreInvalid: every argument probe's arguments break the
// tool's inputSchema by a real JSON Schema validator (santhosh-tekuri,
// 2020-12 and draft-07 as declared), for several seeds; and each schema
// gets the kinds its keywords call for. A probe the schema allows would
// make a correct server look wrong.
func TestArgumentProbesAreInvalid(t *testing.T) {
	for i, tc := range schemas {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(tc.schema)))
		if err != nil {
			t.Fatal(err)
		}
		c := jsonschema.NewCompiler()
		url := fmt.Sprintf("mem:///schema%d.json", i)
		if err := c.AddResource(url, doc); err != nil {
			t.Fatal(err)
		}
		sch, err := c.Compile(url)
		if err != nil {
			t.Fatal(err)
		}
		tool := client.Tool{Name: fmt.Sprintf("t%d", i), InputSchema: json.RawMessage(tc.schema)}
		ro := true
		tool.Annotations.ReadOnlyHint = &ro
		for seed := uint64(1); seed <= 20; seed++ {
			probes, _ := probe.Plan([]client.Tool{tool}, probe.Options{Seed: seed, MaxPerTool: 100})
			seen := map[probe.Kind]bool{}
			for _, p := range probes {
				if p.Tool != tool.Name {
					continue
				}
				seen[p.Kind] = true
				args, err := jsonschema.UnmarshalJSON(bytes.NewReader(p.Params["arguments"]))
				if err != nil {
					t.Fatalf("probe %d: arguments %s: %v", p.Index, p.Params["arguments"], err)
				}
				if sch.Validate(args) == nil {
					t.Errorf("schema %s seed %d: probe %d %s (%s) sends %s, which the schema allows", tc.schema, seed, p.Index, p.Kind, p.Detail, p.Params["arguments"])
				}
			}
			for _, k := range tc.kinds {
				if !seen[k] {
					t.Errorf("schema %s seed %d: no %s probe (got %v)", tc.schema, seed, k, seen)
				}
			}
		}
	}
}

// TestPlanRepeatable: the same tools and seed make the same probes, index
// by index; another seed changes some; MaxPerTool bounds each tool; a tool
// that is not read-only gets none unless allowed.
func TestPlanRepeatable(t *testing.T) {
	ro, no := true, false
	var tools []client.Tool
	for i, tc := range schemas {
		tl := client.Tool{Name: fmt.Sprintf("t%d", i), InputSchema: json.RawMessage(tc.schema)}
		tl.Annotations.ReadOnlyHint = &ro
		tools = append(tools, tl)
	}
	del := client.Tool{Name: "delete", InputSchema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}`)}
	del.Annotations.DestructiveHint = &ro
	del.Annotations.ReadOnlyHint = &no
	tools = append(tools, del)
	a, _ := probe.Plan(tools, probe.Options{Seed: 7, MaxPerTool: 2})
	b, _ := probe.Plan(tools, probe.Options{Seed: 7, MaxPerTool: 2})
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two plans with the same seed differ")
	}
	c, _ := probe.Plan(tools, probe.Options{Seed: 8, MaxPerTool: 2})
	if reflect.DeepEqual(a, c) {
		t.Error("seeds 7 and 8 make the same probes")
	}
	per := map[string]int{}
	for i, p := range a {
		if p.Index != i {
			t.Errorf("probe %d has index %d", i, p.Index)
		}
		if p.Tool != "" {
			per[p.Tool]++
		}
	}
	for tool, n := range per {
		if n > 2 {
			t.Errorf("%s got %d probes, MaxPerTool 2", tool, n)
		}
	}
	if per["delete"] != 0 {
		t.Errorf("the destructive tool got %d probes without Allow", per["delete"])
	}
	allowed, plans := probe.Plan(tools, probe.Options{Seed: 7, MaxPerTool: 2, Allow: []string{"delete"}})
	n := 0
	for _, p := range allowed {
		if p.Tool == "delete" {
			n++
		}
	}
	last := plans[len(plans)-1]
	if n == 0 || !last.Allowed || last.Why == "" {
		t.Errorf("--allow delete: %d probes, plan %+v", n, last)
	}
}

// FuzzArgumentProbesAreInvalid: for any inputSchema, Plan does not panic,
// makes the same probes twice, and every argument probe it makes breaks the
// schema by a real validator (when the validator compiles the schema).
func FuzzArgumentProbesAreInvalid(f *testing.F) {
	for _, tc := range schemas {
		f.Add([]byte(tc.schema), uint64(1))
	}
	f.Add([]byte(`{"type":"object","properties":{"a":{"type":"integer","maximum":1e308}},"patternProperties":{"^m":{}},"additionalProperties":false}`), uint64(3))
	f.Fuzz(func(t *testing.T, schema []byte, seed uint64) {
		ro := true
		tool := client.Tool{Name: "t", InputSchema: schema}
		tool.Annotations.ReadOnlyHint = &ro
		a, _ := probe.Plan([]client.Tool{tool}, probe.Options{Seed: seed, MaxPerTool: 100})
		b, _ := probe.Plan([]client.Tool{tool}, probe.Options{Seed: seed, MaxPerTool: 100})
		if !reflect.DeepEqual(a, b) {
			t.Fatal("two plans differ")
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
		if err != nil {
			return
		}
		c := jsonschema.NewCompiler()
		if c.AddResource("mem:///s.json", doc) != nil {
			return
		}
		sch, err := c.Compile("mem:///s.json")
		if err != nil {
			return
		}
		for _, p := range a {
			if !p.Kind.IsArgument() {
				continue
			}
			args, err := jsonschema.UnmarshalJSON(bytes.NewReader(p.Params["arguments"]))
			if err != nil {
				t.Fatalf("probe %d: arguments %s: %v", p.Index, p.Params["arguments"], err)
			}
			if sch.Validate(args) == nil {
				t.Errorf("schema %s: probe %d %s (%s) sends %s, which the schema allows", schema, p.Index, p.Kind, p.Detail, p.Params["arguments"])
			}
		}
	})
}
