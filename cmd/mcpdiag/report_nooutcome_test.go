package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestReportRecordWithoutOutcome: a call or exchange record without an
// outcome (a producer's bug, or a record cut or written by hand) is named
// on stderr by file and line, counted apart (in no section, not under
// "(none)"), and makes the exit 3 (the input is partial); a server line,
// which has no outcome by design, is none of that. Before,
// {"v":2,"kind":"exchange"} was counted as an exchange with outcome and
// layer "(none)", and report exited 0.
func TestReportRecordWithoutOutcome(t *testing.T) {
	dir := t.TempDir()
	good := writeRun(t, 3, 1, 10)
	tests := []struct {
		name      string
		lines     []string
		kind      string // of the record without an outcome ("" for none)
		code      int
		exchanges int64
	}{
		{"an exchange", []string{`{"v":2,"kind":"exchange"}`}, "exchange", 3, 4},
		{"a call", []string{`{"v":2,"kind":"call","id":"c","method":"tools/call","tool":"echo"}`}, "call", 3, 4},
		{"an exchange with a method", []string{`{"v":2,"kind":"exchange","id":"x","method":"tools/call","status":200}`}, "exchange", 3, 4},
		{"a server line", []string{`{"v":2,"kind":"server","id":"s","event":"listening"}`}, "", 0, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := append(bytes.Clone(good), []byte(strings.Join(tt.lines, "\n")+"\n")...)
			path := writeFile(t, dir, strings.ReplaceAll(tt.name, " ", "-")+".jsonl", data)
			line := bytes.Count(good, []byte("\n")) + 1
			var out, errb bytes.Buffer
			code := run([]string{"report", "--json", path}, nil, &out, &errb)
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, tt.code, errb.String())
			}
			var s struct {
				NoOutcome int64 `json:"noOutcome"`
				Malformed struct {
					Lines    int64 `json:"lines"`
					Examples []struct {
						File      string `json:"file"`
						Line      int64  `json:"line"`
						NoOutcome bool   `json:"noOutcome"`
					} `json:"examples"`
				} `json:"malformed"`
				Exchanges struct {
					Total     int64 `json:"total"`
					ByOutcome []struct {
						Outcome string `json:"outcome"`
					} `json:"byOutcome"`
				} `json:"exchanges"`
				Calls struct {
					Total int64 `json:"total"`
				} `json:"calls"`
			}
			if err := json.Unmarshal(out.Bytes(), &s); err != nil {
				t.Fatalf("%v: %s", err, out.String())
			}
			for _, o := range s.Exchanges.ByOutcome {
				if o.Outcome == "(none)" {
					t.Errorf("counted under (none): %s", out.String())
				}
			}
			if s.Exchanges.Total != tt.exchanges || s.Malformed.Lines != 0 {
				t.Errorf("exchanges %d (want %d), malformed lines %d (want 0)", s.Exchanges.Total, tt.exchanges, s.Malformed.Lines)
			}
			if tt.kind == "" {
				if s.NoOutcome != 0 || errb.Len() != 0 {
					t.Errorf("noOutcome %d, stderr %q; want none", s.NoOutcome, errb.String())
				}
				return
			}
			if s.Calls.Total != 3 {
				t.Errorf("calls %d, want the run's 3 (a call without an outcome counted apart)", s.Calls.Total)
			}
			if s.NoOutcome != 1 || len(s.Malformed.Examples) != 1 || !s.Malformed.Examples[0].NoOutcome || s.Malformed.Examples[0].Line != int64(line) {
				t.Errorf("noOutcome %d, examples %+v; want 1 at line %d", s.NoOutcome, s.Malformed.Examples, line)
			}
			first, _, _ := strings.Cut(errb.String(), "\n")
			want := fmt.Sprintf("mcpdiag: %s:%d: %s %s record without an outcome", path, line, map[string]string{"call": "a", "exchange": "an"}[tt.kind], tt.kind)
			if !strings.HasPrefix(first, want) || !strings.Contains(errb.String(), "the input is partial") {
				t.Errorf("stderr %q, want a first line %q… and the exit's reason", errb.String(), want)
			}
		})
	}
}

