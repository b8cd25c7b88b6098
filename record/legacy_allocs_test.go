package record

import (
	"net/http"
	"runtime"
	"testing"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/wire"
)

// legacyRecordPerRun returns the allocations and bytes per run of what the
// proxy does for a legacy exchange's verdict and record: Classify (the
// allocating one the recorder calls), SetResult, and the record's encoding
// into a line buffer of room enough. The bytes are the least of three
// measures of runs runs (anything else the process allocates can only add).
func legacyRecordPerRun(t *testing.T, runs int) (allocs, bytes float64) {
	t.Helper()
	ex := &classify.Exchange{ID: wire.IntID(1), Status: 200, Header: http.Header{"Content-Type": {"application/json"}},
		BodyBytes: []byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"legacy ok"}],"isError":false}}`)}
	c := &classify.Classifier{}
	rec := benchProxyJSONRecord()
	var e Encoder
	buf := make([]byte, 0, 4096)
	run := func() {
		res, err := c.Classify(ex)
		if err != nil {
			t.Fatal(err)
		}
		rec.SetResult(res)
		if _, err := e.encodeInto(buf, rec); err != nil {
			t.Fatal(err)
		}
	}
	run()
	if len(rec.Warnings) != 1 || rec.Warnings[0].Code != classify.WarnMissingResultType {
		t.Fatalf("the record's warnings: %+v", rec.Warnings)
	}
	allocs = testing.AllocsPerRun(runs, run)
	bytes = -1
	for range 3 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range runs {
			run()
		}
		runtime.ReadMemStats(&after)
		if n := float64(after.TotalAlloc-before.TotalAlloc) / float64(runs); bytes < 0 || n < bytes {
			bytes = n
		}
	}
	return allocs, bytes
}

// TestLegacyRecordAllocs: the proxy's verdict and record of a legacy
// exchange allocate 4 objects, 161 bytes: the 96-byte verdict, the record's
// one warning (32, SetResult), its isError (1) and the encoder's redacted
// copy of the warnings (32). Before legacy18 (main f0f2e59): 4 objects, 257
// bytes (the verdict 192, its warning in extra). Keeping the warning inside
// the Result must not move its allocation to the record.
func TestLegacyRecordAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	allocs, bytes := legacyRecordPerRun(t, 1000)
	if allocs > 4 || bytes > 168 {
		t.Errorf("%v allocations, %v bytes per legacy exchange's verdict and record; want at most 4, 168", allocs, bytes)
	}
	t.Logf("%v allocations, %v bytes", allocs, bytes)
}
