package matrix

import (
	"errors"
	"testing"

	"github.com/mcpdiag/mcpdiag/record"
)

// TestInterruptedLine: a run's log line gets the warning
// matrix-run-interrupted after its own warnings, and stays a record that
// decodes to the same facts; a line without warnings keeps its logged bytes
// before the inserted member.
func TestInterruptedLine(t *testing.T) {
	const msg = "the matrix was stopped (interrupt) while this run was in flight: the run was not judged"
	for _, tc := range []struct {
		name, line, want string
		codes            []string
	}{
		{name: "no warnings", line: `{"v":2,"kind":"exchange","id":"a","method":"tools/call","status":200}` + "\n",
			want:  `{"v":2,"kind":"exchange","id":"a","method":"tools/call","status":200,"warnings":[{"code":"matrix-run-interrupted","message":"` + msg + `"}]}` + "\n",
			codes: []string{InterruptedWarning}},
		{name: "own warnings", line: `{"v":2,"kind":"exchange","id":"b","method":"tools/call","warnings":[{"code":"request-id-null","message":"m"}]}`,
			codes: []string{"request-id-null", InterruptedWarning}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := parseServerLine([]byte(tc.line))
			if err != nil {
				t.Fatal(err)
			}
			got := interruptedLine(l, errors.New("interrupt"))
			if tc.want != "" && string(got) != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
			r, err := record.Decode(got)
			if err != nil {
				t.Fatalf("%s: %v", got, err)
			}
			var codes []string
			for _, w := range r.Warnings {
				codes = append(codes, w.Code)
			}
			if len(codes) != len(tc.codes) || codes[len(codes)-1] != InterruptedWarning || r.Warnings[len(codes)-1].Message != msg || codes[0] != tc.codes[0] {
				t.Errorf("warnings %+v, want codes %v", r.Warnings, tc.codes)
			}
			if r.ID != l.rec.ID || r.Method != l.rec.Method || r.Status != l.rec.Status {
				t.Errorf("record changed: %+v, was %+v", r, l.rec)
			}
		})
	}
}
