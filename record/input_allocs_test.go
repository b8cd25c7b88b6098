package record

import (
	"net/http"
	"runtime"
	"testing"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/wire"
)

// TestInputRecordAllocs: what the proxy does for the article's
// input_required exchange (Classify, SetResult, the record's encoding)
// allocates 8 objects, 481 bytes (488 allowed for the runtime's own); before input19 (main 2132c9e) 8 objects,
// 577 bytes: the verdict is 160 bytes (its input requests packed), not 256,
// and SetResult reads them in place (Input() builds new details on each
// call, for SetResult only to copy). The other seven objects
// (the record's Input and its request, the encoder's redacted copy of
// them) are as before.
func TestInputRecordAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	ex := &classify.Exchange{ID: wire.IntID(1), Status: 200, Header: http.Header{"Content-Type": {"application/json"}},
		BodyBytes: []byte(`{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":{"approval":{"method":"elicitation/create","params":{"mode":"form","message":"synthetic input"}}}}}`)}
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
	if rec.Input == nil || len(rec.Input.Requests) != 1 || rec.Input.Requests[0] != (InputRequest{Key: "approval", Method: "elicitation/create", Mode: "form"}) || rec.Input.HasRequestState {
		t.Fatalf("the record's input: %+v", rec.Input)
	}
	allocs := testing.AllocsPerRun(1000, run)
	bytes := -1.0
	for range 3 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range 1000 {
			run()
		}
		runtime.ReadMemStats(&after)
		if n := float64(after.TotalAlloc-before.TotalAlloc) / 1000; bytes < 0 || n < bytes {
			bytes = n
		}
	}
	if allocs > 8 || bytes > 488 {
		t.Errorf("%v allocations, %v bytes per input_required exchange's verdict and record; want at most 8, 488", allocs, bytes)
	}
	t.Logf("%v allocations, %v bytes", allocs, bytes)
}
