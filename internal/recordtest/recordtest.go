// Package recordtest reads record files for tests: what a command, a proxy
// or a probe run wrote, as it is on disk.
package recordtest

import (
	"os"
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
