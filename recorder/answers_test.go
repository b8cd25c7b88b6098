package recorder

import (
	"strconv"
	"testing"

	"github.com/mcpdiag/mcpdiag/wire"
)

// TestServerRequestsByKey: the method the record of a client's answer
// names is the server request's it answers, or none when two server
// requests of one id, different methods, wait under one key at once (no
// Mcp-Session-Id: every 2024-11-05 HTTP+SSE client shares the key "").
func TestServerRequestsByKey(t *testing.T) {
	t.Parallel()
	type saw struct{ session, msg string }
	type ans struct{ session, id, want string }
	cases := []struct {
		name string
		saw  []saw
		ans  []ans
	}{
		{"one", []saw{{"s1", `{"jsonrpc":"2.0","id":0,"method":"roots/list"}`}},
			[]ans{{"s1", `0`, "roots/list"}, {"s1", `0`, ""}}},
		{"JSON type", []saw{{"s1", `{"jsonrpc":"2.0","id":"0","method":"roots/list"}`}},
			[]ans{{"s1", `0`, ""}, {"s1", `"0"`, "roots/list"}}},
		{"two sessions", []saw{{"s1", `{"jsonrpc":"2.0","id":0,"method":"roots/list"}`}, {"s2", `{"jsonrpc":"2.0","id":0,"method":"elicitation/create"}`}},
			[]ans{{"s1", `0`, "roots/list"}, {"s2", `0`, "elicitation/create"}}},
		{"no session, two clients", []saw{{"", `{"jsonrpc":"2.0","id":0,"method":"roots/list"}`}, {"", `{"jsonrpc":"2.0","id":0,"method":"sampling/createMessage"}`}},
			[]ans{{"", `0`, ""}, {"", `0`, ""}}},
		{"seen twice", []saw{{"", `{"jsonrpc":"2.0","id":0,"method":"roots/list"}`}, {"", `{"jsonrpc":"2.0","id":0,"method":"roots/list"}`}},
			[]ans{{"", `0`, "roots/list"}}},
		{"answered, then reused", []saw{{"", `{"jsonrpc":"2.0","id":0,"method":"roots/list"}`}},
			[]ans{{"", `0`, "roots/list"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var s serverRequests
			for _, w := range c.saw {
				s.saw(w.session, []byte(w.msg))
			}
			for _, a := range c.ans {
				if got := s.answered(a.session, wire.IDFromRaw([]byte(a.id))); got != a.want {
					t.Errorf("answered(%q, %s) = %q, want %q", a.session, a.id, got, a.want)
				}
			}
		})
	}
	// The bound: the oldest is forgotten past maxServerRequests.
	var s serverRequests
	for i := 0; i <= maxServerRequests; i++ {
		s.saw("s", []byte(`{"jsonrpc":"2.0","id":`+strconv.Itoa(i)+`,"method":"roots/list"}`))
	}
	if len(s.byKey) != maxServerRequests || len(s.order) != maxServerRequests {
		t.Errorf("remembered %d (order %d), want %d", len(s.byKey), len(s.order), maxServerRequests)
	}
	if got := s.answered("s", wire.IDFromRaw([]byte("0"))); got != "" {
		t.Errorf("the oldest, forgotten: %q", got)
	}
	if got := s.answered("s", wire.IDFromRaw([]byte(strconv.Itoa(maxServerRequests)))); got != "roots/list" {
		t.Errorf("the newest: %q", got)
	}
}
