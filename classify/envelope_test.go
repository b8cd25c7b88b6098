package classify

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/wire"
)

// validEnvelope is wire.Valid and scanEnvelope in one pass: on any bytes
// whose first value byte opens an object, it reports what wire.Valid
// reports and, when they are valid, the envelope scanEnvelope reads.
var envelopeSeeds = []string{
	`{}`, ` { } `, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hi"}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"x"}]}}`,
	`{"jsonrpc":"2.0","id":"a","error":{"code":-32601,"message":"no"}}`,
	`{"id":1,"id":2,"method":"a","method":"b"}`, `{"\u006dethod":"x","r\u0065sult":{}}`,
	`{"a":1,}`, `{"a":1`, `{"a" 1}`, `{"a":1}x`, `{"a":1} `, `{"a":[1,2,{"b":null}],"c":true}`,
	`{"a":"\u00e9\"\\"}`, "{\"a\":\"\x01\"}", `{"a":01}`, `{"a":-}`, `{1:2}`, `{"a":1]`, `{"a":[}`,
	`{"x":` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + `}`,
	`{"x":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}`,
	`{"p":"` + strings.Repeat("r", 300) + `","jsonrpc":"2.0"}`,
}

func checkValidEnvelope(t *testing.T, data []byte) {
	open := wire.SkipSpace(data, 0)
	if open >= len(data) || data[open] != '{' {
		return
	}
	env, valid := validEnvelope(data, open)
	if want := json.Valid(data); valid != want {
		t.Fatalf("validEnvelope(%q): valid %v, json.Valid %v", data, valid, want)
	}
	if valid {
		if want := scanEnvelope(data); !reflect.DeepEqual(env, want) {
			t.Fatalf("validEnvelope(%q) = %+v, scanEnvelope %+v", data, env, want)
		}
	}
}

func TestValidEnvelope(t *testing.T) {
	for _, s := range envelopeSeeds {
		checkValidEnvelope(t, []byte(s))
	}
}

func FuzzValidEnvelope(f *testing.F) {
	for _, s := range envelopeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkValidEnvelope(t, data) })
}
