package wire

import "testing"

// TestIsServerRequest: the one rule of "this event is a server request",
// case by case (FuzzIsServerRequest in package classify holds it against
// ParseMessage and the classifier on any input).
func TestIsServerRequest(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, typ, data string
		want            bool
	}{
		{"request", "", `{"jsonrpc":"2.0","id":1,"method":"roots/list"}`, true},
		{"type message", "message", `{"jsonrpc":"2.0","id":"a","method":"elicitation/create","params":{}}`, true},
		{"white space around", "", " \r\n\t{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"x\"}\n ", true},
		{"escaped member names", "", `{"jsonr\u0070c":"2.0","\u0069d":3,"m\u0065thod":"roots/list"}`, true},
		{"escaped version", "", `{"jsonrpc":"2\u002e0","id":3,"method":"roots/list"}`, true},
		{"method of any type", "", `{"jsonrpc":"2.0","id":3,"method":7}`, true},
		{"id of another type", "", `{"jsonrpc":"2.0","id":{},"method":"x"}`, true},
		{"last id wins", "", `{"jsonrpc":"2.0","id":null,"method":"x","id":4}`, true},
		{"typed event", "ping", `{"jsonrpc":"2.0","id":1,"method":"roots/list"}`, false},
		{"type messages", "messages", `{"jsonrpc":"2.0","id":1,"method":"roots/list"}`, false},
		{"type Message", "Message", `{"jsonrpc":"2.0","id":1,"method":"roots/list"}`, false},
		{"no version", "", `{"id":1,"method":"roots/list"}`, false},
		{"version 1.0", "", `{"jsonrpc":"1.0","id":1,"method":"roots/list"}`, false},
		{"version a number", "", `{"jsonrpc":2.0,"id":1,"method":"roots/list"}`, false},
		{"notification", "", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"id":4}}`, false},
		{"null id", "", `{"jsonrpc":"2.0","id":null,"method":"roots/list"}`, false},
		{"last id null", "", `{"jsonrpc":"2.0","id":4,"method":"x","id":null}`, false},
		{"method and result", "", `{"jsonrpc":"2.0","id":1,"method":"roots/list","result":{}}`, false},
		{"method and error", "", `{"jsonrpc":"2.0","id":1,"method":"roots/list","error":{"code":1,"message":"x"}}`, false},
		{"response", "", `{"jsonrpc":"2.0","id":1,"result":{"method":"x"}}`, false},
		{"not valid JSON", "", `{"jsonrpc":"2.0","id":1,"method":"roots/list"`, false},
		{"trailing bytes", "", `{"jsonrpc":"2.0","id":1,"method":"roots/list"}x`, false},
		{"two objects", "", `{"jsonrpc":"2.0","id":1,"method":"roots/list"}{}`, false},
		{"batch", "", `[{"jsonrpc":"2.0","id":1,"method":"roots/list"}]`, false},
		{"form feed before", "", "\f{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"roots/list\"}", false},
		{"empty", "", ``, false},
	}
	for _, c := range cases {
		if got := IsServerRequest(c.typ, []byte(c.data)); got != c.want {
			t.Errorf("%s: IsServerRequest(%q, %s) = %v, want %v", c.name, c.typ, c.data, got, c.want)
		}
	}
}

// TestIsServerRequestAllocs: the request watch asks it of every event
// written through the proxy (member names without escapes: an escaped one
// is decoded, as KeyIs decodes it).
func TestIsServerRequestAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	data := []byte(`{"jsonrpc":"2.0","id":"r-1","method":"elicitation/create","params":{"message":"x"}}`)
	typ := []byte("message")
	if n := testing.AllocsPerRun(100, func() {
		if !IsServerRequest(string(typ), data) {
			t.Fatal("not a request")
		}
	}); n != 0 {
		t.Errorf("%v allocations per call", n)
	}
}
