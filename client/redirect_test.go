package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/client"
	"github.com/mcpdiag/mcpdiag/record"
)

// sink is a 127.0.0.1 listener that must receive nothing: it counts every
// request and keeps what it saw, so a failure shows what leaked.
type sink struct {
	srv  *httptest.Server
	mu   sync.Mutex
	seen []string
}

func newSink(t *testing.T) *sink {
	s := &sink{}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.seen = append(s.seen, fmt.Sprintf("%s %s %v %s", r.Method, r.URL, r.Header, body))
		s.mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *sink) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.seen...)
}

// redirector answers every request whose path is from with status and
// Location: to(base), where base is its own URL, and hands the rest to next.
func redirector(t *testing.T, from string, status int, to func(base string) string, next http.Handler) (url string, hits func() int) {
	t.Helper()
	var mu sync.Mutex
	n := 0
	var base string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == from {
			mu.Lock()
			n++
			mu.Unlock()
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Location", to(base))
			w.WriteHeader(status)
			return
		}
		if next == nil {
			http.NotFound(w, r)
			return
		}
		next.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	base = srv.URL
	return srv.URL + from, func() int { mu.Lock(); defer mu.Unlock(); return n }
}

const (
	redirectBearer = "bearer-SECRET-0b1c2d3e4f"
	redirectAPIKey = "apikey-SECRET-9a8b7c6d5e"
)

