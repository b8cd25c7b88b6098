package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNestedEscapedNumericSecretsInNoOutput (redact12): credentials the
// text patterns missed before redact12, in every place they travel: an
// object nested two deep under a credential name in a log line, a form
// value and a field line; a credential name with escapes (\u0061 in JSON
// text that cannot be parsed, %5F and %2D in free text); a numeric PIN
// and password, in JSON and in text. They go in a tool's arguments (the
// request body) and its echoed result through the real HTTP proxy
// (bodies recorded) to the real serve, in a JSON-RPC error's message and
// data, through `call`, in a request line through the stdio proxy; then
// the readers read the record files: report (text, --json, --html, --har)
// and matrix --from-records. No output holds any of them. redact13 adds
// a name or separator escaped in text (\u, \x, %3D, %3A, HTML character
// references).
func TestNestedEscapedNumericSecretsInNoOutput(t *testing.T) {
	dir := t.TempDir()
	secrets := map[string]string{
		"nested-form": canary("nform"), "nested-field": canary("nfield"), "nested-json": canary("njson"),
		"nested-array": canary("narray"), "escaped-u": canary("escu"), "escaped-pct5f": canary("esc5f"),
		"escaped-pct2d": canary("esc2d"), "err-nested": canary("errnest"), "err-escaped": canary("erresc"),
		"pin-text": "6120349875", "pin-json": "4817263950", "pass-json": "5550123456", "err-pin": "7304918265",
		// redact13: an escaped name or separator in text.
		"esc-u-text": canary("escut"), "esc-x": canary("escx"), "esc-pct3d": canary("esc3d"), "esc-pct3a": canary("esc3a"),
		"esc-html-num": canary("eschtml"), "esc-html-quot": canary("escquot"), "err-esc-sep": canary("erresep"),
	}
	text := strings.Join([]string{
		// redact13's first: the unfinished quote below runs to the end of the text.
		`log p\u0061ssword: ` + secrets["esc-u-text"] + ` end`,
		`p\x61ssword=` + secrets["esc-x"],
		`GET /cb?next=%2Flogin%3Fpassword%3D` + secrets["esc-pct3d"] + `&x=1`,
		`api%5Fkey%3A+` + secrets["esc-pct3a"],
		`<p>p&#97;ssword=` + secrets["esc-html-num"] + `</p>`,
		`<pre>{&quot;client_secret&quot;:&quot;` + secrets["esc-html-quot"] + `&quot;}</pre>`,
		`login failed for password={"a":{"b":"` + secrets["nested-form"] + `"}}`,
		`secret: {"x": {"y": "` + secrets["nested-field"] + `"}}`,
		`bad input: {"password": {"a": {"b": "` + secrets["nested-json"] + `"}}, "n": 1}`,
		`bad input: {"token": [{"v": ["` + secrets["nested-array"] + `"]}]}`,
		`cut {"p\u0061ssword": "` + secrets["escaped-u"],
		`error: client%5Fsecret=` + secrets["escaped-pct5f"] + `&grant_type=x`,
		`api%2Dkey: ` + secrets["escaped-pct2d"],
		`pin=` + secrets["pin-text"],
	}, "\n")
	args, _ := json.Marshal(map[string]any{
		"text":  text,
		"pin":   json.Number(secrets["pin-json"]),
		"login": map[string]any{"user": "bob", "pass": json.Number(secrets["pass-json"])},
		"stats": map[string]any{"pass": 5, "fail": 0, "max_tokens": 100},
	})

	su, _ := startServe(t, serveOptions{})
	sbase := strings.TrimSuffix(su, "/mcp")
	rl := startRelay(t, strings.TrimPrefix(sbase, "http://"))
	proxyRec := filepath.Join(dir, "proxy.jsonl")
	px := runHTTPProxyForTest(t, proxyOptions{upstream: "http://" + rl.ln.Addr().String() + "/mcp", recordFile: proxyRec, recordBodies: "all"})
	out := outputs{}

	// 1. The shapes as a tool's arguments, echoed back as its result.
	callRec := filepath.Join(dir, "call.jsonl")
	base := []string{"call", px.base + "/mcp", "echo", "--args", string(args), "--protocol", "2026-07-28"}
	out.run(t, "call report", 0, append(base, "--record", callRec)...)
	out.run(t, "call --json", 0, append(base, "--json")...)

	// 2. A JSON-RPC error whose message and data hold them.
	params, _ := json.Marshal(map[string]any{
		"code":    -32602,
		"message": `invalid params: credentials={"db": {"primary": "` + secrets["err-nested"] + `"}}`,
		"data":    map[string]any{"detail": `upstream said {"\u0074oken": "` + secrets["err-escaped"] + `", "pin": ` + secrets["err-pin"] + ` <a href="/login?next=%2Fcb%3Ftoken%3D` + secrets["err-esc-sep"] + `">`},
	})
	errURL := px.base + "/s/errors.jsonrpc_error/mcp?params=" + url.QueryEscape(string(params))
	out.run(t, "call report (error)", 3, "call", errURL, "echo", "--args", `{"text":"x"}`, "--protocol", "2026-07-28", "--retries", "0", "--record", callRec)

	px.stop()
	out["proxy stderr"] = []byte(px.stderr.String())
	out.file(t, "proxy --record", proxyRec)
	out.file(t, "call --record", callRec)

	// 3. The stdio proxy: the shapes in a request line's arguments.
	t.Setenv(canaryEnv, "stdio")
	stdioRec := filepath.Join(dir, "stdio.jsonl")
	stdin := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":` + string(args) + `}}` + "\n"
	var stdioOut, stdioErr bytes.Buffer
	if code := run([]string{"proxy", "--stdio", "--record", stdioRec, "--record-bodies", "all", "--", os.Args[0], "-test.run=^$"}, strings.NewReader(stdin), &stdioOut, &stdioErr); code != 0 {
		t.Fatalf("stdio proxy: exit %d\n%s", code, stdioErr.String())
	}
	out.file(t, "stdio proxy --record", stdioRec)
	out["stdio proxy stderr"] = stdioErr.Bytes()

	// 4. The readers, over every record file.
	out.reports(t, dir, proxyRec, callRec, stdioRec)
	var mo, me bytes.Buffer
	if code := run([]string{"matrix", "--from-records", proxyRec, "--json"}, nil, &mo, &me); code == 2 {
		t.Fatalf("matrix --from-records: exit 2\n%s", me.String())
	}
	out["matrix --from-records"], out["matrix --from-records stderr"] = mo.Bytes(), me.Bytes()

	for k, v := range secrets {
		if !rl.saw(v) {
			t.Errorf("the relay never saw %s: the test proves nothing for it", k)
		}
	}
	if !bytes.Contains(out["stdio proxy --record"], []byte(`[redacted:len=`)) {
		t.Error("the stdio proxy's record holds no mask: were the arguments recorded at all?")
	}
	for _, name := range []string{"proxy --record", "stdio proxy --record"} {
		// The request body, recorded as a JSON string: the count beside
		// "fail" is kept, the numeric password beside "user" is not.
		if !bytes.Contains(out[name], []byte(`\"pass\":5`)) {
			t.Errorf("%s lost the count {\"pass\": 5, \"fail\": 0}", name)
		}
	}
	out.leaks(t, secrets)
	if t.Failed() {
		fmt.Fprintln(os.Stderr, "outputs:", strings.Join(sortedKeys(out), ", "))
	}
}
