package client

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
)

func TestExampleArguments(t *testing.T) {
	for _, tc := range []struct {
		name, schema, want string
	}{
		{"every kind of property", `{"type":"object","properties":{
			"s":{"type":"string"},"d":{"type":"string","default":"dflt"},"e":{"enum":["x","y"]},"c":{"const":7},
			"i":{"type":"integer"},"n":{"type":"number"},"b":{"type":"boolean"},"o":{"type":"object"},"a":{"type":"array"},
			"z":{"type":"null"},"opt":{"type":"string"}},
			"required":["s","d","e","c","i","n","b","o","a","z","missing"]}`,
			`{"a":[],"b":true,"c":7,"d":"dflt","e":"x","i":1,"missing":"mcpdiag","n":1,"o":{},"s":"mcpdiag","z":null}`},
		{"the default wins over const and enum", `{"properties":{"p":{"default":3,"const":4,"enum":[5]}},"required":["p"]}`, `{"p":3}`},
		{"an empty enum falls back to the type", `{"properties":{"p":{"type":"integer","enum":[]}},"required":["p"]}`, `{"p":1}`},
		{"a $ref is not followed", `{"properties":{"p":{"$ref":"https://example.com/s.json"}},"required":["p"]}`, `{"p":"mcpdiag"}`},
		{"an object default is kept as it is", `{"properties":{"p":{"default":{"k":[1, 2]}}},"required":["p"]}`, `{"p":{"k":[1,2]}}`},
		{"no required properties", `{"type":"object","properties":{"x":{"type":"string"}}}`, ``},
		{"not an object", `[1,2]`, ``},
		{"not JSON", `{`, ``},
		{"no schema", ``, ``},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ExampleArguments(json.RawMessage(tc.schema)); string(got) != tc.want {
				t.Errorf("ExampleArguments = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestCooperativeInputs(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		in     CooperativeInputs
		method string
		params string
		want   string
	}{
		// SEP-1034: every default applied.
		{"defaults", CooperativeInputs{}, "elicitation/create", `{"message":"m","requestedSchema":{"type":"object","properties":{
			"name":{"type":"string","default":"John Doe"},"age":{"type":"integer","default":30},"score":{"type":"number","default":95.5},
			"status":{"type":"string","enum":["active","inactive"],"default":"active"},"verified":{"type":"boolean","default":true}}}}`,
			`{"action":"accept","content":{"age":30,"name":"John Doe","score":95.5,"status":"active","verified":true}}`},
		{"titled enums and a multi-select", CooperativeInputs{}, "elicitation/create", `{"message":"m","requestedSchema":{"type":"object","properties":{"confirmed":{"type":"boolean"},
			"pick":{"type":"string","oneOf":[{"const":"p1","title":"P1"},{"const":"p2"}]},"any":{"anyOf":[{"title":"none"},{"const":"a2"}]},
			"many":{"type":"array","items":{"enum":["m1","m2"]}}}}}`,
			`{"action":"accept","content":{"any":"a2","confirmed":true,"many":["m1"],"pick":"p1"}}`},
		{"no fields", CooperativeInputs{}, "elicitation/create", `{"message":"m"}`, `{"action":"accept","content":{}}`},
		{"url mode", CooperativeInputs{}, "elicitation/create", `{"mode":"url","message":"m","url":"https://example.com"}`, `{"action":"accept"}`},
		{"sampling", CooperativeInputs{}, "sampling/createMessage", `{"messages":[],"maxTokens":10}`,
			`{"role":"assistant","content":{"type":"text","text":"mcpdiag answer"},"model":"mcpdiag","stopReason":"endTurn"}`},
		{"sampling with a text", CooperativeInputs{SamplingText: "hi \"there\""}, "sampling/createMessage", `{}`,
			`{"role":"assistant","content":{"type":"text","text":"hi \"there\""},"model":"mcpdiag","stopReason":"endTurn"}`},
		{"roots", CooperativeInputs{}, "roots/list", ``, `{"roots":[]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.in.Answer(ctx, InputRequest{Key: "k", Method: tc.method, Params: json.RawMessage(tc.params)})
			if err != nil || string(got) != tc.want {
				t.Errorf("%s: %s (%v), want %s", tc.method, got, err, tc.want)
			}
		})
	}
	if _, err := (CooperativeInputs{}).Answer(ctx, InputRequest{Method: "other/method"}); !errors.Is(err, ErrNoAnswer) {
		t.Errorf("an unknown method: %v, want ErrNoAnswer", err)
	}
	if _, err := (CooperativeInputs{}).Answer(ctx, InputRequest{Method: "elicitation/create", Params: json.RawMessage(`[1]`)}); err == nil {
		t.Error("elicitation params that are not an object: no error")
	}
}
