package ui

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/internal/browser"
	"github.com/mcpdiag/mcpdiag/record"
)

// serve starts s on a real loopback listener and returns its base URL.
func serve(t *testing.T, s *Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: s, ReadHeaderTimeout: 5 * time.Second}
	go hs.Serve(ln)
	t.Cleanup(func() {
		s.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		hs.Shutdown(ctx)
	})
	return "http://" + ln.Addr().String()
}

func TestUIServerRefuses(t *testing.T) {
	s, err := NewServer(ServerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	base := serve(t, s)
	noRedirect := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	cases := []struct {
		name, method, path string
		header             map[string]string
		host               string
		want               int
	}{
		{name: "the page", method: "GET", path: s.Path(), want: 200},
		{name: "no token", method: "GET", path: "/", want: 404},
		{name: "a wrong token", method: "GET", path: "/u/" + strings.Repeat("0", 32) + "/", want: 404},
		{name: "a wrong token's events", method: "GET", path: "/u/x/events", want: 404},
		{name: "without the slash", method: "GET", path: strings.TrimSuffix(s.Path(), "/"), want: 302},
		{name: "a foreign Host (DNS rebinding)", method: "GET", path: s.Path(), host: "evil.example", want: 403},
		{name: "a foreign Origin", method: "GET", path: s.Path(), header: map[string]string{"Origin": "http://evil.example"}, want: 403},
		{name: "through a proxy", method: "GET", path: s.Path(), header: map[string]string{"X-Forwarded-For": "10.0.0.1"}, want: 403},
		{name: "POST", method: "POST", path: s.Path(), want: 405},
		{name: "an unknown path", method: "GET", path: s.Path() + "nope", want: 404},
	}
	for _, c := range cases {
		req, _ := http.NewRequest(c.method, base+c.path, nil)
		for k, v := range c.header {
			req.Header.Set(k, v)
		}
		if c.host != "" {
			req.Host = c.host
		}
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("%s: status %d, want %d", c.name, resp.StatusCode, c.want)
		}
		if c.want == 200 {
			csp := resp.Header.Get("Content-Security-Policy")
			if !strings.Contains(csp, "connect-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") {
				t.Errorf("the page's policy: %q", csp)
			}
		}
	}
}

// readEvents reads the "id" of each record event until n arrived.
func readEvents(t *testing.T, url, lastID string, n int) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	var ids []string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for len(ids) < n && sc.Scan() {
		if id, ok := strings.CutPrefix(sc.Text(), "id: "); ok {
			ids = append(ids, id)
		}
	}
	if len(ids) < n {
		t.Fatalf("got events %v, want %d (%v)", ids, n, sc.Err())
	}
	return ids
}

func TestUIServerEventsResume(t *testing.T) {
	s, err := NewServer(ServerOptions{MaxRecords: 3})
	if err != nil {
		t.Fatal(err)
	}
	base := serve(t, s)
	for _, id := range []string{"A", "B", "C", "D"} {
		if err := s.Publish(&record.Record{Kind: record.KindExchange, ID: id}); err != nil {
			t.Fatal(err)
		}
	}
	// Four published, three kept: a new page gets 2, 3, 4.
	if got := strings.Join(readEvents(t, base+s.Path()+"events", "", 3), ","); got != "2,3,4" {
		t.Errorf("a new page got %s, want 2,3,4", got)
	}
	// A page that saw 3 gets 4, then what is published next.
	go func() {
		time.Sleep(50 * time.Millisecond)
		s.Publish(&record.Record{Kind: record.KindExchange, ID: "E"})
	}()
	if got := strings.Join(readEvents(t, base+s.Path()+"events", "3", 2), ","); got != "4,5" {
		t.Errorf("a resumed page got %s, want 4,5", got)
	}
	s.Close()
	if err := s.Publish(&record.Record{ID: "F"}); !errors.Is(err, record.ErrClosed) {
		t.Errorf("Publish after Close: %v", err)
	}
}

