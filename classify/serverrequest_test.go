package classify

import (
	"bytes"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/wire"
)

// unreadHead is an event over serverRequestLimit whose first bytes show a
// result: the classifier reads it through and may not judge what follows
// (afterUnread).
var unreadHead = "data: {\"jsonrpc\":\"2.0\",\"id\":\"fuzz-call\",\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"" +
	strings.Repeat("x", serverRequestLimit) + "\"}]}}\n\n"

// serverRequestLimit is the classifier's event limit in these tests.
const serverRequestLimit = 8 << 10

// handedOn returns the data of each event of stream the classifier hands
// to OnServerRequest, reading it for a tools/call of id "fuzz-call" (as the
// recorder does, or as a client, stop).
func handedOn(t *testing.T, stream string, stop bool) []string {
	t.Helper()
	got, _ := handedOnLate(t, stream, stop)
	return got
}

// handedOnLate is handedOn with what the classifier hands to
// OnLateServerRequest (after the response) apart.
func handedOnLate(t *testing.T, stream string, stop bool) (got, late []string) {
	t.Helper()
	c := &Classifier{MaxEventSize: serverRequestLimit, StopAtTerminal: stop,
		OnServerRequest:     func(m []byte) { got = append(got, string(m)) },
		OnLateServerRequest: func(m []byte) { late = append(late, string(m)) }}
	// The error of a stream with an unread event (not classified) is
	// no matter here.
	r, _ := c.Classify(&Exchange{Method: "tools/call", ID: wire.StringID("fuzz-call"), ProtocolVersion: Protocol2025,
		Status: http.StatusOK, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: strings.NewReader(stream)})
	if r == nil {
		t.Fatal("classify: no verdict")
	}
	return got, late
}

// responseHead is the response to handedOn's request, as an event.
const responseHead = "data: {\"jsonrpc\":\"2.0\",\"id\":\"fuzz-call\",\"result\":{\"content\":[]}}\n\n"

// TestLateServerRequestHandedOn: a server request after the response goes
// to OnLateServerRequest, the first and every later one (the recorder's
// classifier on the forwarding goroutine notes them there, as the request
// watch did before it forwarded them), never to OnServerRequest (truth16:
// no part of the exchange), and to neither when the classifier stops at
// the response. Before, no request after the response was handed on:
// fwd21's branch left a client's answer to one without its method.
func TestLateServerRequestHandedOn(t *testing.T) {
	t.Parallel()
	req := func(id int) string {
		return fmt.Sprintf("event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"roots/list\"}\n\n", id)
	}
	note := "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n"
	ping := "event: ping\ndata: {\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"roots/list\"}\n\n"
	ids := func(msgs []string) []string {
		var out []string
		for _, m := range msgs {
			out = append(out, wire.ParseMessage([]byte(m)).ID.String())
		}
		return out
	}
	for _, c := range []struct {
		name, stream string
		before, late []string // the ids handed on, without StopAtTerminal
	}{
		{"one after", responseHead + req(1), nil, []string{"1"}},
		{"two after, a ping between", responseHead + note + req(1) + ping + req(2), nil, []string{"1", "2"}},
		{"before and after", req(1) + responseHead + req(2), []string{"1"}, []string{"2"}},
		{"after a second response", responseHead + responseHead + req(3), nil, []string{"3"}},
		{"none after", req(4) + responseHead + note, []string{"4"}, nil},
	} {
		for _, stop := range []bool{false, true} {
			got, late := handedOnLate(t, c.stream, stop)
			wantLate := c.late
			if stop {
				wantLate = nil
			}
			if !slices.Equal(ids(got), c.before) || !slices.Equal(ids(late), wantLate) {
				t.Errorf("%s, stop %v: handed on %q before the response, %q after; want %q, %q", c.name, stop, ids(got), ids(late), c.before, wantLate)
			}
		}
	}
}

// TestServerRequestAfterUnread: after an event the classifier read
// through (over its limit, perhaps the response), it hands on the same
// server requests as before one: not a request in an event of another type
// (event: ping), nor one without jsonrpc "2.0". Before, it handed both on
// there (and a client answered them, and the recorder noted their ids).
func TestServerRequestAfterUnread(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, event string
		want        bool
	}{
		{"typed event", "event: ping\ndata: {\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"sampling/createMessage\"}\n\n", false},
		{"no version", "data: {\"id\":12,\"method\":\"roots/list\"}\n\n", false},
		{"method and result", "data: {\"jsonrpc\":\"2.0\",\"id\":13,\"method\":\"roots/list\",\"result\":{}}\n\n", false},
		{"request", "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":14,\"method\":\"roots/list\"}\n\n", true},
	}
	for _, c := range cases {
		for _, stop := range []bool{false, true} {
			first := handedOn(t, c.event, stop)
			after := handedOn(t, unreadHead+c.event, stop)
			if len(first) == 1 != c.want || len(after) == 1 != c.want {
				t.Errorf("%s, stop %v: handed on %q first, %q after an unread event; want a request: %v", c.name, stop, first, after, c.want)
			}
		}
	}
}

