package recorder

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

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
				<-inner.Done()
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
		rw, fwd := rc.prepare(w, r)
		if fwd == nil || From(fwd.Context()) != rw.ex {
			t.Fatal("no exchange passed on")
		}
	})
	// The Exchange (with its response writer and context node) and the
	// request passed on.
	if n > 2 {
		t.Errorf("%v allocations to pass a request on, want 2", n)
	}
}
