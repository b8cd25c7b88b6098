package ui

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/internal/browser"
	"github.com/mcpdiag/mcpdiag/internal/recordtest"
	"github.com/mcpdiag/mcpdiag/record"
)

var updateShots = flag.Bool("update-screenshots", false, "write the README's screenshots to docs/img/")

// fixture is testdata/records.jsonl: the records of real runs (mcpdiag call
// --record through mcpdiag proxy --record-bodies full, over mcpdiag serve
// with --log) across success, tool error, JSON-RPC error, a cut stream
// with its policy retries, an MRTR round, a 429 retry and a result without
// resultType.
func fixture(t *testing.T) []*record.Record {
	t.Helper()
	return recordtest.ReadFile(t, "testdata/records.jsonl")
}

func writePage(t *testing.T, recs []*record.Record) string {
	t.Helper()
	var buf bytes.Buffer
	w := NewHTMLWriter(&buf, HTMLOptions{Title: "fixture"})
	for _, r := range recs {
		w.Add(r)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// row is what a table row shows of its record.
type row struct {
	ID, Kind, Method, Tool, Status, Outcome, Group string
}

func wantRow(r *record.Record) row {
	st := ""
	if r.Status != 0 {
		st = strconv.Itoa(r.Status)
	}
	m := r.Method
	if m == "" {
		m = r.HTTPMethod
	}
	return row{ID: r.ID, Kind: string(r.Kind), Method: m, Tool: r.Tool, Status: st, Outcome: string(r.Outcome)}
}

// rowsJS collects the rendered rows; the table is virtualized, so the
// test scrolls through it from the top and joins what each screen showed.
const rowsJS = `(() => {
  const list = document.getElementById('list');
  const seen = new Map();
  const grab = () => document.querySelectorAll('#rows tr.row').forEach((tr) => {
    const c = (k) => tr.querySelector('.' + k) ? tr.querySelector('.' + k).textContent : '';
    const key = tr.dataset.index;
    seen.set(Number(key), tr.dataset.id ? {id: tr.dataset.id, kind: c('c-kind'), method: c('c-method'), tool: c('c-tool'),
      status: c('c-status'), outcome: c('c-outcome'), group: tr.dataset.group || ''} : {header: tr.dataset.group || ''});
  });
  return new Promise((resolve) => {
    list.scrollTop = 0;
    const step = () => requestAnimationFrame(() => requestAnimationFrame(() => {
      grab();
      if (list.scrollTop + list.clientHeight >= list.scrollHeight - 1) {
        list.scrollTop = 0;
        resolve([...seen.entries()].sort((a, b) => a[0] - b[0]).map((e) => e[1]));
        return;
      }
      list.scrollTop += list.clientHeight;
      step();
    }));
    step();
  });
})()`

type jsRow struct {
	ID      string `json:"id"`
	Kind    string `json:"kind"`
	Method  string `json:"method"`
	Tool    string `json:"tool"`
	Status  string `json:"status"`
	Outcome string `json:"outcome"`
	Group   string `json:"group"`
	Header  string `json:"header"`
}

func pageRows(t *testing.T, p *browser.Page) []jsRow {
	t.Helper()
	b := browser.EvalPromise[[]byte](t, p, rowsJS)
	var rows []jsRow
	if err := json.Unmarshal(b, &rows); err != nil {
		t.Fatalf("rows: %v: %s", err, b)
	}
	return rows
}

// checkRows asserts that the table shows exactly recs (id, kind, method,
// tool, status, outcome), and that each exchange of a call comes after its
// call's header row.
func checkRows(t *testing.T, rows []jsRow, recs []*record.Record) {
	t.Helper()
	got := map[string]row{}
	group := ""
	for _, r := range rows {
		if r.ID == "" {
			group = r.Header
			continue
		}
		if _, dup := got[r.ID]; dup {
			t.Errorf("record %s is shown twice", r.ID)
		}
		got[r.ID] = row{ID: r.ID, Kind: r.Kind, Method: r.Method, Tool: r.Tool, Status: r.Status, Outcome: r.Outcome}
		if r.Kind == "call" {
			group = r.ID
		}
		if r.Group != "" && r.Kind != "call" && !strings.HasPrefix(r.Group, "#") && group != r.Group {
			t.Errorf("exchange %s of call %s is shown under %q", r.ID, r.Group, group)
		}
	}
	if len(got) != len(recs) {
		t.Errorf("the table shows %d records, the input has %d", len(got), len(recs))
	}
	for _, rec := range recs {
		w := wantRow(rec)
		g, ok := got[rec.ID]
		if !ok {
			t.Errorf("record %s (%s %s) is not in the table", rec.ID, rec.Kind, rec.Method)
			continue
		}
		if g != w {
			t.Errorf("record %s:\n got  %+v\n want %+v", rec.ID, g, w)
		}
	}
}

func checkClean(t *testing.T, p *browser.Page, origin string) {
	t.Helper()
	if c := p.Console(); len(c) > 0 {
		t.Errorf("the page logged errors:\n%s", strings.Join(c, "\n"))
	}
	for _, u := range p.Requests() {
		if !strings.HasPrefix(u, origin) {
			t.Errorf("the page requested %s, which is not its own origin %s", u, origin)
		}
	}
}

func shotDir(t *testing.T) string {
	if *updateShots {
		dir := filepath.Join("..", "docs", "img")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	return t.ArtifactDir()
}

func TestHTMLPageInBrowser(t *testing.T) {
	recs := fixture(t)
	path := writePage(t, recs)
	u := (&url.URL{Scheme: "file", Path: path}).String()
	p := browser.Open(t, u)

	rows := pageRows(t, p)
	checkRows(t, rows, recs)

	// Charts are drawn from the records: a bar per layer bucket, per
	// outcome, per tool.
	for _, id := range []string{"chart-layers", "chart-latency", "chart-tools"} {
		if n := browser.Eval[int](t, p, fmt.Sprintf(`document.querySelectorAll('#%s svg rect.bar').length`, id)); n == 0 {
			t.Errorf("chart %s has no bars", id)
		}
	}

	t.Run("filter", func(t *testing.T) {
		for _, f := range []struct{ sel, value string }{
			{"f-outcome", "STREAM_INCOMPLETE"}, {"f-layer", "transport"}, {"f-method", "tools/list"}, {"f-kind", "server"},
		} {
			setSelect(t, p, f.sel, f.value)
			var want []*record.Record
			for _, r := range recs {
				var v string
				switch f.sel {
				case "f-outcome":
					v = string(r.Outcome)
				case "f-layer":
					v = layerOf(r)
				case "f-method":
					v = r.Method
				case "f-kind":
					v = string(r.Kind)
				}
				if v == f.value {
					want = append(want, r)
				}
			}
			if len(want) == 0 || len(want) == len(recs) {
				t.Fatalf("%s=%s selects %d of %d records: not a test of the filter", f.sel, f.value, len(want), len(recs))
			}
			checkRows(t, pageRows(t, p), want)
			setSelect(t, p, f.sel, "")
		}
		// Free text: a record id finds that record and nothing else.
		target := recs[len(recs)/2]
		browser.Eval[bool](t, p, fmt.Sprintf(`(() => { const i = document.getElementById('f-text'); i.value = %q; i.dispatchEvent(new Event('input')); return true })()`, strings.ToLower(target.ID)))
		checkRows(t, pageRows(t, p), []*record.Record{target})
		browser.Eval[bool](t, p, `(() => { const i = document.getElementById('f-text'); i.value = ''; i.dispatchEvent(new Event('input')); return true })()`)
		checkRows(t, pageRows(t, p), recs)
	})

	t.Run("detail of a cut stream", func(t *testing.T) {
		var cut *record.Record
		for _, r := range recs {
			if r.Kind == record.KindExchange && r.Outcome == "STREAM_INCOMPLETE" && len(r.SSEArrivals) > 0 {
				cut = r
				break
			}
		}
		if cut == nil {
			t.Fatal("the fixture has no cut stream with arrival times")
		}
		clickRow(t, p, cut.ID)
		browser.WaitFor(t, p, "the SSE timeline", `document.querySelector('#detail .timeline') !== null`)
		if n := browser.Eval[int](t, p, `document.querySelectorAll('#detail .timeline .sse-event').length`); n != len(cut.SSEArrivals) {
			t.Errorf("the timeline shows %d events, the record has %d arrivals", n, len(cut.SSEArrivals))
		}
		if !browser.Eval[bool](t, p, `document.querySelector('#detail .timeline .sse-cut') !== null`) {
			t.Error("the cut is not marked on the timeline")
		}
		if browser.Eval[bool](t, p, `document.querySelector('#detail .timeline .sse-terminal') !== null`) {
			t.Error("a stream that never carried its response has a terminal event marked")
		}
		t.Logf("detail scroll: %v", browser.EvalPromise[[]int](t, p, `new Promise((res) => { const d = document.getElementById('detail'); d.querySelector('[data-section="sse-events"]').scrollIntoView(); requestAnimationFrame(() => res([d.scrollTop, d.scrollHeight, d.clientHeight])) })`))
		shot := browser.Screenshot(t, p, shotDir(t), "ui-report.png")
		t.Logf("screenshot: %s", shot)
	})

	t.Run("detail of a complete stream", func(t *testing.T) {
		var ok *record.Record
		for _, r := range recs {
			if r.Kind == record.KindExchange && r.Outcome == "TOOL_SUCCESS" && len(r.SSEArrivals) > 0 && r.SSE != nil && r.SSE.Terminal {
				ok = r
				break
			}
		}
		if ok == nil {
			t.Fatal("the fixture has no complete stream with arrival times")
		}
		// Keyboard: from the row above, ArrowDown selects it.
		clickRow(t, p, ok.ID)
		browser.WaitFor(t, p, "the terminal event", fmt.Sprintf(`document.querySelector('#detail .timeline .sse-terminal[data-event="%d"]') !== null`, ok.SSE.TerminalEvent))
		if browser.Eval[bool](t, p, `document.querySelector('#detail .timeline .sse-cut') !== null`) {
			t.Error("a complete stream is marked cut")
		}
	})

	t.Run("keyboard", func(t *testing.T) {
		first := rows[0].ID
		second := ""
		for _, r := range rows[1:] {
			if r.ID != "" {
				second = r.ID
				break
			}
		}
		clickRow(t, p, first)
		browser.Eval[bool](t, p, `(() => { document.getElementById('list').focus(); document.getElementById('list').dispatchEvent(new KeyboardEvent('keydown', {key: 'ArrowDown', bubbles: true})); return true })()`)
		browser.WaitFor(t, p, "the next row selected", fmt.Sprintf(`document.querySelector('#rows tr.selected') && document.querySelector('#rows tr.selected').dataset.id === %q`, second))
	})

	checkClean(t, p, "file://")
}

func setSelect(t *testing.T, p *browser.Page, id, value string) {
	t.Helper()
	ok := browser.Eval[bool](t, p, fmt.Sprintf(`(() => { const s = document.getElementById(%q); if (![...s.options].some(o => o.value === %q)) return false; s.value = %q; s.dispatchEvent(new Event('change')); return true })()`, id, value, value))
	if !ok {
		t.Fatalf("the %s filter offers no %q", id, value)
	}
}

func clickRow(t *testing.T, p *browser.Page, id string) {
	t.Helper()
	// Scroll the row into the rendered window, then click it as a user would.
	ok := browser.EvalPromise[bool](t, p, fmt.Sprintf(`new Promise((resolve) => {
	  const list = document.getElementById('list');
	  const tryClick = (n) => {
	    const tr = document.querySelector('#rows tr.row[data-id=%q]');
	    if (tr) { tr.scrollIntoView({block: 'center'}); tr.click(); resolve(true); return; }
	    if (n > 200 || list.scrollTop + list.clientHeight >= list.scrollHeight - 1) { resolve(false); return; }
	    list.scrollTop += list.clientHeight;
	    requestAnimationFrame(() => requestAnimationFrame(() => tryClick(n + 1)));
	  };
	  list.scrollTop = 0;
	  requestAnimationFrame(() => requestAnimationFrame(() => tryClick(0)));
	})`, id))
	if !ok {
		t.Fatalf("row %s is not in the table", id)
	}
	browser.WaitFor(t, p, "the detail of "+id, fmt.Sprintf(`document.querySelector('#detail [data-section="exchange"]') !== null && document.getElementById('detail').textContent.includes(%q)`, id))
}

// layerOf is the page's layerOf.
func layerOf(r *record.Record) string {
	if r.Layer != "" {
		return string(r.Layer)
	}
	return string(r.Outcome.Layer())
}
