package report

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestReadFile(t *testing.T) {
	const rec = `{"v":2,"kind":"call","id":"C1","outcome":"TOOL_SUCCESS"}` + "\n"
	many := strings.Repeat("not json\n", MaxHeldBadLines+5)
	for _, tc := range []struct {
		name      string
		in        string
		wantErr   string  // the refusal, or "" for none
		delivered []int64 // lines given to onBad, in order
		st        FileStats
	}{
		{name: "empty", in: "", wantErr: "in: no records (empty input)"},
		{name: "text", in: "root:x:0:0\nbin:x:1:1\n", wantErr: "in: not a record file: none of its 2 lines is a record (line 1: ",
			st: FileStats{Bad: 2, Undelivered: 2}},
		{name: "JSON without kind", in: `{"a":1}` + "\n", wantErr: `in: not a record file: none of its 1 line is a record (JSON objects without "kind")`,
			st: FileStats{Kindless: 1}},
		{name: "records", in: rec + rec, st: FileStats{Records: 2}},
		{name: "bad lines before the first record are given after it", in: "x\n" + rec + "y\n" + rec, delivered: []int64{1, 3},
			st: FileStats{Records: 2, Bad: 2}},
		{name: "past the hold, counted", in: many + rec, delivered: lineRange(1, MaxHeldBadLines),
			st: FileStats{Records: 1, Bad: MaxHeldBadLines + 5, Undelivered: 5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []int64
			acc := New(Options{})
			st, err := ReadFile(strings.NewReader(tc.in), "in", func(b BadLine) { got = append(got, b.Line) }, acc)
			var nr *NotRecordsError
			switch {
			case tc.wantErr != "":
				if !errors.As(err, &nr) || !strings.HasPrefix(err.Error(), tc.wantErr) || strings.Contains(err.Error(), "\n") {
					t.Errorf("error %v, want one line starting %q", err, tc.wantErr)
				}
				if len(got) != 0 {
					t.Errorf("lines %v given to onBad for a refused input", got)
				}
			case err != nil:
				t.Fatalf("ReadFile: %v", err)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.delivered) && !(len(got) == 0 && len(tc.delivered) == 0) {
				t.Errorf("onBad got lines %v, want %v", got, tc.delivered)
			}
			if st != tc.st {
				t.Errorf("stats %+v, want %+v", st, tc.st)
			}
		})
	}
}

func lineRange(from, to int64) []int64 {
	var out []int64
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}
