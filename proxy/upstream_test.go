package proxy

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/textproto"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/recorder"
)

// wroteTransport plays http.Transport's part in the trace: it calls the
// request's WroteRequest hook (with err) and answers a canned response.
type wroteTransport struct {
	err  error
	resp *http.Response
	reqs []*http.Request
}

func (t *wroteTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	t.reqs = append(t.reqs[:0], req)
	if tr := httptrace.ContextClientTrace(req.Context()); tr != nil && tr.WroteRequest != nil {
		tr.WroteRequest(httptrace.WroteRequestInfo{Err: t.err})
	}
	return t.resp, nil
}

// The upstream transport notes WroteRequest in Up.Sent through the trace
// ReverseProxy put on the request's context, without a trace, a context and
// a request copy of its own (and the reflective compose of two traces) per
// exchange; a trace that has its own WroteRequest still gets its call.
func TestUpstreamTransportJoinsTheTrace(t *testing.T) {
	for _, tc := range []struct {
		name       string
		own        bool // the trace on the context has its own WroteRequest
		err        error
		wantSent   bool
		wantAllocs float64
	}{
		{name: "reverse proxy's trace, written", wantSent: true, wantAllocs: 2},
		{name: "reverse proxy's trace, not written", err: io.ErrUnexpectedEOF, wantSent: false, wantAllocs: 2},
		{name: "a trace with its own hook", own: true, wantSent: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec, err := recorder.New(recorder.Options{})
			if err != nil {
				t.Fatal(err)
			}
			inner := &wroteTransport{err: tc.err, resp: &http.Response{StatusCode: 200, Body: http.NoBody}}
			ut := &upstreamTransport{rt: inner}
			got1xx, ownCalls := 0, 0
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				ex := recorder.From(r.Context())
				trace := func() *httptrace.ClientTrace {
					// As ReverseProxy makes one for each request.
					tr := &httptrace.ClientTrace{Got1xxResponse: func(int, textproto.MIMEHeader) error { got1xx++; return nil }}
					if tc.own {
						tr.WroteRequest = func(httptrace.WroteRequestInfo) { ownCalls++ }
					}
					return tr
				}
				out := r.Clone(httptrace.WithClientTrace(r.Context(), trace()))
				if _, err := ut.RoundTrip(out); err != nil {
					t.Fatal(err)
				}
				if ex.Up.Sent.Load() != tc.wantSent {
					t.Errorf("Up.Sent %v, want %v", ex.Up.Sent.Load(), tc.wantSent)
				}
				if tc.own {
					if ownCalls != 1 {
						t.Errorf("the trace's own WroteRequest called %d times, want 1", ownCalls)
					}
					return
				}
				if inner.reqs[0] != out {
					t.Errorf("the transport got a copy of the request, not the request")
				}
				if err := httptrace.ContextClientTrace(inner.reqs[0].Context()).Got1xxResponse(100, nil); err != nil || got1xx != 1 {
					t.Errorf("the reverse proxy's Got1xxResponse lost (%d calls)", got1xx)
				}
				// RoundTrip's own allocations: those of building the
				// request as ReverseProxy does and passing it on, less
				// those of building it alone. (The closure of the hook and
				// the response body's wrapper are left.)
				build := func() *http.Request { return r.WithContext(httptrace.WithClientTrace(r.Context(), trace())) }
				alone := testing.AllocsPerRun(200, func() { _ = build() })
				with := testing.AllocsPerRun(200, func() { _, _ = ut.RoundTrip(build()) })
				if with-alone > tc.wantAllocs {
					t.Errorf("RoundTrip allocates %v objects, want at most %v", with-alone, tc.wantAllocs)
				}
			})
			req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
			rec.Serve(httptest.NewRecorder(), req, h)
		})
	}
}
