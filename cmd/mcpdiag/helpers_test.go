package main

import (
	"bufio"
	"bytes"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/faults"
	"github.com/mcpdiag/mcpdiag/internal/syncbuf"
	"github.com/mcpdiag/mcpdiag/record"
)

// syncBuffer is a bytes.Buffer safe for concurrent writes (a command's
// goroutines, a server's handlers) and the test's reads.
type syncBuffer = syncbuf.Buffer

// checkUsageError runs mcpdiag with args and checks the bad-input contract:
// exit 2, nothing on stdout, and one line on stderr that starts with prefix.
func checkUsageError(t *testing.T, name string, args []string, prefix string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(args, nil, &stdout, &stderr)
	lines := strings.Split(strings.TrimRight(stderr.String(), "\n"), "\n")
	if code != 2 || len(lines) != 1 || !strings.HasPrefix(lines[0], prefix) || stdout.Len() != 0 {
		t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 2 and one line %q…", name, code, stdout.String(), stderr.String(), prefix)
	}
}

// decodeRecords decodes record lines (`--json` output), failing the test on
// a line that is not a record.
func decodeRecords(t *testing.T, data []byte) []*record.Record {
	t.Helper()
	var recs []*record.Record
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		rec, err := record.Decode(sc.Bytes())
		if err != nil {
			t.Fatalf("%v: %s", err, sc.Bytes())
		}
		recs = append(recs, rec)
	}
	return recs
}

// entryCall returns the arguments of the catalogue entry's call against its
// endpoint of the mcpdiag serve at base: `call URL TOOL --args ARGS
// --retries 0 --timeout 10s` with the entry's quick params and timeout,
// --no-auth and --input (written to a file) when it has them. The era is
// the caller's.
func entryCall(t *testing.T, base string, e faults.Entry) []string {
	t.Helper()
	u := base + "/s/" + e.ID + "/mcp"
	timeout := "10s"
	if len(e.QuickParams) > 0 {
		u += "?params=" + url.QueryEscape(string(e.QuickParams))
	}
	if e.QuickTimeoutMs > 0 {
		timeout = (time.Duration(e.QuickTimeoutMs) * time.Millisecond).String()
	}
	args := []string{"call", u, e.Tool, "--args", string(e.Args), "--retries", "0", "--timeout", timeout}
	if e.NoAuth {
		args = append(args, "--no-auth")
	}
	if len(e.Input) > 0 {
		in := filepath.Join(t.TempDir(), "input.json")
		if err := os.WriteFile(in, e.Input, 0o600); err != nil {
			t.Fatal(err)
		}
		args = append(args, "--input", in)
	}
	return args
}
