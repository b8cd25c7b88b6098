package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/internal/browser"
	"github.com/mcpdiag/mcpdiag/internal/testwait"
	"github.com/mcpdiag/mcpdiag/matrix"
	"github.com/mcpdiag/mcpdiag/ui"
)

// matrixCases returns the cases a matrix page embeds.
func matrixCases(t *testing.T, page []byte) []map[string]any {
	t.Helper()
	open := []byte(`<script id="` + ui.MatrixElementID + `" type="application/x-ndjson">`)
	i := bytes.Index(page, open)
	if i < 0 {
		t.Fatal("the page has no matrix element")
	}
	data, _, _ := bytes.Cut(page[i+len(open):], []byte("</script>"))
	var out []map[string]any
	for _, line := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var c map[string]any
		if err := json.Unmarshal(line, &c); err != nil {
			t.Fatalf("matrix line: %v", err)
		}
		out = append(out, c)
	}
	return out
}

// matrix --html: the grid has a cell per case coloured by its verdict, a
// click shows the failed rules and the run's POSTs, and the table holds
// the runs' records.
func TestMatrixHTML(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("uses sh")
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "matrix.html")
	recs := filepath.Join(dir, "matrix.jsonl")
	var stdout, stderr bytes.Buffer
	// A client that calls nothing and prints a wrong classification fails
	// client.ran and client.classification in every case.
	code := run([]string{"matrix", "--html", out, "--record", recs, "--scenarios", "baseline,errors.tool_error", "--",
		"sh", "-c", `echo "outcome: TOOL_ERROR"`, "sh"}, nil, &stdout, &stderr)
	if code != 1 {
		t.Fatalf("exit %d, want 1: %s", code, stderr.String())
	}
	page, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	cases := matrixCases(t, page)
	if len(cases) < 2 {
		t.Fatalf("%d cases in the page", len(cases))
	}
	p := browser.Open(t, (&url.URL{Scheme: "file", Path: out}).String())
	type cell struct{ Case, Era, Class string }
	cells := browser.Eval[[]cell](t, p, `[...document.querySelectorAll('#matrix-grid button.cell')].map((b) => ({Case: b.dataset.case, Era: b.dataset.era, Class: b.className}))`)
	if len(cells) != len(cases) {
		t.Errorf("the grid has %d cells, the matrix %d cases", len(cells), len(cases))
	}
	for _, c := range cases {
		name, era, verdict := c["case"].(string), c["era"].(string), c["verdict"].(string)
		i := slices.IndexFunc(cells, func(x cell) bool { return x.Case == name && x.Era == era })
		if i < 0 {
			t.Errorf("case %s (%s) has no cell", name, era)
			continue
		}
		if want := map[string]string{"pass": "v-pass", "fail": "v-fail"}[verdict]; want != "" && !strings.Contains(cells[i].Class, want) {
			t.Errorf("case %s (%s) is %s, its cell %q", name, era, verdict, cells[i].Class)
		}
	}
	first := cases[0]
	var wantRules []string
	for _, r := range first["failedRules"].([]any) {
		wantRules = append(wantRules, r.(string))
	}
	browser.Eval[bool](t, p, `(() => { document.querySelector('#matrix-grid button.cell[data-case="`+first["case"].(string)+`"][data-era="`+first["era"].(string)+`"]').click(); return true })()`)
	browser.WaitFor(t, p, "the case's detail", `document.querySelector('#detail [data-section="checks"]') !== null`)
	got := browser.Eval[[]string](t, p, `[...document.querySelectorAll('#detail li.failed-rule')].map((li) => li.dataset.rule)`)
	slices.Sort(got)
	slices.Sort(wantRules)
	if !slices.Equal(got, wantRules) || len(got) == 0 {
		t.Errorf("the detail shows failed rules %v, the case has %v", got, wantRules)
	}
	if c := p.Console(); len(c) > 0 {
		t.Errorf("console: %q", c)
	}

	// The built-in client over two scenarios: the page's table holds what
	// --record holds.
	code = run([]string{"matrix", "--html", out, "--record", recs, "--scenarios", "baseline,sse.truncated,errors.rate_limited", "--protocol", "2026-07-28"}, nil, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("the built-in client: exit %d: %s", code, stderr.String())
	}
	if page, err = os.ReadFile(out); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(recs)
	if err != nil {
		t.Fatal(err)
	}
	lines := 0
	for _, l := range bytes.Split(raw, []byte("\n")) {
		if len(bytes.TrimSpace(l)) > 0 {
			lines++
		}
	}
	if n := len(embedded(t, page)); n != lines || n == 0 {
		t.Errorf("the page embeds %d records, --record wrote %d", n, lines)
	}
	p = browser.Open(t, (&url.URL{Scheme: "file", Path: out}).String())
	browser.WaitFor(t, p, "the records counted", `document.getElementById('count').textContent.startsWith('`+strconv.Itoa(lines)+` of `+strconv.Itoa(lines)+` ')`)
	if n := browser.Eval[int](t, p, `document.querySelectorAll('#matrix-grid button.cell.v-pass').length`); n != len(matrixCases(t, page)) {
		t.Errorf("%d cells pass, want every case's", n)
	}
	browser.Eval[bool](t, p, `(() => { document.querySelector('#matrix-grid button.cell[data-case="sse.truncated"]').click(); return true })()`)
	browser.WaitFor(t, p, "the case's detail", `document.querySelector('#detail [data-section="checks"]') !== null`)
	browser.Eval[bool](t, p, `(() => { document.querySelector('#detail button.show-run').click(); return true })()`)
	browser.WaitFor(t, p, "the run's exchanges", `document.querySelectorAll('#rows tr.row[data-id]').length > 0 && document.querySelectorAll('#rows tr.row[data-id]').length < `+strconv.Itoa(lines))
	if c := p.Console(); len(c) > 0 {
		t.Errorf("console: %q", c)
	}
	for _, u := range p.Requests() {
		if !strings.HasPrefix(u, "file://") {
			t.Errorf("the page requested %s", u)
		}
	}
	if os.Getenv("MCPDIAG_UPDATE_SCREENSHOTS") == "1" {
		browser.Screenshot(t, p, filepath.Join("..", "..", "docs", "img"), "ui-matrix.png")
	}
}

