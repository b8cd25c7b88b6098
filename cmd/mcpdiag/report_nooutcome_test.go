package main

import (
	"bytes"
	"encoding/json"
	"fmt"
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
