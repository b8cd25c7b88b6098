package main

import (
	"bytes"
	"encoding/json"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
)

// TestTextShapedSecretsInNoOutput (attack8): credentials as careless
// servers and users write them in free text, with no JWT or Bearer shape
// and no registered secret: a YAML value in quotes, a .env line and a TOML
// line in quotes, a Python dict's repr (what a pydantic validation error
// echoes as input_value), a database URL with a password, a token as a
// URL's user name; and a name/value pair ({"name": "DB_PASSWORD", "value":
// …}). They travel in a tool's arguments and the echoed
// result, and in a JSON-RPC error message and its data, through the real
// proxy (bodies recorded) to the real serve, and through `call`; every
// output is then searched for each secret: the proxy's records and stderr,
// call's records, report and --json, and report's text, --json and --html
// over the record files.
func TestTextShapedSecretsInNoOutput(t *testing.T) {
	dir := t.TempDir()
	secrets := map[string]string{
		"yaml-quoted": canary("yamlq"), "yaml-single": canary("yamls"), "env-quoted": canary("envq"),
		"toml": canary("toml"), "toml-bare": canary("tomlbare"), "py-repr": canary("pyrepr"), "py-repr-dq": canary("pyreprdq"),
		"dsn-password": canary("dsn"), "url-user-token": canary("urluser"),
		"err-py-repr": canary("errpy"), "err-dsn": canary("errdsn"), "err-yaml": canary("erryaml"),
		"env-pair": canary("envpair"), "err-pair": canary("errpair"),
	}
	text := strings.Join([]string{
		"config:",
		`  password: "` + secrets["yaml-quoted"] + `"`,
		`  db_password: '` + secrets["yaml-single"] + `'`,
		`OPENAI_API_KEY="` + secrets["env-quoted"] + `"`,
		`client_secret = "` + secrets["toml"] + `"`,
		`api_token = ` + secrets["toml-bare"],
		`input_value={'username': 'bob', 'password': '` + secrets["py-repr"] + `', "api_key": "` + secrets["py-repr-dq"] + `"}`,
		"could not connect to postgres://admin:" + secrets["dsn-password"] + "@127.0.0.1:5432/app",
		"git clone https://" + secrets["url-user-token"] + "@127.0.0.1/org/repo.git",
	}, "\n")

	su, _ := startServe(t, serveOptions{})
	sbase := strings.TrimSuffix(su, "/mcp")
	rl := startRelay(t, strings.TrimPrefix(sbase, "http://"))
	proxyRec := filepath.Join(dir, "proxy.jsonl")
	px := runHTTPProxyForTest(t, proxyOptions{upstream: "http://" + rl.ln.Addr().String() + "/mcp", recordFile: proxyRec, recordBodies: "all"})
	out := outputs{}

	// 1. The text as a tool's argument, echoed back as its result.
	// And a name/value pair (a Kubernetes env entry) beside it.
	args, _ := json.Marshal(map[string]any{"text": text, "env": []any{map[string]any{"name": "DB_PASSWORD", "value": secrets["env-pair"]}}})
	callRec := filepath.Join(dir, "call.jsonl")
	base := []string{"call", px.base + "/mcp", "echo", "--args", string(args), "--protocol", "2026-07-28"}
	out.run(t, "call report", 0, append(base, "--record", callRec)...)
	out.run(t, "call --json", 0, append(base, "--json")...)

	// 2. A JSON-RPC error as a Python server and a careless one write it.
	params, _ := json.Marshal(map[string]any{
		"code": -32602,
		"message": "1 validation error for LoginArguments\nuser\n  Field required [type=missing, input_value={'name': 'bob', 'password': '" +
			secrets["err-py-repr"] + "'}, input_type=dict]",
		"data": map[string]any{"detail": "backend postgres://svc:" + secrets["err-dsn"] + "@127.0.0.1/db refused", "config": "token: \"" + secrets["err-yaml"] + "\"",
			"headers": []any{map[string]any{"value": secrets["err-pair"], "name": "X-Api-Key"}}},
	})
	errURL := px.base + "/s/errors.jsonrpc_error/mcp?params=" + url.QueryEscape(string(params))
	out.run(t, "call report (error)", 3, "call", errURL, "echo", "--args", `{"text":"x"}`, "--protocol", "2026-07-28", "--retries", "0", "--record", callRec)

	px.stop()
	out["proxy stderr"] = []byte(px.stderr.String())
	out.file(t, "proxy --record", proxyRec)
	out.file(t, "call --record", callRec)

	out.reports(t, dir, proxyRec, callRec)

	// The proof that each secret was sent: the relay between the proxy
	// and serve saw it (the echoed text and the error's query string).
	for k, v := range secrets {
		if !rl.saw(v) {
			t.Errorf("the relay never saw %s: the test proves nothing for it", k)
		}
	}
	for _, name := range []string{"proxy --record", "call --record", "report --html"} {
		if !bytes.Contains(out[name], []byte("[redacted:len=")) {
			t.Errorf("%s holds no mask: were the secrets recorded at all?", name)
		}
	}
	out.leaks(t, secrets)
}
