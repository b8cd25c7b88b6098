package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHostileRecordFilesEscaped (truth16): the record files the CLI writes
// (call --record, probe --record, proxy --record with bodies, report
// --har) held a hostile server's bidi override, C1 CSI and DEL raw:
// encoding/json escapes C0 and U+2028/9 only, so cat, less or grep of the
// file showed the server's text reordered or obeyed. Every byte of each
// file is now visible (internal/visible's set as \u escapes), and the
// records still decode to exactly what the server sent: the tool's name,
// the JSON-RPC error's message, the body's text.
func TestHostileRecordFilesEscaped(t *testing.T) {
	u := hostileServer(t)
	dir := t.TempDir()
	rec, precs, prec := filepath.Join(dir, "calls.jsonl"), filepath.Join(dir, "probe.jsonl"), filepath.Join(dir, "proxy.jsonl")
	hostileRun(t, 0, "call", u, "echo", "--record", rec)
	hostileRun(t, 3, "call", u, "fail", "--record", rec)
	hostileRun(t, 1, "call", u, hostile("tool"), "--record", rec)
	hostileRun(t, 1, "probe", u, "--record", precs)
	p := runHTTPProxyForTest(t, proxyOptions{upstream: u, recordFile: prec, recordBodies: "all"})
	hostileRun(t, 0, "call", p.base+"/mcp", "echo")
	hostileRun(t, 3, "call", p.base+"/mcp", "fail", "--retries", "0")
	hostileRun(t, 1, "call", p.base+"/mcp", hostile("tool"))
	p.stop()
	har := filepath.Join(dir, "calls.har")
	hostileRun(t, 0, "report", rec, prec, "--har", har)

	for _, f := range []string{rec, precs, prec, har} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		checkVisibleOutput(t, filepath.Base(f), b)
	}
	// The HAR decodes to the bodies as the server sent them.
	b, _ := os.ReadFile(har)
	var v struct {
		Log struct {
			Entries []struct {
				Response struct {
					Content struct{ Text string } `json:"content"`
				} `json:"response"`
			} `json:"entries"`
		} `json:"log"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Errorf("the HAR does not decode: %v", err)
	}
	found := false
	for _, e := range v.Log.Entries {
		found = found || strings.Contains(e.Response.Content.Text, mustJSON(t, hostile("text")))
	}
	if !found {
		t.Errorf("no HAR entry carries echo's body as sent: %.2000s", b)
	}
	// The same values: what the server sent, decoded from the files.
	for _, f := range []string{rec, prec} {
		raw, _ := os.ReadFile(f)
		var tool, rpc, body bool
		for _, r := range decodeRecords(t, raw) {
			tool = tool || r.Tool == hostile("tool")
			rpc = rpc || r.ErrorMessage == hostile("rpc")
			if r.ResponseBody != nil && strings.Contains(r.ResponseBody.Text, mustJSON(t, hostile("text"))) {
				body = true
			}
		}
		if !tool || !rpc || f == prec && !body {
			t.Errorf("%s: the hostile tool's name %v, the error message %v, echo's body %v: want each decoded as sent", filepath.Base(f), tool, rpc, body)
		}
	}
	// A record line escapes exactly the characters visible shows: the
	// bidi override, the C1 CSI and DEL of echo's text are \u escapes.
	if raw, _ := os.ReadFile(rec); !bytes.Contains(raw, []byte(`PASS\u202eLIAF\u2066\u009b\u007f>`)) {
		t.Errorf("%s does not escape the bidi override, C1 and DEL as \\u: %.3000s", rec, raw)
	}
}

// mustJSON is s as a JSON string's contents, as a body holds it.
func mustJSON(t *testing.T, s string) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b[1 : len(b)-1])
}
