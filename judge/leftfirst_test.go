package judge_test

import (
	"testing"

	"github.com/mcpdiag/mcpdiag/judge"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/retry"
)

// The fault server's two lines for one client behaviour: a client that
// sends its tools/call and exits without reading the answer (matrix --
// python3 noread.py, baseline, 20 runs: 9 of the first, 11 of the second).
// Which one the server writes is the race between the client's close and
// the handler's answer: when the close is seen first the request is
// cancelled (2026-07-28) and the line says no response; otherwise the
// answer was written (to a socket nobody reads) and the line says 200.
const (
	leftFirstLine = `{"v":2,"kind":"exchange","id":"01M96F6EHF651FWSBXY97VYQXP","time":"2026-12-06T20:02:18.265558989Z","client":"noread@0","protocolVersion":"2026-07-28","scenario":"baseline","method":"tools/call","postCount":1,"httpStatuses":[0],"jsonrpc":{"id":1,"errorCode":null},"resultType":null,"outcome":"NETWORK_ERROR","retryOrigin":"none","layer":"transport","reason":"no HTTP response after the request was sent (the server may have processed it): the client disconnected before the response ended","tool":"echo","argsHash":"sha256:9703d8cbc472a4a39aa68e8f71acf06a949bef5ce398841cc2812347afbfbdf1","conn":"127.0.0.1:48006","httpMethod":"POST","url":"/s/baseline/mcp?run=baseline%232","timings":{"totalMs":21.572},"network":{"error":"the client disconnected before the response ended","phase":"before-response","requestSent":true},"requestHeaders":{"Accept":["application/json, text/event-stream"],"Content-Length":["300"],"Content-Type":["application/json"],"Mcp-Method":["tools/call"],"Mcp-Name":["echo"],"Mcp-Protocol-Version":["2026-07-28"]},"requestBytes":300,"flags":["DC","FI"],"fault":{"selection":"baseline","endpoint":"/s/baseline/mcp?run=baseline%232","seed":"1","fired":["baseline"],"decisions":[{"scenario":"baseline","layer":0,"matched":true,"n":1,"fired":true,"why":"n=1: always"}],"count":{"post":1,"method":1,"tool":1},"counters":{"posts":1,"methods":{"tools/call":1},"tools":{"echo":1}}},"params":{"meta":["io.modelcontextprotocol/clientCapabilities","io.modelcontextprotocol/clientInfo","io.modelcontextprotocol/protocolVersion"],"metaProtocolVersion":"2026-07-28","capabilities":"sha256:44136fa355b3678a"},"note":"client disconnected (DC) before the response; the request was cancelled (in 2026-07-28 a disconnect cancels the request); fault injected (FI): baseline (seed 1)"}`
	answeredLine  = `{"v":2,"kind":"exchange","id":"01M96F6MKW1YYCYSCQ1423JNPA","time":"2026-12-06T20:02:24.508013192Z","client":"noread@0","protocolVersion":"2026-07-28","scenario":"baseline","method":"tools/call","postCount":1,"httpStatuses":[200],"jsonrpc":{"id":1,"errorCode":null},"resultType":"complete","outcome":"TOOL_SUCCESS","retryOrigin":"none","layer":"application","reason":"the tool call completed","tool":"echo","argsHash":"sha256:9703d8cbc472a4a39aa68e8f71acf06a949bef5ce398841cc2812347afbfbdf1","conn":"127.0.0.1:48018","httpMethod":"POST","url":"/s/baseline/mcp?run=baseline%233","status":200,"contentType":"text/event-stream","timings":{"headersMs":0.337,"firstEventMs":0.469,"totalMs":0.506},"sse":{"events":1,"notifications":0,"progress":0,"messages":0,"requests":0,"comments":0,"terminal":true,"terminalEvent":1,"end":"eof"},"requestHeaders":{"Accept":["application/json, text/event-stream"],"Content-Length":["300"],"Content-Type":["application/json"],"Mcp-Method":["tools/call"],"Mcp-Name":["echo"],"Mcp-Protocol-Version":["2026-07-28"]},"responseHeaders":{"Cache-Control":["no-cache, no-transform"],"Connection":["keep-alive"],"Content-Type":["text/event-stream"]},"requestBytes":300,"responseBytes":214,"flags":["FI"],"fault":{"selection":"baseline","endpoint":"/s/baseline/mcp?run=baseline%233","seed":"1","fired":["baseline"],"decisions":[{"scenario":"baseline","layer":0,"matched":true,"n":1,"fired":true,"why":"n=1: always"}],"count":{"post":1,"method":1,"tool":1},"counters":{"posts":1,"methods":{"tools/call":1},"tools":{"echo":1}}},"params":{"meta":["io.modelcontextprotocol/clientCapabilities","io.modelcontextprotocol/clientInfo","io.modelcontextprotocol/protocolVersion"],"metaProtocolVersion":"2026-07-28","capabilities":"sha256:44136fa355b3678a"},"note":"fault injected (FI): baseline (seed 1)"}`
)

// TestClientThatLeavesUnreadJudgedOnce: the client did the same in both
// lines, so every safety and spec rule must say the same, verdict and
// words. safety.retry-bound said "pass: at most 0 retries" of the first and
// "n/a: no request failed" of the second (repeat10's note: it alternated
// between identical matrix runs).
func TestClientThatLeavesUnreadJudgedOnce(t *testing.T) {
	judgeLine := func(line string) map[string]judge.Check {
		t.Helper()
		r, err := record.Decode([]byte(line))
		if err != nil {
			t.Fatal(err)
		}
		tr := judge.NewTrace("baseline", []*record.Record{r}, &judge.Case{Name: "baseline", Expected: "TOOL_SUCCESS"})
		tr.Safety = map[string]retry.Safety{"echo": retry.SafetyFromHints(ptrTo(true), nil, nil)}
		out := map[string]judge.Check{}
		for _, c := range judge.Judge(tr) {
			out[c.Rule] = c
		}
		return out
	}
	left, answered := judgeLine(leftFirstLine), judgeLine(answeredLine)
	for _, rule := range []string{"safety.retry-bound", "safety.unsafe-repeat", "safety.retry-after", "safety.backoff",
		"safety.4xx-unchanged", "spec.reissue-new-id", "loop.identical-calls"} {
		l, a := left[rule], answered[rule]
		if l.Rule == "" || a.Rule == "" {
			t.Errorf("%s: not judged", rule)
			continue
		}
		if l.Verdict != a.Verdict || l.Evidence != a.Evidence {
			t.Errorf("%s: left first %s %q, answered %s %q: want one judgement", rule, l.Verdict, l.Evidence, a.Verdict, a.Evidence)
		}
	}
}

func ptrTo[T any](v T) *T { return &v }