func redirectClient(t *testing.T, u string) *client.Client {
	t.Helper()
	c, err := client.New(client.Options{
		URL: u, Protocol: client.Protocol2026, Timeout: 10 * time.Second,
		Bearer: redirectBearer,
		Header: http.Header{"X-Api-Key": {redirectAPIKey}},
		// A caller's own client that follows redirects (the default) must
		// not change anything.
		HTTPClient: &http.Client{},
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// encodeRecords writes the call's records as the CLI does.
func encodeRecords(t *testing.T, call *client.Call, u string) []*record.Record {
	t.Helper()
	exchanges, summary := call.Records(record.Record{Client: "test@1"}, u)
	var buf bytes.Buffer
	w := record.NewStreamWriter(&buf, record.Encoder{})
	for _, r := range append(exchanges, summary) {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	var out []*record.Record
	for r, err := range record.NewReader(&buf).All() {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// TestRedirectToAnotherOriginRefused: a server that answers the first POST
// with a redirect to another origin (another port on 127.0.0.1, or another
// scheme) gets no second request anywhere; the redirect is its own exchange,
// HTTP_ERROR, with its status and Location and a reason that says it was
// refused and why; no credential and no body reaches the other origin.
func TestRedirectToAnotherOriginRefused(t *testing.T) {
	other := newSink(t)
	tests := []struct {
		status int
		to     func(base string) string
		why    string
	}{
		{307, func(string) string { return other.srv.URL + "/collect?x=1" }, "another origin"},
		{308, func(string) string { return other.srv.URL + "/collect" }, "another origin"},
		{301, func(string) string { return other.srv.URL + "/collect" }, "another origin"},
		{302, func(string) string { return other.srv.URL + "/collect" }, "another origin"},
		{303, func(string) string { return other.srv.URL + "/collect" }, "another origin"},
		// Same host and port, other scheme: another origin too.
		{307, func(base string) string { return strings.Replace(base, "http://", "https://", 1) + "/mcp/" }, "another origin"},
		// localhost is not 127.0.0.1: origins compare names, not addresses.
		{307, func(base string) string { return strings.Replace(base, "127.0.0.1", "localhost", 1) + "/mcp/" }, "another origin"},
		// Same origin, but a 301/302/303 would turn the POST into a GET.
		{301, func(base string) string { return base + "/mcp/" }, "307 or 308"},
		{302, func(base string) string { return base + "/mcp/" }, "307 or 308"},
		{303, func(string) string { return "/mcp/" }, "307 or 308"},
		// Same origin, but credentials in the Location.
		{307, func(base string) string { return strings.Replace(base, "http://", "http://u:p@", 1) + "/mcp/" }, "user"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d %s", tt.status, tt.to("http://127.0.0.1:1")), func(t *testing.T) {
			// Whatever the test sends after the refused redirect would land
			// on the same-origin handler: it must not be called either.
			same := newSink(t)
			u, hits := redirector(t, "/mcp", tt.status, tt.to, same.srv.Config.Handler)
			c := redirectClient(t, u)
			call, err := c.CallTool(context.Background(), "echo", json.RawMessage(`{"text":"hello"}`))
			if err != nil {
				t.Fatal(err)
			}
			if got := other.requests(); len(got) != 0 {
				t.Fatalf("the other origin received %d request(s), the first: %.400s", len(got), got[0])
			}
			if got := same.requests(); len(got) != 0 {
				t.Fatalf("the redirect target received %d request(s), the first: %.400s", len(got), got[0])
			}
			if hits() != 1 {
				t.Errorf("the redirecting server saw %d requests, want 1", hits())
			}
			if len(call.Exchanges) != 1 {
				t.Fatalf("%d exchanges, want the refused redirect alone", len(call.Exchanges))
			}
			ex := call.Exchanges[0]
			if ex.Status != tt.status || ex.ResponseHeader.Get("Location") != tt.to(strings.TrimSuffix(u, "/mcp")) {
				t.Errorf("exchange status %d Location %q, want %d %q", ex.Status, ex.ResponseHeader.Get("Location"), tt.status, tt.to(strings.TrimSuffix(u, "/mcp")))
			}
			if call.Outcome != classify.HTTPError || call.ExitCode() != client.ExitTransport {
				t.Errorf("outcome %s exit %d, want HTTP_ERROR exit 4", call.Outcome, call.ExitCode())
			}
			reason := ex.Result.Reason
			if !strings.Contains(reason, "redirect") || !strings.Contains(reason, "refused") || !strings.Contains(reason, tt.why) {
				t.Errorf("reason %q does not say the redirect was refused because of %q", reason, tt.why)
			}
			if strings.Contains(reason, ":p@") {
				t.Errorf("reason %q shows the Location's password", reason)
			}
			recs := encodeRecords(t, call, u)
			if len(recs) != 2 || recs[0].Kind != record.KindExchange || recs[1].Kind != record.KindCall {
				t.Fatalf("records: %d, want one exchange and the call", len(recs))
			}
			r := recs[0]
			if r.Status != tt.status || r.Outcome != classify.HTTPError || r.ResponseHeaders.Get("Location") == "" || !strings.Contains(r.Reason, "refused") {
				t.Errorf("exchange record: status %d outcome %s Location %q reason %q", r.Status, r.Outcome, r.ResponseHeaders.Get("Location"), r.Reason)
			}
			if recs[1].Outcome != classify.HTTPError || !strings.Contains(recs[1].Reason, "refused") {
				t.Errorf("call record: outcome %s reason %q", recs[1].Outcome, recs[1].Reason)
			}
		})
	}
}

// TestRedirectSameOriginFollowedOnce: a same-origin 307 or 308 is followed,
// once per request, with the same method, body and headers; both exchanges
// are recorded, the redirect with its Location and the decision to follow
// it. A second redirect of the followed request is refused.
func TestRedirectSameOriginFollowedOnce(t *testing.T) {
	for _, status := range []int{307, 308} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			var mu sync.Mutex
			var bodies [][]byte
			var keys []string
			mcp := goSDKHandler(true)
			target := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				mu.Lock()
				bodies = append(bodies, body)
				keys = append(keys, r.Header.Get("X-Api-Key"))
				mu.Unlock()
				r.Body = io.NopCloser(bytes.NewReader(body))
				mcp.ServeHTTP(w, r)
			})
			u, hits := redirector(t, "/mcp", status, func(string) string { return "/mcp/" }, target)
			c := redirectClient(t, u)
			call, err := c.CallTool(context.Background(), "echo", json.RawMessage(`{"text":"hello"}`))
			if err != nil {
				t.Fatal(err)
			}
			if call.Outcome != classify.ToolSuccess {
				t.Fatalf("outcome %s (%s), want TOOL_SUCCESS", call.Outcome, call.Final.Reason)
			}
			// tools/list and tools/call, each redirected once.
			if hits() != 2 || len(bodies) != 2 {
				t.Fatalf("redirects %d, followed requests %d; want 2 and 2", hits(), len(bodies))
			}
			var statuses []int
			for _, ex := range call.Exchanges {
				statuses = append(statuses, ex.Status)
			}
			if fmt.Sprint(statuses) != fmt.Sprint([]int{status, 200, status, 200}) {
				t.Fatalf("statuses %v", statuses)
			}
			for i := 0; i < 4; i += 2 {
				redir, followed := call.Exchanges[i], call.Exchanges[i+1]
				if redir.Decision == nil || redir.Decision.Action != client.FollowRedirect {
					t.Errorf("#%d decision %+v, want %s", redir.Seq, redir.Decision, client.FollowRedirect)
				}
				if !bytes.Equal(redir.RequestBody, followed.RequestBody) || !bytes.Equal(followed.RequestBody, bodies[i/2]) {
					t.Errorf("the followed request's body differs:\n%s\n%s\n%s", redir.RequestBody, followed.RequestBody, bodies[i/2])
				}
				if keys[i/2] != redirectAPIKey {
					t.Errorf("the followed same-origin request lost its header")
				}
				if !strings.HasSuffix(followed.URL, "/mcp/") || !strings.HasSuffix(redir.URL, "/mcp") {
					t.Errorf("URLs %q then %q", redir.URL, followed.URL)
				}
				if redir.Method != followed.Method || !redir.ID.Equal(followed.ID) {
					t.Errorf("the followed request is not the same request")
				}
			}
			recs := encodeRecords(t, call, u)
			if len(recs) != 5 {
				t.Fatalf("%d records", len(recs))
			}
			if r := recs[0]; r.Status != status || r.ResponseHeaders.Get("Location") != "/mcp/" || r.Decision == nil || r.Decision.Action != string(client.FollowRedirect) {
				t.Errorf("redirect record: %+v", r)
			}
			if r := recs[1]; !strings.HasSuffix(r.URL, "/mcp/") {
				t.Errorf("followed record URL %q", r.URL)
			}
		})
	}
	t.Run("second redirect refused", func(t *testing.T) {
		final := newSink(t)
		var mu sync.Mutex
		var paths []string
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			paths = append(paths, r.URL.Path)
			mu.Unlock()
			switch r.URL.Path {
			case "/mcp":
				w.Header().Set("Location", "/mcp/")
			case "/mcp/":
				w.Header().Set("Location", "/final")
			default:
				final.srv.Config.Handler.ServeHTTP(w, r)
				return
			}
			w.WriteHeader(http.StatusTemporaryRedirect)
		}))
		t.Cleanup(srv.Close)
		c := redirectClient(t, srv.URL+"/mcp")
		call, err := c.CallTool(context.Background(), "echo", nil)
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		got := fmt.Sprint(paths)
		mu.Unlock()
		if got != "[/mcp /mcp/]" || len(final.requests()) != 0 {
			t.Fatalf("the server saw %s (final %d); want /mcp then /mcp/ only", got, len(final.requests()))
		}
		if len(call.Exchanges) != 2 || call.Outcome != classify.HTTPError {
			t.Fatalf("%d exchanges, outcome %s; want 2 and HTTP_ERROR", len(call.Exchanges), call.Outcome)
		}
		if r := call.Exchanges[1].Result.Reason; !strings.Contains(r, "refused") || !strings.Contains(r, "once") {
			t.Errorf("reason %q does not say only one redirect is followed", r)
		}
	})
}
