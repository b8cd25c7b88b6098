package judge_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/judge"
	"github.com/mcpdiag/mcpdiag/record"
)

// TestUnreadArgumentsAreNoRepeat: three answered tools/call of one tool
// whose bodies were over the recorder's parse limit have a method, a tool
// and no argsHash (record.Record.SetMessageHead: their arguments were not
// read). Nothing says they repeat one call: loop.identical-calls must not
// fail them as three identical calls, and no two share a key.
func TestUnreadArgumentsAreNoRepeat(t *testing.T) {
	var recs []*record.Record
	for id := 1; id <= 3; id++ {
		line := strings.Replace(answeredLine, `"argsHash":"sha256:9703d8cbc472a4a39aa68e8f71acf06a949bef5ce398841cc2812347afbfbdf1",`, "", 1)
		line = strings.Replace(line, `"jsonrpc":{"id":1,`, fmt.Sprintf(`"jsonrpc":{"id":%d,`, id), 1)
		r, err := record.Decode([]byte(line))
		if err != nil || r.ArgsHash != "" || r.Method != "tools/call" {
			t.Fatalf("record %d: %v, argsHash %q", id, err, r.ArgsHash)
		}
		recs = append(recs, r)
	}
	tr := judge.NewTrace("big", recs, nil)
	keys := map[string]bool{}
	for _, x := range tr.Exchanges {
		keys[x.Key()] = true
	}
	if len(keys) != 3 {
		t.Errorf("%d distinct keys of 3 exchanges whose arguments were not read; want 3", len(keys))
	}
	for _, c := range judge.Judge(tr) {
		if c.Rule == "loop.identical-calls" && c.Verdict == judge.Fail {
			t.Errorf("loop.identical-calls failed calls whose arguments were never read: %s", c.Evidence)
		}
	}
}
