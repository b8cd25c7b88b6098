package main

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestStdioScriptInterpreterMissing: a stdio server script whose #! line
// names an interpreter that does not exist is bad input, one line and exit
// 2, and the line names the interpreter: it said "fork/exec ./server: no
// such file or directory" for the script, which is there (outsider21).
// proxy --stdio and probe -- start servers the same way.
func TestStdioScriptInterpreterMissing(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the kernel's ENOENT for a missing interpreter is Linux's")
	}
	dir := t.TempDir()
	server := filepath.Join(dir, "server")
	if err := os.WriteFile(server, []byte("#!/nonexistent/mcpdiag-python3 -u\nprint('never')\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	want := server + " exists, but the interpreter its #! line names, /nonexistent/mcpdiag-python3, does not: fork/exec " + server + ": no such file or directory\n"
	for _, args := range [][]string{
		{"proxy", "--stdio", "--", server},
		{"probe", "--", server},
	} {
		var out, errb bytes.Buffer
		code := run(args, strings.NewReader(""), &out, &errb)
		if code != 2 || !strings.HasSuffix(errb.String(), want) || strings.Count(errb.String(), "\n") != 1 || out.Len() != 0 {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 2, nothing on stdout and one line ending %q", args, code, out.String(), errb.String(), want)
		}
	}
}
