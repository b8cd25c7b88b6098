package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/internal/testbin"
)

// TestProbeJUnitMasksEvidence (reread9, from attack8): a check's evidence
// that quotes the server (probe.notification-202 quotes the line that
// answered a notification: here JSON with a credential member) is masked
// in every output of mcpdiag probe: the text report, --json and --junit.
// --junit was scrubbed after XML escaping, where '"' is &#34; and the text
// patterns see no JSON member name.
func TestProbeJUnitMasksEvidence(t *testing.T) {
	bin := testbin.Build(t, "../../probe/testdata/stdioserver")
	for _, tt := range []struct{ name, line, secret string }{
		{"json member", `{"password":"XjunitPw1a2b3c4d","jsonrpc":"2.0","id":null,"error":{"code":-32601,"message":"no"}}`, "XjunitPw1a2b3c4d"},
		{"nested member", `{"error":{"data":{"access_token":"XjunitTk9a8b7c6d"},"code":1,"message":"no"},"jsonrpc":"2.0","id":null}`, "XjunitTk9a8b7c6d"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, mode := range [][]string{nil, {"--json"}} {
				junit := filepath.Join(t.TempDir(), "probe.xml")
				var o, e bytes.Buffer
				args := append(append([]string{"probe", "--interval", "0", "--junit", junit}, mode...), "--", bin, "--notification", "answer", "--notification-line", tt.line)
				if code := run(args, strings.NewReader(""), &o, &e); code != 0 && code != 1 {
					t.Fatalf("probe %v: exit %d\n%s", mode, code, e.String())
				}
				x, err := os.ReadFile(junit)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Contains(x, []byte("a line answered it")) {
					t.Errorf("probe %v: the JUnit file does not quote the answering line: the test proves nothing\n%.2000s", mode, x)
				}
				for name, b := range map[string]string{"report": o.String(), "stderr": e.String(), "--junit": string(x)} {
					if i := strings.Index(b, tt.secret); i >= 0 {
						t.Errorf("probe %v: %s leaks the secret: …%s…", mode, name, b[max(0, i-120):i+len(tt.secret)])
					}
				}
			}
		})
	}
}
