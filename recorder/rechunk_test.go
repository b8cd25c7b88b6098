package recorder

import (
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/wire"
)

// recordFacts is what a record says of a response, less its times.
func recordFacts(r *record.Record) string {
	c := *r
	c.Timings, c.SSEArrivals = record.Timings{}, nil
	c.ID, c.Time, c.Conn = "", time.Time{}, ""
	b, err := json.Marshal(&c)
	if err != nil {
		return "marshal: " + err.Error()
	}
	return string(b)
}

// rechunkedRecord sends a tools/call to a recorder whose handler answers
// with stream, as an event stream: written in one Write (pieces nil), or
// forwarded through ForwardChunk in pieces (the forwarding goroutine's
// classification). It returns the record's facts and the method the
// recorder noted for the server request of id "e1" (its answered).
func rechunkedRecord(t *testing.T, stream string, pieces [][]byte, maxEvent int) (string, string) {
	t.Helper()
	s := &lastSink{}
	rc, err := New(Options{Records: s, Bodies: BodiesAll, MaxEventSize: maxEvent})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(rc.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		if pieces == nil {
			w.Write([]byte(stream))
			return
		}
		if err := forwardBody(From(r.Context()), &pieceReader{pieces: pieces}); err != io.EOF {
			t.Errorf("forwardBody: %v, want io.EOF", err)
		}
	})))
	defer srv.Close()
	req, err := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(`{"jsonrpc":"2.0","id":"c-1","method":"tools/call","params":{"name":"echo","arguments":{}}}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Mcp-Session-Id", "s-1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || string(got) != stream {
		t.Fatalf("the client got %d bytes (%v), want the %d sent", len(got), err, len(stream))
	}
	if err := rc.Wait(t.Context()); err != nil {
		t.Fatal(err)
	}
	r := s.last()
	if r == nil {
		t.Fatal("no record")
	}
	id, err := wire.ParseID(`"e1"`)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := rc.srvReqs.answeredOK("s-1", id)
	return recordFacts(r), m
}

// TestForwardRechunkedSameRecord (metamorphic): the same upstream bytes
// forwarded in one piece, one byte at a time or in random pieces give the
// same record (verdict, reason, warnings, sizes, events, the body kept)
// and note the same server request as the stream written in one Write,
// which the pipe's classifier reads: a stream with a server request and
// notifications before its result, one cut before its result, one with
// messages after it, one with CRLF lines and a BOM, one with an event over
// MaxEventSize, and server requests over MaxEventSize (noted as the
// request watch notes them: under maxWatchedEvent, before and after the
// result).
func TestForwardRechunkedSameRecord(t *testing.T) {
	req := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"e1\",\"method\":\"elicitation/create\",\"params\":{\"message\":\"?\",\"requestedSchema\":{\"type\":\"object\"}}}\n\n"
	note := "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"x\"}}\n\n"
	result := "id: 9\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"c-1\",\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"" + strings.Repeat("r", 1500) + "\"}]}}\n\n"
	big := "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1,\"message\":\"" + strings.Repeat("m", 5000) + "\"}}\n\n"
	// A server request the classifier reads through (over MaxEventSize),
	// under the request watch's maxWatchedEvent, and one over it too.
	bigReq := func(n int) string {
		return "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"e1\",\ndata: \"method\":\"elicitation/create\",\"params\":{\"message\":\"" + strings.Repeat("q", n) + "\",\"requestedSchema\":{\"type\":\"object\"}}}\n\n"
	}
	for _, tc := range []struct {
		name, stream string
		maxEvent     int
		noted        string // the method noted for e1
	}{
		{"request, notifications, result", ": hi\n\n" + note + req + note + result, 0, "elicitation/create"},
		{"cut before the result", note + req + "data: {\"jsonrpc\":\"2.0\",\"id\":\"c-1\",\"res", 0, "elicitation/create"},
		{"messages after the result", req + result + note + req, 0, "elicitation/create"},
		{"CRLF and a BOM", "\ufeff" + strings.ReplaceAll(note+req+result, "\n", "\r\n"), 0, "elicitation/create"},
		{"an event over MaxEventSize", note + big + req + result, 4096, "elicitation/create"},
		{"a request over MaxEventSize", note + bigReq(9000) + result, 4096, "elicitation/create"},
		{"a request over MaxEventSize after the result", result + strings.ReplaceAll(bigReq(9000), "\n", "\r\n"), 4096, "elicitation/create"},
		{"a request over MaxEventSize and maxWatchedEvent", note + bigReq(maxWatchedEvent) + result, 4096, ""},
		{"no event", ": only a comment\n\n", 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, wantM := rechunkedRecord(t, tc.stream, nil, tc.maxEvent)
			b := []byte(tc.stream)
			rng := rand.New(rand.NewPCG(uint64(len(b)), 21))
			var random [][]byte
			for rest := b; len(rest) > 0; {
				n := min(len(rest), 1+rng.IntN(700))
				random, rest = append(random, rest[:n]), rest[n:]
			}
			var ones [][]byte
			for i := range b {
				ones = append(ones, b[i:i+1])
			}
			for _, ch := range []struct {
				name   string
				pieces [][]byte
			}{{"one piece", [][]byte{b}}, {"random pieces", random}, {"one byte each", ones}} {
				got, gotM := rechunkedRecord(t, tc.stream, ch.pieces, tc.maxEvent)
				if got != want || gotM != wantM {
					t.Errorf("%s: record\n%s\nrequest noted %q; written whole:\n%s\nrequest noted %q", ch.name, got, gotM, want, wantM)
				}
			}
			if wantM != tc.noted {
				t.Errorf("the request noted as %q, want %q", wantM, tc.noted)
			}
		})
	}
}
