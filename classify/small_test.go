package classify

import (
	"net/http"
	"runtime"
	"testing"
	"unsafe"

	"github.com/mcpdiag/mcpdiag/wire"
)

// TestResultSizeClass: a Result is 96 bytes, a size class of the allocator
// (result17; 208 before). The allocation is most of what Classify costs on
// a small response (GC cycles come with the bytes allocated); a field that
// takes it to 112 bytes or more should be a choice, not an accident.
func TestResultSizeClass(t *testing.T) {
	if n := unsafe.Sizeof(Result{}); n != 96 {
		t.Fatalf("Result is %d bytes, want 96", n)
	}
	// The one object Classify allocates for the other small verdicts, each
	// in the size class it has (docs/benchmarks.md, result17).
	for _, tc := range []struct {
		name       string
		size, want uintptr
	}{
		{"an input_required result's (Result, extra and one request packed)", unsafe.Sizeof(struct {
			r Result
			e extra
			p [16]byte
		}{}), 160},
		{"a JSON-RPC error's (Result, error object and reason)", unsafe.Sizeof(resultError{}), 240},
	} {
		if tc.size > tc.want {
			t.Errorf("%s object is %d bytes, more than the %d-byte size class", tc.name, tc.size, tc.want)
		}
	}
}

// bytesPerRun returns the bytes f allocates per call, averaged over runs
// calls (runtime.MemStats.TotalAlloc counts every allocation, so the
// collector running in between does not change it). Anything else the
// process allocates meanwhile (the runtime, the testing package) can only
// add, so the least of three measures is taken.
func bytesPerRun(runs int, f func()) float64 {
	f() // as testing.AllocsPerRun does: a first call may set things up
	least := -1.0
	for range 3 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range runs {
			f()
		}
		runtime.ReadMemStats(&after)
		if n := float64(after.TotalAlloc-before.TotalAlloc) / float64(runs); least < 0 || n < least {
			least = n
		}
	}
	return least
}

// TestSmallResponseAllocs: Classify allocates one object on the article's
// small responses: the Result and, in the same allocation, what the verdict
// must own (the details and reason of a JSON-RPC error, the input requests
// of an input_required result, packed: input19, 256 bytes before, the
// details, a request and its key's copy; a legacy result's warning is a
// bit of the Result, legacy18: 192 bytes before, its Warning and extra).
// An id longer than the Result's six bytes of room is copied on its own.
// ClassifyInto reuses the caller's Result, its warnings' array and the room
// of its input requests, and allocates only a JSON-RPC error's details.
func TestSmallResponseAllocs(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		id         wire.ID
		want       Outcome
		allocs     float64 // Classify's
		into       float64 // ClassifyInto's
		bytes      float64 // Classify's: its objects' size classes (an id past six bytes: 16 more at most)
	}{
		{"success", `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"ok"}],"isError":false}}`, wire.IntID(1), ToolSuccess, 1, 0, 96},
		{"jsonrpc_error", `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"synthetic invalid params"}}`, wire.IntID(1), JSONRPCError, 1, 1, 240},
		{"tool_error", `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"failed"}],"isError":true}}`, wire.IntID(1), ToolError, 1, 0, 96},
		{"input_required", `{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":{"approval":{"method":"elicitation/create","params":{"mode":"form","message":"synthetic input"}}}}}`, wire.IntID(1), InputRequired, 1, 0, 160},
		{"input_required, four requests", `{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":{"a":{"method":"roots/list"},"b":{"method":"roots/list"},"c":{"method":"elicitation/create","params":{"message":"m","mode":"url"}},"d":{"method":"sampling/createMessage","params":{"messages":[]}}},"requestState":"s"}}`, wire.IntID(1), InputRequired, 1, 0, 160},
		{"legacy", `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"legacy ok"}],"isError":false}}`, wire.IntID(1), ToolSuccess, 1, 0, 96},
		{"legacy, six-digit id", `{"jsonrpc":"2.0","id":123456,"result":{"content":[{"type":"text","text":"legacy ok"}],"isError":true}}`, wire.IntID(123456), ToolError, 1, 0, 96},
		{"six-digit id", `{"jsonrpc":"2.0","id":123456,"result":{"resultType":"complete","content":[]}}`, wire.IntID(123456), ToolSuccess, 1, 0, 96},
		{"seven-digit id", `{"jsonrpc":"2.0","id":1234567,"result":{"resultType":"complete","content":[]}}`, wire.IntID(1234567), ToolSuccess, 2, 1, 96 + 16},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ex := &Exchange{Status: 200, Header: http.Header{"Content-Type": {"application/json"}}, BodyBytes: []byte(tc.body), ID: tc.id}
			c := &Classifier{}
			r, err := c.Classify(ex)
			if err != nil || r.Outcome != tc.want {
				t.Fatalf("outcome %s (%s), err %v; want %s", r.Outcome, r.Reason, err, tc.want)
			}
			if got := r.JSONRPC().ID.String(); got != tc.id.String() {
				t.Fatalf("id %s, want %s", got, tc.id.String())
			}
			if n := testing.AllocsPerRun(100, func() { r, _ = c.Classify(ex) }); n > tc.allocs {
				t.Errorf("Classify: %v allocations, want at most %v", n, tc.allocs)
			}
			// The bytes, not only the objects: the collector's cycles come
			// with the bytes allocated, and they are most of what the
			// allocating Classify of a small response costs (classifier3).
			if n := bytesPerRun(1000, func() { r, _ = c.Classify(ex) }); n > tc.bytes {
				t.Errorf("Classify: %v bytes allocated per call, want at most %v", n, tc.bytes)
			}
			var into Result
			if n := testing.AllocsPerRun(100, func() { _ = c.ClassifyInto(ex, &into) }); n > tc.into {
				t.Errorf("ClassifyInto: %v allocations, want at most %v", n, tc.into)
			}
		})
	}
}

