// Package recordtest reads record files for tests: what a command, a proxy
// or a probe run wrote, as it is on disk.
package recordtest

import (
	"bytes"
	"os"
	"slices"
	"sync"
	"testing"

	"github.com/mcpdiag/mcpdiag/record"
)

// ReadFile reads every record of the record file at path, without closing
// any writer of it, failing tb if the file cannot be opened or a line is
// not a record.
func ReadFile(tb testing.TB, path string) []*record.Record {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var out []*record.Record
	for r, err := range record.NewReader(f).All() {
		if err != nil {
			tb.Fatalf("%s: %v", path, err)
		}
		out = append(out, r)
	}
	return out
}

// Lines is a line writer (a record.Async's) that keeps a copy of every line
// written, safe for concurrent use.
type Lines struct {
	mu    sync.Mutex
	lines [][]byte
}

// WriteLine keeps a copy of line.
func (l *Lines) WriteLine(line []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, bytes.Clone(line))
	return nil
}

// Close does nothing: the lines stay.
func (l *Lines) Close() error { return nil }

// All returns the lines written so far, in order.
func (l *Lines) All() [][]byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.lines)
}
