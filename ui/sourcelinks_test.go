package ui

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mcpdiag/mcpdiag/internal/browser"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/report"
)

// designedAnswerLines returns the lines of real proxy records of an OAuth
// flow (report/testdata/designed-answers.jsonl) split after the proxy's 401
// with a Bearer challenge: before holds it, after holds its client's
// answer (the tools/list with the new token).
func designedAnswerLines(t *testing.T) (before, after []byte, challenge string) {
	t.Helper()
	b, err := os.ReadFile("../report/testdata/designed-answers.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(b, []byte("\n"))
	for i, l := range lines {
		r, err := record.Decode(bytes.TrimSpace(l))
		if err != nil {
			continue
		}
		if r.BearerChallenge() {
			return bytes.Join(lines[:i+1], nil), bytes.Join(lines[i+1:], nil), r.ID
		}
	}
	t.Fatal("no 401 with a Bearer challenge in the file: not the file this test is about")
	return nil, nil, ""
}

// writeFiles writes each content to a file of its own and returns their
// paths.
func writeFiles(t *testing.T, contents ...[]byte) []string {
	t.Helper()
	dir := t.TempDir()
	var paths []string
	for i, c := range contents {
		p := filepath.Join(dir, fmt.Sprintf("records%d.jsonl", i))
		if err := os.WriteFile(p, c, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

// reportOver reads the files as mcpdiag report FILE… does and returns, for
// each exchange record, whether report counts it a failure (not designed,
// not linked to an answer), with report's failure count.
func reportOver(t *testing.T, paths []string) (want map[string]bool, failures int64) {
	t.Helper()
	acc := report.New(report.Options{KeepLinks: true})
	var recs []*record.Record
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := report.Read(bytes.NewReader(b), p, nil, acc); err != nil {
			t.Fatal(err)
		}
		for _, l := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
			r, err := record.Decode(l)
			if err != nil {
				t.Fatal(err)
			}
			recs = append(recs, r)
		}
	}
	acc.Close()
	linked := map[string]bool{}
	for _, l := range acc.TakeChallengeLinks() {
		linked[l.ID] = true
	}
	want = map[string]bool{}
	for _, r := range recs {
		want[r.ID] = r.Kind == record.KindExchange && report.Failure(r.Kind, r.Outcome) && r.DesignedAnswer() == "" && !linked[r.ID]
	}
	return want, acc.Summary().Exchanges.Failures
}

// tailInOrder tails each file with s, the next once the records of those
// before are published (so the order of the records is the files' order),
// until the test ends.
func tailInOrder(t *testing.T, s *Server, paths []string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	var n int64
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		n += int64(bytes.Count(b, []byte("\n")))
		wg.Add(1)
		go func() { defer wg.Done(); _ = s.Tail(ctx, p, 0) }()
		waitFor(t, "the records of "+p, func() bool { return s.Records() == n })
	}
}

// challengeEvents returns the "challenge" events s keeps.
func (s *Server) challengeEvents() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, e := range s.recs {
		if e.name == "challenge" {
			out = append(out, string(e.data))
		}
	}
	return out
}

// TestLiveFilesLinkedAsReportLinksThem: mcpdiag ui over record files shows
// the challenges as mcpdiag report over the same files counts them: over
// two files, the proxy's 401 in one and its client's answer in the other
// (report settles each file apart), the 401 is a failed row; over one
// file holding both, it is answered, as before. Before, the Server linked
// every file's records with one Accumulator: the 401 of the first file was
// answered by the second's request on the live page and a failure in
// report.
func TestLiveFilesLinkedAsReportLinksThem(t *testing.T) {
	before, after, challenge := designedAnswerLines(t)
	for _, c := range []struct {
		name     string
		files    [][]byte
		answered bool
	}{
		{"two files", [][]byte{before, after}, false},
		{"one file", [][]byte{append(append([]byte(nil), before...), after...)}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			paths := writeFiles(t, c.files...)
			want, failures := reportOver(t, paths)
			if want[challenge] == c.answered {
				t.Fatalf("report counts the 401 a failure: %v, want %v", want[challenge], !c.answered)
			}
			s, err := NewServer(ServerOptions{Title: c.name})
			if err != nil {
				t.Fatal(err)
			}
			base := serve(t, s)
			p := browser.Open(t, base+s.Path())
			tailInOrder(t, s, paths)
			wantEvents := map[bool]int{false: 0, true: 1}[c.answered]
			if got := s.challengeEvents(); len(got) != wantEvents ||
				c.answered && !strings.Contains(got[0], `"id":"`+challenge+`"`) {
				t.Errorf("challenge events %q; want %d (naming %s when one)", got, wantEvents, challenge)
			}
			// The challenge event, when there is one, is kept with the
			// answer's record (one batch): every row there, the marks are.
			browser.WaitFor(t, p, "the rows", fmt.Sprintf(`document.querySelectorAll('#rows tr.row[data-id]').length === %d`, len(want)))
			checkFailed(t, failedRows(t, p), want, failures)
		})
	}
}

// TestTailReadAgainIsAnotherInput: a file Tail reads again from its start
// (replaced, as a rotated record file is) is another input, as two files
// are to mcpdiag report: the 401 of the file before is not answered by a
// request of the new one. Appended to the same file, it is.
func TestTailReadAgainIsAnotherInput(t *testing.T) {
	before, after, challenge := designedAnswerLines(t)
	for _, replace := range []bool{true, false} {
		t.Run(map[bool]string{true: "replaced", false: "appended"}[replace], func(t *testing.T) {
			paths := writeFiles(t, before, after)
			s, err := NewServer(ServerOptions{})
			if err != nil {
				t.Fatal(err)
			}
			tailInOrder(t, s, paths[:1])
			if replace {
				if err := os.Rename(paths[1], paths[0]); err != nil {
					t.Fatal(err)
				}
			} else {
				f, err := os.OpenFile(paths[0], os.O_APPEND|os.O_WRONLY, 0)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := f.Write(after); err != nil {
					t.Fatal(err)
				}
				if err := f.Close(); err != nil {
					t.Fatal(err)
				}
			}
			n := int64(bytes.Count(before, []byte("\n")) + bytes.Count(after, []byte("\n")))
			waitFor(t, "the records after", func() bool { return s.Records() == n })
			got := s.challengeEvents()
			if replace && len(got) != 0 {
				t.Errorf("challenge events %q over a file replaced after the 401; want none", got)
			}
			if !replace && (len(got) != 1 || !strings.Contains(got[0], `"id":"`+challenge+`"`)) {
				t.Errorf("challenge events %q over a file appended to; want one naming %s", got, challenge)
			}
		})
	}
}
