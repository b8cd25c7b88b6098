package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/client"
	"github.com/mcpdiag/mcpdiag/fixture"
	"github.com/mcpdiag/mcpdiag/internal/browser"
	"github.com/mcpdiag/mcpdiag/internal/recordtest"
	"github.com/mcpdiag/mcpdiag/internal/testwait"
)

func TestUICommandUsage(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "r.jsonl", []byte(`{"kind":"exchange","id":"A"}`+"\n"))
	cases := []struct {
		name string
		args []string
		err  string
	}{
		{"no file", []string{"ui"}, "mcpdiag: ui: name at least one record file"},
		{"missing file", []string{"ui", filepath.Join(dir, "nope.jsonl")}, "mcpdiag: cannot open "},
		{"directory", []string{"ui", dir}, "mcpdiag: " + dir + " is a directory"},
		{"not loopback", []string{"ui", "--listen", "0.0.0.0:0", file}, "mcpdiag: --listen 0.0.0.0:0: the page is served on loopback only"},
		// --addr, the older name, is an alias of --listen (term15).
		{"not loopback, --addr", []string{"ui", "--addr", "0.0.0.0:0", file}, "mcpdiag: --listen 0.0.0.0:0: the page is served on loopback only"},
		{"--listen and --addr differ", []string{"ui", "--listen", "127.0.0.1:0", "--addr", "127.0.0.1:1", file}, `mcpdiag: --listen "127.0.0.1:0" and --addr "127.0.0.1:1": --addr is an alias of --listen`},
		{"bad poll", []string{"ui", "--poll", "0s", file}, "mcpdiag: --poll must be positive"},
	}
	for _, c := range cases {
		checkUsageError(t, c.name, c.args, c.err)
	}
}

// mcpdiag ui over a record file that grows: the page shows what is there,
// then a record appended to the file, without a reload.
func TestUICommandLive(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "ui", "testdata", "records.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimSuffix(string(raw), "\n"), "\n")
	path := writeFile(t, t.TempDir(), "proxy.jsonl", []byte(strings.Join(lines[:10], "")))
	url, stop := startUI(t, path)
	defer stop()
	if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.Contains(url, "/u/") || len(url) < len("http://127.0.0.1:1/u/")+32 {
		t.Fatalf("URL %q: want loopback with a 128-bit token", url)
	}
	p := browser.Open(t, url)
	rows := `document.querySelectorAll('#rows tr.row[data-id]').length`
	browser.WaitFor(t, p, "the file's 10 records", rows+` === 10`)
	browser.Eval[bool](t, p, `(window.__sameDocument = true)`)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(lines[10]); err != nil {
		t.Fatal(err)
	}
	f.Close()
	browser.WaitFor(t, p, "the appended record", rows+` === 11`)
	id := lines[10][strings.Index(lines[10], `"id":"`)+6:]
	id = id[:strings.IndexByte(id, '"')]
	if !browser.Eval[bool](t, p, `document.querySelector('#rows tr.row[data-id="`+id+`"]') !== null && window.__sameDocument === true`) {
		t.Errorf("record %s is not shown, or the page was reloaded", id)
	}
	if c := p.Console(); len(c) > 0 {
		t.Errorf("console: %q", c)
	}
	origin := url[:strings.Index(url, "/u/")]
	for _, u := range p.Requests() {
		if !strings.HasPrefix(u, origin+"/") {
			t.Errorf("the page requested %s (origin %s)", u, origin)
		}
	}
}

