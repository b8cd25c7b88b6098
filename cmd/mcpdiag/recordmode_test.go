package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadableRecordFileWarns (audit10): a record file mcpdiag creates is
// 0600; one that already exists readable by others is appended to as it
// is, and call, probe and proxy say so on stderr. A new file, or an
// existing private one, gets no warning.
func TestReadableRecordFileWarns(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusBadRequest) }))
	t.Cleanup(srv.Close)
	for _, tt := range []struct {
		name string
		mode os.FileMode // 0: no file before
		warn bool
	}{
		{"new file", 0, false},
		{"existing 0600", 0o600, false},
		{"existing 0644", 0o644, true},
		{"existing 0640", 0o640, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, cmd := range []string{"call", "probe", "proxy"} {
				rec := filepath.Join(t.TempDir(), "r.jsonl")
				if tt.mode != 0 {
					if err := os.WriteFile(rec, nil, tt.mode); err != nil {
						t.Fatal(err)
					}
					if err := os.Chmod(rec, tt.mode); err != nil { // the umask aside
						t.Fatal(err)
					}
				}
				var stderr string
				switch cmd {
				case "call":
					var o, e bytes.Buffer
					run([]string{"call", srv.URL + "/mcp", "echo", "--no-auth", "--record", rec, "--timeout", "5s"}, strings.NewReader(""), &o, &e)
					stderr = e.String()
				case "probe":
					var o, e bytes.Buffer
					run([]string{"probe", "--interval", "0", "--record", rec, srv.URL + "/mcp"}, strings.NewReader(""), &o, &e)
					stderr = e.String()
				case "proxy":
					px := runHTTPProxyForTest(t, proxyOptions{upstream: srv.URL + "/mcp", recordFile: rec})
					px.stop()
					stderr = px.stderr.String()
				}
				if got := strings.Contains(stderr, "is readable by others"); got != tt.warn {
					t.Errorf("%s: warning %v, want %v\n%s", cmd, got, tt.warn, stderr)
				}
				if st, err := os.Stat(rec); err == nil && tt.mode == 0 && st.Mode().Perm() != 0o600 {
					t.Errorf("%s: a new record file has mode %#o, want 0600", cmd, st.Mode().Perm())
				}
			}
		})
	}
}