// FuzzIsServerRequest: wire.IsServerRequest says an event is a server
// request exactly when the classifier hands it on (OnServerRequest), at
// the start of a stream and after an unread event, and exactly when
// wire.ParseMessage reads a request in it (a method and an id not null)
// with jsonrpc "2.0", neither result nor error, in an event of type
// message or none.
func FuzzIsServerRequest(f *testing.F) {
	for _, s := range [][2]string{
		{"", `{"jsonrpc":"2.0","id":1,"method":"roots/list"}`},
		{"message", `{"jsonrpc":"2.0","id":"a","method":"elicitation/create","params":{}}`},
		{"ping", `{"jsonrpc":"2.0","id":1,"method":"roots/list"}`},
		{"", `{"id":1,"method":"roots/list"}`},
		{"", `{"jsonrpc":"2.0","id":1,"method":"roots/list","result":{}}`},
		{"", `{"jsonrpc":"2.0","id":null,"method":"x","id":4}`},
		{"", `{"jsonr\u0070c":"2\u002e0","\u0069d":3,"m\u0065thod":"roots/list"}`},
		{"", "{\"jsonrpc\":\"2.0\",\n\"id\":2,\"method\":\"x\"}\n"},
		{"", `{"jsonrpc":"2.0","id":"fuzz-call","result":{"content":[]}}`},
		{"", `{"jsonrpc":"2.0","id":1,"method":"roots/list"`},
	} {
		f.Add(s[0], []byte(s[1]))
	}
	f.Fuzz(func(t *testing.T, typ string, data []byte) {
		if len(data) > serverRequestLimit/2 || strings.ContainsAny(typ, "\r\n") || bytes.IndexByte(data, '\r') >= 0 {
			return
		}
		var b strings.Builder
		if typ != "" {
			b.WriteString("event: " + typ + "\n")
		}
		for line := range bytes.SplitSeq(data, []byte("\n")) {
			b.WriteString("data: ")
			b.Write(line)
			b.WriteByte('\n')
		}
		b.WriteByte('\n')
		stream := b.String()
		// The event as wire's reader reads it, which every reader of a
		// stream uses.
		rd := wire.NewSSEReader(strings.NewReader(stream), serverRequestLimit)
		ev, err := rd.Next()
		if err != nil {
			return
		}
		is := wire.IsServerRequest(ev.Type, ev.Data)

		m := wire.ParseMessage(ev.Data)
		version, _ := wire.Field(ev.Data, "jsonrpc")
		_, result := wire.Field(ev.Data, "result")
		_, errv := wire.Field(ev.Data, "error")
		parsed := wire.EventCarriesMessage(ev.Type) && m.Kind == wire.MessageRequest && wire.StringIs(version, "2.0") && !result && !errv
		if is != parsed {
			t.Fatalf("type %q data %q: IsServerRequest %v, ParseMessage %v (kind %s)", ev.Type, ev.Data, is, parsed, m.Kind)
		}
		if is && (m.ID.IsZero() || m.ID.IsNull()) {
			t.Fatalf("data %q: a request of id %q", ev.Data, m.ID)
		}
		for _, stop := range []bool{false, true} {
			for _, prefix := range []string{"", unreadHead} {
				got := handedOn(t, prefix+stream, stop)
				handed := len(got) == 1 && got[0] == string(ev.Data)
				if len(got) > 1 || is != handed {
					t.Fatalf("type %q data %q (unread before: %v, stop %v): IsServerRequest %v, the classifier handed on %q", ev.Type, ev.Data, prefix != "", stop, is, got)
				}
			}
			// After the response (once or twice): to OnLateServerRequest
			// only, unless the classifier stops at the response.
			for _, prefix := range []string{responseHead, responseHead + responseHead} {
				got, late := handedOnLate(t, prefix+stream, stop)
				handed := len(late) == 1 && late[0] == string(ev.Data)
				if len(got) != 0 || len(late) > 1 || (is && !stop) != handed {
					t.Fatalf("type %q data %q (after the response, stop %v): IsServerRequest %v, the classifier handed on %q, %q late", ev.Type, ev.Data, stop, is, got, late)
				}
			}
		}
	})
}
