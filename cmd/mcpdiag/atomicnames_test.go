package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteErrorsNameTheUsersFile: a file a command writes whole (report
// --html and --har, matrix --junit and --html) that cannot be written is
// named in the error as the user named it, never only as its temporary
// file. Before: "mcpdiag: --html: atomicfile: open DIR/.x.html.tmp-595341764:
// no such file or directory".
func TestWriteErrorsNameTheUsersFile(t *testing.T) {
	dir := t.TempDir()
	records := writeFile(t, dir, "run.jsonl", writeRun(t, 2, 0, 10))
	missing := filepath.Join(dir, "missing")
	tests := []struct {
		name string
		args []string
		file string
	}{
		{"report --html", []string{"report", "--html", filepath.Join(missing, "x.html"), records}, filepath.Join(missing, "x.html")},
		{"report --har", []string{"report", "--har", filepath.Join(missing, "x.har"), records}, filepath.Join(missing, "x.har")},
		{"matrix --junit", []string{"matrix", "--scenarios", "baseline", "--junit", filepath.Join(missing, "m.xml")}, filepath.Join(missing, "m.xml")},
		{"matrix --html", []string{"matrix", "--scenarios", "baseline", "--html", filepath.Join(missing, "m.html")}, filepath.Join(missing, "m.html")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			if code := run(tt.args, nil, &out, &errb); code != 2 {
				t.Fatalf("exit %d, want 2; stderr:\n%s", code, errb.String())
			}
			msg := strings.TrimSuffix(errb.String(), "\n")
			flag := strings.Fields(tt.name)[1]
			want := "mcpdiag: " + flag + ": " + tt.file + ": "
			if strings.Contains(msg, "\n") || !strings.HasPrefix(msg, want) {
				t.Errorf("stderr %q, want one line starting %q", msg, want)
			}
			if i := strings.Index(msg, ".tmp-"); i >= 0 && i < len(want) {
				t.Errorf("stderr %q names the temporary file before the user's", msg)
			}
		})
	}
}
