package recorder

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/internal/testwait"
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

// TestWaitNamesWhatIsInFlight: with an exchange still in its handler, a
// Wait whose context ends reports it (a loss is never hidden).
func TestWaitNamesWhatIsInFlight(t *testing.T) {
	rc, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	entered, release := make(chan struct{}), make(chan struct{})
	srv := httptest.NewServer(rc.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		<-release
	})))
	defer srv.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		resp, err := http.Post(srv.URL, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		if err == nil {
			resp.Body.Close()
		}
	}()
	testwait.Recv(t, entered, "the request to reach the handler")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = rc.Wait(ctx)
	close(release)
	testwait.Recv(t, done, "the client's call to end after the handler was released")
	if err == nil || !strings.Contains(err.Error(), "1 exchanges still in flight") {
		t.Fatalf("Wait with one exchange in its handler = %v, want it named", err)
	}
	if err := rc.Wait(context.Background()); err != nil {
		t.Fatalf("Wait after the exchange ended = %v", err)
	}
}
