package wire

import (
	"bytes"
	"testing"
)

// TestParseMessageHead: the first bytes of a message larger than them say
// what members are whole in them, in order, and nothing of the rest: the
// method, the id with its JSON type, a params object's name and uri while
// its members are whole; a request only when a method and a non-null id
// are both there; a number cut at the end is not taken (it may go on).
func TestParseMessageHead(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, head       string
		kind             MessageKind
		method, id, tool string
		uri              string
	}{
		{"request, arguments cut", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"xx`, MessageRequest, "tools/call", "7", "echo", ""},
		{"string id", `{"jsonrpc":"2.0","id":"7","method":"tools/call","params":{"name":"e\u0063ho","argu`, MessageRequest, "tools/call", `"7"`, "echo", ""},
		{"id last (TS SDK)", `{"method":"tools/call","params":{"name":"echo","arguments":{"text":"xx`, MessageInvalid, "tools/call", "", "echo", ""},
		{"name cut", `{"id":1,"method":"tools/call","params":{"name":"ec`, MessageRequest, "tools/call", "1", "", ""},
		{"number id cut at the end", `{"method":"ping","id":12`, MessageInvalid, "ping", "", "", ""},
		{"number id then a comma", `{"method":"ping","id":12,`, MessageRequest, "ping", "12", "", ""},
		{"null id", `{"method":"tools/call","id":null,"params":{"name":"echo","arguments":{`, MessageInvalid, "tools/call", "null", "echo", ""},
		{"method cut", `{"id":1,"method":"tools/ca`, MessageInvalid, "", "1", "", ""},
		{"method not a string", `{"id":1,"method":7,"params":{"name":"echo","x":"`, MessageInvalid, "", "1", "", ""},
		{"params before method", `{"id":1,"params":{"name":"echo","arguments":{"a":"`, MessageInvalid, "", "1", "", ""},
		{"resources/read", `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"file:///a","_meta":{"x":"`, MessageRequest, "resources/read", "1", "", "file:///a"},
		{"name of another method", `{"id":1,"method":"initialize","params":{"name":"echo","capabilities":{`, MessageRequest, "initialize", "1", "", ""},
		{"white space", " \r\n{ \"id\" : 1 , \"method\" : \"tools/call\" , \"params\" : { \"name\" : \"echo\" , \"arguments\" :", MessageRequest, "tools/call", "1", "echo", ""},
		{"an array", `[{"id":1,"method":"ping"},{"id":2`, MessageInvalid, "", "", "", ""},
		{"not JSON", `id=1&method=ping`, MessageInvalid, "", "", "", ""},
		{"empty", ``, MessageInvalid, "", "", "", ""},
	}
	for _, c := range cases {
		m := ParseMessageHead([]byte(c.head))
		id := ""
		if !m.ID.IsZero() {
			id = string(m.ID.Raw())
		}
		if m.Kind != c.kind || m.Method != c.method || id != c.id || m.Tool != c.tool || m.URI != c.uri || m.Params != nil || m.Arguments != nil || m.Meta != nil {
			t.Errorf("%s: ParseMessageHead(%s) = kind %s method %q id %s tool %q uri %q params %s; want kind %s method %q id %s tool %q uri %q, no params",
				c.name, c.head, m.Kind, m.Method, id, m.Tool, m.URI, m.Params, c.kind, c.method, c.id, c.tool, c.uri)
		}
	}
}

// FuzzParseMessageHead: the head of a message never says what the whole
// does not. For a JSON-RPC request or notification with no member named
// twice (at the top or in params), every head's method, id (with its JSON
// type), tool and uri, when set, are the whole message's, and a head that
// is a request is of a request; the whole message as its own head has the
// whole's method, id, tool and uri.
func FuzzParseMessageHead(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`), uint16(60))
	f.Add([]byte(`{"method":"tools/call","params":{"name":"echo","arguments":{}},"jsonrpc":"2.0","id":"a"}`), uint16(20))
	f.Add([]byte(`{"id":12345,"method":"resources/read","params":{"uri":"file:///x"}}`), uint16(9))
	f.Add([]byte(`{"id":1,"method":"tools/call","method":"ping"}`), uint16(30))
	f.Fuzz(func(t *testing.T, data []byte, cut uint16) {
		whole := ParseMessage(data)
		if whole.Kind != MessageRequest && whole.Kind != MessageNotification || repeats(data) || Kind(whole.Params) == '{' && repeats(whole.Params) {
			return
		}
		check := func(head []byte, all bool) {
			m := ParseMessageHead(head)
			same := func(got, want string) bool { return got == want || got == "" && !all }
			if !same(m.Method, whole.Method) || !same(m.Tool, whole.Tool) || !same(m.URI, whole.URI) ||
				!(m.ID.IsZero() && !all || bytes.Equal(m.ID.Raw(), whole.ID.Raw()) && m.ID.IsZero() == whole.ID.IsZero()) ||
				m.Kind == MessageRequest && whole.Kind != MessageRequest || all && whole.Kind == MessageRequest && whole.Method != "" && m.Kind != MessageRequest {
				t.Errorf("head %q of %q: kind %s method %q id %s tool %q uri %q; the whole: kind %s method %q id %s tool %q uri %q",
					head, data, m.Kind, m.Method, m.ID.Raw(), m.Tool, m.URI, whole.Kind, whole.Method, whole.ID.Raw(), whole.Tool, whole.URI)
			}
		}
		check(data, true)
		check(data[:int(cut)%(len(data)+1)], false)
	})
}

// repeats reports an object with a member name given twice.
func repeats(obj []byte) bool {
	seen := map[string]bool{}
	dup := false
	_ = EachField(obj, func(k, _ []byte) bool {
		name := string(Key(k))
		dup = dup || seen[name]
		seen[name] = true
		return true
	})
	return dup
}