// TestSetterOnCopy: the rare details live behind one pointer that a copy of
// a Result shares; a setter called on the copy must leave the original as
// it was (and a getter on a zero Result must answer nil, not panic).
func TestSetterOnCopy(t *testing.T) {
	var zero Result
	if zero.SSE() != nil || zero.HTTP() != nil || zero.Network() != nil || zero.Task() != nil || zero.NotClassified() != nil || zero.Response() != nil {
		t.Fatal("a zero Result has details")
	}
	zero.SetSSE(nil)
	if zero.extra != nil {
		t.Error("setting nil on a zero Result allocated its details")
	}
	orig := Result{Outcome: NetworkError}
	orig.SetNetwork(&NetworkDetails{Error: "boom"})
	cp := orig
	cp.SetNetwork(&NetworkDetails{Error: "other"})
	cp.SetTask(&TaskDetails{TaskID: "t"})
	if orig.Network().Error != "boom" || orig.Task() != nil {
		t.Errorf("the original changed with its copy: network %+v, task %+v", orig.Network(), orig.Task())
	}
	if cp.Network().Error != "other" || cp.Task().TaskID != "t" {
		t.Errorf("the copy lost its setters: network %+v, task %+v", cp.Network(), cp.Task())
	}
}

// TestErrorReasonTables: the reasons' starts made once per named code, the
// reason built in room or on its own, and the input methods' two spellings
// agree with what they stand for.
func TestErrorReasonTables(t *testing.T) {
	for k, c := range codeNames {
		if got, want := codeReasons[k], jsonrpcErrorReason(c.code, CodeName(c.code), ""); got != want {
			t.Errorf("code %d: start %q, want %q", c.code, got, want)
		}
	}
	var room [72]byte
	for _, tc := range []struct {
		code int64
		msg  string
	}{{-32602, "m"}, {-32099, "no name"}, {7, ""}, {-32004, "a message too long for the room it is given, so built on its own"}} {
		start := ""
		if k := codeIndex(tc.code); k >= 0 {
			start = codeReasons[k]
		}
		want := jsonrpcErrorReason(tc.code, CodeName(tc.code), tc.msg)
		if got := errorReasonIn(room[:0], start, tc.code, CodeName(tc.code), []byte(tc.msg)); got != want {
			t.Errorf("code %d: reason %q, want %q", tc.code, got, want)
		}
	}
	for k, m := range inputMethods {
		if m != `"`+inputMethodNames[k]+`"` {
			t.Errorf("input method %d: %s and %s", k, m, inputMethodNames[k])
		}
	}
}
