package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mcpdiag/mcpdiag/authserver"
)

// witness is a listener on 127.0.0.1 (another origin than the server
// under test: another port) that keeps every request it receives, headers
// and body, as text.
type witness struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string
}

func newWitness(t *testing.T, h http.Handler) *witness {
	t.Helper()
	w := &witness{}
	w.Server = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var b strings.Builder
		fmt.Fprintf(&b, "%s %s\n", r.Method, r.URL)
		_ = r.Header.Write(&b)
		b.Write(body)
		w.mu.Lock()
		w.seen = append(w.seen, b.String())
		w.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		if h == nil {
			http.NotFound(rw, r)
			return
		}
		h.ServeHTTP(rw, r)
	}))
	t.Cleanup(w.Close)
	return w
}

// got returns everything the witness received.
func (w *witness) got() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Join(w.seen, "\n")
}

func (w *witness) requests() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.seen)
}

// TestCredentialsStayWithTheirOrigin (audit10, an outsider's attack pass):
// a server that sends mcpdiag elsewhere (a redirect of the MCP request, a
// challenge whose resource_metadata is on another origin, metadata that
// redirects or names an authorization server on another origin, a proxy
// upstream that redirects its client) gets no credential of the caller to
// another origin: the --header API key, the --bearer token, and the
// upstream's Location credential, none reaches a second listener on
// another port, and none is recorded in the clear.
func TestCredentialsStayWithTheirOrigin(t *testing.T) {
	apiKey, bearer, locTok := canary("originkey"), canary("originbearer"), canary("originloc")
	hdr := []string{"--header", "X-Api-Key: " + apiKey}

	t.Run("call and probe: the MCP request redirected", func(t *testing.T) {
		for _, code := range []int{301, 302, 303, 307, 308} {
			other := newWitness(t, nil)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, other.URL+"/mcp", code)
			}))
			t.Cleanup(srv.Close)
			rec := filepath.Join(t.TempDir(), "r.jsonl")
			for _, args := range [][]string{
				append([]string{"call", srv.URL + "/mcp", "echo", "--bearer", bearer, "--record", rec, "--timeout", "5s"}, hdr...),
				append([]string{"probe", "--interval", "0", "--max-probes", "2", "--record", rec, srv.URL + "/mcp"}, append(hdr, "--header", "Authorization: Bearer "+bearer)...),
			} {
				var o, e bytes.Buffer
				run(args, strings.NewReader(""), &o, &e)
				if n := other.requests(); n > 0 {
					t.Errorf("%s after %d: the other origin received %d request(s):\n%s", args[0], code, n, other.got())
				}
				leak(t, fmt.Sprintf("%s after %d: output", args[0], code), o.String()+e.String(), apiKey, bearer)
			}
			b, _ := os.ReadFile(rec)
			leak(t, fmt.Sprintf("after %d: the record file", code), string(b), apiKey, bearer)
		}
	})

	t.Run("call: the authorization chain sent to other origins", func(t *testing.T) {
		// The MCP server (A) sends the chain to B for its resource
		// metadata; B names an authorization server on C (a real one), or
		// redirects to D. Neither B, C nor D may see the API key the
		// caller gave for A.
		var as *authserver.Server
		c := newWitness(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { as.ServeHTTP(w, r) }))
		d := newWitness(t, nil)
		var a *httptest.Server
		var redirectPRM bool
		b := newWitness(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if redirectPRM {
				http.Redirect(w, r, d.URL+r.URL.Path, http.StatusFound)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]any{"resource": a.URL + "/mcp", "authorization_servers": []string{c.URL + "/oauth"}})
		}))
		a = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if _, _, ok, _ := as.Guard(w, r, b.URL+"/.well-known/oauth-protected-resource/mcp", ""); ok {
				w.WriteHeader(http.StatusBadRequest) // the token arrived: enough
			}
		}))
		t.Cleanup(a.Close)
		var err error
		if as, err = authserver.New(authserver.Options{Issuer: c.URL + "/oauth", Resource: a.URL + "/mcp"}); err != nil {
			t.Fatal(err)
		}
		for _, redirect := range []bool{false, true} {
			redirectPRM = redirect
			rec := filepath.Join(t.TempDir(), "r.jsonl")
			var o, e bytes.Buffer
			run(append([]string{"call", a.URL + "/mcp", "echo", "--record", rec, "--timeout", "10s"}, hdr...), strings.NewReader(""), &o, &e)
			if b.requests() == 0 || !redirect && c.requests() == 0 {
				t.Fatalf("redirect %v: the chain did not reach B (%d) and C (%d): the test proves nothing\n%s", redirect, b.requests(), c.requests(), e.String())
			}
			for name, w := range map[string]*witness{"B (resource metadata)": b, "C (authorization server)": c, "D (B's redirect)": d} {
				if strings.Contains(w.got(), apiKey) {
					t.Errorf("redirect %v: %s received the API key:\n%s", redirect, name, w.got())
				}
			}
			if d.requests() > 0 {
				t.Errorf("the redirect of the resource metadata was followed to D:\n%s", d.got())
			}
			rb, _ := os.ReadFile(rec)
			leak(t, fmt.Sprintf("redirect %v: output and record file", redirect), o.String()+e.String()+string(rb), apiKey)
		}
	})

	t.Run("call: a pre-registered client's secret", func(t *testing.T) {
		// A's challenge sends the chain to B, whose metadata names an
		// authorization server on C. The client secret the caller holds
		// for some authorization server is sent to C only when the caller
		// named C (--client-issuer); an authorization server on A's own
		// origin needs no naming (mcpdiag serve's chain).
		secret := canary("originclientsecret")
		basic := base64.StdEncoding.EncodeToString([]byte("pre-1:" + secret))
		var as *authserver.Server
		c := newWitness(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { as.ServeHTTP(w, r) }))
		var a *httptest.Server
		b := newWitness(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]any{"resource": a.URL + "/mcp", "authorization_servers": []string{c.URL + "/oauth"}})
		}))
		a = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if _, _, ok, _ := as.Guard(w, r, b.URL+"/.well-known/oauth-protected-resource/mcp", ""); ok {
				w.WriteHeader(http.StatusBadRequest) // the token arrived: enough
			}
		}))
		t.Cleanup(a.Close)
		var err error
		if as, err = authserver.New(authserver.Options{Issuer: c.URL + "/oauth", Resource: a.URL + "/mcp", Clients: []authserver.Client{{ID: "pre-1", Secret: secret}}}); err != nil {
			t.Fatal(err)
		}
		args := []string{"call", a.URL + "/mcp", "echo", "--timeout", "10s", "--grant", "client_credentials", "--client-id", "pre-1", "--client-secret", secret}
		var o, e bytes.Buffer
		run(args, strings.NewReader(""), &o, &e)
		if c.requests() == 0 {
			t.Fatalf("the chain did not reach C: the test proves nothing\n%s", e.String())
		}
		if got := c.got(); strings.Contains(got, secret) || strings.Contains(got, basic) {
			t.Errorf("C, an authorization server the caller never named, on another origin than the MCP server, received the client secret:\n%s", got)
		}
		if !strings.Contains(o.String()+e.String(), "--client-issuer") {
			t.Errorf("the refusal does not name --client-issuer:\n%s%s", o.String(), e.String())
		}
		leak(t, "call's output", o.String()+e.String(), secret, basic)
		// Named, it is used there.
		o.Reset()
		e.Reset()
		run(append(args, "--client-issuer", c.URL+"/oauth"), strings.NewReader(""), &o, &e)
		if got := c.got(); !strings.Contains(got, basic) && !strings.Contains(got, secret) {
			t.Errorf("with --client-issuer naming C, C did not receive the client's credentials:\n%s\n%s", got, e.String())
		}
		leak(t, "call's output with --client-issuer", o.String()+e.String(), secret, basic)
	})

	t.Run("proxy: the upstream redirects its client", func(t *testing.T) {
		other := newWitness(t, nil)
		up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Location", other.URL+"/mcp?access_token="+locTok)
			w.WriteHeader(http.StatusTemporaryRedirect)
		}))
		t.Cleanup(up.Close)
		rec := filepath.Join(t.TempDir(), "proxy.jsonl")
		px := runHTTPProxyForTest(t, proxyOptions{upstream: up.URL + "/mcp", recordFile: rec, recordBodies: "full"})
		var o, e bytes.Buffer
		run(append([]string{"call", px.base + "/mcp", "echo", "--bearer", bearer, "--timeout", "5s"}, hdr...), strings.NewReader(""), &o, &e)
		px.stop()
		if n := other.requests(); n > 0 {
			t.Errorf("the other origin received %d request(s):\n%s", n, other.got())
		}
		b, err := os.ReadFile(rec)
		if err != nil || !bytes.Contains(b, []byte("307")) {
			t.Fatalf("the proxy recorded no 307 (%v): the test proves nothing\n%s", err, b)
		}
		leak(t, "the proxy's record file", string(b), apiKey, bearer, locTok)
		leak(t, "call's output", o.String()+e.String(), apiKey, bearer, locTok)
	})
}

// leak fails t for each secret found in s.
func leak(t *testing.T, what, s string, secrets ...string) {
	t.Helper()
	for _, sec := range secrets {
		if i := strings.Index(s, sec); i >= 0 {
			t.Errorf("%s holds %s: …%s…", what, sec, s[max(0, i-150):i+len(sec)])
		}
	}
}
