package recorder

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/internal/testwait"
)

// TestRequestBodyClosedOnceRead: a request body the recorder read to its
// end is closed before the request is passed on (the server's own body, not
// only the copy passed on), so that net/http does not try to drain it on
// the response's first write, the deepest call of a request (it grew the
// handler goroutine's stack to 16 KiB, which an idle stream keeps). A body
// longer than the parse limit is left open: its rest is passed on whole.
// Real server on 127.0.0.1. Before the fix, reading the server's body
// returned io.EOF (open) in the first row.
func TestRequestBodyClosedOnceRead(t *testing.T) {
	long := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"s":"` + strings.Repeat("x", 4000) + `"}}}`
	for _, tc := range []struct {
		name, body string
		maxParse   int
		wantClosed bool
	}{
		{"read to its end", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, 0, true},
		{"longer than the parse limit", long, 64, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc, err := New(Options{MaxRequestParse: tc.maxParse})
			if err != nil {
				t.Fatal(err)
			}
			type seen struct {
				origErr error
				fwd     string
				fwdErr  error
			}
			got := make(chan seen, 1)
			var orig io.ReadCloser
			inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var s seen
				if tc.wantClosed {
					_, s.origErr = orig.Read(make([]byte, 1))
				}
				b, err := io.ReadAll(r.Body)
				s.fwd, s.fwdErr = string(b), err
				if !tc.wantClosed {
					_, s.origErr = orig.Read(make([]byte, 1))
				}
				got <- s
				w.Write([]byte("ok"))
			})
			h := rc.Handler(inner)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				orig = r.Body
				h.ServeHTTP(w, r)
			}))
			defer srv.Close()
			resp, err := http.Post(srv.URL, "application/json", strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			s := testwait.Recv(t, got, "the handler's report of what it forwarded")
			if s.fwd != tc.body || s.fwdErr != nil {
				t.Errorf("the body passed on: %d bytes, %v; want the %d bytes sent", len(s.fwd), s.fwdErr, len(tc.body))
			}
			if tc.wantClosed && !errors.Is(s.origErr, http.ErrBodyReadAfterClose) {
				t.Errorf("the server's body, read after the recorder read it to its end: %v, want %v (closed)", s.origErr, http.ErrBodyReadAfterClose)
			}
			if !tc.wantClosed && s.origErr != io.EOF {
				t.Errorf("the server's body, read after its rest was passed on: %v, want io.EOF (left open, read through)", s.origErr)
			}
		})
	}
}