// matrix --ui: the grid fills in as cases finish, the runs' exchanges
// arrive in the table, and the page stays until the command is stopped,
// which then exits with the verdicts' status.
func TestMatrixUILive(t *testing.T) {
	pageReady := make(chan string, 1)
	var stderr syncBuffer
	var stdout bytes.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o := matrixOptions{scenarios: []string{"baseline", "errors.tool_error", "sse.truncated"}, protocol: "2026-07-28", repeat: 1, maxRetries: 3,
		timeout: 30 * time.Second, startup: 30 * time.Second, seed: 1, uiAddr: "127.0.0.1:0", stderr: &stderr,
		uiReady: func(u string) { pageReady <- u }}
	done := make(chan error, 1)
	go func() { done <- runMatrix(ctx, nil, &stdout, o, nil, func(string) bool { return false }) }()
	var pageURL string
	select {
	case pageURL = <-pageReady:
	case err := <-done:
		t.Fatalf("matrix ended: %v", err)
	case <-time.After(testwait.Bound):
		t.Fatalf("the matrix neither gave its page's URL nor ended within %s", testwait.Bound)
	}
	p := browser.Open(t, pageURL)
	// Every case has a cell from the start (running, or judged already).
	want, err := matrix.Select(matrix.Cases(), o.scenarios, o.protocol)
	if err != nil {
		t.Fatal(err)
	}
	browser.WaitFor(t, p, "a cell per case", `document.querySelectorAll('#matrix-grid button.cell').length === `+strconv.Itoa(len(want)))
	for deadline := time.Now().Add(60 * time.Second); !strings.Contains(stderr.String(), "the page stays at"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the matrix did not finish: %s", stderr.String())
		}
	}
	if !strings.Contains(stdout.String(), "runs: ") {
		t.Errorf("the table was not printed while the page stays: %q", stdout.String())
	}
	// One run per case (--repeat 1): the table's "N runs:" is the cases.
	m := regexp.MustCompile(`(?m)^(\d+) runs: (\d+) passed`).FindStringSubmatch(stdout.String())
	if m == nil {
		t.Fatalf("no summary in %q", stdout.String())
	}
	browser.WaitFor(t, p, "every case in the grid", `document.querySelectorAll('#matrix-grid button.cell').length === `+m[1])
	// The page learns each verdict from its live stream, which may still
	// carry the last one when the table is printed (at load ~20 the page
	// showed 3 passes while the table said 4): wait for it, bounded.
	passes := `document.querySelectorAll('#matrix-grid button.cell.v-pass').length`
	browser.WaitFor(t, p, "the grid's passes to reach the table's "+m[2], passes+` === `+m[2])
	if got := browser.Eval[int](t, p, passes); strconv.Itoa(got) != m[2] {
		t.Errorf("%d cells pass, the table says %s passed", got, m[2])
	}
	browser.WaitFor(t, p, "the runs' exchanges", `document.querySelectorAll('#rows tr.row[data-id]').length > 0`)
	if c := p.Console(); len(c) > 0 {
		t.Errorf("console: %q", c)
	}
	cancel()
	if err := testwait.Recv(t, done, "the matrix to end"); err != nil {
		t.Errorf("matrix after Ctrl-C: %v (want the verdicts' status, 0)", err)
	}
}