// TestReportHARAndPageNameRecordsWithoutOutcome: an exchange record without
// an outcome is left out of --har and --html, as out of every count, and
// each says so: the archive's log.comment and "_leftOut" name it by file
// and line, the page's left-out element does, and stderr has a line for
// each output. A call record without an outcome is named on the page (which
// shows calls), not in the archive (which holds no call). Before, the
// archive and the page left them out without a word.
func TestReportHARAndPageNameRecordsWithoutOutcome(t *testing.T) {
	dir := t.TempDir()
	good := writeRun(t, 2, 0, 10)
	lines := bytes.Count(good, []byte("\n"))
	data := append(bytes.Clone(good), []byte(`{"v":2,"kind":"exchange","id":"x","method":"tools/call","status":200}`+"\n"+
		`{"v":2,"kind":"call","id":"c","method":"tools/call","tool":"echo"}`+"\n")...)
	in := writeFile(t, dir, "in.jsonl", data)
	har, page := dir+"/out.har", dir+"/out.html"
	var out, errb bytes.Buffer
	if code := run([]string{"report", "--har", har, "--html", page, in}, nil, &out, &errb); code != 3 {
		t.Fatalf("exit %d, want 3; stderr:\n%s", code, errb.String())
	}
	exLine, callLine := lines+1, lines+2
	for _, want := range []string{
		fmt.Sprintf("mcpdiag: --har %s: 1 exchange record(s) without an outcome left out (named above by file and line, and in the archive's log.comment)\n", har),
		fmt.Sprintf("mcpdiag: --html %s: 2 call or exchange record(s) without an outcome left out (named above by file and line, and on the page beside its count of records)\n", page),
	} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errb.String())
		}
	}
	raw, err := os.ReadFile(har)
	if err != nil {
		t.Fatal(err)
	}
	var h struct {
		Log struct {
			Entries []json.RawMessage `json:"entries"`
			Comment string            `json:"comment"`
			LeftOut struct {
				Records int64 `json:"records"`
				Named   []struct {
					File      string `json:"file"`
					Line      int64  `json:"line"`
					Kind      string `json:"kind"`
					NoOutcome bool   `json:"noOutcome"`
				} `json:"named"`
			} `json:"_leftOut"`
		} `json:"log"`
	}
	if err := json.Unmarshal(raw, &h); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	wantComment := fmt.Sprintf("1 call or exchange record(s) without an outcome left out (a producer's bug, or a record cut or written by hand; mcpdiag report counts them apart, in no section): %s:%d (exchange)", in, exLine)
	if len(h.Log.Entries) != 2 || h.Log.Comment != wantComment || h.Log.LeftOut.Records != 1 || len(h.Log.LeftOut.Named) != 1 ||
		h.Log.LeftOut.Named[0].File != in || h.Log.LeftOut.Named[0].Line != int64(exLine) || h.Log.LeftOut.Named[0].Kind != "exchange" || !h.Log.LeftOut.Named[0].NoOutcome {
		t.Errorf("HAR: %d entries, comment %q, _leftOut %+v\nwant 2 entries, comment %q, the exchange at line %d", len(h.Log.Entries), h.Log.Comment, h.Log.LeftOut, wantComment, exLine)
	}
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf(`<script id="mcpdiag-left-out" type="application/json">{"records":2,"named":[{"file":%q,"line":%d,`, in, exLine)
	if !bytes.Contains(html, []byte(want)) || !bytes.Contains(html, []byte(fmt.Sprintf(`{"file":%q,"line":%d,`, in, callLine))) {
		t.Errorf("the page does not name the two records: want %s… and line %d", want, callLine)
	}
	// Without such a record, neither output says anything of it.
	clean := writeFile(t, dir, "clean.jsonl", good)
	out.Reset()
	errb.Reset()
	if code := run([]string{"report", "--har", har, "--html", page, clean}, nil, &out, &errb); code != 0 || errb.Len() != 0 {
		t.Fatalf("exit %d, stderr %q; want 0, nothing", code, errb.String())
	}
	raw, _ = os.ReadFile(har)
	html, _ = os.ReadFile(page)
	h.Log.Comment, h.Log.LeftOut.Records = "", 0
	if err := json.Unmarshal(raw, &h); err != nil {
		t.Fatal(err)
	}
	if h.Log.Comment != "" || bytes.Contains(raw, []byte(`_leftOut`)) || !bytes.Contains(html, []byte(`<script id="mcpdiag-left-out" type="application/json">null</script>`)) {
		t.Errorf("a clean input: the HAR or the page names records left out")
	}
}
