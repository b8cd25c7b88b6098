package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/internal/testbin"
)

// errorDressedServer is a 2026-07-28 MCP server on 127.0.0.1 whose one
// read-only tool answers every call with a success whose text is text (an
// error dressed as success: probe.is-error-missing quotes it), and which
// sets the cookie sid=cookie on every response.
func errorDressedServer(t *testing.T, text, cookie string) string {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m, _ := readRPCRequest(r)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Set-Cookie", "sid="+cookie+"; HttpOnly")
		t, _ := json.Marshal(text)
		switch m.Method {
		case "tools/list":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"resultType":"complete","tools":[{"name":"lookup","inputSchema":{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]},"annotations":{"readOnlyHint":true}}]}}`, m.ID)
		case "tools/call":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"resultType":"complete","content":[{"type":"text","text":%s}]}}`, m.ID, t)
		default:
			w.WriteHeader(http.StatusBadRequest)
		}
	}))
	t.Cleanup(ts.Close)
	return ts.URL
}

// TestProbeEvidenceFromRedactedRecords (audit10): the probe rules judge
// redacted records, so what a check's evidence quotes of the server was
// redacted with the record it came from, not scrubbed as text afterwards.
// Before, the rules read the records in the clear and the report was
// scrubbed: a response's own Set-Cookie value quoted in its text (the
// report's scrub knows no response header), a credential the evidence's
// 60-character excerpt cut inside its quotes, and a stdio server's stray
// line quoted with %q (token=\"…\": no quoted value for the patterns)
// reached the text report, --json and --junit. Every output is searched
// for the secret and for its first 10 characters.
func TestProbeEvidenceFromRedactedRecords(t *testing.T) {
	stdio := testbin.Build(t, "../../probe/testdata/stdioserver")
	cookie, cut, stray := canary("probecookie"), "Qz9cutPwA1b2c3d4e5f6g7h8", canary("probestray")
	for _, tt := range []struct {
		name, secret, quoted string
		target               func() []string
	}{
		{"response cookie quoted in the text", cookie, "isError missing", func() []string {
			return []string{errorDressedServer(t, "Error: the session "+cookie+" was refused", cookie)}
		}},
		// "Error: bad input, see the log at once " is 39 runes: the
		// excerpt's 60 end 10 runes into the value.
		{"credential cut by the excerpt", cut, "isError missing", func() []string {
			return []string{errorDressedServer(t, `Error: bad input, see the log at once password: "`+cut+`" (retry)`, "plain")}
		}},
		{"stdio stray line", stray, "not JSON-RPC on stdout", func() []string {
			return []string{"--", stdio, "--noise", "--noise-line", `debug: token="` + stray + `"`}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			target := tt.target()
			for _, mode := range [][]string{nil, {"--json"}} {
				dir := t.TempDir()
				junit, rec := filepath.Join(dir, "probe.xml"), filepath.Join(dir, "probe.jsonl")
				var o, e bytes.Buffer
				args := append(append([]string{"probe", "--interval", "0", "--junit", junit, "--record", rec}, mode...), target...)
				if code := run(args, strings.NewReader(""), &o, &e); code != 0 && code != 1 {
					t.Fatalf("probe %v: exit %d\n%s%s", mode, code, o.String(), e.String())
				}
				x, err := os.ReadFile(junit)
				if err != nil {
					t.Fatal(err)
				}
				r, err := os.ReadFile(rec)
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(o.String(), tt.quoted) || !bytes.Contains(x, []byte(tt.quoted)) {
					t.Errorf("probe %v: the report or the JUnit file has no evidence saying %q: the test proves nothing\n%.3000s", mode, tt.quoted, o.String())
				}
				for name, b := range map[string]string{"report": o.String(), "stderr": e.String(), "--junit": string(x), "--record": string(r)} {
					for _, s := range []string{tt.secret, tt.secret[:10]} {
						if i := strings.Index(b, s); i >= 0 {
							t.Errorf("probe %v: %s leaks %q: …%s…", mode, name, s, b[max(0, i-120):min(len(b), i+len(tt.secret))])
						}
					}
				}
			}
		})
	}
}