// proxy --ui: every exchange through the proxy appears on the live page as
// it ends, the same records as the record file.
func TestProxyUILive(t *testing.T) {
	up := httptest.NewServer(fixture.New(fixture.Options{}))
	defer up.Close()
	px := startProxyUI(t, up.URL+"/mcp")
	proxyURL, pageURL, path, stderr := px.url, px.page, px.path, px.stderr
	if !strings.Contains(stderr.String(), "mcpdiag proxy: live page at "+pageURL) {
		t.Errorf("the page's URL is not printed: %q", stderr.String())
	}
	p := browser.Open(t, pageURL)
	c, err := client.New(client.Options{URL: proxyURL, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if call, err := c.CallTool(context.Background(), "echo", json.RawMessage(`{"text":"hi"}`)); err != nil || call.Outcome != classify.ToolSuccess {
		t.Fatalf("call: %v %v", err, call.Outcome)
	}
	if call, _ := c.CallTool(context.Background(), "no-such-tool", json.RawMessage(`{}`)); call == nil || call.Outcome == classify.ToolSuccess {
		t.Fatalf("a call of an unknown tool succeeded")
	}
	n := len(c.Exchanges())
	rows := `document.querySelectorAll('#rows tr.row[data-id]').length`
	browser.WaitFor(t, p, "every exchange on the page", rows+` === `+strconv.Itoa(n))
	// Checked before the proxy stops: then the page's event stream is
	// refused, and says so.
	if c := p.Console(); len(c) > 0 {
		t.Errorf("console: %q", c)
	}
	px.stop(t)
	var want []string
	for _, r := range recordtest.ReadFile(t, path) {
		want = append(want, r.ID+" "+r.Method+" "+string(r.Outcome))
	}
	got := browser.Eval[[]string](t, p, `[...document.querySelectorAll('#rows tr.row[data-id]')].map((tr) => tr.dataset.id + ' ' + tr.querySelector('.c-method').textContent + ' ' + tr.querySelector('.c-outcome').textContent)`)
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("the page shows\n%s\nthe record file holds\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// How long each record took from the end of its exchange to the page
	// (logged, not asserted: no wall-clock limits in tests).
	type delay struct {
		ID string  `json:"id"`
		Ms float64 `json:"ms"`
	}
	for _, d := range browser.Eval[[]delay](t, p, `window.mcpdiagDelays()`) {
		t.Logf("record %s on the page %.1f ms after its exchange ended", d.ID, d.Ms)
	}
}

// startUI runs `mcpdiag ui FILE` in-process on a loopback port and returns
// the page's URL and a stop that ends it (and fails the test unless it
// ends cleanly).
func startUI(t *testing.T, file string) (string, func()) {
	t.Helper()
	ready := make(chan string, 1)
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- runUI(ctx, &stdout, &stderr, []string{file}, uiOptions{addr: "127.0.0.1:0", poll: 20 * time.Millisecond, ready: func(u string) { ready <- u }})
	}()
	var u string
	select {
	case u = <-ready:
	case err := <-done:
		cancel()
		t.Fatalf("ui ended: %v: %s", err, stderr.String())
	case <-time.After(testwait.Bound):
		t.Fatalf("ui neither gave its URL nor ended within %s", testwait.Bound)
	}
	return u, func() {
		cancel()
		if err := testwait.Recv(t, done, "ui to end after its context was cancelled"); err != nil {
			t.Errorf("ui after cancel: %v", err)
		}
	}
}

// uiProxy is `mcpdiag proxy --ui --record` running in-process.
type uiProxy struct {
	url, page, path string // the proxy's URL, the live page's, the record file
	stderr          *syncBuffer
	sigs            chan os.Signal
	done            chan error
}

// startProxyUI runs the proxy in front of upstream with --record (full
// bodies) and --ui on loopback ports, and returns once both URLs are known.
func startProxyUI(t *testing.T, upstream string) *uiProxy {
	t.Helper()
	px := &uiProxy{path: filepath.Join(t.TempDir(), "records.jsonl"), stderr: &syncBuffer{}, sigs: make(chan os.Signal, 1), done: make(chan error, 1)}
	ready := make(chan string, 1)
	pageReady := make(chan string, 1)
	o := proxyOptions{
		upstream: upstream, listen: "127.0.0.1:0", recordFile: px.path, recordBodies: "full",
		queue: 16, queuePolicy: "block", fsync: "close", shutdownTimeout: time.Second, uiAddr: "127.0.0.1:0",
		ready: func(p, _ string) { ready <- p }, uiReady: func(u string) { pageReady <- u }, signals: px.sigs,
	}
	go func() { px.done <- runProxy(context.Background(), nil, io.Discard, px.stderr, nil, o) }()
	for px.url == "" || px.page == "" {
		select {
		case px.url = <-ready:
		case px.page = <-pageReady:
		case err := <-px.done:
			t.Fatalf("the proxy ended: %v: %s", err, px.stderr.String())
		case <-time.After(testwait.Bound):
			t.Fatalf("the proxy neither gave its URL and its page's nor ended within %s", testwait.Bound)
		}
	}
	return px
}

// stop sends the proxy SIGTERM and fails the test unless it ends cleanly.
func (px *uiProxy) stop(t *testing.T) {
	t.Helper()
	px.sigs <- syscall.SIGTERM
	if err := testwait.Recv(t, px.done, "the proxy to end after SIGTERM"); err != nil {
		t.Fatalf("runProxy: %v", err)
	}
}

// serve --ui: the server's log lines appear on the live page as requests
// end.
func TestServeUILive(t *testing.T) {
	pageReady := make(chan string, 1)
	serveURL, out := startServe(t, serveOptions{scenario: "errors.tool_error", uiAddr: "127.0.0.1:0", uiReady: func(u string) { pageReady <- u }})
	pageURL := testwait.Recv(t, pageReady, "serve's live page URL") // called before serve's banner is printed
	p := browser.Open(t, pageURL)
	c, err := client.New(client.Options{URL: serveURL, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	call, err := c.CallTool(context.Background(), "echo", json.RawMessage(`{"text":"hi"}`))
	if err != nil || call.Outcome != classify.ToolError {
		t.Fatalf("call: %v %v", err, call.Outcome)
	}
	n := len(c.Exchanges())
	browser.WaitFor(t, p, "a row per request", `document.querySelectorAll('#rows tr.row[data-id]').length === `+strconv.Itoa(n))
	if got := browser.Eval[int](t, p, `[...document.querySelectorAll('#rows tr.row[data-id] .c-outcome')].filter((td) => td.textContent === 'TOOL_ERROR').length`); got != 1 {
		t.Errorf("%d rows show TOOL_ERROR, want the one tools/call", got)
	}
	if !strings.Contains(out.String(), "  live page: "+pageURL) {
		t.Errorf("serve's banner does not name the page: %q", out.String())
	}
	if c := p.Console(); len(c) > 0 {
		t.Errorf("console: %q", c)
	}
}

// proxy --ui in front of serve, through several scenarios: every exchange
// appears on the page with its outcome and the colour of its layer, and
// the cut stream's detail marks the cut on its SSE timeline.
func TestProxyUIScenarios(t *testing.T) {
	serveURL, _ := startServe(t, serveOptions{})
	px := startProxyUI(t, strings.TrimSuffix(serveURL, "mcp"))
	proxyURL, pageURL, path := px.url, px.page, px.path
	p := browser.Open(t, pageURL)
	total := 0
	for _, sc := range []struct {
		path string
		want classify.Outcome
	}{
		{"mcp", classify.ToolSuccess},
		{"s/errors.tool_error/mcp", classify.ToolError},
		{"s/errors.jsonrpc_error/mcp", classify.JSONRPCError},
		{"s/sse.truncated/mcp", classify.StreamIncomplete},
		{"s/errors.rate_limited/mcp", classify.ToolSuccess}, // 429 with Retry-After, then a retry
		{"s/mrtr.load_shedding/mcp", classify.ToolSuccess},  // an input_required round
	} {
		c, err := client.New(client.Options{URL: strings.TrimSuffix(proxyURL, "/") + "/" + sc.path, Timeout: 20 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		call, _ := c.CallTool(context.Background(), "echo", json.RawMessage(`{"text":"hi"}`))
		if call == nil || call.Outcome != sc.want {
			t.Fatalf("%s: %v, want %s", sc.path, call, sc.want)
		}
		total += len(c.Exchanges())
		// Each exchange is on the page before the next call starts.
		browser.WaitFor(t, p, "the exchanges of "+sc.path, `document.getElementById('count').textContent.startsWith('`+strconv.Itoa(total)+` of `+strconv.Itoa(total)+` ')`)
	}
	if c := p.Console(); len(c) > 0 {
		t.Errorf("console: %q", c)
	}
	px.stop(t)
	var want []string
	var cut string
	for _, r := range recordtest.ReadFile(t, path) {
		want = append(want, r.ID+" "+string(r.Outcome)+" layer-"+string(r.Layer))
		if r.Outcome == classify.StreamIncomplete && len(r.SSEArrivals) > 0 && cut == "" {
			cut = r.ID
		}
	}
	got := browser.Eval[[]string](t, p, `[...document.querySelectorAll('#rows tr.row[data-id]')].map((tr) => { const b = tr.querySelector('.c-outcome .badge'); return tr.dataset.id + ' ' + b.textContent + ' ' + [...b.classList].find((c) => c.startsWith('layer-')) })`)
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("the page shows\n%s\nthe record file holds\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if cut == "" {
		t.Fatal("no cut stream with arrival times was recorded")
	}
	browser.Eval[bool](t, p, `(() => { document.querySelector('#rows tr.row[data-id="`+cut+`"]').click(); return true })()`)
	browser.WaitFor(t, p, "the cut on the timeline", `document.querySelector('#detail .timeline .sse-cut') !== null`)
	if os.Getenv("MCPDIAG_UPDATE_SCREENSHOTS") == "1" {
		browser.Screenshot(t, p, filepath.Join("..", "..", "docs", "img"), "ui-proxy.png")
	}
}
