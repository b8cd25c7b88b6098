package recordtest_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mcpdiag/mcpdiag/internal/recordtest"
	"github.com/mcpdiag/mcpdiag/record"
)

// TestReadFile: the records written are the records read, in order.
func TestReadFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.jsonl")
	var enc record.Encoder
	var data []byte
	for _, m := range []string{"initialize", "tools/list", "tools/call"} {
		b, err := enc.Encode(&record.Record{Kind: record.KindExchange, Method: m})
		if err != nil {
			t.Fatal(err)
		}
		data = append(data, b...)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	recs := recordtest.ReadFile(t, path)
	if len(recs) != 3 || recs[0].Method != "initialize" || recs[2].Method != "tools/call" {
		t.Fatalf("read %d records: %+v", len(recs), recs)
	}
}
