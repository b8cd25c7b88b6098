package proxy_test

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/mcpdiag/mcpdiag/proxy"
)

// TestProxyPassesRedirectsThrough: the proxy's upstream transport never
// follows a redirect; a 307 to another origin (a second 127.0.0.1 listener)
// reaches the client as it was sent, the other origin receives nothing, and
// the record shows the status and the Location.
func TestProxyPassesRedirectsThrough(t *testing.T) {
	var otherHits atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { otherHits.Add(1) }))
	t.Cleanup(other.Close)
	loc := other.URL + "/collect"
	up := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", loc)
		w.WriteHeader(http.StatusTemporaryRedirect)
	}))
	purl, _, sink, stop := startProxy(t, up, proxy.Options{})
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	hdr := modernHeaders("echo")
	hdr["X-Api-Key"] = "apikey-SECRET-0123456789"
	status, h, _, err := post(t, noFollow, purl, callBody(1, "echo", ""), hdr)
	if err != nil {
		t.Fatal(err)
	}
	stop()
	if status != http.StatusTemporaryRedirect || h.Get("Location") != loc {
		t.Errorf("client got %d Location %q, want 307 %q", status, h.Get("Location"), loc)
	}
	if n := otherHits.Load(); n != 0 {
		t.Fatalf("the other origin received %d request(s)", n)
	}
	ex := sink.exchanges(t)
	if len(ex) != 1 || ex[0].Status != http.StatusTemporaryRedirect || ex[0].ResponseHeaders.Get("Location") != loc {
		t.Fatalf("records: %+v", ex)
	}
}
