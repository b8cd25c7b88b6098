package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestUIAddrWithBlank: `--ui 127.0.0.1:0` (a blank, not "=") is the mistake
// the help's `--ui ADDR` invites; each command that has --ui names it in one
// line, exit 2, instead of refusing the left-over address for another reason.
// Nothing is started: the check comes before any listener.
func TestUIAddrWithBlank(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // the line, after "mcpdiag: "
	}{
		{[]string{"proxy", "--upstream", "http://127.0.0.1:1/mcp", "--ui", "127.0.0.1:0"},
			`"127.0.0.1:0" is left over as an argument: --ui takes its address after "=", as in --ui=127.0.0.1:0`},
		{[]string{"proxy", "--stdio", "--ui", "127.0.0.1:7001", "--", "true"},
			`"127.0.0.1:7001" is left over as an argument: --ui takes its address after "=", as in --ui=127.0.0.1:7001`},
		{[]string{"serve", "--listen", "127.0.0.1:0", "--ui", "localhost:7002"},
			`"localhost:7002" is left over as an argument: --ui takes its address after "=", as in --ui=localhost:7002`},
		{[]string{"matrix", "--ui", "[::1]:7003", "--scenarios", "baseline"},
			`"[::1]:7003" is left over as an argument: --ui takes its address after "=", as in --ui=[::1]:7003`},
		{[]string{"matrix", "--ui", "127.0.0.1:7004", "--", "node", "client.js"},
			`"127.0.0.1:7004" is left over as an argument: --ui takes its address after "=", as in --ui=127.0.0.1:7004`},
		// --ui=127.0.0.1:0 is its bare default too (pflag keeps no difference): the words hold for it.
		{[]string{"proxy", "--upstream", "http://127.0.0.1:1/mcp", "--ui=127.0.0.1:0", "127.0.0.1:0"},
			`"127.0.0.1:0" is left over as an argument: --ui takes its address after "=", as in --ui=127.0.0.1:0`},
		// Not an address, --ui with another address, or no --ui: the command's own words, as before.
		{[]string{"proxy", "--upstream", "http://127.0.0.1:1/mcp", "--ui", "extra"}, `unexpected arguments ["extra"] (a server command needs --stdio)`},
		{[]string{"proxy", "--upstream", "http://127.0.0.1:1/mcp", "--ui=127.0.0.1:9", "127.0.0.1:0"}, `unexpected arguments ["127.0.0.1:0"] (a server command needs --stdio)`},
		{[]string{"serve", "127.0.0.1:0"}, `unknown command "127.0.0.1:0" for "mcpdiag serve"`},
		{[]string{"matrix", "127.0.0.1:0"}, `unexpected argument "127.0.0.1:0": put the client's command after --, as in mcpdiag matrix -- node my-client.js`},
	} {
		var out, errb bytes.Buffer
		code := run(tc.args, strings.NewReader(""), &out, &errb)
		if want := "mcpdiag: " + tc.want + "\n"; code != 2 || errb.String() != want || out.Len() != 0 {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2, nothing on stdout and %q", tc.args, code, out.String(), errb.String(), want)
		}
	}
}
