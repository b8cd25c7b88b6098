package main

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/client"
	"github.com/mcpdiag/mcpdiag/faults"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/serve"
)

// checkRecordedAuthStep holds an OAuth entry's promise in the records of
// `mcpdiag call --json`: an AUTH_FAILED call record names e.AuthStep; a
// successful call has an exchange record of that step that did its part.
func checkRecordedAuthStep(t *testing.T, e faults.Entry, call *record.Record, recs []*record.Record) {
	t.Helper()
	if call.Outcome == classify.AuthFailed {
		if call.Auth == nil || call.Auth.Step != e.AuthStep || call.Auth.Failure == "" {
			t.Errorf("the AUTH_FAILED call record names %+v, want step %s with the failure", call.Auth, e.AuthStep)
		}
		return
	}
	for _, r := range recs {
		if r.Kind == record.KindExchange && r.Auth != nil && r.Auth.Failure == "" &&
			(r.Auth.Step == e.AuthStep || e.AuthStep == client.StepStepUp && r.Auth.StepUp > 0) {
			return
		}
	}
	t.Errorf("no exchange record of step %s", e.AuthStep)
}

// mcpPosts counts the POSTs to the MCP endpoint among a call's exchange
// records: the authorization chain's own (registration, token) left out.
func mcpPosts(recs []*record.Record) int {
	n := 0
	for _, r := range recs {
		if r.Kind != record.KindExchange || r.HTTPMethod != "POST" {
			continue
		}
		if r.Auth == nil || r.Auth.Step == client.StepChallenge || r.Auth.Step == client.StepRequest {
			n++
		}
	}
	return n
}

// callJSON runs `mcpdiag call … --json` and returns the exit code, the
// records and stderr.
func callJSON(t *testing.T, stdin io.Reader, args ...string) (int, []*record.Record, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(append(append([]string{"call"}, args...), "--json"), stdin, &stdout, &stderr)
	return code, decodeRecords(t, stdout.Bytes()), stderr.String()
}

// steps lists the auth steps of a call's exchange records, in order.
func steps(recs []*record.Record) []string {
	var out []string
	for _, r := range recs {
		if r.Kind == record.KindExchange && r.Auth != nil && r.Auth.Step != client.StepRequest {
			out = append(out, r.Auth.Step)
		}
	}
	return out
}

func authRecord(recs []*record.Record, step string) *record.Record {
	for _, r := range recs {
		if r.Kind == record.KindExchange && r.Auth != nil && r.Auth.Step == step {
			return r
		}
	}
	return nil
}

// TestCallClientCredentials: `call --grant client_credentials` with the
// test client of serve's authorization server gets a token without any
// browser step, authenticated with client_secret_basic.
func TestCallClientCredentials(t *testing.T) {
	main, _ := startServe(t, serveOptions{seed: 1, auth: true})
	code, recs, stderr := callJSON(t, strings.NewReader(""), main, "echo", "--args", `{"text":"hi"}`,
		"--grant", "client_credentials", "--client-id", serve.TestClientID, "--client-secret", serve.TestClientSecret)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if got := strings.Join(steps(recs), " "); got != "challenge resource-metadata as-metadata token" {
		t.Errorf("steps %s", got)
	}
	tok := authRecord(recs, client.StepToken)
	if tok == nil || tok.Auth.Grant != client.GrantClientCredentials || tok.Auth.ClientAuth != "client_secret_basic" || tok.Auth.Registration != "pre-registered" {
		t.Errorf("token record %+v", tok)
	}
}

// promptBrowser plays the person of --auth-code: it reads the authorization
// URL the client prints, opens it as a browser would (the test user
// approves at once), and pastes the address it was sent back to.
type promptBrowser struct {
	t     *testing.T
	paste *io.PipeWriter
	mu    sync.Mutex
	buf   strings.Builder
	done  bool
}

func (p *promptBrowser) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.buf.Write(b)
	if p.done {
		return len(b), nil
	}
	for _, line := range strings.Split(p.buf.String(), "\n") {
		u := strings.TrimSpace(line)
		if !strings.HasPrefix(u, "http://127.0.0.1:") || !strings.Contains(u, "/authorize?") {
			continue
		}
		p.done = true
		go func() {
			resp, err := noRedirectClient.Get(u)
			if err != nil {
				p.paste.CloseWithError(err)
				return
			}
			resp.Body.Close()
			_, _ = io.WriteString(p.paste, resp.Header.Get("Location")+"\n")
		}()
	}
	return len(b), nil
}

func (p *promptBrowser) String() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.buf.String()
}

var noRedirectClient = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// TestCallAuthCodePaste: --auth-code prints the authorization URL and reads
// the redirected address from stdin (a headless sign-in); the code it
// carries is exchanged and the call goes through.
func TestCallAuthCodePaste(t *testing.T) {
	main, _ := startServe(t, serveOptions{seed: 1, auth: true})
	pr, pw := io.Pipe()
	defer pw.Close()
	person := &promptBrowser{t: t, paste: pw}
	var stdout bytes.Buffer
	code := run([]string{"call", main, "echo", "--args", `{"text":"hi"}`, "--auth-code", "--json"}, pr, &stdout, person)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, person.String())
	}
	var recs []*record.Record
	for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		rec, err := record.Decode([]byte(line))
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec)
	}
	a := authRecord(recs, client.StepAuthorize)
	if a == nil || a.Auth.Via != "paste" || a.Auth.PKCE != "S256" {
		t.Errorf("authorize record %+v", a)
	}
	if !strings.Contains(person.String(), "paste the address") {
		t.Errorf("no paste instructions: %s", person.String())
	}
}

