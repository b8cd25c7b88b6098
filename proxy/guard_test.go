package proxy_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"unicode/utf8"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/proxy"
)

// TestEmbeddedProxyKeepsTheLoopbackGuard: code that serves a proxy.Proxy on
// its own http.Server on 127.0.0.1 gets the DNS-rebinding check the CLI
// has: a foreign Host or Origin is refused before anything is forwarded,
// and the refusal is recorded (status 403, the proxy's Proxy-Status, a
// note saying why: before, the client's 403 left no record at all); a
// loopback Host passes; AllowForeignHost turns it off.
func TestEmbeddedProxyKeepsTheLoopbackGuard(t *testing.T) {
	var hits atomic.Int32
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`))
	}))
	defer up.Close()
	u, _ := url.Parse(up.URL + "/mcp")
	for _, allow := range []bool{false, true} {
		sink := &memSink{}
		p, err := proxy.New(proxy.Options{Upstream: u, Records: sink, AllowForeignHost: allow})
		if err != nil {
			t.Fatal(err)
		}
		ts := httptest.NewServer(p) // the embedder's own server, on 127.0.0.1
		hits.Store(0)
		for _, c := range []struct {
			host, origin string
			foreign      bool
		}{
			{"", "", false},
			{"evil.example", "", true},
			{"", "http://evil.example", true},
		} {
			req, _ := http.NewRequest(http.MethodPost, ts.URL+"/mcp", nil)
			if c.host != "" {
				req.Host = c.host
			}
			if c.origin != "" {
				req.Header.Set("Origin", c.origin)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			refused := resp.StatusCode == http.StatusForbidden
			if want := c.foreign && !allow; refused != want {
				t.Errorf("AllowForeignHost %v, Host %q Origin %q: status %d, want refused %v", allow, c.host, c.origin, resp.StatusCode, want)
			}
		}
		ts.Close()
		if want := map[bool]int32{false: 1, true: 3}[allow]; hits.Load() != want {
			t.Errorf("AllowForeignHost %v: the upstream got %d requests, want %d", allow, hits.Load(), want)
		}
		if err := p.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		recs := sink.records(t)
		if len(recs) != 3 {
			t.Fatalf("AllowForeignHost %v: %d records, want one per request (3)", allow, len(recs))
		}
		refused := 0
		for _, r := range recs {
			if r.Status != http.StatusForbidden {
				continue
			}
			refused++
			if r.Outcome != classify.HTTPError || !strings.Contains(r.Note, "mcpdiag proxy answered 403 itself: the ") ||
				!strings.Contains(r.Note, "(DNS-rebinding protection)") || len(r.ResponseHeaders["Proxy-Status"]) != 1 {
				t.Errorf("the refusal's record: outcome %s, note %q, Proxy-Status %q", r.Outcome, r.Note, r.ResponseHeaders["Proxy-Status"])
			}
		}
		if want := map[bool]int{false: 2, true: 0}[allow]; refused != want {
			t.Errorf("AllowForeignHost %v: %d refusals recorded, want %d", allow, refused, want)
		}
	}
}

// TestGuardNoteKeepsCharactersWhole: the refusal's note quotes a long
// foreign Origin cut at a character's start, not inside one (which the
// record showed as U+FFFD).
func TestGuardNoteKeepsCharactersWhole(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer up.Close()
	u, _ := url.Parse(up.URL + "/mcp")
	sink := &memSink{}
	p, err := proxy.New(proxy.Options{Upstream: u, Records: sink})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(p)
	defer ts.Close()
	for _, pad := range []string{"", "x"} { // the cut falls inside a two-byte é for one of the two
		req, _ := http.NewRequest(http.MethodPost, ts.URL+"/mcp", nil)
		req.Header.Set("Origin", "http://"+pad+strings.Repeat("é", 200)+".example")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Fatalf("status %d, want 403", resp.StatusCode)
		}
	}
	if err := p.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	recs := sink.records(t)
	if len(recs) != 2 {
		t.Fatalf("%d records, want 2", len(recs))
	}
	for _, r := range recs {
		if !utf8.ValidString(r.Note) || strings.ContainsRune(r.Note, utf8.RuneError) || !strings.Contains(r.Note, "é…") {
			t.Errorf("note %q: want whole characters up to the cut, then …", r.Note)
		}
	}
}
