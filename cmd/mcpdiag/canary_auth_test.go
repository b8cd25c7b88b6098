package main

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/mcpdiag/mcpdiag/authserver"
	"github.com/mcpdiag/mcpdiag/faults"
	"github.com/mcpdiag/mcpdiag/fixture"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/serve"
)

// authWire are the patterns of the chain's secrets on the wire: what the
// authorization server issues (access and refresh tokens in JSON, the code
// in the redirect) and what the client sends (the PKCE verifier, the state,
// a client assertion).
var authWire = map[string]*regexp.Regexp{
	"access token":     regexp.MustCompile(`"access_token":"([A-Za-z0-9]+)"`),
	"refresh token":    regexp.MustCompile(`"refresh_token":"([A-Za-z0-9]+)"`),
	"code":             regexp.MustCompile(`[?&]code=([A-Za-z0-9]+)`),
	"PKCE verifier":    regexp.MustCompile(`code_verifier=([A-Za-z0-9_.~-]+)`),
	"state":            regexp.MustCompile(`[?&]state=([A-Za-z0-9]+)`),
	"client assertion": regexp.MustCompile(`client_assertion=([A-Za-z0-9_.-]+)`),
}

// authSecretsSeen adds to needles every secret of the chain that the wire
// bytes hold, by kind, and returns how many of each it found.
func authSecretsSeen(wire []byte, needles map[string]string) map[string]int {
	counts := map[string]int{}
	for kind, re := range authWire {
		for _, m := range re.FindAllSubmatch(wire, -1) {
			v := string(m[1])
			if kind == "client assertion" {
				// Form-encoded: a JWT is URL-safe, so it is as sent.
				v, _ = url.QueryUnescape(v)
			}
			if _, ok := needles[kind+" "+v]; !ok {
				needles[kind+" "+v] = v
				counts[kind]++
			}
		}
	}
	return counts
}

// assertionServer is an MCP server behind an authorization server that
// knows one client by its public key (private_key_jwt): the client
// credentials grant with a signed client assertion. It keeps the bytes of
// every token request, the proof that an assertion was sent.
type assertionServer struct {
	url     string
	keyFile string
	mu      sync.Mutex
	wire    bytes.Buffer
}