// TestCallTokenCache: a second call with the same --token-cache sends the
// cached token at once: no discovery, registration or authorization; the
// cache file is the owner's only.
func TestCallTokenCache(t *testing.T) {
	main, _ := startServe(t, serveOptions{seed: 1, auth: true})
	cache := filepath.Join(t.TempDir(), "cfg", "tokens.json")
	args := []string{main, "echo", "--args", `{"text":"hi"}`, "--token-cache", cache}
	code, recs, stderr := callJSON(t, strings.NewReader(""), args...)
	if code != 0 || authRecord(recs, client.StepToken) == nil {
		t.Fatalf("first call: exit %d, steps %v: %s", code, steps(recs), stderr)
	}
	st, err := os.Stat(cache)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("cache %v %v", st, err)
	}
	code, recs, stderr = callJSON(t, strings.NewReader(""), args...)
	if code != 0 || len(steps(recs)) != 0 {
		t.Errorf("second call: exit %d, steps %v (want none: the cached token): %s", code, steps(recs), stderr)
	}
}

// TestAuthCommand: `mcpdiag auth URL` against each OAuth scenario of serve
// prints the chain step by step and ends as the entry says: a success, or
// AUTH_FAILED naming the entry's step, with the matching exit status.
func TestAuthCommand(t *testing.T) {
	main, _ := startServe(t, serveOptions{seed: 1})
	base := strings.TrimSuffix(main, "/mcp")
	for _, tt := range []struct {
		id    string
		code  int
		first string
		steps []string
	}{
		{"auth.oauth", 0, "authorized", []string{"challenge", "resource-metadata", "as-metadata", "registration", "authorize", "token"}},
		{"auth.no_resource_metadata", 4, "AUTH_FAILED at step resource-metadata", []string{"challenge", "resource-metadata", "resource-metadata"}},
		{"auth.wrong_issuer", 4, "AUTH_FAILED at step as-metadata", []string{"challenge", "resource-metadata", "as-metadata"}},
		{"auth.registration_refused", 4, "AUTH_FAILED at step registration", []string{"challenge", "resource-metadata", "as-metadata", "registration"}},
		{"auth.token_error", 4, "AUTH_FAILED at step token", []string{"challenge", "resource-metadata", "as-metadata", "registration", "authorize", "token"}},
		{"baseline", 0, "no authorization needed", nil},
	} {
		t.Run(tt.id, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			code := run([]string{"auth", base + "/s/" + tt.id + "/mcp"}, strings.NewReader(""), &stdout, &stderr)
			out := stdout.String()
			if code != tt.code || !strings.HasPrefix(out, tt.first+" — ") {
				t.Fatalf("exit %d, want %d; output:\n%s%s", code, tt.code, out, stderr.String())
			}
			var got []string
			for _, line := range strings.Split(out, "\n") {
				f := strings.Fields(line)
				if len(f) >= 2 && strings.HasSuffix(f[0], ".") && strings.Trim(f[0], "0123456789") == "." {
					got = append(got, f[1])
				}
			}
			if strings.Join(got, " ") != strings.Join(tt.steps, " ") {
				t.Errorf("steps %v, want %v:\n%s", got, tt.steps, out)
			}
			if tt.code != 0 && !strings.Contains(out, "      ✗ ") && tt.id != "auth.no_resource_metadata" {
				t.Errorf("no step marked as failed:\n%s", out)
			}
		})
	}
}

// TestCallAuthNotesNotMasked: where no credential was ever sent or
// received (errors.http_status_per_method: a bare 401, no challenge at
// all), the chain's words reach the report and the records whole.
// Before, the redactor took the word after "Bearer" in mcpdiag's own
// notes for a token: "no Bearer [redacted:len=9:…] in WWW-Authenticate".
func TestCallAuthNotesNotMasked(t *testing.T) {
	t.Parallel()
	main, _ := startServe(t, serveOptions{seed: 1})
	base := strings.TrimSuffix(main, "/mcp")
	var out, errb bytes.Buffer
	run([]string{"call", base + "/s/errors.http_status_per_method/mcp", "echo", "--args", `{"text":"hi"}`, "--retries", "0"}, nil, &out, &errb)
	if !strings.Contains(out.String(), "WWW-Authenticate has no challenge of the scheme Bearer") || strings.Contains(out.String(), "[redacted") {
		t.Errorf("the report:\n%s", out.String())
	}
	_, recs, _ := callJSON(t, nil, base+"/s/errors.http_status_per_method/mcp", "echo", "--args", `{"text":"hi"}`, "--retries", "0")
	for _, r := range recs {
		if r.Auth != nil && strings.Contains(r.Auth.Note, "[redacted") {
			t.Errorf("a record's auth note: %q", r.Auth.Note)
		}
	}
}
