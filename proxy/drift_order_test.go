package proxy

import (
	"testing"
	"time"
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
		d.listed(up, page1Req, page1)
		d.listingEnded(first)
	}()
	d.listedInOrder(up, second.start, page2Req, page2)
	d.listingEnded(second)

	d.mu.Lock()
	defer d.mu.Unlock()
	l := d.lists[up]
	if l == nil || !l.complete["a"] || !l.complete["b"] || len(l.complete) != 2 {
		t.Fatalf("the listing after both pages: %+v, want complete {a, b}", l)
	}
}
