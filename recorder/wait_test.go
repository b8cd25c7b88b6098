package recorder

import (
	"context"
	"testing"
)

// TestWaitNothingInFlightAfterDeadline: a Wait called when its context is
// already done, with no exchange in flight, reports no loss. Before, select
// chose between the done context and the finished wait at random, and a
// shutdown that used up its budget reported "0 exchanges still in flight".
func TestWaitNothingInFlightAfterDeadline(t *testing.T) {
	rc, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for i := 0; i < 200; i++ {
		if err := rc.Wait(ctx); err != nil {
			t.Fatalf("Wait %d with nothing in flight = %v, want nil", i, err)
		}
	}
}
