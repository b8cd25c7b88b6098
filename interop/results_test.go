package interop_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// row is one result: a peer, a direction, an era, a scenario and a route,
// with what was expected and what happened.
type row struct {
	Section   int    // orders the table: the test that made the row
	Order     int    // orders the rows of a section
	Peer      string // with its pinned version
	Direction string // who is the client: "mcpdiag → peer" or "peer → mcpdiag serve"
	Era       string
	Scenario  string
	Route     string // "direct" or "via mcpdiag proxy"
	Want      string
	Got       string
	Pass      bool
	Skipped   string // why the row did not run, when it did not
	Command   string // the label of the command under the table
}

// Sections, in table order, each with the command that reproduces it.
var sections = []struct{ label, test, note string }{
	{"I1", "TestConformanceServe", "also `./scripts/conformance-server.sh --server serve [--proxy] --requirements 2026-07-28 --requirements 2025-11-25 --out DIR`"},
	{"I2", "TestTypeScriptSDK", ""},
	{"I3", "TestServerEverything", ""},
	{"I4", "TestGoPeers", ""},
	{"I5", "TestInspectorCLI", ""},
	{"I6", "TestProbePeers", ""},
	{"I7", "TestProbeGoPeers", ""},
	{"I8", "TestTypeScriptSDKHangsUnderMatrix", ""},
}

type resultSet struct {
	mu   sync.Mutex
	rows []row
	seen map[[2]int]bool // Section, Order
}

var results resultSet

// add records r; a failed row fails t.
func (s *resultSet) add(t *testing.T, r row) {
	t.Helper()
	r.Command = sections[r.Section].label
	s.mu.Lock()
	s.rows = append(s.rows, r)
	if s.seen == nil {
		s.seen = map[[2]int]bool{}
	}
	s.seen[[2]int{r.Section, r.Order}] = true
	s.mu.Unlock()
	switch {
	case r.Skipped != "":
		t.Logf("SKIP %s | %s | %s | %s | %s: %s", r.Peer, r.Direction, r.Era, r.Scenario, r.Route, r.Skipped)
	case r.Pass:
		t.Logf("pass %s | %s | %s | %s | %s: %s", r.Peer, r.Direction, r.Era, r.Scenario, r.Route, r.Got)
	default:
		t.Errorf("FAIL %s | %s | %s | %s | %s:\n  want %s\n  got  %s", r.Peer, r.Direction, r.Era, r.Scenario, r.Route, r.Want, r.Got)
	}
}

// expect registers the rows t will report: any of them still missing when
// t ends (a t.Fatal on the way) is counted as failed, or as skipped when t
// was skipped, so the summary line never undercounts.
func (s *resultSet) expect(t *testing.T, rows []row) {
	t.Cleanup(func() {
		for _, r := range rows {
			s.mu.Lock()
			done := s.seen[[2]int{r.Section, r.Order}]
			s.mu.Unlock()
			if done {
				continue
			}
			if t.Skipped() {
				r.Skipped = "the test was skipped (see its log)"
			} else {
				r.Want, r.Got = "a result", "none: the test stopped before this row (see its log)"
			}
			s.add(t, r)
		}
	})
}

func (s *resultSet) sorted() []row {
	s.mu.Lock()
	defer s.mu.Unlock()
	rows := append([]row(nil), s.rows...)
	sort.SliceStable(rows, func(i, j int) bool {
		if rows[i].Section != rows[j].Section {
			return rows[i].Section < rows[j].Section
		}
		return rows[i].Order < rows[j].Order
	})
	return rows
}

// summary is the one line the test command prints.
func (s *resultSet) summary() string {
	var pass, fail, skip int
	for _, r := range s.sorted() {
		switch {
		case r.Skipped != "":
			skip++
		case r.Pass:
			pass++
		default:
			fail++
		}
	}
	line := fmt.Sprintf("interop: %d passed, %d failed", pass, fail)
	if skip > 0 {
		line += fmt.Sprintf(" (%d skipped on purpose: MCPDIAG_CONFORMANCE=off or -short)", skip)
	}
	return line
}

// table renders the rows as the Markdown table of docs/interop.md.
func (s *resultSet) table() string {
	var b strings.Builder
	b.WriteString("| Peer | Direction | Era | Scenario | Route | Result | Command |\n|---|---|---|---|---|---|---|\n")
	for _, r := range s.sorted() {
		res := "pass: " + r.Got
		switch {
		case r.Skipped != "":
			res = "skipped: " + r.Skipped
		case !r.Pass:
			res = "**FAIL**: got " + r.Got + "; want " + r.Want
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", cell(r.Peer), cell(r.Direction), cell(r.Era),
			cell(r.Scenario), cell(r.Route), cell(res), r.Command)
	}
	b.WriteString("\nCommands (from the repository root; every one is part of `./scripts/test.sh`):\n\n")
	for _, sec := range sections {
		fmt.Fprintf(&b, "- **%s:** `go test -race ./interop -run '^%s$' -v`", sec.label, sec.test)
		if sec.note != "" {
			b.WriteString("; " + sec.note)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func cell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}

// write puts the summary line and the table in .tools/interop, where
// scripts/test.sh finds the line.
func (s *resultSet) write(line string, took time.Duration) error {
	dir := filepath.Join(root, ".tools", "interop")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "summary.txt"), []byte(line+"\n"), 0o644); err != nil {
		return err
	}
	md := fmt.Sprintf("%s (%s, %s, %d CPUs, %s)\n\n%s", line, time.Now().UTC().Format(time.RFC3339),
		runtime.Version(), runtime.NumCPU(), took.Round(time.Second), s.table())
	return os.WriteFile(filepath.Join(dir, "results.md"), []byte(md), 0o644)
}

const (
	docBegin = "<!-- interop-results:begin (go test ./interop -update writes this block) -->"
	docEnd   = "<!-- interop-results:end -->"
)

// updateDoc replaces the block between docBegin and docEnd in the doc.
func (s *resultSet) updateDoc(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	i, j := bytes.Index(b, []byte(docBegin)), bytes.Index(b, []byte(docEnd))
	if i < 0 || j < i {
		return fmt.Errorf("%s has no %q … %q block", path, docBegin, docEnd)
	}
	var nb bytes.Buffer
	nb.Write(b[:i+len(docBegin)])
	fmt.Fprintf(&nb, "\n\nLast run: %s, %s, %d CPUs, %s for the package; `%s`.\n\n%s\n",
		time.Now().UTC().Format("2006-01-02"), runtime.Version(), runtime.NumCPU(), time.Since(started).Round(time.Second),
		s.summary(), s.table())
	nb.Write(b[j:])
	return os.WriteFile(path, nb.Bytes(), 0o644)
}
