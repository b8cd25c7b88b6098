package main

import (
	"bytes"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/internal/browser"
	"github.com/mcpdiag/mcpdiag/internal/testbin"
	"github.com/mcpdiag/mcpdiag/matrix"
)

// TestMatrixHTMLShowsLateLines: a request that reaches the server after its
// run was judged (badclient -bad exit-late-request: its tail comes 3.5 s
// after the client exited, past the run's 3 s wait) is written with the
// warning matrix-line-late. The page held it as any other row, nothing
// saying it is in no verdict, and the case's pane did not mention it. Its
// row is marked LATE, its run's section in the case's pane says so, and the
// matrix's summary counts it.
func TestMatrixHTMLShowsLateLines(t *testing.T) {
	bc := testbin.Build(t, "../../matrix/testdata/badclient")
	dir := t.TempDir()
	out := filepath.Join(dir, "matrix.html")
	var stdout, stderr bytes.Buffer
	run([]string{"matrix", "--html", out, "--scenarios", "baseline", "--protocol", "2026-07-28", "--", bc, "-bad", "exit-late-request"}, nil, &stdout, &stderr)
	page, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(page, []byte(matrix.LateWarning)) {
		t.Fatalf("the page holds no late line: %s", stderr.String())
	}
	p := browser.Open(t, (&url.URL{Scheme: "file", Path: out}).String())
	browser.WaitFor(t, p, "a row marked late", `document.querySelector('#rows tr.row.late') !== null`)
	if flags := browser.Eval[string](t, p, `document.querySelector('#rows tr.row.late .c-flags').textContent`); !strings.HasPrefix(flags, "LATE") {
		t.Errorf("the late row's flags %q, want LATE first", flags)
	}
	if n := browser.Eval[int](t, p, `document.querySelectorAll('#rows tr.row.late').length`); n != 1 {
		t.Errorf("%d rows marked late, want 1", n)
	}
	// The summary counts the late line, as the text report's LATE line
	// does (before, it said "1 cases, 1 failed" and nothing of it).
	if !strings.Contains(stdout.String(), "LATE: 1 server log line(s) came after their run was judged") {
		t.Errorf("the text report does not count the late line:\n%s", stdout.String())
	}
	if s := browser.Eval[string](t, p, `document.getElementById('matrix-summary').textContent`); !strings.HasPrefix(s, "1 cases, ") ||
		!strings.HasSuffix(s, " failed; LATE: 1 server log line(s) came after their run was judged, in no verdict") {
		t.Errorf("the matrix summary says %q", s)
	}
	browser.Eval[bool](t, p, `(() => { document.querySelector('#matrix-grid button.cell[data-case="baseline"]').click(); return true })()`)
	browser.WaitFor(t, p, "the case's detail", `document.querySelector('#detail [data-section="checks"]') !== null`)
	if text := browser.Eval[string](t, p, `(document.querySelector('#detail p.late-lines') || {textContent: ''}).textContent`); !strings.Contains(text, "LATE: 1 line(s) of this run came after it was judged (tools/call echo)") {
		t.Errorf("the run's section says %q of its late line", text)
	}
	if c := p.Console(); len(c) > 0 {
		t.Errorf("console: %q", c)
	}
}
