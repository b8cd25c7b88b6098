package main

import (
	"bytes"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/internal/browser"
	"github.com/mcpdiag/mcpdiag/internal/testbin"
)

// TestMatrixNotTestedViewsAgree: a client that declares no elicitation
// capability (badclient -bad no-elicitation) on elicitation.approval and
// baseline. The table, the summary, --json, --junit and the --html page
// all say one run passed and one was not tested, none failed, and the exit
// status is 0: a run that did not test its case is no failure. Before, the
// run failed client.classification ("printed HTTP_ERROR; expected
// TOOL_SUCCESS") and the matrix exited 1.
func TestMatrixNotTestedViewsAgree(t *testing.T) {
	bc := testbin.Build(t, "../../matrix/testdata/badclient")
	dir := t.TempDir()
	page, junit := filepath.Join(dir, "matrix.html"), filepath.Join(dir, "matrix.xml")
	args := []string{"--scenarios", "baseline,elicitation.approval", "--protocol", "2026-07-28"}
	client := []string{"--", bc, "-bad=no-elicitation"}

	var table, stderr bytes.Buffer
	if code := run(append(append([]string{"matrix", "--html", page, "--junit", junit}, args...), client...), nil, &table, &stderr); code != 0 {
		t.Fatalf("exit %d, want 0 (not tested is no failure): %s\n%s", code, stderr.String(), table.String())
	}
	for _, w := range []string{"elicitation.approval           TOOL_SUCCESS  HTTP_ERROR        1 0       not tested\n",
		"baseline                       TOOL_SUCCESS  =                 1 0       pass\n",
		"2 runs: 1 passed, 1 not tested, 0 failed.\n", ", 1 not tested.\n", "NOT TESTED in 1 run: elicitation.approval (2026-07-28)\n",
		"the client declared no elicitation capability"} {
		if !strings.Contains(table.String(), w) {
			t.Errorf("the table does not say %q:\n%s", w, table.String())
		}
	}

	var js bytes.Buffer
	stderr.Reset()
	if code := run(append(append([]string{"matrix", "--json"}, args...), client...), nil, &js, &stderr); code != 0 {
		t.Fatalf("--json: exit %d: %s", code, stderr.String())
	}
	verdicts := map[string]string{}
	for _, line := range bytes.Split(bytes.TrimSpace(js.Bytes()), []byte("\n")) {
		var c struct {
			Case, Verdict, NeedsCapability string
			NotTestedRuns                  int
		}
		if err := json.Unmarshal(line, &c); err != nil {
			t.Fatal(err)
		}
		verdicts[c.Case] = c.Verdict
		if c.Case == "elicitation.approval" && (c.NotTestedRuns != 1 || c.NeedsCapability != "elicitation") {
			t.Errorf("--json: %s", line)
		}
	}
	if verdicts["baseline"] != "pass" || verdicts["elicitation.approval"] != "not tested" {
		t.Errorf("--json verdicts %v", verdicts)
	}

	x, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(x), `<skipped message="not tested: the client declared no elicitation capability`) || strings.Contains(string(x), "<failure") {
		t.Errorf("JUnit:\n%s", x)
	}

	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	cases := matrixCases(t, b)
	for _, c := range cases {
		if v := verdicts[c["case"].(string)]; c["verdict"] != v {
			t.Errorf("the page's case %s is %v, --json says %s", c["case"], c["verdict"], v)
		}
	}
	p := browser.Open(t, (&url.URL{Scheme: "file", Path: page}).String())
	browser.WaitFor(t, p, "the grid", `document.querySelectorAll('#matrix-grid button.cell').length === 2`)
	type cell struct{ Case, Class, Label, Title string }
	cells := browser.Eval[[]cell](t, p, `[...document.querySelectorAll('#matrix-grid button.cell')].map((b) => ({Case: b.dataset.case, Class: b.className, Label: b.textContent, Title: b.title}))`)
	for _, c := range cells {
		switch c.Case {
		case "baseline":
			if !strings.Contains(c.Class, "v-pass") || c.Label != "pass" {
				t.Errorf("baseline's cell %+v", c)
			}
		case "elicitation.approval":
			if !strings.Contains(c.Class, "v-nt") || c.Label != "not tested" || !strings.Contains(c.Title, "declared no elicitation") {
				t.Errorf("elicitation.approval's cell %+v", c)
			}
		}
	}
	if s := browser.Eval[string](t, p, `document.getElementById('matrix-summary').textContent`); s != "2 cases, 0 failed, 1 not tested" {
		t.Errorf("the page's summary %q", s)
	}
	if c := p.Console(); len(c) > 0 {
		t.Errorf("console: %q", c)
	}
}
