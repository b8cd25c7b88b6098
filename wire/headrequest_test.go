package wire

import "testing"

// TestHeadRulesOutRequest: a top-level result or error member in the
// first bytes of an event's data rules out a request, wherever the bytes
// are cut after its name; nothing else does (a method first, a result
// nested, a member named like one, a name cut short).
func TestHeadRulesOutRequest(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, data string
		want       bool
	}{
		{"result after id", `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"xxxx"}]}}`, true},
		{"result first (TypeScript SDK)", `{"result":{"content":[]},"jsonrpc":"2.0","id":1}`, true},
		{"error", `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no"}}`, true},
		{"result, then a method", `{"jsonrpc":"2.0","id":1,"result":{},"method":"roots/list"}`, true},
		{"escaped name", `{"jsonrpc":"2.0","id":1,"r\u0065sult":{}}`, true},
		{"white space", " \n{ \"id\" : 1 ,\r\n \"error\" :{}}", true},
		{"request", `{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{"result":1,"error":2}}`, false},
		{"request, id last (TypeScript SDK)", `{"method":"elicitation/create","params":{"message":"x"},"jsonrpc":"2.0","id":0}`, false},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"result"}}`, false},
		{"a name like one", `{"jsonrpc":"2.0","id":1,"results":{},"errors":[]}`, false},
		{"a value", `{"jsonrpc":"2.0","id":"result","x":"error"}`, false},
		{"not an object", `["result"]`, false},
		{"empty", ``, false},
	}
	for _, c := range cases {
		if got := HeadRulesOutRequest([]byte(c.data)); got != c.want {
			t.Errorf("%s: HeadRulesOutRequest(%s) = %v, want %v", c.name, c.data, got, c.want)
		}
		if c.want && IsServerRequest("", []byte(c.data)) {
			t.Errorf("%s: ruled out, yet a request: %s", c.name, c.data)
		}
		// Cut anywhere: the verdict of a head is never true of one that
		// the whole is not, and a cut before the name's colon shows
		// nothing.
		for k := 0; k <= len(c.data); k++ {
			if HeadRulesOutRequest([]byte(c.data[:k])) && !c.want {
				t.Errorf("%s: the head %q rules out a request, the whole does not", c.name, c.data[:k])
			}
		}
	}
}

// FuzzHeadRulesOutRequest: a head that rules out a request is never the
// head of data that IsServerRequest calls one, however the data is cut,
// and data that rules itself out is no request.
func FuzzHeadRulesOutRequest(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"result":{},"method":"roots/list"}`), uint16(30))
	f.Add([]byte(`{"r\u0065sult":1,"jsonrpc":"2.0","id":1,"method":"x"}`), uint16(12))
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"x","params":{"error":{}}}`), uint16(50))
	f.Fuzz(func(t *testing.T, data []byte, cut uint16) {
		head := data[:int(cut)%(len(data)+1)]
		if HeadRulesOutRequest(head) && IsServerRequest("", data) {
			t.Errorf("the head %q rules out a request, yet %q is one", head, data)
		}
	})
}
