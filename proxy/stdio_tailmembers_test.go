package proxy

import "testing"

// TestTailMembers: the top-level members a long line's tail ends with are
// read, and a nested object's members, a quoted member inside a string, a
// tail not ending in the object's brace are not taken for the message's.
func TestTailMembers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, tail         string
		method, response   bool
		methodName, wantID string
	}{
		{"params first", `rrrr"}},"method":"tools/call","jsonrpc":"2.0","id":"srv-1"}`, true, false, "tools/call", `"srv-1"`},
		{"spaces, number id", "rr\"} } , \"method\" : \"ping\" , \"id\" : 7 }\n", true, false, "ping", "7"},
		{"result first", `rrrr"}]},"jsonrpc":"2.0","id":"srv-1"}`, false, false, "", `"srv-1"`},
		{"error last", `rr"},"id":3,"error":{"code":-1,"message":"x"}}`, false, true, "", "3"},
		{"nested method", `rr","x":{"method":"tools/call","id":1}}`, false, false, "", ""},
		{"method in a string", `rr\",\"method\":\"tools/call\",\"id\":1}"}`, false, false, "", ""},
		{"method in a string, id after", `rr\",\"method\":\"tools/call\"","id":1}`, false, false, "", "1"},
		{"no closing brace", `rr"},"method":"tools/call","id":1`, false, false, "", ""},
		{"empty", ``, false, false, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := tailMembers([]byte(tc.tail))
			if m.method != tc.method || m.response != tc.response || m.methodName != tc.methodName || string(m.id) != tc.wantID {
				t.Errorf("tailMembers(%q) = method %v %q, response %v, id %q; want %v %q, %v, %q",
					tc.tail, m.method, m.methodName, m.response, m.id, tc.method, tc.methodName, tc.response, tc.wantID)
			}
		})
	}
}
