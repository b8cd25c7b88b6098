package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/internal/testwait"
)

// TestMatrixFromRecordsOfA2025Session (issue 10, defect 8): a real
// 2025-11-25 session — mcpdiag call --protocol 2025-11-25 through mcpdiag
// proxy in front of mcpdiag serve — judged with --from-records passes
// spec.protocol-header: initialize (POST 1) carries no MCP-Protocol-Version,
// as the spec says, and every request after it does.
func TestMatrixFromRecordsOfA2025Session(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	su, _ := startServe(t, serveOptions{})
	rec := filepath.Join(dir, "session.jsonl")
	px := runHTTPProxyForTest(t, proxyOptions{upstream: su, recordFile: rec, recordBodies: "all"})
	var out, errb bytes.Buffer
	if code := run([]string{"call", px.base + "/mcp", "echo", "--args", `{"text":"hi"}`, "--protocol", "2025-11-25"}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("call: exit %d\n%s%s", code, out.String(), errb.String())
	}
	px.stop()

	out.Reset()
	errb.Reset()
	code := run([]string{"matrix", "--from-records", rec, "--json"}, nil, &out, &errb)
	type passiveTrace struct {
		Trace    string `json:"trace"`
		Verdict  string `json:"verdict"`
		Requests []struct {
			Method   string `json:"method"`
			Protocol string `json:"protocolHeader"`
		} `json:"requests"`
		Checks []struct {
			Rule     string `json:"rule"`
			Verdict  string `json:"verdict"`
			Evidence string `json:"evidence"`
		} `json:"checks"`
	}
	var traces []passiveTrace
	for _, line := range bytes.Split(bytes.TrimSpace(out.Bytes()), []byte("\n")) {
		var one passiveTrace
		if err := json.Unmarshal(line, &one); err != nil {
			t.Fatalf("--json line %q: %v", line, err)
		}
		traces = append(traces, one)
	}
	if code != 0 {
		t.Errorf("matrix --from-records: exit %d, want 0\n%s%s", code, out.String(), errb.String())
	}
	if len(traces) != 1 {
		t.Fatalf("%d traces, want the one session\n%s", len(traces), out.String())
	}
	tr := traces[0]
	if len(tr.Requests) != 4 || tr.Requests[0].Method != "initialize" || tr.Requests[0].Protocol != "" || tr.Requests[3].Protocol != "2025-11-25" {
		t.Errorf("the session's requests: %+v", tr.Requests)
	}
	for _, ch := range tr.Checks {
		if ch.Verdict == "fail" {
			t.Errorf("%s fails: %s", ch.Rule, ch.Evidence)
		}
		if ch.Rule == "spec.protocol-header" && ch.Verdict != "pass" {
			t.Errorf("spec.protocol-header is %s (%s), want pass", ch.Verdict, ch.Evidence)
		}
	}
}

// TestMatrixFromRecordsOfServeLogClients: serve's log of three separate
// `mcpdiag call` runs of the same call on its plain /mcp endpoint (each a
// new client, on 2026-07-28 without a session, and on 2025-11-25 with one
// session each), judged with matrix --from-records: each run is a trace of
// its own (by session, else by connection, within the endpoint), and
// every verdict passes. Before, serve's lines were one trace per endpoint
// whatever the client: three runs of one call read as one client calling
// echo three times after complete answers (loop.identical-calls), and
// their reused ids as re-sent requests.
func TestMatrixFromRecordsOfServeLogClients(t *testing.T) {
	t.Parallel()
	mcp, _ := startServe(t, serveOptions{seed: 1})
	base := strings.TrimSuffix(mcp, "/mcp")
	bin := testBinary(t)
	for _, era := range []string{"2026-07-28", "2025-11-25"} {
		for range 3 {
			// Separate processes, as separate clients are (in one
			// process, runs may share a keep-alive connection).
			if out, err := exec.Command(bin, "call", mcp, "echo", "--args", `{"text":"hi"}`, "--protocol", era).CombinedOutput(); err != nil {
				t.Fatalf("call: %v\n%s", err, out)
			}
		}
	}
	resp, err := http.Get(base + "/admin/log")
	if err != nil {
		t.Fatal(err)
	}
	log, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "serve.jsonl")
	if err := os.WriteFile(path, log, 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := run([]string{"matrix", "--from-records", path}, nil, &out, &errb)
	if code != 0 || strings.Contains(out.String(), "FAIL") {
		t.Errorf("exit %d:\n%s%s", code, out.String(), errb.String())
	}
}

// TestMatrixFromRecordsOfAnOAuthCall: `mcpdiag call --record` through an
// OAuth step-up (auth.step_up) writes the authorization chain's exchanges
// (metadata GETs, the registration and token POSTs to the authorization
// server) beside the MCP ones; matrix --from-records judges the MCP
// requests only, and passes. Before, the registration and token POSTs were
// judged as MCP POSTs: spec.accept failed on them ("POST 2 (not JSON-RPC):
// Accept \"application/json\"").
func TestMatrixFromRecordsOfAnOAuthCall(t *testing.T) {
	t.Parallel()
	mcp, _ := startServe(t, serveOptions{seed: 1})
	base := strings.TrimSuffix(mcp, "/mcp")
	rec := filepath.Join(t.TempDir(), "call.jsonl")
	var out, errb bytes.Buffer
	if code := run([]string{"call", base + "/s/auth.step_up/mcp", "delete_item", "--args", `{"id":"item-1"}`, "--record", rec}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("call: exit %d\n%s%s", code, out.String(), errb.String())
	}
	out.Reset()
	errb.Reset()
	code := run([]string{"matrix", "--from-records", rec}, nil, &out, &errb)
	if code != 0 || strings.Contains(out.String(), "FAIL") || !strings.Contains(out.String(), "4 requests judged") {
		t.Errorf("exit %d:\n%s%s", code, out.String(), errb.String())
	}
}

