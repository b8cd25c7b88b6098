package main

import (
	"bytes"
	"net"
	"strings"
	"testing"
)

// TestListenExitStatus: serve, proxy and ui share --listen, and say the
// same of the same address: a port no listener can have is bad input (exit
// 2), a port another listener holds (a real one, here) is not (exit 1); each
// in one line on stderr, nothing on stdout. Before outsider16, serve and
// proxy exited 1 for --listen 127.0.0.1:99999 and ui exited 2 for a port in
// use.
func TestListenExitStatus(t *testing.T) {
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	file := writeFile(t, t.TempDir(), "r.jsonl", []byte(`{"kind":"exchange","id":"A"}`+"\n"))
	upstream := []string{"--upstream", "http://127.0.0.1:1/mcp"}
	commands := []struct {
		name string
		args func(listen string) []string
	}{
		{"serve", func(l string) []string { return []string{"serve", "--listen", l} }},
		{"proxy", func(l string) []string { return append([]string{"proxy", "--listen", l}, upstream...) }},
		{"ui", func(l string) []string { return []string{"ui", "--listen", l, file} }},
	}
	for _, c := range commands {
		for _, tc := range []struct {
			listen string
			code   int
			want   string
		}{
			{"127.0.0.1:99999", 2, "invalid port"},
			{"127.0.0.1:65536", 2, "invalid port"},
			{held.Addr().String(), 1, "address already in use"},
		} {
			var stdout, stderr bytes.Buffer
			code := run(c.args(tc.listen), strings.NewReader(""), &stdout, &stderr)
			lines := strings.Split(strings.TrimRight(stderr.String(), "\n"), "\n")
			if code != tc.code || len(lines) != 1 || !strings.HasPrefix(lines[0], "mcpdiag: ") || !strings.Contains(lines[0], tc.listen) || !strings.Contains(lines[0], tc.want) || stdout.Len() != 0 {
				t.Errorf("%s --listen %s: exit %d, stdout %q, stderr %q; want exit %d and one line naming the address and %q", c.name, tc.listen, code, stdout.String(), stderr.String(), tc.code, tc.want)
			}
		}
	}
}
