package record

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

func TestRedactHeaders(t *testing.T) {
	t.Parallel()
	const secret = "s3cr3t-VALUE-0123456789"
	tests := []struct {
		name  string
		value string
		want  string // "" means: the value must be redacted
	}{
		{"Authorization", "Bearer " + secret, "Bearer " + Redacted},
		{"authorization", "Basic dXNlcjpwYXNz", "Basic " + Redacted},
		{"Proxy-Authorization", "Basic " + secret, "Basic " + Redacted},
		{"Cookie", "sid=" + secret, "sid=" + Redacted},
		{"Set-Cookie", "sid=" + secret + "; HttpOnly", "sid=" + Redacted + "; HttpOnly"},
		{"X-Api-Key", secret, Redacted},
		{"Api-Key", secret, Redacted},
		{"X-Goog-Api-Key", secret, Redacted},
		{"Ocp-Apim-Subscription-Key", secret, Redacted},
		{"X-Auth-Token", secret, Redacted},
		{"X-Csrf-Token", secret, Redacted},
		{"X-Client-Secret", secret, Redacted},
		{"X-Hub-Signature-256", "sha256=" + secret, Redacted},
		{"Authentication-Info", "nextnonce=" + secret, Redacted},
		{"X-Password", secret, Redacted},
		{"Mcp-Session-Id", secret, HashSession(secret)},
		{"MCP-SESSION-ID", secret, HashSession(secret)},
		{"X-Session-Id", secret, HashSession(secret)},
		{"Mcp-Session-Id", HashSession(secret), HashSession(secret)}, // idempotent
		{"WWW-Authenticate", `Bearer resource_metadata="https://rs/.well-known/oauth-protected-resource", error="invalid_token"`,
			`Bearer resource_metadata="https://rs/.well-known/oauth-protected-resource", error="invalid_token"`},
		{"Idempotency-Key", "k-123", "k-123"},
		{"Content-Type", "application/json", "application/json"},
		{"Mcp-Protocol-Version", "2026-07-28", "2026-07-28"},
		{"Retry-After", "120", "120"},
		{"Location", "https://app/cb?code=" + secret + "&state=xyz&lang=es", "https://app/cb?code=[redacted]&state=[redacted]&lang=es"},
		{"X-Debug", "token was Bearer " + secret, "token was Bearer [redacted]"},
	}
	for _, tt := range tests {
		t.Run(tt.name+"="+tt.value, func(t *testing.T) {
			h := http.Header{tt.name: {tt.value}}
			got := RedactHeaders(h)
			if got, want := unmask(got[tt.name][0]), tt.want; got != want {
				t.Errorf("RedactHeaders(%s: %q) = %q, want %q", tt.name, tt.value, got, want)
			}
			if h[tt.name][0] != tt.value {
				t.Errorf("the input header was modified")
			}
		})
	}
	if RedactHeaders(nil) != nil {
		t.Error("RedactHeaders(nil) != nil")
	}
}

// unmask writes every mask as Redacted, for tests that check where
// redaction happened rather than the length and hash (TestMask does).
func unmask(s string) string { return maskInTextRE.ReplaceAllString(s, Redacted) }

var maskInTextRE = regexp.MustCompile(`\[redacted:len=\d+:h=[0-9a-f]{8}\]`)

func TestHashSession(t *testing.T) {
	t.Parallel()
	h := HashSession("abc")
	if !strings.HasPrefix(h, "sha256:") || len(h) != len("sha256:")+16 {
		t.Fatalf("HashSession = %q", h)
	}
	if HashSession(h) != h || HashSession("") != "" {
		t.Error("HashSession is not idempotent")
	}
	if HashSession("abd") == h {
		t.Error("different ids hash equal")
	}
}

