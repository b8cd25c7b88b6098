package classify

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/wire"
)

// intoSeq classifies bodies one after another into the same Result, as a
// loop over ClassifyInto does, and checks each verdict against Classify's
// of the same body (as the JSON a user sees, and the error's members read
// directly), and that no string an earlier verdict gave changed since.
func intoSeq(t *testing.T, legacy bool, bodies ...string) {
	t.Helper()
	ex := func(body string) *Exchange {
		e := &Exchange{Status: 200, Header: http.Header{"Content-Type": {"application/json"}}, BodyBytes: []byte(body), ID: wire.IntID(1)}
		if legacy {
			e.ProtocolVersion = Protocol2025
		}
		return e
	}
	type kept struct{ reason, reasonCopy, msg, msgCopy string }
	var earlier []kept
	var r Result
	c := &Classifier{}
	for i, body := range bodies {
		_ = c.ClassifyInto(ex(body), &r)
		want, _ := c.Classify(ex(body))
		a, _ := json.Marshal(&r)
		b, _ := json.Marshal(want)
		if string(a) != string(b) {
			t.Fatalf("verdict %d (%q): ClassifyInto after %q\n%s\nClassify\n%s", i, body, bodies[:i], a, b)
		}
		if (r.JSONRPC == nil) != (want.JSONRPC == nil) || r.JSONRPC != nil && ((r.JSONRPC.Error == nil) != (want.JSONRPC.Error == nil)) {
			t.Fatalf("verdict %d (%q): error details %+v, Classify's %+v", i, body, r.JSONRPC, want.JSONRPC)
		}
		if r.JSONRPC != nil && r.JSONRPC.Error != nil {
			g, w := r.JSONRPC.Error, want.JSONRPC.Error
			if (g.Code == nil) != (w.Code == nil) || g.Code != nil && *g.Code != *w.Code || g.CodeName != w.CodeName || g.Message != w.Message || string(g.Data) != string(w.Data) || (g.Data == nil) != (w.Data == nil) {
				t.Fatalf("verdict %d (%q): error %+v, Classify's %+v", i, body, *g, *w)
			}
			earlier = append(earlier, kept{r.Reason, strings.Clone(r.Reason), g.Message, strings.Clone(g.Message)})
		} else {
			earlier = append(earlier, kept{r.Reason, strings.Clone(r.Reason), "", ""})
		}
		for j, k := range earlier {
			if k.reason != k.reasonCopy || k.msg != k.msgCopy {
				t.Fatalf("after verdict %d (%q), verdict %d's strings changed: reason %q (was %q), message %q (was %q)", i, body, j, k.reason, k.reasonCopy, k.msg, k.msgCopy)
			}
		}
	}
}

// TestClassifyIntoReusesError: ClassifyInto keeps the store of the
// previous verdict's JSON-RPC error and reuses it, allocating nothing, for
// an error with the same reason; any other verdict gets what Classify
// gives, and no string of an earlier verdict changes (a string shares the
// store's text, so the text is never written again).
func TestClassifyIntoReusesError(t *testing.T) {
	const (
		errA      = `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"synthetic invalid params"}}`
		errB      = `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"other params"}}`
		errC      = `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"synthetic invalid params"}}`
		unnamed   = `{"jsonrpc":"2.0","id":1,"error":{"code":4001,"message":"synthetic invalid params"}}`
		withData  = `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"synthetic invalid params","data":{"x":[1]}}}`
		escaped   = `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"synthetic\u0020invalid params"}}`
		long      = `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"a message too long for the room of its store, so its reason is built on its own"}}`
		empty     = `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":""}}`
		retired   = `{"jsonrpc":"2.0","id":1,"error":{"code":-32002,"message":"gone"}}`
		success   = `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"ok"}],"isError":false}}`
		badError  = `{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"m"}}`
		noJSONRPC = `{"id":1,"error":{"code":-32602,"message":"synthetic invalid params"}}`
	)
	for _, seq := range [][]string{
		{errA, errA, errA},
		{errA, errB, errA, errB},
		{errA, errC, errA},
		{unnamed, unnamed, errA, unnamed},
		{errA, withData, errA, withData, withData},
		{errA, escaped, errA, escaped},
		{long, long, errA, long},
		{empty, empty, errA, empty},
		{errA, success, errA, success},
		{errA, badError, errA, badError, badError},
		{errA, noJSONRPC, errA},
		{retired, retired, errA},
	} {
		intoSeq(t, false, seq...)
		intoSeq(t, true, seq...)
	}

	// The reuse itself: the same error again allocates nothing, and the
	// details are the store the previous verdict had.
	ex := &Exchange{Status: 200, Header: http.Header{"Content-Type": {"application/json"}}, BodyBytes: []byte(errA), ID: wire.IntID(1)}
	c := &Classifier{}
	var r Result
	_ = c.ClassifyInto(ex, &r)
	first := r.JSONRPC.Error
	if n := testing.AllocsPerRun(100, func() { _ = c.ClassifyInto(ex, &r) }); n != 0 {
		t.Errorf("ClassifyInto of the same error again: %v allocations, want 0", n)
	}
	if r.JSONRPC.Error != first || r.Reason != "JSON-RPC error -32602 InvalidParams: synthetic invalid params" {
		t.Errorf("not reused: details %p (first %p), reason %q", r.JSONRPC.Error, first, r.Reason)
	}
	// A different reason gets a store of its own: the first verdict's
	// details are left as they were.
	ex.BodyBytes = []byte(errB)
	_ = c.ClassifyInto(ex, &r)
	if r.JSONRPC.Error == first || first.Message != "synthetic invalid params" || r.JSONRPC.Error.Message != "other params" {
		t.Errorf("a different error: details %p (first %p), first's message %q, this one's %q", r.JSONRPC.Error, first, first.Message, r.JSONRPC.Error.Message)
	}
	// A Result from Classify is reused the same way.
	ex.BodyBytes = []byte(errA)
	rc, _ := c.Classify(ex)
	own := rc.JSONRPC.Error
	if n := testing.AllocsPerRun(100, func() { _ = c.ClassifyInto(ex, rc) }); n != 0 || rc.JSONRPC.Error != own {
		t.Errorf("ClassifyInto into Classify's Result: %v allocations, details %p (its own %p)", n, rc.JSONRPC.Error, own)
	}
}

// FuzzClassifyIntoSequence: a Result reused through ClassifyInto for one
// body after another (the second twice, then the first again) holds each
// time the verdict Classify gives for that body alone, and the strings of
// the verdicts before it do not change.
func FuzzClassifyIntoSequence(f *testing.F) {
	for _, p := range [][2]string{
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"synthetic invalid params"}}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"synthetic invalid params"}}`},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"a"}}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"b","data":[1]}}`},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":7,"message":"x"}}`, `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"m"}}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"m"}}`},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"m"}}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"\u006d"}}`},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":""}}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":""}}`},
	} {
		f.Add(p[0], p[1], false)
	}
	f.Fuzz(func(t *testing.T, a, b string, legacy bool) {
		intoSeq(t, legacy, a, b, b, a)
	})
}