// TestMatrixFromRecordsOfAProbeRun: `mcpdiag probe --record` writes its
// probes, requests that break the client rules on purpose (an Accept
// without text/event-stream, no MCP-Protocol-Version), beside the listing;
// matrix --from-records leaves the probes out and says so, and passes.
// Before, it failed mcpdiag's own probes on spec.accept and
// spec.protocol-header as a client's faults.
func TestMatrixFromRecordsOfAProbeRun(t *testing.T) {
	t.Parallel()
	mcp, _ := startServe(t, serveOptions{seed: 1})
	rec := filepath.Join(t.TempDir(), "probe.jsonl")
	var out, errb bytes.Buffer
	run([]string{"probe", mcp, "--record", rec}, strings.NewReader(""), &out, &errb)
	if st, err := os.Stat(rec); err != nil || st.Size() == 0 {
		t.Fatalf("probe wrote no records: %v\n%s%s", err, out.String(), errb.String())
	}
	out.Reset()
	errb.Reset()
	code := run([]string{"matrix", "--from-records", rec}, nil, &out, &errb)
	if code != 0 || strings.Contains(out.String(), "FAIL") || !strings.Contains(out.String(), "mcpdiag probe's probes") {
		t.Errorf("exit %d:\n%s%s", code, out.String(), errb.String())
	}
}

// TestMatrixFromRecordsOfAServeLogOfAProbeRun: the server's own log of a
// probe run (`mcpdiag serve --log`, GET /admin/log) marks each probe's
// line with its probe member too (the Mcpdiag-Probe header); matrix
// --from-records leaves those out as it does the probe's own records, and
// passes. Before (outsider22), serve's lines were judged as fault-server
// lines before the probe check, and the probe run failed spec.accept,
// spec.protocol-header, spec.method-headers and safety.retry-bound as a
// client's faults ("POST 23 (tools/list, id 23): Accept \"application/json\"").
func TestMatrixFromRecordsOfAServeLogOfAProbeRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	log, rec := filepath.Join(dir, "serve.jsonl"), filepath.Join(dir, "probe.jsonl")
	mcp, _ := startServe(t, serveOptions{seed: 1, logFile: log})
	var out, errb bytes.Buffer
	run([]string{"probe", mcp, "--record", rec}, strings.NewReader(""), &out, &errb)
	b, _ := os.ReadFile(rec)
	sent := strings.Count(string(b), `"probe":{`)
	if sent == 0 {
		t.Fatalf("probe recorded no probe:\n%s%s", out.String(), errb.String())
	}
	var probed int
	testwait.Until(t, "serve's log lines of every probe", func() bool {
		b, _ := os.ReadFile(log)
		probed = strings.Count(string(b), `"probe":{`)
		return probed >= sent
	})
	out.Reset()
	errb.Reset()
	code := run([]string{"matrix", "--from-records", log}, nil, &out, &errb)
	if code != 0 || strings.Contains(out.String(), "FAIL") || !strings.Contains(out.String(), "mcpdiag probe's probes") {
		t.Errorf("exit %d (%d probe lines in the log):\n%s%s", code, probed, out.String(), errb.String())
	}
}

// TestMatrixNoExchangeWords: a client command that exits without a request
// (sh -c true) runs over HTTP, yet the HTTP-only rules said "not applicable
// on stdio". Their words say what happened: no exchange was recorded.
func TestMatrixNoExchangeWords(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	code := run([]string{"matrix", "--json", "--scenarios", "baseline", "--protocol", "2026-07-28", "--", "sh", "-c", "true"}, nil, &out, &errb)
	if code != 1 {
		t.Fatalf("exit %d, want 1 (client.ran fails)\n%s%s", code, out.String(), errb.String())
	}
	var row struct {
		Checks []struct {
			Rule     string `json:"rule"`
			Verdict  string `json:"verdict"`
			Evidence string `json:"evidence"`
		} `json:"checks"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(out.Bytes()), &row); err != nil {
		t.Fatalf("--json: %v\n%s", err, out.String())
	}
	want := map[string]bool{"spec.accept": true, "spec.protocol-header": true, "spec.method-headers": true}
	const words = "not applicable: no exchange was recorded (no request reached the server, so there are no request headers to check)"
	for _, c := range row.Checks {
		if strings.Contains(c.Evidence, "stdio") {
			t.Errorf("%s (%s): %q names stdio for an HTTP run", c.Rule, c.Verdict, c.Evidence)
		}
		if want[c.Rule] {
			delete(want, c.Rule)
			if c.Verdict != "n/a" || c.Evidence != words {
				t.Errorf("%s: %s %q, want n/a %q", c.Rule, c.Verdict, c.Evidence, words)
			}
		}
	}
	if len(want) != 0 {
		t.Errorf("rules missing from the checks: %v", want)
	}
}
