package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// providerKey makes a key of a provider's shape: prefix and n bytes drawn
// from alphabet, with a digit, an upper-case and a lower-case letter where
// the alphabet has them (what the shapes of record/redact_provider.go ask).
func providerKey(rng *rand.Rand, prefix, alphabet string, n int) string {
	b := []byte(prefix)
	for range n {
		b = append(b, alphabet[rng.IntN(len(alphabet))])
	}
	for i, must := range []string{"0123456789", "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz"} {
		if strings.ContainsAny(alphabet, must) && !strings.ContainsAny(string(b[len(prefix):]), must) {
			for _, c := range must {
				if strings.ContainsRune(alphabet, c) {
					b[len(prefix)+i] = byte(c)
					break
				}
			}
		}
	}
	return string(b)
}

const (
	alnum     = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	base64url = alnum + "_-"
)

// providerSecrets returns one key of every provider shape, each random.
func providerSecrets(seed uint64) map[string]string {
	rng := rand.New(rand.NewPCG(seed, 10))
	return map[string]string{
		"github-classic": providerKey(rng, "ghp_", alnum, 36),
		"github-server":  providerKey(rng, "ghs_", alnum, 36),
		"github-fine":    providerKey(rng, "github_pat_", alnum+"_", 82),
		"openai":         providerKey(rng, "sk-", alnum, 48),
		"openai-project": providerKey(rng, "sk-proj-", base64url, 120),
		"anthropic":      providerKey(rng, "sk-ant-api03-", base64url, 95),
		"aws":            providerKey(rng, "AKIA", "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16),
		"aws-temporary":  providerKey(rng, "ASIA", "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16),
		"slack":          "xoxb-" + providerKey(rng, "", "0123456789", 12) + "-" + providerKey(rng, "", alnum, 24),
		"gitlab":         providerKey(rng, "glpat-", base64url, 20),
		"google":         providerKey(rng, "AIza", base64url, 35),
	}
}

// TestProviderKeysInNoOutput (redact10): provider keys with no name beside
// them (GitHub, OpenAI, Anthropic, AWS, Slack, GitLab, Google) in a tool's
// arguments and the echoed result, in a JSON-RPC error's message and data,
// in a request header with an ordinary name, in a URL path segment, and
// in a lower-case header dump ("authorization: token …", as HTTP/2 prints
// it), through the real proxy (bodies recorded) to the real serve and
// through `call`: no output holds any of them.
func TestProviderKeysInNoOutput(t *testing.T) {
	dir := t.TempDir()
	secrets := providerSecrets(1)
	secrets["dump-token"] = canary("dumptok") + "9f8e7d6c"
	var lines []string
	for _, k := range sortedKeys(secrets) {
		if k != "dump-token" {
			lines = append(lines, "the "+k+" key is "+secrets[k]+".")
		}
	}
	lines = append(lines, ":method: POST", "authorization: token "+secrets["dump-token"], "accept: */*")
	text := strings.Join(lines, "\n")

	su, _ := startServe(t, serveOptions{})
	sbase := strings.TrimSuffix(su, "/mcp")
	rl := startRelay(t, strings.TrimPrefix(sbase, "http://"))
	proxyRec := filepath.Join(dir, "proxy.jsonl")
	px := runHTTPProxyForTest(t, proxyOptions{upstream: "http://" + rl.ln.Addr().String() + "/mcp", recordFile: proxyRec, recordBodies: "all"})
	out := outputs{}
	callRec := filepath.Join(dir, "call.jsonl")

	// 1. The keys as a tool's argument, echoed back as its result, and one
	// in a header whose name is no credential name.
	args, _ := json.Marshal(map[string]any{"text": text})
	base := []string{"call", px.base + "/mcp", "echo", "--args", string(args), "--protocol", "2026-07-28",
		"--header", "X-Request-Note: " + secrets["github-server"]}
	out.run(t, "call report", 0, append(base, "--record", callRec)...)
	out.run(t, "call --json", 0, append(base, "--json")...)

	// 2. A JSON-RPC error quoting keys in its message and data.
	params, _ := json.Marshal(map[string]any{
		"code":    -32602,
		"message": "upstream refused key " + secrets["openai"] + " (revoked)",
		"data":    map[string]any{"detail": "tried " + secrets["aws"] + " and " + secrets["slack"], "list": []any{secrets["google"]}},
	})
	errURL := px.base + "/s/errors.jsonrpc_error/mcp?params=" + url.QueryEscape(string(params))
	out.run(t, "call report (error)", 3, "call", errURL, "echo", "--args", `{"text":"x"}`, "--protocol", "2026-07-28", "--retries", "0", "--record", callRec)

	// 3. A key as a URL path segment (a server that puts its key in the
	// path: /mcp/s/<KEY>/sse); serve answers 404, which is recorded.
	var o4, e4 bytes.Buffer
	code := run([]string{"call", px.base + "/s/" + secrets["gitlab"] + "/mcp", "echo", "--args", `{"text":"x"}`, "--protocol", "2026-07-28", "--retries", "0", "--record", callRec}, nil, &o4, &e4)
	if code == 0 || code == 2 {
		t.Fatalf("call of the key path: exit %d\n%s%s", code, o4.String(), e4.String())
	}
	out["call report (path)"], out["call stderr (path)"] = o4.Bytes(), e4.Bytes()

	px.stop()
	out["proxy stderr"] = []byte(px.stderr.String())
	out.file(t, "proxy --record", proxyRec)
	out.file(t, "call --record", callRec)

	out.reports(t, dir, proxyRec, callRec)

	for _, k := range sortedKeys(secrets) {
		if !rl.saw(secrets[k]) && !rl.saw(url.PathEscape(secrets[k])) {
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

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// TestReportTrimsUnmarkedCuts (redact10): a record file written before the
// encoder marked its cuts (cutRedacted), or by another producer, whose
// truncated body or error data ends inside a credential: no output of
// report (text, --json, --html, --har) nor matrix --from-records keeps
// the fragment; a marked cut is shown as written.
func TestReportTrimsUnmarkedCuts(t *testing.T) {
	dir := t.TempDir()
	frags := map[string]string{"body": "zqCutBodyPw7731", "request": "zqCutReqTok8842", "errordata": "zqCutErrData9953"}
	lines := []string{
		`{"v":2,"kind":"exchange","id":"01J0000000000000000000000A","time":"2026-12-06T10:00:00Z","method":"tools/call","outcome":"HTTP_ERROR","layer":"http","status":500,` +
			`"responseBody":{"text":"db error: postgres://admin:` + frags["body"] + `","truncated":true},` +
			`"requestBody":{"text":"{\"params\": {\"note\": \"Bearer ` + frags["request"] + `","truncated":true}}`,
		`{"v":2,"kind":"exchange","id":"01J0000000000000000000000B","time":"2026-12-06T10:00:01Z","method":"tools/call","outcome":"JSONRPC_ERROR","layer":"jsonrpc","status":200,` +
			`"errorMessage":"failed","errorData":"upstream https://svc:` + frags["errordata"] + `","errorDataTruncated":true,` +
			`"responseBody":{"text":"kept as written: zqMarkedKept","truncated":true,"cutRedacted":true}}`,
	}
	in := filepath.Join(dir, "old.jsonl")
	if err := os.WriteFile(in, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := outputs{}
	page, har := filepath.Join(dir, "r.html"), filepath.Join(dir, "r.har")
	for _, args := range [][]string{{"report", in}, {"report", "--json", in}, {"report", "--html", page, "--har", har, in}, {"matrix", "--from-records", in, "--json"}} {
		var o, e bytes.Buffer
		code := run(args, nil, &o, &e)
		if code == 2 {
			t.Fatalf("%v: exit 2\n%s", args, e.String())
		}
		out[fmt.Sprint(args)], out[fmt.Sprint(args)+" stderr"] = o.Bytes(), e.Bytes()
	}
	out.file(t, "report --html", page)
	out.file(t, "report --har", har)
	for _, name := range sortedKeys(out) {
		for _, kind := range sortedKeys(frags) {
			if bytes.Contains(out[name], []byte(frags[kind])) {
				t.Errorf("%s keeps the %s fragment %s", name, kind, frags[kind])
			}
		}
	}
	if !bytes.Contains(out["report --har"], []byte("zqMarkedKept")) {
		t.Error("report --har lost the text of a marked cut")
	}
}

// TestAttack8LeftoversInNoOutput (redact10): what attack8 left recorded:
// a flag's value in text ("--password VALUE"), a single credential word's
// one-word value ("Token: VALUE"), the JSON member names pass and pw, a
// pair array (["X-Api-Key", "v"]) and HAR-style pairs in text a server
// quotes in an error, through the real proxy (bodies recorded) to the real
// serve and through `call`: no output holds any of them.
func TestAttack8LeftoversInNoOutput(t *testing.T) {
	dir := t.TempDir()
	secrets := map[string]string{
		"flag": canary("flag") + "1", "token-word": canary("tokword") + "2", "pass": canary("pass"), "pw": canary("pw"),
		"pair-array": canary("pairarr"), "har-text": canary("hartext"), "err-flag": canary("errflag") + "3",
		"err-pair-array": canary("errpairarr"),
	}
	text := strings.Join([]string{
		"ran: deploy --password " + secrets["flag"] + " --verbose",
		"Token: " + secrets["token-word"],
		`cut JSON: {"name": "X-Api-Key", "value": "` + secrets["har-text"] + `"}, {"pass": "`,
	}, "\n")
	su, _ := startServe(t, serveOptions{})
	sbase := strings.TrimSuffix(su, "/mcp")
	rl := startRelay(t, strings.TrimPrefix(sbase, "http://"))
	proxyRec := filepath.Join(dir, "proxy.jsonl")
	px := runHTTPProxyForTest(t, proxyOptions{upstream: "http://" + rl.ln.Addr().String() + "/mcp", recordFile: proxyRec, recordBodies: "all"})
	out := outputs{}
	callRec := filepath.Join(dir, "call.jsonl")
	args, _ := json.Marshal(map[string]any{"text": text, "pass": secrets["pass"], "pw": secrets["pw"],
		"headers": [][]string{{"X-Api-Key", secrets["pair-array"]}}})
	base := []string{"call", px.base + "/mcp", "echo", "--args", string(args), "--protocol", "2026-07-28"}
	out.run(t, "call report", 0, append(base, "--record", callRec)...)
	out.run(t, "call --json", 0, append(base, "--json")...)
	params, _ := json.Marshal(map[string]any{
		"code":    -32602,
		"message": "child exited: tool --api-key " + secrets["err-flag"] + " failed",
		"data":    map[string]any{"request": `[["X-Api-Key", "` + secrets["err-pair-array"] + `"]`},
	})
	errURL := px.base + "/s/errors.jsonrpc_error/mcp?params=" + url.QueryEscape(string(params))
	out.run(t, "call report (error)", 3, "call", errURL, "echo", "--args", `{"text":"x"}`, "--protocol", "2026-07-28", "--retries", "0", "--record", callRec)
	px.stop()
	out["proxy stderr"] = []byte(px.stderr.String())
	out.file(t, "proxy --record", proxyRec)
	out.file(t, "call --record", callRec)
	out.reports(t, dir, proxyRec, callRec)
	for _, k := range sortedKeys(secrets) {
		if !rl.saw(secrets[k]) {
			t.Errorf("the relay never saw %s: the test proves nothing for it", k)
		}
	}
	out.leaks(t, secrets)
}
