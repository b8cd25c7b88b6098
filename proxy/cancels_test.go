package proxy

import (
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/wire"
)

// TestCancelTrackerBounded: the HTTP proxy keeps at most cancelMemory
// cancels, forgetting the oldest first, and finds a cancel only inside the
// request's own span.
func TestCancelTrackerBounded(t *testing.T) {
	var c cancelTracker
	t0 := time.Unix(1000, 0)
	for i := 0; i < 3*cancelMemory; i++ {
		c.add(cancelKey("/mcp", "s", wire.IntID(int64(i))), t0.Add(time.Duration(i)*time.Millisecond))
	}
	if c.n != cancelMemory {
		t.Fatalf("%d cancels held, want %d", c.n, cancelMemory)
	}
	span := func(i int) (time.Time, time.Time) {
		at := t0.Add(time.Duration(i) * time.Millisecond)
		return at.Add(-time.Millisecond), at.Add(time.Millisecond)
	}
	cases := []struct {
		id   int
		want bool
	}{
		{0, false},                  // forgotten: the oldest go first
		{2*cancelMemory - 1, false}, // forgotten: the last one before the kept ones
		{2 * cancelMemory, true},    // the oldest kept
		{3*cancelMemory - 1, true},  // the newest
	}
	for _, tc := range cases {
		start, end := span(tc.id)
		if _, ok := c.cancelledAt(cancelKey("/mcp", "s", wire.IntID(int64(tc.id))), start, end); ok != tc.want {
			t.Errorf("id %d: found %v, want %v", tc.id, ok, tc.want)
		}
	}
	// Outside the request's span: a cancel of the same id before the
	// request began names an earlier request.
	id := 3*cancelMemory - 1
	_, end := span(id)
	if _, ok := c.cancelledAt(cancelKey("/mcp", "s", wire.IntID(int64(id))), end, end.Add(time.Second)); ok {
		t.Errorf("a cancel before the request began was found")
	}
	// Another session's request of the same id.
	start, end := span(id)
	if _, ok := c.cancelledAt(cancelKey("/mcp", "other", wire.IntID(int64(id))), start, end); ok {
		t.Errorf("another session's cancel was found")
	}
}
