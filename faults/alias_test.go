package faults_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/faults"
)

// TestStdioAlias holds every case of the old --stdio-fault syntax
// (proxy.ParseStdioFault, its tests, its doc and the CLI's): each is the
// catalogue selection it names, written out in full, and each bad spec still
// gets its one-line error.
func TestStdioAlias(t *testing.T) {
	for _, tt := range []struct {
		spec   string
		id     string
		params string
	}{
		// The cases of proxy's TestStdioFaults.
		{"drop,tool=echo", "stdio.drop", `{"match":{"method":"tools/call","tool":"echo"}}`},
		{"garbage,tool=echo", "stdio.garbage", `{"match":{"method":"tools/call","tool":"echo"}}`},
		{"delay=30ms,tool=echo", "stdio.delay", `{"delay":{"ms":30},"match":{"method":"tools/call","tool":"echo"}}`},
		{"exit,tool=echo", "stdio.exit", `{"match":{"method":"tools/call","tool":"echo"}}`},
		// The examples of its doc comment and of mcpdiag proxy --help.
		{"delay=500ms", "stdio.delay", `{"delay":{"ms":500},"match":{"method":"tools/call"}}`},
		{"garbage,line=hello", "stdio.garbage", `{"line":"hello","match":{"method":"tools/call"}}`},
		{"exit,times=1", "stdio.exit", `{"schedule":{"first":1},"match":{"method":"tools/call"}}`},
		{"drop,method=tools/list", "stdio.drop", `{"match":{"method":"tools/list"}}`},
		{"drop", "stdio.drop", `{"match":{"method":"tools/call"}}`},
		{"garbage", "stdio.garbage", `{"match":{"method":"tools/call"}}`},
		{"exit", "stdio.exit", `{"match":{"method":"tools/call"}}`},
		// Settings combine; times=0 is every match; an empty tool=,
		// method= or line= is the default, as before; spaces around parts
		// are ignored.
		{"drop,method=prompts/get,tool=greet,times=3", "stdio.drop", `{"match":{"method":"prompts/get","tool":"greet"},"schedule":{"first":3}}`},
		{"garbage,times=0,line=Listening on 3000", "stdio.garbage", `{"line":"Listening on 3000","match":{"method":"tools/call"}}`},
		{"drop,tool=,method=", "stdio.drop", `{"match":{"method":"tools/call"}}`},
		{"garbage,line=", "stdio.garbage", `{"match":{"method":"tools/call"}}`},
		{" drop , tool=echo ", "stdio.drop", `{"match":{"method":"tools/call","tool":"echo"}}`},
		// Names were matched exactly: glob characters stay literal.
		{"drop,tool=delete_*", "stdio.drop", `{"match":{"method":"tools/call","tool":"delete_\\*"}}`},
		// A fractional or long delay waits as long as it says (the cap of
		// the common delay is raised with it).
		{"delay=1.5s", "stdio.delay", `{"delay":{"ms":1500},"match":{"method":"tools/call"}}`},
		{"delay=250us", "stdio.delay", `{"delay":{"ms":0.25},"match":{"method":"tools/call"}}`},
		{"delay=1m", "stdio.delay", `{"delay":{"ms":60000,"capMs":60000},"match":{"method":"tools/call"}}`},
	} {
		t.Run(tt.spec, func(t *testing.T) {
			got, err := faults.ParseStdioAlias(tt.spec)
			if err != nil {
				t.Fatal(err)
			}
			want, err := faults.SelectStdio(tt.id, json.RawMessage(tt.params))
			if err != nil {
				t.Fatal(err)
			}
			gb, _ := json.Marshal(got)
			wb, _ := json.Marshal(want)
			if string(gb) != string(wb) {
				t.Errorf("--stdio-fault %s\n is %s\nwant %s", tt.spec, gb, wb)
			}
		})
	}
	for _, tt := range []struct{ spec, err string }{
		{"explode", `stdio fault "explode": want delay=DURATION, drop, garbage or exit`},
		{"", `stdio fault "": want delay=DURATION, drop, garbage or exit`},
		{"delay", "stdio fault delay needs a duration: delay=500ms"},
		{"delay=soon", `stdio fault delay="soon": want a positive duration`},
		{"delay=0s", `stdio fault delay="0s": want a positive duration`},
		{"delay=-1s", `stdio fault delay="-1s": want a positive duration`},
		{"drop=1", "stdio fault drop takes no value"},
		{"garbage=x", "stdio fault garbage takes no value"},
		{"exit=now", "stdio fault exit takes no value"},
		{"drop,line=x", "line= applies to the garbage fault only"},
		{"garbage,line=a\nb", "the garbage line must be one line"},
		{"garbage,line=a\rb", "the garbage line must be one line"},
		{"exit,times=-1", `times="-1": want a count`},
		{"exit,times=once", `times="once": want a count`},
		{"drop,colour=red", `stdio fault setting "colour": want tool=, method=, line= or times=`},
	} {
		_, err := faults.ParseStdioAlias(tt.spec)
		if err == nil || err.Error() != tt.err {
			t.Errorf("--stdio-fault %q: %v, want %q", tt.spec, err, tt.err)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("--stdio-fault %q: the error is not one line: %q", tt.spec, err)
		}
	}
}
