package recorder

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/internal/testwait"
	"github.com/mcpdiag/mcpdiag/wire"
)

type outerKey struct{}

// (The fault layer's tap: proxy's faulttap_test.go, through a real fault
// endpoint.)
//
// The context a request is passed on with answers, from one node, for the
// exchange, the fault layer's tap and the message parsed from a whole body;
// any other key, and the cancellation, are the request's own; and a body
// the recorder did not read whole leaves the message to the layers above.
func TestPassedOnContext(t *testing.T) {
	outer := wire.ParseMessage([]byte(`{"jsonrpc":"2.0","id":1,"method":"outer"}`))
	for _, tc := range []struct {
		name, body string
		maxParse   int
		wantMethod string
	}{
		{name: "whole body", body: `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo"}}`, wantMethod: "tools/call"},
		{name: "body beyond the parse limit", body: `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo"}}`, maxParse: 8, wantMethod: "outer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc, err := New(Options{Sync: true, MaxRequestParse: tc.maxParse})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.WithValue(wire.WithMessage(context.Background(), &outer), outerKey{}, "outer value"))
			defer cancel()
			r := httptest.NewRequestWithContext(ctx, http.MethodPost, "/mcp", strings.NewReader(tc.body))
			rc.Serve(httptest.NewRecorder(), r, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				ctx := r.Context()
				if ex := From(ctx); ex == nil || ex.Request() == r {
					t.Fatal("no exchange on the context, or the request passed on is the client's")
				}
				if m := wire.MessageFrom(ctx); m == nil || m.Method != tc.wantMethod {
					t.Errorf("wire.MessageFrom: %+v, want method %q", m, tc.wantMethod)
				}
				if v := ctx.Value(outerKey{}); v != "outer value" {
					t.Errorf("the request's own value: %v", v)
				}
				inner, stop := context.WithCancel(ctx)
				defer stop()
				cancel()
				testwait.Recv(t, inner.Done(), "the passed-on context to end after the request's was cancelled")
				if ctx.Err() != context.Canceled {
					t.Errorf("the passed-on context's Err %v after the request's was cancelled", ctx.Err())
				}
			}))
		})
	}
}

// Passing a request on allocates the exchange and the request's copy, no
// context nodes (one per value before), no fault tap (a closure per
// exchange before, made now only when a fault layer asks) and no
// http.ResponseController (made when one is needed).
func TestPassingOnAllocations(t *testing.T) {
	rc, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodGet, "/mcp", nil)
	r = r.WithContext(context.WithValue(r.Context(), connKey{}, "conn-1"))
	n := testing.AllocsPerRun(100, func() {
		rw := rc.prepare(w, r, http.NotFoundHandler())
		if rw.ex.malformed || From(rw.fwd.Context()) != rw.ex {
			t.Fatal("no exchange passed on")
		}
	})
	// The Exchange (with its response writer and context node) and the
	// request passed on.
	if n > 2 {
		t.Errorf("%v allocations to pass a request on, want 2", n)
	}
}

// rewindBody is a request body a test can refill without allocating.
type rewindBody struct{ strings.Reader }

func (*rewindBody) Close() error { return nil }

// A request with a whole JSON body is passed on with the exchange, the
// body's bytes, the request's copy and io.NopCloser's wrapper of the
// exchange's own bytes.Reader (a bytes.Reader of its own before).
func TestPassingOnAllocationsWithBody(t *testing.T) {
	rc, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	const body = `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	w := httptest.NewRecorder()
	var rb rewindBody
	r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	r = r.WithContext(context.WithValue(r.Context(), connKey{}, "conn-1"))
	r.Body, r.ContentLength = &rb, int64(len(body))
	n := testing.AllocsPerRun(100, func() {
		rb.Reset(body)
		rw := rc.prepare(w, r, http.NotFoundHandler())
		fwd := rw.fwd
		if rw.ex.malformed || rw.ex.Method() != "ping" || !rw.ex.reqComplete {
			t.Fatal("the request was not read whole")
		}
		if b, ok := rw.ex.InMemoryBody(fwd.Body); !ok || b == nil {
			t.Fatal("the body passed on is not the exchange's in-memory body")
		}
	})
	if n > 4 {
		t.Errorf("%v allocations to pass a request with a body on, want 4", n)
	}
}

// The recorded response header is a copy of the fields sent: a nil value
// (a field net/http must not add) left out, an empty one nil, each field's
// values its own (appending to one does not reach the next), and later
// changes to the handler's header not in it; it takes the map's
// allocations and two (the headerCopy, the values; three with a name
// net/http does not send: the names' slice), whatever the number of
// fields (one per field with values before: 7 here), and none into a
// headerCopy reused.
func TestCopyHeader(t *testing.T) {
	h := http.Header{
		"Content-Type":   {"application/json"},
		"Content-Length": {"12"},
		"Set-Cookie":     {"a=1", "b=2"},
		"Mcp-Session-Id": {"s1"},
		"Date":           nil,
		"X-Empty":        {},
		"Bad Name":       {"x"},
	}
	hc0 := new(headerCopy)
	c := hc0.copy(h)
	invalid := hc0.invalid
	want := http.Header{"Content-Type": {"application/json"}, "Content-Length": {"12"}, "Set-Cookie": {"a=1", "b=2"}, "Mcp-Session-Id": {"s1"}, "X-Empty": nil, "Bad Name": {"x"}}
	if len(c) != len(want) {
		t.Fatalf("copy %v, want %v", c, want)
	}
	for k, v := range want {
		got, ok := c[k]
		if !ok || !slices.Equal(got, v) || (v == nil) != (got == nil) {
			t.Errorf("%s: %q, want %q", k, got, v)
		}
	}
	if !slices.Equal(invalid, []string{"Bad Name"}) {
		t.Errorf("invalid names %q", invalid)
	}
	for k := range c {
		c[k] = append(c[k], "appended")
	}
	for k, v := range want {
		if got := c[k]; !slices.Equal(got[:len(got)-1], v) {
			t.Errorf("%s after appending to every field: %q", k, got)
		}
	}
	h["Content-Type"][0] = "text/plain"
	if c.Get("Content-Type") != "application/json" {
		t.Errorf("the copy shares the handler's values")
	}
	var m http.Header
	maps := testing.AllocsPerRun(100, func() {
		m = make(http.Header, len(h))
		for k := range want {
			m[k] = nil
		}
	})
	n := testing.AllocsPerRun(100, func() { m = new(headerCopy).copy(h) })
	if n > maps+3 || len(m) != len(want) {
		t.Errorf("%v allocations to copy a header of %d fields, want %v (the map's) and three (with the invalid names' slice: h has one)", n, len(h), maps)
	}
	// A headerCopy reused (releaseHeader, headerCopies) allocates nothing:
	// its map and its array of values are overwritten.
	hc := new(headerCopy)
	hc.copy(h)
	reused := testing.AllocsPerRun(100, func() { m = hc.copy(h) })
	if reused != 0 || len(m) != len(want) || m.Get("Set-Cookie") != "a=1" || !slices.Equal(hc.invalid, []string{"Bad Name"}) {
		t.Errorf("%v allocations to copy a header of %d fields into a reused copy, want 0", reused, len(h))
	}
}
