package recorder

import (
	"bytes"
	"errors"
	"slices"
	"strconv"
	"strings"
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
		// An answer's id spelled otherwise is the same id, as the server
		// pairs it (ids15): before, keyed by the id's bytes, the answer
		// named no method.
		{"escaped string", []saw{{"s1", `{"jsonrpc":"2.0","id":"1","method":"roots/list"}`}},
			[]ans{{"s1", `"\u0031"`, "roots/list"}}},
		{"number spelled 1.0", []saw{{"s1", `{"jsonrpc":"2.0","id":1,"method":"roots/list"}`}},
			[]ans{{"s1", `1.0`, "roots/list"}}},
		{"number spelled 1e0", []saw{{"s1", `{"jsonrpc":"2.0","id":1e0,"method":"roots/list"}`}},
			[]ans{{"s1", `1`, "roots/list"}}},
		{"numbers past float64", []saw{{"s1", `{"jsonrpc":"2.0","id":9007199254740993,"method":"roots/list"}`}},
			[]ans{{"s1", `9007199254740992`, ""}, {"s1", `9007199254740993`, "roots/list"}}},
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

// watched returns the server requests (method and id, one line each) a
// requestWatch notes in stream fed in the pieces cuts makes.
func watched(stream []byte, cuts []int) []string {
	var s serverRequests
	w := newRequestWatch()
	defer w.release()
	var got []string
	feed := func(b []byte) {
		// A copy, as the writer's caller may reuse its bytes.
		w.feed(append([]byte(nil), b...), &s, "s")
		for _, k := range s.order {
			got = append(got, s.byKey[k]+" "+k[2:])
		}
		s = serverRequests{}
	}
	last := 0
	for _, c := range cuts {
		if c > last && c < len(stream) {
			feed(stream[last:c])
			last = c
		}
	}
	feed(stream[last:])
	return got
}

// readRequests returns the server requests wire's SSEReader finds in
// stream whose data the watch looks at (up to maxWatchedEvent), as the
// classifier reads them.
func readRequests(stream []byte) []string {
	rd := wire.NewSSEReader(bytes.NewReader(stream), wire.DefaultMaxEventSize)
	var got []string
	for {
		ev, err := rd.Next()
		if err != nil {
			if errors.As(err, new(*wire.SkippedEventError)) {
				continue
			}
			return got
		}
		if len(ev.Data) > maxWatchedEvent {
			continue
		}
		// The classifier's rule (classify's FuzzIsServerRequest holds
		// that it is).
		if wire.IsServerRequest(ev.Type, ev.Data) {
			m := wire.ParseMessage(ev.Data)
			got = append(got, m.Method+" "+m.ID.Key())
		}
	}
}

// TestRequestWatch: the writer's watch notes, before the bytes go out,
// the server requests the classifier reads in the same stream (events
// whose data is at most maxWatchedEvent), however the stream is cut into
// writes; a request in a larger event is left to the classifier.
func TestRequestWatch(t *testing.T) {
	t.Parallel()
	big := `{"jsonrpc":"2.0","id":9,"method":"sampling/createMessage","params":{"x":"` + strings.Repeat("a", maxWatchedEvent) + `"}}`
	cases := []struct {
		name, stream string
		want         []string
	}{
		{"one", "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"elicitation/create\",\"params\":{}}\n\n",
			[]string{"elicitation/create 1"}},
		{"string id, CRLF, BOM", "\ufeffdata: {\"jsonrpc\":\"2.0\",\"id\":\"r-1\",\"method\":\"roots/list\"}\r\n\r\n",
			[]string{`roots/list "r-1"`}},
		{"data lines joined", "data: {\"jsonrpc\":\"2.0\",\ndata: \"id\":2,\"method\":\"roots/list\"}\n\n",
			[]string{"roots/list 2"}},
		{"escaped member names", "data: {\"jsonrpc\":\"2.0\",\"\\u0069d\":3,\"m\\u0065thod\":\"roots/list\"}\n\n",
			[]string{"roots/list 3"}},
		{"not requests", "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"id\":4}}\n\n" +
			"data: {\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"roots/list\"}\n\n" +
			"data: {\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{\"method\":\"x\"}}\n\n" +
			"data: {\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"roots/list\"\n\n" +
			": data: {\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"roots/list\"}\n\n", nil},
		{"unterminated", "data: {\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"roots/list\"}\n", nil},
		// Events the classifier passes on as no request (review14): a
		// typed event, a type that only starts as "message", a request
		// without jsonrpc "2.0"; the last type of an event counts.
		{"typed events and no version", "event: ping\ndata: {\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"sampling/createMessage\"}\n\n" +
			"event: messages\ndata: {\"jsonrpc\":\"2.0\",\"id\":12,\"method\":\"roots/list\"}\n\n" +
			"event: a-very-long-event-type\ndata: {\"jsonrpc\":\"2.0\",\"id\":13,\"method\":\"roots/list\"}\n\n" +
			"data: {\"id\":14,\"method\":\"roots/list\"}\n\n" +
			"data: {\"jsonrpc\":\"1.0\",\"id\":15,\"method\":\"roots/list\"}\n\n" +
			"event: ping\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":16,\"method\":\"roots/list\"}\n\n" +
			"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":17,\"method\":\"roots/list\"}\n\n",
			[]string{"roots/list 16", "roots/list 17"}},
		// A method with a result or an error is a response to the
		// classifier: before, the watch noted both (ids 18, 19), and a
		// later answer of their id named a method no request had.
		// Data that is not one JSON object is no message.
		{"responses and no JSON", "data: {\"jsonrpc\":\"2.0\",\"id\":18,\"method\":\"roots/list\",\"result\":{}}\n\n" +
			"data: {\"jsonrpc\":\"2.0\",\"id\":19,\"method\":\"roots/list\",\"error\":{\"code\":1,\"message\":\"x\"}}\n\n" +
			"data: {\"jsonrpc\":\"2.0\",\"id\":20,\"method\":\"roots/list\"} {}\n\n" +
			"data: {\"jsonrpc\":\"2.0\",\"id\":21,\"method\":\"roots/list\",\"params\":[1,]}\n\n" +
			"data: {\"jsonrpc\":\"2.0\",\"id\":22,\"method\":\"roots/list\"}\n\n",
			[]string{"roots/list 22"}},
		{"over the bound, then one", "data: " + big + "\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"roots/list\"}\n\n",
			[]string{"roots/list 10"}},
	}
	for _, c := range cases {
		// As the table keys them: "method id" with the id's key.
		for i, w := range c.want {
			method, id, _ := strings.Cut(w, " ")
			c.want[i] = method + " " + wire.IDFromRaw([]byte(id)).Key()
		}
		t.Run(c.name, func(t *testing.T) {
			stream := []byte(c.stream)
			if got := readRequests(stream); !slices.Equal(got, c.want) {
				t.Fatalf("the reader finds %q, the case wants %q", got, c.want)
			}
			if got := watched(stream, nil); !slices.Equal(got, c.want) {
				t.Errorf("whole: noted %q, want %q", got, c.want)
			}
			if len(stream) > 4096 {
				return
			}
			for i := 1; i < len(stream); i++ {
				if got := watched(stream, []int{i}); !slices.Equal(got, c.want) {
					t.Errorf("cut at %d: noted %q, want %q", i, got, c.want)
				}
			}
			cuts := make([]int, len(stream))
			for i := range cuts {
				cuts[i] = i
			}
			if got := watched(stream, cuts); !slices.Equal(got, c.want) {
				t.Errorf("byte by byte: noted %q, want %q", got, c.want)
			}
		})
	}
}

// FuzzRequestWatch: for any stream and any cut into writes, the watch
// notes the requests wire's SSEReader finds in it (a last event with no
// blank line after it: neither).
func FuzzRequestWatch(f *testing.F) {
	f.Add([]byte("data: {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"roots/list\"}\n\n"), uint16(7), uint16(30))
	f.Add([]byte("\ufeffdata: {\"jsonrpc\":\"2.0\",\r\ndata: \"id\":\"a\",\"method\":\"x\"}\r\r"), uint16(1), uint16(40))
	f.Add([]byte("data:{\"id\":2,\"method\":\"m\"}\n\ndata\n\n"), uint16(0), uint16(5))
	f.Fuzz(func(t *testing.T, stream []byte, a, b uint16) {
		want := readRequests(stream)
		got := watched(stream, []int{int(a) % (len(stream) + 1), int(b) % (len(stream) + 1)})
		if !slices.Equal(got, want) {
			t.Errorf("noted %q, the reader finds %q", got, want)
		}
	})
}