// mcpdiag ui over a matrix --json file: the page shows its grid.
func TestUICommandOverMatrixJSON(t *testing.T) {
	var js, errb bytes.Buffer
	if code := run([]string{"matrix", "--json", "--scenarios", "baseline,errors.tool_error", "--protocol", "2026-07-28"}, nil, &js, &errb); code != 0 {
		t.Fatalf("matrix --json: exit %d: %s", code, errb.String())
	}
	cases := bytes.Count(bytes.TrimSpace(js.Bytes()), []byte("\n")) + 1
	path := writeFile(t, t.TempDir(), "matrix.json", js.Bytes())
	u, stop := startUI(t, path)
	defer stop()
	p := browser.Open(t, u)
	browser.WaitFor(t, p, "the matrix's cases in the grid", `document.querySelectorAll('#matrix-grid button.cell.v-pass').length === `+strconv.Itoa(cases))
	if got := browser.Eval[string](t, p, `document.getElementById('status').textContent`); strings.Contains(got, "malformed") {
		t.Errorf("the matrix lines were read as malformed records: %q", got)
	}
	if c := p.Console(); len(c) > 0 {
		t.Errorf("console: %q", c)
	}
}

// matrix --ui stopped mid-run: the page shows the case whose run was cut
// short "interrupted" and the case never started "not run", each with the
// reason, as the records and the summary say; no cell stays "running…".
// Before, the page kept both "running" after the matrix had stopped.
func TestMatrixUILiveInterrupted(t *testing.T) {
	pageReady := make(chan string, 1)
	var stderr syncBuffer
	var stdout bytes.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// One at a time, the hang first (slow cases start first): its client
	// notes that it started and waits; baseline waits for a slot it never
	// gets.
	started := filepath.Join(t.TempDir(), "started")
	client := []string{"sh", "-c", `touch "$0"; sleep 60`, started}
	o := matrixOptions{scenarios: []string{"baseline", "timeout.uncooperative_hang"}, protocol: "2026-07-28", repeat: 1, maxRetries: 3, parallel: 1,
		timeout: 30 * time.Second, startup: 60 * time.Second, seed: 1, uiAddr: "127.0.0.1:0", stderr: &stderr,
		uiReady: func(u string) { pageReady <- u }}
	done := make(chan error, 1)
	go func() { done <- runMatrix(ctx, nil, &stdout, o, client, func(string) bool { return false }) }()
	var pageURL string
	select {
	case pageURL = <-pageReady:
	case err := <-done:
		t.Fatalf("matrix ended: %v", err)
	case <-time.After(testwait.Bound):
		t.Fatalf("the matrix neither gave its page's URL nor ended within %s", testwait.Bound)
	}
	p := browser.Open(t, pageURL)
	browser.WaitFor(t, p, "two running cells", `document.querySelectorAll('#matrix-grid button.cell.v-run').length === 2`)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(started); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the client did not start in 30s: %s", stderr.String())
		}
	}
	cancel()
	err := testwait.Recv(t, done, "the matrix to end after its context was cancelled")
	if err == nil || !strings.Contains(err.Error(), "incomplete") {
		t.Errorf("matrix after the stop: %v, want incomplete", err)
	}
	browser.WaitFor(t, p, "no cell running", `document.querySelectorAll('#matrix-grid button.cell.v-run').length === 0`)
	cells := browser.Eval[map[string]string](t, p, `Object.fromEntries([...document.querySelectorAll('#matrix-grid button.cell')].map((b) => [b.dataset.case, b.textContent]))`)
	if want := map[string]string{"timeout.uncooperative_hang": "interrupted", "baseline": "not run"}; !reflect.DeepEqual(cells, want) {
		t.Errorf("cells %v, want %v", cells, want)
	}
	if got := browser.Eval[string](t, p, `document.getElementById('matrix-summary').textContent`); got != "2 cases, 0 failed, 1 interrupted, 1 not run" {
		t.Errorf("summary %q", got)
	}
	browser.Eval[bool](t, p, `(() => { document.querySelector('#matrix-grid button.cell[data-case="baseline"]').click(); return true })()`)
	browser.WaitFor(t, p, "the case's detail", `document.querySelector('#detail') !== null && document.querySelector('#detail').textContent.includes('incomplete')`)
	if got := browser.Eval[string](t, p, `document.querySelector('#detail').textContent`); !strings.Contains(got, "canceled after 0 of 2 runs, 1 interrupted") {
		t.Errorf("detail lacks the reason: %q", got)
	}
	for _, c := range p.Console() {
		// The page's event stream reconnects to the stopped server.
		if !strings.Contains(c, "ERR_CONNECTION_REFUSED") {
			t.Errorf("console: %q", c)
		}
	}
}
