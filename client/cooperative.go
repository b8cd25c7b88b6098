package client

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/mcpdiag/mcpdiag/wire"
)

// ExampleArguments makes tool arguments from an input schema: an object
// holding every required property, each the property's default, const or
// first enum value when it has one, otherwise a plain value of its declared
// type (1, true, {}, [], null, or the string "mcpdiag"). It returns nil for
// a schema with no required property (a call with no arguments) or one
// that is not a JSON object. Nothing is dereferenced ($ref is never
// fetched) and no property is invented beyond the required ones.
func ExampleArguments(schema json.RawMessage) json.RawMessage {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if json.Unmarshal(schema, &s) != nil || len(s.Required) == 0 {
		return nil
	}
	args := map[string]json.RawMessage{}
	for _, name := range s.Required {
		args[name] = ExampleValue(s.Properties[name])
	}
	b, _ := json.Marshal(args)
	return b
}

// ExampleValue picks a value for one property schema, as ExampleArguments
// does for each required property.
func ExampleValue(prop json.RawMessage) json.RawMessage {
	for _, k := range []string{"default", "const"} {
		if v, ok := wire.Field(prop, k); ok {
			return json.RawMessage(v)
		}
	}
	if enum, ok := wire.Field(prop, "enum"); ok && wire.Kind(enum) == '[' {
		var first json.RawMessage
		_ = wire.EachElement(enum, func(_ int, v []byte) bool { first = json.RawMessage(v); return false })
		if first != nil {
			return first
		}
	}
	typ, _ := wire.Field(prop, "type")
	name, _ := wire.StringValue(typ)
	switch name {
	case "integer", "number":
		return json.RawMessage(`1`)
	case "boolean":
		return json.RawMessage(`true`)
	case "object":
		return json.RawMessage(`{}`)
	case "array":
		return json.RawMessage(`[]`)
	case "null":
		return json.RawMessage(`null`)
	}
	return json.RawMessage(`"mcpdiag"`)
}

// DefaultSamplingText is the text of CooperativeInputs' sampling answer when
// its SamplingText is empty.
const DefaultSamplingText = "mcpdiag answer"

// CooperativeInputs answers input requests as a cooperative user would,
// without asking anyone: it accepts every form elicitation, filling each
// field with its default (SEP-1034) or a plain value (elicitationValue),
// consents to URL elicitations, answers sampling with a fixed assistant
// message and roots/list with no roots. Any other method gets ErrNoAnswer.
// It is what a test client (the conformance suite's adapter, a matrix run)
// needs to get past every input request.
type CooperativeInputs struct {
	// SamplingText is the text of the sampling answer
	// (DefaultSamplingText when empty).
	SamplingText string
}

var _ InputProvider = CooperativeInputs{}

// Answer implements InputProvider.
func (c CooperativeInputs) Answer(_ context.Context, req InputRequest) (json.RawMessage, error) {
	switch req.Method {
	case "elicitation/create":
		var p struct {
			Mode            string `json:"mode"`
			RequestedSchema struct {
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"requestedSchema"`
		}
		if err := json.Unmarshal(req.Params, &p); err != nil && len(req.Params) > 0 {
			return nil, fmt.Errorf("elicitation params: %w", err)
		}
		if p.Mode == "url" {
			return json.RawMessage(`{"action":"accept"}`), nil
		}
		names := make([]string, 0, len(p.RequestedSchema.Properties))
		for n := range p.RequestedSchema.Properties {
			names = append(names, n)
		}
		sort.Strings(names)
		content := map[string]json.RawMessage{}
		for _, n := range names {
			content[n] = elicitationValue(p.RequestedSchema.Properties[n])
		}
		return json.Marshal(map[string]any{"action": "accept", "content": content})
	case "sampling/createMessage":
		text := c.SamplingText
		if text == "" {
			text = DefaultSamplingText
		}
		type textContent struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		return json.Marshal(struct {
			Role       string      `json:"role"`
			Content    textContent `json:"content"`
			Model      string      `json:"model"`
			StopReason string      `json:"stopReason"`
		}{"assistant", textContent{"text", text}, "mcpdiag", "endTurn"})
	case "roots/list":
		return json.RawMessage(`{"roots":[]}`), nil
	}
	return nil, ErrNoAnswer
}

// elicitationValue is ExampleValue for the flat primitive schemas of a form
// elicitation, where titled enums are oneOf/anyOf lists of const values and
// a multi-select is an array of such.
func elicitationValue(prop json.RawMessage) json.RawMessage {
	if _, ok := wire.Field(prop, "default"); ok {
		return ExampleValue(prop)
	}
	for _, k := range []string{"oneOf", "anyOf"} {
		if list, ok := wire.Field(prop, k); ok && wire.Kind(list) == '[' {
			var first json.RawMessage
			_ = wire.EachElement(list, func(_ int, v []byte) bool {
				if c, ok := wire.Field(v, "const"); ok {
					first = json.RawMessage(c)
				}
				return first == nil
			})
			if first != nil {
				return first
			}
		}
	}
	if items, ok := wire.Field(prop, "items"); ok {
		if typ, _ := wire.Field(prop, "type"); wire.StringIs(typ, "array") {
			return json.RawMessage("[" + string(elicitationValue(items)) + "]")
		}
	}
	return ExampleValue(prop)
}