func startAssertionServer(t *testing.T, dir string) *assertionServer {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	s := &assertionServer{keyFile: filepath.Join(dir, "client-key.pem")}
	if err := os.WriteFile(s.keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	s.url = ts.URL + "/mcp"
	as, err := authserver.New(authserver.Options{Issuer: ts.URL + "/oauth", Resource: s.url, Scopes: []string{faults.OAuthScope},
		Clients: []authserver.Client{{ID: "key-client", PublicKey: &key.PublicKey}}})
	if err != nil {
		t.Fatal(err)
	}
	mcp := fixture.New(fixture.Options{})
	meta := ts.URL + faults.ProtectedResourcePath + "/mcp"
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		if _, _, ok, _ := as.Guard(w, r, meta, faults.OAuthScope); ok {
			mcp.ServeHTTP(w, r)
		}
	})
	mux.HandleFunc(faults.ProtectedResourcePath+"/mcp", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"resource":"`+s.url+`","authorization_servers":["`+as.Issuer()+`"],"scopes_supported":["`+faults.OAuthScope+`"]}`)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			b, _ := io.ReadAll(r.Body)
			s.mu.Lock()
			s.wire.Write(b)
			s.wire.WriteByte('\n')
			s.mu.Unlock()
			r.Body = io.NopCloser(bytes.NewReader(b))
		}
		as.ServeHTTP(w, r)
	})
	return s
}

func (s *assertionServer) seen() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return bytes.Clone(s.wire.Bytes())
}

// canaryAuthChain runs the OAuth chain through every producer of output:
// `mcpdiag call` (report, --json, --record) and `mcpdiag auth` against
// serve's own authorization servers (code with PKCE and a refresh after a
// token expires, step-up, client credentials with the test client's
// secret), through a recording proxy that keeps the Host (so that the
// authorization server's exchanges go through it too, bodies in full), and
// private_key_jwt against a server that knows the client's key. It returns
// the proxy's record file, and adds the chain's secrets, as the wire
// showed them, to needles.
func canaryAuthChain(t *testing.T, dir, relayAddr string, rl *relay, out outputs, callRec string, needles map[string]string) string {
	t.Helper()
	proxyRec := filepath.Join(dir, "proxy-auth.jsonl")
	px := runHTTPProxyForTest(t, proxyOptions{upstream: "http://" + relayAddr + "/mcp", recordFile: proxyRec, recordBodies: "full", preserveHost: true})
	needles["test client secret"] = serve.TestClientSecret
	needles["test client basic credentials"] = base64.StdEncoding.EncodeToString([]byte(serve.TestClientID + ":" + serve.TestClientSecret))
	runs := []struct {
		name string
		args []string
	}{
		{"call (token expired, refreshed)", []string{"call", px.base + "/s/auth.token_expired/mcp", "echo", "--args", `{"text":"hi"}`, "--record", callRec}},
		{"call --json (step-up)", []string{"call", px.base + "/s/auth.step_up/mcp", "delete_item", "--args", `{"id":"item-1"}`, "--json"}},
		{"call (client credentials)", []string{"call", px.base + "/s/auth.oauth/mcp", "echo", "--args", `{"text":"hi"}`, "--record", callRec,
			"--grant", "client_credentials", "--client-id", serve.TestClientID, "--client-secret", serve.TestClientSecret}},
		{"auth", []string{"auth", px.base + "/s/auth.oauth/mcp"}},
	}
	for _, r := range runs {
		var stdout, stderr bytes.Buffer
		if code := run(r.args, strings.NewReader(""), &stdout, &stderr); code != 0 {
			t.Fatalf("%s: exit %d\n%s%s", r.name, code, stdout.String(), stderr.String())
		}
		out[r.name], out[r.name+" stderr"] = stdout.Bytes(), stderr.Bytes()
	}
	ks := startAssertionServer(t, dir)
	var stdout, stderr bytes.Buffer
	if code := run([]string{"call", ks.url, "echo", "--args", `{"text":"hi"}`, "--record", callRec, "--grant", "client_credentials",
		"--client-id", "key-client", "--client-key", ks.keyFile}, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("call (private_key_jwt): exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	out["call (private_key_jwt)"], out["call (private_key_jwt) stderr"] = stdout.Bytes(), stderr.Bytes()
	// A careless client: a refresh token in the token endpoint's URL (and
	// a code verifier), through the proxy: serve's log names the
	// parameters (auth.inURL), no output holds their values.
	m := regexp.MustCompile(`issuer (http://\S+/oauth/[0-9]+)`).FindSubmatch(out["auth"])
	if m == nil {
		t.Fatalf("mcpdiag auth printed no issuer:\n%s", out["auth"])
	}
	needles["refresh token in a URL"], needles["verifier in a URL"] = canary("urlrefresh"), canary("urlverifier")
	careless := string(m[1]) + "/token?refresh_token=" + needles["refresh token in a URL"] + "&code_verifier=" + needles["verifier in a URL"]
	resp, err := http.Post(careless, "application/x-www-form-urlencoded", strings.NewReader("grant_type=refresh_token&client_id="+serve.TestClientID))
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	px.stop()
	out["proxy (auth) stderr"] = []byte(px.stderr.String())
	out.file(t, "proxy (auth) --record", proxyRec)

	rl.mu.Lock()
	wire := append(bytes.Clone(rl.seen.Bytes()), ks.seen()...)
	rl.mu.Unlock()
	counts := authSecretsSeen(wire, needles)
	for kind, atLeast := range map[string]int{"access token": 5, "refresh token": 2, "code": 3, "PKCE verifier": 3, "state": 3, "client assertion": 1} {
		if counts[kind] < atLeast {
			t.Errorf("the wire showed %d %s(s), want at least %d: the test proves too little for them", counts[kind], kind, atLeast)
		}
	}
	if !rl.saw(needles["test client basic credentials"]) {
		t.Error("the relay never saw the test client's credentials")
	}
	for _, k := range []string{"refresh token in a URL", "verifier in a URL"} {
		if !rl.saw(needles[k]) {
			t.Errorf("the relay never saw the %s: the test proves nothing for it", k)
		}
	}
	t.Logf("auth chain secrets seen on the wire: %v", counts)
	return proxyRec
}

// checkAuthServerFacts holds that serve's log (the file) carries the
// authorization servers' facts as the typed auth member: the server and
// the endpoint it serves, PKCE S256 with a challenge, the scope granted, a
// refresh token that arrived in the body, and the careless request's
// credential parameters named in inURL (their values are searched for
// with every other needle).
func checkAuthServerFacts(t *testing.T, log []byte) {
	t.Helper()
	seen := map[string]bool{}
	for _, line := range bytes.Split(log, []byte("\n")) {
		rec, err := record.Decode(line)
		if err != nil || rec.Auth == nil || rec.Kind != record.KindServer {
			continue
		}
		a := rec.Auth
		if !strings.HasPrefix(a.Server, serve.OAuthPrefix) || !strings.HasPrefix(a.For, "/s/auth.") || a.TokenResource == "" {
			t.Errorf("an authorization server line without its server, endpoint or resource: %s", line)
		}
		seen["authorize S256"] = seen["authorize S256"] || a.Step == "authorize" && a.PKCE == "S256" && a.CodeChallenge
		seen["granted"] = seen["granted"] || a.Step == "token" && a.Granted != ""
		seen["refresh in the body"] = seen["refresh in the body"] || a.Step == "refresh" && a.RefreshIn == "body"
		seen["credentials in the URL"] = seen["credentials in the URL"] || strings.Join(a.InURL, ",") == "refresh_token,code_verifier" && a.RefreshIn == "url"
	}
	for _, k := range []string{"authorize S256", "granted", "refresh in the body", "credentials in the URL"} {
		if !seen[k] {
			t.Errorf("serve --log has no authorization server line with %s", k)
		}
	}
}