func TestRedactBody(t *testing.T) {
	t.Parallel()
	const tok = "tok_ABCDEFGHIJ0123456789"
	tests := []struct {
		name     string
		body     string
		want     string // exact result when set
		contains []string
	}{
		{
			name: "json nested any depth, formatting kept",
			body: `{"a": {"b": [ {"access_token" : "` + tok + `", "n": 1.50}]}, "refresh_token":"` + tok + `"}`,
			want: `{"a": {"b": [ {"access_token" : "[redacted]", "n": 1.50}]}, "refresh_token":"[redacted]"}`,
		},
		{
			name: "json name variants and non-string values",
			body: `{"clientSecret":{"x":"` + tok + `"},"Code-Verifier":"` + tok + `","password":12345678,"api_key":null}`,
			want: `{"clientSecret":"[redacted]","Code-Verifier":"[redacted]","password":"[redacted]","api_key":null}`,
		},
		{
			name: "json-rpc error code is not an OAuth code",
			body: `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad"}}`,
			want: `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad"}}`,
		},
		{
			name:     "json inside a json string",
			body:     `{"result":{"content":[{"type":"text","text":"{\"access_token\":\"` + tok + `\"}"}]}}`,
			contains: []string{`[redacted`, `"type":"text"`},
		},
		{
			name:     "bearer in a json string",
			body:     `{"note":"send Authorization: Bearer ` + tok + `"}`,
			contains: []string{`Authorization: Bearer [redacted:len=`},
		},
		{
			name: "form",
			body: "grant_type=authorization_code&code=" + tok + "&code_verifier=" + tok + "&client_id=app&state=" + tok,
			want: "grant_type=authorization_code&code=[redacted]&code_verifier=[redacted]&client_id=app&state=[redacted]",
		},
		{
			name: "form refresh",
			body: "grant_type=refresh_token&refresh_token=" + tok + "&client_secret=" + tok,
			want: "grant_type=refresh_token&refresh_token=[redacted]&client_secret=[redacted]",
		},
		{
			name: "text bearer",
			body: "upstream said: Bearer " + tok + " is expired",
			want: "upstream said: Bearer [redacted] is expired",
		},
		{
			name: "text bearer challenge kept",
			body: `Bearer realm="mcp", error="invalid_token"`,
			want: `Bearer realm="mcp", error="invalid_token"`,
		},
		{
			name: "sse data lines",
			body: "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"id_token\":\"" + tok + "\"}}\n\n",
			want: "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"id_token\":\"[redacted]\"}}\n\n",
		},
		{
			name: "sse data lines, CR line ends",
			body: "event: message\rdata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"nested\":{\"password\":87654321,\"client_secret\":\"" + tok + "\"}}}\r\r: ping\r",
			want: "event: message\rdata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"nested\":{\"password\":\"[redacted]\",\"client_secret\":\"[redacted]\"}}}\r\r: ping\r",
		},
		{
			name: "sse data lines, CRLF and a BOM",
			body: "\xef\xbb\xbfdata:{\"password\":87654321}\r\n\r\ndata: plain text\r\n\r\n",
			want: "\xef\xbb\xbfdata:{\"password\":\"[redacted]\"}\r\n\r\ndata: plain text\r\n\r\n",
		},
		{
			name: "cut json falls back to patterns",
			body: `{"result":{"access_token":"` + tok + `","more":"`,
			want: `{"result":{"access_token":"[redacted]","more":"`,
		},
		{
			name: "cut json inside the value",
			body: `{"result":{"access_token":"` + tok[:10],
			want: `{"result":{"access_token":"[redacted]"`,
		},
		{
			name: "plain text kept",
			body: "<html>Service Unavailable</html>",
			want: "<html>Service Unavailable</html>",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, truncated := RedactBody([]byte(tt.body), 0)
			if truncated {
				t.Error("truncated")
			}
			if tt.want != "" && unmask(got) != tt.want {
				t.Errorf("RedactBody =\n%s\nwant\n%s", got, tt.want)
			}
			for _, c := range tt.contains {
				if !strings.Contains(got, c) {
					t.Errorf("RedactBody = %s, want it to contain %s", got, c)
				}
			}
			if strings.Contains(got, tok[:10]) {
				t.Errorf("secret left in %s", got)
			}
			if json.Valid([]byte(tt.body)) && !json.Valid([]byte(got)) {
				t.Errorf("valid JSON became invalid: %s", got)
			}
		})
	}
}

func TestRedactBodyLimit(t *testing.T) {
	t.Parallel()
	body := strings.Repeat("é", 10) // 20 bytes
	got, truncated := RedactBody([]byte(body), 5)
	if !truncated || got != "éé" {
		t.Errorf("RedactBody(20 bytes, 5) = %q, %v; want a cut at a rune boundary", got, truncated)
	}
	if got, truncated := RedactBody([]byte("abc"), -1); got != "" || !truncated {
		t.Errorf("RedactBody(limit -1) = %q, %v", got, truncated)
	}
	// The secret is redacted before the cut, so the cut never shows part of it.
	red := NewRedactor()
	if err := red.AddSecret("SECRETSECRETSECRET"); err != nil {
		t.Fatal(err)
	}
	got, _ = red.Body([]byte("x=SECRETSECRETSECRET"), 12)
	if strings.Contains(got, "SECRET") {
		t.Errorf("Body = %q", got)
	}
	// A capture that stops inside a secret: the partial secret is cut.
	got, _ = red.Body([]byte("value SECRETSEC"), 100)
	if strings.Contains(got, "SECRETSEC") {
		t.Errorf("Body = %q, want the partial secret cut", got)
	}
}