// The live page over a growing record file: the records already there,
// then each line appended (a line written in two pieces is read once,
// whole), without a reload.
func TestUILiveInBrowser(t *testing.T) {
	recs := fixture(t)
	raw, err := os.ReadFile("testdata/records.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(raw), "\n")
	half := len(recs) / 2
	path := filepath.Join(t.TempDir(), "growing.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines[:half], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := NewServer(ServerOptions{Title: "live"})
	if err != nil {
		t.Fatal(err)
	}
	base := serve(t, s)
	ctx, cancel := context.WithCancel(context.Background())
	tailed := make(chan error, 1)
	go func() { tailed <- s.Tail(ctx, path, 20*time.Millisecond) }()
	t.Cleanup(func() { cancel(); <-tailed })

	p := browser.Open(t, base+s.Path())
	browser.WaitFor(t, p, "the first half", `document.getElementById('count').textContent.startsWith('`+itoa(half)+` of `+itoa(half)+` ')`)
	checkRows(t, pageRows(t, p), recs[:half])
	browser.Eval[bool](t, p, `(window.__sameDocument = true)`)

	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	rest := strings.Join(lines[half:], "")
	cut := len(lines[half]) / 2 // inside the first appended line
	if _, err := f.WriteString(rest[:cut]); err != nil {
		t.Fatal(err)
	}
	f.Sync()
	time.Sleep(100 * time.Millisecond) // several polls see the half line
	if _, err := f.WriteString(rest[cut:]); err != nil {
		t.Fatal(err)
	}
	f.Close()
	browser.WaitFor(t, p, "every record", `document.getElementById('count').textContent.startsWith('`+itoa(len(recs))+` of `+itoa(len(recs))+` ')`)
	if !browser.Eval[bool](t, p, `window.__sameDocument === true`) {
		t.Error("the page was reloaded")
	}
	checkRows(t, pageRows(t, p), recs)
	if got := browser.Eval[string](t, p, `document.getElementById('status').textContent`); !strings.HasPrefix(got, "live") {
		t.Errorf("status %q, want live", got)
	}
	clickRow(t, p, recs[len(recs)-1].ID)
	browser.Screenshot(t, p, shotDir(t), "ui-live.png")

	// Pause holds new records back, Resume shows them, Clear empties the
	// table and the records that follow still arrive.
	appendRecord := func(id string) {
		t.Helper()
		line, err := (&record.Encoder{}).Encode(&record.Record{Kind: record.KindExchange, ID: id, Method: "tools/call", Outcome: "TOOL_SUCCESS"})
		if err != nil {
			t.Fatal(err)
		}
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.Write(line); err != nil {
			t.Fatal(err)
		}
	}
	browser.Eval[bool](t, p, `(document.getElementById('pause').click(), true)`)
	appendRecord("PAUSED0000000000000000000A")
	browser.WaitFor(t, p, "the record held back", `document.getElementById('status').textContent.includes('paused, 1 new waiting')`)
	if browser.Eval[bool](t, p, `document.getElementById('count').textContent.startsWith('`+itoa(len(recs)+1)+` ')`) {
		t.Error("a record arrived in the table while paused")
	}
	browser.Eval[bool](t, p, `(document.getElementById('pause').click(), true)`)
	browser.WaitFor(t, p, "the held record after Resume", `document.getElementById('count').textContent.startsWith('`+itoa(len(recs)+1)+` of `+itoa(len(recs)+1)+` ')`)
	browser.Eval[bool](t, p, `(document.getElementById('clear').click(), true)`)
	browser.WaitFor(t, p, "an empty table", `document.getElementById('count').textContent.startsWith('0 of 0 ') && document.querySelectorAll('#rows tr.row').length === 0`)
	appendRecord("CLEARED000000000000000000B")
	browser.WaitFor(t, p, "the next record after Clear", `document.querySelectorAll('#rows tr.row[data-id="CLEARED000000000000000000B"]').length === 1 && document.getElementById('count').textContent.startsWith('1 of 1 ')`)
	checkClean(t, p, base+"/")
}

func itoa(n int) string { return strconv.Itoa(n) }
