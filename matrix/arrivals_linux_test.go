//go:build linux

package matrix

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/internal/testwait"
)

// TestUnreadCountsRequestsTheServerHasNotSeen: a client that writes its
// request and exits leaves it in the kernel's queues. On a loaded machine
// the server may not have accepted the connection, or not read from it,
// or read the head but not started the handler, when the run's wait looks:
// the run was judged "the client sent no request" in some identical runs
// and not in others (TestRequestThatArrivesAfterItsClientExited failed once
// in a package run at load 30). Each of those stages must count as a
// request on its way.
func TestUnreadCountsRequestsTheServerHasNotSeen(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	a := newArrivals()
	hl := a.listen(ln)
	if n := a.unread(); n != 0 {
		t.Fatalf("unread %d before any connection, want 0", n)
	}

	// A pool's connection: counted while it waits to be accepted (the
	// server accepts at once), not once it is accepted with nothing sent.
	idle, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	waitUnread(t, a, 1, "a connection in the accept queue")
	ic, err := hl.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer ic.Close()
	waitUnread(t, a, 0, "an accepted connection with nothing sent")

	// A request written, not yet accepted.
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("POST /mcp HTTP/1.1\r\n")); err != nil {
		t.Fatal(err)
	}
	waitUnread(t, a, 1, "a connection with a request in the accept queue")
	sc, err := hl.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	waitUnread(t, a, 1, "an accepted connection whose request waits unread in its socket")
	buf := make([]byte, 64)
	if _, err := sc.Read(buf); err != nil {
		t.Fatal(err)
	}
	waitUnread(t, a, 1, "a connection with part of a request's head read")
	a.connState(sc, http.StateActive)
	waitUnread(t, a, 1, "a request read whose handler has not started")
	h := a.wrap(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	r, _ := http.NewRequestWithContext(a.connContext(context.Background(), sc), http.MethodPost, "/mcp", nil)
	h.ServeHTTP(nil, r)
	waitUnread(t, a, 0, "a request whose handler started")
}

// waitUnread waits until a.unread() is want: the kernel's queues are
// filled by another side of the loopback a moment after Dial or Write.
func waitUnread(t *testing.T, a *arrivals, want int, what string) {
	t.Helper()
	deadline := time.Now().Add(testwait.Bound)
	for {
		n := a.unread()
		if n == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: unread %d, want %d", what, n, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestHandledCoversTheGapBeforeInFlight: between wrap taking a request
// from heads and the server's handler counting it in flight, the request
// was counted by neither (a goroutine stalled there let the run's wait see
// an idle endpoint). A handler that stalls before it counts anything: the
// run's request is counted from the moment it leaves heads until its
// handler returns, and by its run only.
func TestHandledCoversTheGapBeforeInFlight(t *testing.T) {
	a := newArrivals()
	stall, release := make(chan struct{}), make(chan struct{})
	h := a.wrap(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		close(stall)
		<-release
	}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h, ConnState: a.connState, ConnContext: a.connContext}
	go srv.Serve(a.listen(ln))
	defer srv.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		if res, err := http.Post("http://"+ln.Addr().String()+"/s/baseline/mcp?run=baseline%231", "application/json", strings.NewReader("{}")); err == nil {
			res.Body.Close()
		}
	}()
	testwait.Recv(t, stall, "the request to reach the handler")
	if n := a.unread(); n != 0 {
		t.Errorf("unread %d while the handler runs, want 0 (the head was taken)", n)
	}
	if n := a.handled("baseline#1"); n != 1 {
		t.Errorf("handled %d while the handler stalls before any in-flight count, want 1", n)
	}
	if n := a.handled("baseline#2"); n != 0 {
		t.Errorf("another run's handled %d, want 0", n)
	}
	close(release)
	testwait.Recv(t, done, "the client's POST to end after the handler was released")
	deadline := time.Now().Add(testwait.Bound)
	for a.handled("baseline#1") != 0 {
		if time.Now().After(deadline) {
			t.Fatal("handled stays 1 after the handler returned")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestUnreadCountsWhatTheServerTookButHasNotNoted: the kernel's accept and
// read hand a connection and its bytes to the server's goroutine, which
// notes them a moment later; on a loaded machine (2 CPUs, load 18, -race)
// that goroutine waited tens of milliseconds for a CPU in between, the
// connection was in neither the accept queue nor the waiting set (or its
// bytes in neither the socket nor a read head), and the run's two idle
// looks passed: TestClientThatExitsUnreadJudgedAlike saw "run 5: 0
// POST(s)" (an instrumented run showed the read 40 ms after the wait
// ended). The stall is made here by a hook at each of those two points:
// the request must count as on its way at both.
func TestUnreadCountsWhatTheServerTookButHasNotNoted(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	a := newArrivals()
	hl := a.listen(ln)
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("POST /mcp HTTP/1.1\r\n")); err != nil {
		t.Fatal(err)
	}
	waitUnread(t, a, 1, "a connection with a request in the accept queue")

	atAccept, atRead := -1, -1
	a.afterAccept = func() { atAccept = a.unread() }
	sc, err := hl.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	if atAccept != 1 {
		t.Errorf("unread %d between the kernel's accept and its note, want 1", atAccept)
	}
	a.afterRead = func() { atRead = a.unread() }
	buf := make([]byte, 64)
	if n, err := sc.Read(buf); err != nil || n == 0 {
		t.Fatalf("read %d: %v", n, err)
	}
	if atRead != 1 {
		t.Errorf("unread %d between the kernel's read and its note, want 1", atRead)
	}
	if n := a.unread(); n != 1 {
		t.Errorf("unread %d once part of the head was read, want 1", n)
	}
}
