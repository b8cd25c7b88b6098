package record

import (
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/wire"
)

// argsHashGolden are argument objects and their hashes as recorded before
// the hash got faster (computed at 2097975): a record's argsHash is
// matched across records and files, so no change to how it is computed may
// change one. Each is hashed as ArgsHash does and as SetMessage does (the
// arguments known valid, and with _meta skipped for a method that is not
// tools/call).
var argsHashGolden = []struct {
	method, tool, args string
	hash               string
}{
	{"tools/call", "echo", `{"text":"hello"}`, "sha256:b157ec9b98a5a3f47b0d4aea2eba0c410a88982b8186294b291214c79b7df787"},
	{"tools/call", "echo", `{"b":2,"a":1}`, "sha256:aed0df0f6ce48a80a79b01d0801265c254ffbbffbfa384c21d8295033afcf53b"},
	{"tools/call", "echo", "{ \"a\" : 1 ,\n\t\"b\" : [ 1 , 2 ] }", "sha256:726959b6e9489d971f0d7483dccdc43cae36da9b4a50f4d4475d314460a0107a"},
	{"tools/call", "echo", `{"x":{"q":[{"b":1,"a":2}],"p":null},"a":[true,false,null]}`, "sha256:216890f3a3a1cae0898f85528d6bd5f57a660ef234830aff928f466d18179529"},
	{"tools/call", "echo", `{"s":"\u0061\/b","t":"tab\there","q":"say \"hi\"","bs":"a\\b"}`, "sha256:b19b1bfebe3391d4596e461e6e18e560f56da579990928787ad27fcc4a673c16"},
	{"tools/call", "echo", `{"u":"h\u00e9llo w\u00f6rld","raw":"héllo wörld ☃ 😀","ls":"a\u2028b\u2029c","lsraw":"a` + "\u2028" + `b"}`, "sha256:6a57f43bdf44ef162ef7a44569297d634e4a93ea35623a6c0c3ffe5515f85df9"},
	{"tools/call", "echo", `{"ctl":"\u0001\u001f","html":"<a href=\"x\">&amp;</a>","nul":"\u0000"}`, "sha256:03e8532d55a18b171caaa3dd679173d781f64fe47746c7c4048402db148ba5cd"},
	{"tools/call", "echo", `{"n":1,"m":1.0,"e":1e3,"E":-2.5E-7,"z":0,"neg":-0,"big":123456789012345678901234567890}`, "sha256:1d045a29c564eb7ba2b28590bab0f58c10d575b7b8ac76b7580d45944488226f"},
	{"tools/call", "echo", `{"a":1,"a":2}`, "sha256:ee32ebd0453cd9706bb146f1cc59ebdf6dcb35fa0e93302ccbfc9872e7554435"},
	{"tools/call", "echo", `{"é":1,"e":2,"E":3,"\u00e9t\u00e9":4,"":5}`, "sha256:fd5eb3c7aeb82fb9517293bd7d12ce19cd0a490c4de0cbf9c2cf708f8d9c44b2"},
	{"tools/call", "echo", `[3,{"z":1,"y":[{"b":{"d":1,"c":2}}]},"s"]`, "sha256:09b062ebf0734a2a723de4b8cf0af3b90b4e14d21bd7844d44b980aaa5c27164"},
	{"tools/call", "echo", `"just a string"`, "sha256:c66c16a688f7d71b59cba8023b989046d2577d9e418b6522d77d93cc5f51ff50"},
	{"tools/call", "echo", `42`, "sha256:d51ead34a7d3ab70cb051e257ba3de92e4c009db61a113485d40fd73afafa7b6"},
	{"tools/call", "echo", ``, "sha256:c6ad992cf7810cfc1e8735217dcf85a1ef18d5462680960a599cc7b832937c03"},
	{"tools/call", "echo", `null`, "sha256:c6ad992cf7810cfc1e8735217dcf85a1ef18d5462680960a599cc7b832937c03"},
	{"tools/call", "echo", `{}`, "sha256:e8d1635019ab6ad3cf97073a49adf9af1f9003ae18aa8be5fe6e52f0d1936196"},
	{"tools/call", "echo", `{"query":"mcp error layers","text":"` + strings.Repeat("x", 900) + `"}`, "sha256:2c4ced14680d34cced2c03f100d0fe05b14e16ba95df689b3f1e0b4e00896aea"},
	{"tools/call", "echo", `{"text":"` + strings.Repeat("abcdefgh\\n", 100) + `"}`, "sha256:33dc3c16cb9066b8ce08820d6dbbc7c6e3b24aa0a7a89675f0d715cda29ee517"},
	{"tools/call", "echo", `{"text":"` + strings.Repeat("ascii then ", 20) + `ü` + strings.Repeat("y", 200) + `"}`, "sha256:8e8680b0eb114d078cc6dd9477804499b01d619f7f3f0881ff3ac959611579d0"},
	{"tools/call", "search", `{"_meta":{"progressToken":1},"q":"x"}`, "sha256:a94f0e51e358b0a44c410800f15a1bda881e3f6d5c3a90843b786047d8785381"},
	{"resources/read", "", `{"_meta":{"progressToken":1},"uri":"file:///a"}`, "sha256:86a13e37567c7a8cbc44782a2b12b2609b8aeb1f0657f98bdd3fa9a51fd81b11"},
	{"tools/call", "wéird \"tool\"", `{"a":"b"}`, "sha256:d48c6040ab31ae0367b74eeccfee19ffe81a0480e8f84bec39b2c26860598725"},
}

func TestArgsHashGolden(t *testing.T) {
	for _, g := range argsHashGolden {
		skipMeta := g.method != "tools/call"
		h := ArgsHash(g.method, g.tool, []byte(g.args))
		hv := argsHash(g.method, g.tool, []byte(g.args), false, g.args != "" && wire.Valid([]byte(g.args)))
		hm := argsHash(g.method, g.tool, []byte(g.args), skipMeta, g.args != "" && wire.Valid([]byte(g.args)))
		t.Logf("%s %q %q -> %s %s", g.method, g.tool, g.args[:min(len(g.args), 40)], h, hm)
		if h != hv {
			t.Errorf("%s: ArgsHash %s, with the arguments known valid %s", g.args, h, hv)
		}
		if hm != g.hash {
			t.Errorf("argsHash(%q, %q, %s) = %s, recorded before as %s", g.method, g.tool, g.args, hm, g.hash)
		}
	}
}
