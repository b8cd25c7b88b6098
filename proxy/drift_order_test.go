package proxy

import (
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/record"
)

// TestListingPagesRecordedOutOfOrder: the record of a listing's second page
// may be finished before the first page's (each in its own goroutine); the
// listing must still end whole, as the client read it page by page.
func TestListingPagesRecordedOutOfOrder(t *testing.T) {
	const up = "http://127.0.0.1:1/mcp"
	page1Req := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`)
	page1 := []byte(`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a"}],"nextCursor":"p2"}}`)
	page2Req := []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":"p2"}}`)
	page2 := []byte(`{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"b"}]}}`)

	var d driftTracker
	t0 := time.Now()
	first := d.listingStarted(up, t0)
	second := d.listingStarted(up, t0.Add(time.Millisecond))
	go func() {
		time.Sleep(50 * time.Millisecond) // the first page's record lags
		d.listed(up, first.start, page1Req, page1)
		d.listingEnded(first)
	}()
	d.listedInOrder(up, second.start, page2Req, page2)
	d.listingEnded(second)

	d.mu.Lock()
	defer d.mu.Unlock()
	l := d.lists[up]
	var names map[string]bool
	if l != nil {
		names = l.before(second.start.Add(time.Nanosecond))
	}
	if !names["a"] || !names["b"] || len(names) != 2 {
		t.Fatalf("the listing after both pages: %+v, want complete {a, b}", l)
	}
}

// TestUnknownToolJudgedByTheListingBeforeTheCall: a tools/call is judged by
// the listings whose last page started before the call, even when its record
// is finished after a later listing ended (records finish in goroutines):
// the call before the listing's last page gets no unknown-tool warning, the
// call after it does.
func TestUnknownToolJudgedByTheListingBeforeTheCall(t *testing.T) {
	const up = "http://127.0.0.1:1/mcp"
	page1Req := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`)
	page1 := []byte(`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a"}],"nextCursor":"p2"}}`)
	page2Req := []byte(`{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"cursor":"p2"}}`)
	page2 := []byte(`{"jsonrpc":"2.0","id":3,"result":{"tools":[{"name":"b"}]}}`)
	t0 := time.Now()
	var d driftTracker
	for i, page := range []struct {
		req, resp []byte
	}{{page1Req, page1}, {page2Req, page2}} {
		start := t0.Add(time.Duration(2*i) * time.Millisecond) // pages at t0 and t0+2ms
		tok := d.listingStarted(up, start)
		d.listedInOrder(up, start, page.req, page.resp)
		d.listingEnded(tok)
	}
	call := func(start time.Time) bool {
		rec := &record.Record{Method: "tools/call", Tool: "ghost", Outcome: classify.ToolError}
		d.unknownTool(up, rec, start)
		return len(rec.Warnings) > 0
	}
	if call(t0.Add(time.Millisecond)) {
		t.Errorf("a call that started between the pages (the listing not whole yet) was warned")
	}
	if !call(t0.Add(3 * time.Millisecond)) {
		t.Errorf("a call after the whole listing was not warned")
	}
}
