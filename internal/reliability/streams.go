package reliability

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// StreamsResult is what the idle-streams experiment saw.
type StreamsResult struct {
	Streams    int // standalone GET SSE streams opened through the proxy
	StillOpen  int // of which open after waiting IdleWait
	IdleWait   time.Duration
	Before     Memory // the proxy before the streams
	Open       Memory // with every stream open
	After      Memory // after the clients closed them
	Serve      Memory // serve with every stream open
	GETRecords int    // GET records
	DCNotes    int    // GET records with the DC note
	Records    int
	Summary    Summary
	Exit       int
	Truths     Truths
}

// Streams opens n 2025-11-25 sessions through the proxy, each with its
// standalone GET SSE stream left idle, waits past the proxy's idle timeout
// (1 s) twice over, reads the proxy's memory, closes the streams from the
// client side and stops the proxy. Truths: every stream still open after
// the wait (a stream in progress is never idle); one record per request;
// every GET stream recorded with the DC note (the client left); exit 0.
func (e *Env) Streams(n int) (*StreamsResult, error) {
	res := &StreamsResult{Streams: n, IdleWait: 2500 * time.Millisecond}
	up, err := e.StartServe("streams")
	if err != nil {
		return nil, err
	}
	defer up.Kill()
	px, err := e.StartProxy("streams", up, "", nil, "--idle-timeout", "1s")
	if err != nil {
		return nil, err
	}
	defer px.Kill()
	res.Before = px.Memory()

	posts := newClient(32)
	gets := &http.Client{Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: -1}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var open, opened atomic.Int64
	var failures []string
	var mu sync.Mutex
	var readers sync.WaitGroup
	sem := make(chan struct{}, 32)
	var setup sync.WaitGroup
	for i := range n {
		setup.Add(1)
		sem <- struct{}{}
		go func() {
			defer setup.Done()
			defer func() { <-sem }()
			fail := func(err error) {
				mu.Lock()
				failures = append(failures, fmt.Sprintf("stream %d: %v", i, err))
				mu.Unlock()
			}
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"reliability","version":"1"}}}`, i+1)
			req, _ := http.NewRequest(http.MethodPost, px.Base+"/mcp", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			resp, err := posts.Do(req)
			if err != nil {
				fail(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			sid := resp.Header.Get("Mcp-Session-Id")
			if resp.StatusCode != 200 || sid == "" {
				fail(fmt.Errorf("initialize: %d, session %q", resp.StatusCode, sid))
				return
			}
			greq, _ := http.NewRequestWithContext(ctx, http.MethodGet, px.Base+"/mcp", nil)
			greq.Header.Set("Accept", "text/event-stream")
			greq.Header.Set("Mcp-Session-Id", sid)
			greq.Header.Set("MCP-Protocol-Version", "2025-11-25")
			gresp, err := gets.Do(greq)
			if err != nil {
				fail(err)
				return
			}
			if gresp.StatusCode != 200 {
				gresp.Body.Close()
				fail(fmt.Errorf("GET: %d", gresp.StatusCode))
				return
			}
			opened.Add(1)
			open.Add(1)
			readers.Go(func() {
				defer gresp.Body.Close()
				_, _ = io.Copy(io.Discard, gresp.Body)
				open.Add(-1)
			})
		}()
	}
	setup.Wait()
	time.Sleep(res.IdleWait) // past the idle timeout, twice
	res.StillOpen = int(open.Load())
	res.Open, res.Serve = px.Memory(), up.Memory()
	cancel()
	readers.Wait()
	gets.CloseIdleConnections()
	posts.CloseIdleConnections()
	if _, err := px.WaitInFlight(func(n int) bool { return n == 0 }, stopLimit); err != nil {
		res.Truths.Check(false, "%v", err)
	}
	res.After = px.Memory()
	_ = px.Signal(syscall.SIGTERM)
	if res.Exit, err = px.Wait(stopLimit); err != nil {
		return nil, err
	}
	_, _ = up.Stop()
	recs, err := ReadLines(px.RecordPath)
	if err != nil {
		return nil, err
	}
	res.Records = recs.Complete
	for _, r := range recs.Records {
		if r.HTTPMethod == http.MethodGet {
			res.GETRecords++
			if strings.Contains(r.Note, "client disconnected (DC)") {
				res.DCNotes++
			}
		}
	}
	res.Summary, _ = px.Summary()
	t := &res.Truths
	t.Check(len(failures) == 0, "%d streams failed to open: %s", len(failures), firstN(failures, 3))
	t.Check(res.StillOpen == n, "%d of %d idle streams open after %s (idle timeout 1s): a stream in progress must never be idle", res.StillOpen, n, res.IdleWait)
	t.Check(res.GETRecords == n && res.DCNotes == n, "%d GET records, %d with the DC note, want %d", res.GETRecords, res.DCNotes, n)
	t.Check(res.Records == 2*n && recs.Bad == 0, "%d records (%d bad), want %d (an initialize and a GET per stream)", res.Records, recs.Bad, 2*n)
	t.Check(res.Exit == 0 && res.Summary.Written == res.Records && res.Summary.Exchanges == res.Records && res.Summary.Lost == 0,
		"exit %d, summary %q: want 0 and %d written", res.Exit, res.Summary.Line, res.Records)
	return res, nil
}

func (r *StreamsResult) String() string {
	return fmt.Sprintf("%d idle GET streams, %d open after %s; proxy before %s, with the streams %s, after %s; serve with the streams %s; %d records, %d GET with the DC note; exit %d; %s",
		r.Streams, r.StillOpen, r.IdleWait, r.Before, r.Open, r.After, r.Serve, r.Records, r.DCNotes, r.Exit, strings.TrimPrefix(r.Summary.Line, "mcpdiag proxy: "))
}

// SlowlorisResult is what the slowloris experiment saw.
type SlowlorisResult struct {
	Slow          int           // connections dripping a header line every 250 ms
	ClosedByProxy int           // of which the proxy closed
	MaxClose      time.Duration // the longest one lasted (reported, never asserted)
	SlowBody      int           // connections with whole headers, dripping the body
	BodyOpen      int           // of which still open after 3 s (3 × the header timeout)
	Calls         int           // ordinary calls made meanwhile
	Answered      int           // of which answered whole
	Records       int
	Proxy         Memory // with every slow connection open
	Summary       Summary
	Exit          int
	Truths        Truths
}

// Slowloris opens slow connections that never finish their headers, and
// slow-body connections, against a proxy with --read-header-timeout 1s,
// while an ordinary client keeps calling. Truths: every header dripper is
// closed by the proxy; every ordinary call answered whole; one record per
// ordinary call (a request whose headers never arrived is no exchange),
// plus one per slow body; exit 0.
func (e *Env) Slowloris(slow, slowBody int) (*SlowlorisResult, error) {
	res := &SlowlorisResult{Slow: slow, SlowBody: slowBody}
	up, err := e.StartServe("slowloris")
	if err != nil {
		return nil, err
	}
	defer up.Kill()
	px, err := e.StartProxy("slowloris", up, "", nil, "--read-header-timeout", "1s")
	if err != nil {
		return nil, err
	}
	defer px.Kill()
	host := strings.TrimPrefix(px.Base, "http://")
	var closed atomic.Int64
	var mu sync.Mutex
	var wg sync.WaitGroup
	var problems []string
	for range slow {
		wg.Go(func() {
			conn, err := net.Dial("tcp", host)
			if err != nil {
				mu.Lock()
				problems = append(problems, err.Error())
				mu.Unlock()
				return
			}
			defer conn.Close()
			start := time.Now()
			_ = conn.SetReadDeadline(start.Add(60 * time.Second))
			gone := make(chan error, 1)
			go func() { _, err := bufio.NewReader(conn).ReadByte(); gone <- err }()
			_, _ = io.WriteString(conn, "POST /mcp HTTP/1.1\r\nHost: "+host+"\r\n")
			tick := time.NewTicker(250 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case err := <-gone:
					d := time.Since(start)
					mu.Lock()
					if ne, ok := err.(net.Error); ok && ne.Timeout() {
						problems = append(problems, "a header dripper still open after 60 s")
					} else {
						closed.Add(1)
						res.MaxClose = max(res.MaxClose, d)
					}
					mu.Unlock()
					return
				case <-tick.C:
					_, _ = io.WriteString(conn, "X-Drip: 1\r\n")
				}
			}
		})
	}
	bodyConns := make([]net.Conn, 0, slowBody)
	var bodyOpen atomic.Int64
	var bodyWG sync.WaitGroup
	stopDrip := make(chan struct{})
	for range slowBody {
		conn, err := net.Dial("tcp", host)
		if err != nil {
			return nil, err
		}
		bodyConns = append(bodyConns, conn)
		_, _ = io.WriteString(conn, "POST /mcp HTTP/1.1\r\nHost: "+host+"\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 100000\r\n\r\n{")
		bodyOpen.Add(1)
		bodyWG.Go(func() {
			gone := make(chan struct{})
			go func() { _, _ = bufio.NewReader(conn).ReadByte(); close(gone) }()
			tick := time.NewTicker(250 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-gone:
					bodyOpen.Add(-1)
					return
				case <-stopDrip:
					return
				case <-tick.C:
					_, _ = io.WriteString(conn, " ")
				}
			}
		})
	}
	// Ordinary calls until every header dripper is gone.
	hc := newClient(1)
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	measured := false
	for id := 1; ; id++ {
		select {
		case <-done:
		default:
			r := do(context.Background(), hc, px.Base, id, kindOK, false)
			res.Calls++
			if r.Complete && r.Status == 200 {
				res.Answered++
			}
			if !measured {
				res.Proxy, measured = px.Memory(), true
			}
			continue
		}
		break
	}
	// The slow bodies: 3 s, three times the header timeout.
	time.Sleep(3 * time.Second)
	res.BodyOpen = int(bodyOpen.Load())
	close(stopDrip)
	for _, c := range bodyConns {
		c.Close()
	}
	bodyWG.Wait()
	hc.CloseIdleConnections()
	res.ClosedByProxy = int(closed.Load())
	if _, err := px.WaitInFlight(func(n int) bool { return n == 0 }, stopLimit); err != nil {
		res.Truths.Check(false, "%v", err)
	}
	_ = px.Signal(syscall.SIGTERM)
	if res.Exit, err = px.Wait(stopLimit); err != nil {
		return nil, err
	}
	_, _ = up.Stop()
	recs, err := ReadLines(px.RecordPath)
	if err != nil {
		return nil, err
	}
	res.Records = recs.Complete
	res.Summary, _ = px.Summary()
	t := &res.Truths
	t.Check(len(problems) == 0, "%s", firstN(problems, 3))
	t.Check(res.ClosedByProxy == slow, "the proxy closed %d of %d header drippers", res.ClosedByProxy, slow)
	t.Check(res.Answered == res.Calls && res.Calls > 0, "%d of %d ordinary calls answered whole", res.Answered, res.Calls)
	t.Check(res.Records == res.Calls+slowBody && recs.Bad == 0, "%d records, want %d ordinary calls + %d slow bodies", res.Records, res.Calls, slowBody)
	t.Check(res.Exit == 0 && res.Summary.Written == res.Records && res.Summary.Exchanges == res.Records, "exit %d, summary %q", res.Exit, res.Summary.Line)
	return res, nil
}

func (r *SlowlorisResult) String() string {
	return fmt.Sprintf("%d header drippers: %d closed by the proxy (the last after %s); %d slow bodies: %d still open after 3 s; %d ordinary calls meanwhile, %d answered whole; proxy %s; %d records; exit %d; %s",
		r.Slow, r.ClosedByProxy, r.MaxClose.Round(10*time.Millisecond), r.SlowBody, r.BodyOpen, r.Calls, r.Answered, r.Proxy, r.Records, r.Exit, strings.TrimPrefix(r.Summary.Line, "mcpdiag proxy: "))
}
