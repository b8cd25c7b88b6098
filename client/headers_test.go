package client

import (
	"strings"
	"testing"
	"time"
)

// TestHeaderAnnotationProblems: the x-mcp-header rules of 2026-07-28, one
// case per rule, with the cases of the conformance suite's
// http-invalid-tool-headers scenario among them.
func TestHeaderAnnotationProblems(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		want   string // "" for a valid schema, else a fragment of the one problem
	}{
		{"string", `{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}`, ""},
		{"integer and boolean", `{"type":"object","properties":{"n":{"type":"integer","x-mcp-header":"N"},"b":{"type":"boolean","x-mcp-header":"B"}}}`, ""},
		{"every tchar", `{"type":"object","properties":{"v":{"type":"string","x-mcp-header":"A-b_c.d!#$%&'*+^` + "`" + `|~9"}}}`, ""},
		{"nested properties chain", `{"type":"object","properties":{"outer":{"type":"object","properties":{"inner":{"type":"string","x-mcp-header":"Inner"}}}}}`, ""},
		{"a property named x-mcp-header", `{"type":"object","properties":{"x-mcp-header":{"type":"string"}}}`, ""},
		{"data keywords are not searched", `{"type":"object","default":{"x-mcp-header":""},"properties":{"a":{"type":"string","examples":[{"x-mcp-header":""}]}}}`, ""},
		{"no annotations", `{"type":"object"}`, ""},
		{"empty", `{"type":"object","properties":{"value":{"type":"string","x-mcp-header":""}}}`, "is empty"},
		{"object", `{"type":"object","properties":{"data":{"type":"object","x-mcp-header":"Data"}}}`, "of type object"},
		{"array", `{"type":"object","properties":{"items":{"type":"array","items":{"type":"string"},"x-mcp-header":"Items"}}}`, "of type array"},
		{"null", `{"type":"object","properties":{"nil":{"type":"null","x-mcp-header":"Nil"}}}`, "of type null"},
		{"number", `{"type":"object","properties":{"score":{"type":"number","x-mcp-header":"Score"}}}`, "of type number"},
		{"no type", `{"type":"object","properties":{"v":{"x-mcp-header":"V"}}}`, "declares no type"},
		{"type list", `{"type":"object","properties":{"v":{"type":["string","null"],"x-mcp-header":"V"}}}`, "not one primitive type"},
		{"duplicate", `{"type":"object","properties":{"field1":{"type":"string","x-mcp-header":"Region"},"field2":{"type":"string","x-mcp-header":"Region"}}}`, "repeats the header name"},
		{"duplicate across case", `{"type":"object","properties":{"field1":{"type":"string","x-mcp-header":"MyField"},"field2":{"type":"string","x-mcp-header":"myfield"}}}`, "repeats the header name"},
		{"duplicate across depth", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"X"},"o":{"type":"object","properties":{"b":{"type":"string","x-mcp-header":"x"}}}}}`, "repeats the header name"},
		{"space", `{"type":"object","properties":{"value":{"type":"string","x-mcp-header":"My Region"}}}`, "contains a space"},
		{"colon", `{"type":"object","properties":{"value":{"type":"string","x-mcp-header":"Region:Primary"}}}`, `contains ":"`},
		{"non-ASCII", `{"type":"object","properties":{"value":{"type":"string","x-mcp-header":"Région"}}}`, "non-ASCII"},
		{"control character", `{"type":"object","properties":{"value":{"type":"string","x-mcp-header":"Region\t1"}}}`, "control character 0x09"},
		{"CRLF", `{"type":"object","properties":{"value":{"type":"string","x-mcp-header":"A\r\nX-Evil: 1"}}}`, "control character 0x0D"},
		{"not a string", `{"type":"object","properties":{"value":{"type":"string","x-mcp-header":7}}}`, "not a string"},
		{"under items", `{"type":"object","properties":{"list":{"type":"array","items":{"type":"string","x-mcp-header":"L"}}}}`, "#/properties/list/items"},
		{"under anyOf", `{"type":"object","anyOf":[{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}]}`, "#/anyOf/0/properties/a"},
		{"under $defs", `{"type":"object","$defs":{"d":{"type":"string","x-mcp-header":"D"}},"properties":{"a":{"$ref":"#/$defs/d"}}}`, "#/$defs/d"},
		{"under if", `{"type":"object","if":{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}}`, "#/if/properties/a"},
		{"on the root", `{"type":"object","x-mcp-header":"Root"}`, "the root schema"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := headerAnnotationProblems([]byte(tt.schema))
			if tt.want == "" {
				if len(got) != 0 {
					t.Fatalf("valid schema reported: %q", got)
				}
				return
			}
			if len(got) != 1 || !strings.Contains(got[0], tt.want) {
				t.Fatalf("problems %q, want one containing %q", got, tt.want)
			}
		})
	}
}

// TestSSEWatch: the last event id and the retry field, read on the side of
// a stream cut into arbitrary pieces, as WHATWG defines them.
func TestSSEWatch(t *testing.T) {
	tests := []struct {
		name   string
		stream string
		id     string
		retry  time.Duration
		has    bool
	}{
		{"priming event", "id: e1\nretry: 500\ndata: \n\n", "e1", 500 * time.Millisecond, true},
		{"CRLF and BOM", "\xef\xbb\xbfid: e2\r\nretry:250\r\n\r\n", "e2", 250 * time.Millisecond, true},
		{"CR only", "id:e3\rdata: x\r\r", "e3", 0, false},
		{"the last dispatched id wins", "id: a\ndata: 1\n\nid: b\ndata: 2\n\n", "b", 0, false},
		{"an undispatched id does not count", "id: a\ndata: 1\n\nid: b\ndata: 2\n", "a", 0, false},
		{"the id persists across events", "id: a\ndata: 1\n\ndata: 2\n\n", "a", 0, false},
		{"an id with NUL is ignored", "id: a\n\nid: b\x00c\ndata: 1\n\n", "a", 0, false},
		{"comments and other fields", ": keep-alive\nevent: message\nid: z\ndata: {}\n\n", "z", 0, false},
		{"retry that is not digits is ignored", "retry: 5s\nretry: -1\nid: r\n\n", "r", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, size := range []int{1, 2, 3, 7, len(tt.stream)} {
				var w sseWatch
				for i := 0; i < len(tt.stream); i += size {
					w.scan([]byte(tt.stream[i:min(i+size, len(tt.stream))]))
				}
				if w.lastEventID != tt.id || w.retry != tt.retry || w.hasRetry != tt.has {
					t.Fatalf("pieces of %d: id %q retry %s (%v); want %q %s (%v)", size, w.lastEventID, w.retry, w.hasRetry, tt.id, tt.retry, tt.has)
				}
			}
		})
	}
}