func TestAddSecretAndScrub(t *testing.T) {
	t.Parallel()
	red := NewRedactor()
	if err := red.AddSecret("abc"); err != ErrShortSecret {
		t.Errorf("AddSecret(short) = %v", err)
	}
	if err := red.AddSecret(""); err != nil {
		t.Errorf("AddSecret(empty) = %v", err)
	}
	const sec = "p@ss w<rd>&+/=x"
	if err := red.AddSecret(sec); err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{
		"plain " + sec + " text",
		"query p%40ss+w%3Crd%3E%26%2B%2F%3Dx",
	} {
		if got := red.Scrub(in); strings.Contains(got, "ss w<rd") || strings.Contains(got, "p%40ss") {
			t.Errorf("Scrub(%q) = %q", in, got)
		}
	}
	// Other redactors do not know it.
	if got := NewRedactor().Scrub(sec); got != sec {
		t.Errorf("a fresh redactor scrubbed %q", got)
	}
}

func TestScrubPatterns(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"Authorization: Bearer abc.def", "Authorization: Bearer [redacted]"},
		{"cookie: a=b; c=d\nnext", "cookie: [redacted]\nnext"},
		{"GET /cb?access_token=xyz&x=1", "GET /cb?access_token=[redacted]&x=1"},
		{`{"password":"hunter22"}`, `{"password":"[redacted]"}`},
		{`err: {\"client_secret\":\"zz\"}`, `err: {\"client_secret\":\"[redacted]\"}`},
		{"the call failed with HTTP 503", "the call failed with HTTP 503"},
		{"status code=503", "status code=503"}, // code= only in forms and URLs
		{"progressToken=7", "progressToken=7"},
	}
	for _, tt := range tests {
		if got := unmask(Scrub(tt.in)); got != tt.want {
			t.Errorf("Scrub(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestRedactURL(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"https://user:pw@host:8080/mcp?x=1", "https://[redacted]@host:8080/mcp?x=1"},
		{"https://host/mcp?access_token=a&X-Amz-Signature=b&sig=c&key=d&ok=e", "https://host/mcp?access_token=[redacted]&X-Amz-Signature=[redacted]&sig=[redacted]&key=[redacted]&ok=e"},
		{"https://app/cb#access_token=a&token_type=bearer", "https://app/cb#access_token=[redacted]&token_type=bearer"},
		{"http://127.0.0.1:8080/mcp", "http://127.0.0.1:8080/mcp"},
		{"/mcp?code=abc", "/mcp?code=[redacted]"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := unmask(RedactURL(tt.in)); got != tt.want {
			t.Errorf("RedactURL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func FuzzRedactBody(f *testing.F) {
	f.Add(`{"a":{"access_token":"x"},"b":[1,"Bearer abc"]}`, 5, 100)
	f.Add("data: {\"id_token\":\"x\"}\n\n", 0, 10)
	f.Add("code=abc&state=def", 5, 0)
	f.Add(`{"s":"\u0041\"\\"}`, 3, 7)
	const secret = "SECRET-TOKEN-XYZ"
	red := NewRedactor()
	if err := red.AddSecret(secret); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body string, at, limit int) {
		if at < 0 || at > len(body) {
			at = len(body)
		}
		in := body[:at] + secret + body[at:]
		out, truncated := red.Body([]byte(in), limit%2000)
		if strings.Contains(out, secret) {
			t.Fatalf("secret in %q", out)
		}
		if !truncated && json.Valid([]byte(in)) && !json.Valid([]byte(out)) {
			t.Fatalf("valid JSON %q became %q", in, out)
		}
		if limit%2000 > 0 && len(out) > limit%2000 {
			t.Fatalf("excerpt of %d bytes over the limit %d", len(out), limit%2000)
		}
	})
}

// TestAddSecretWhileScrubbing: a secret registered while records are
// being redacted (call's OAuth flow registers each token it obtains, while
// the async writer encodes) neither hides a secret registered before it
// nor races with the readers. AddSecret used to sort the shared list in
// place under a lock that Scrub released before walking it: the race
// detector fails this test on that code (go test -race).
func TestAddSecretWhileScrubbing(t *testing.T) {
	r := NewRedactor()
	var early []string
	for i := range 20 {
		s := "early-secret-" + strings.Repeat("x", i) + "-end"
		if err := r.AddSecret(s); err != nil {
			t.Fatal(err)
		}
		early = append(early, s)
	}
	text := "quoting " + strings.Join(early, " and ")
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 300 {
			// Lengths on both sides of the early ones, so that each sort
			// moves them.
			_ = r.AddSecret("late-" + strings.Repeat("y", (i*7)%40) + "-" + string(rune('a'+i%26)))
		}
	}()
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
		}
		got := r.Scrub(text)
		for _, s := range early {
			if strings.Contains(got, s) {
				t.Fatalf("%q survived Scrub while secrets were being added: %q", s, got)
			}
		}
	}
}
