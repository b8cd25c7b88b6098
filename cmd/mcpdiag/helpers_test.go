package main

import (
	"bytes"
	"strings"
	"sync"
	"testing"
)

// syncBuffer is a bytes.Buffer safe for concurrent writes (a command's
// goroutines, a server's handlers) and the test's reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

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
