package matrix_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/judge"
	"github.com/mcpdiag/mcpdiag/matrix"
	"github.com/mcpdiag/mcpdiag/record"
)

// capture builds hand-made proxy records (kind exchange, bodies recorded),
// as mcpdiag proxy --record-bodies all writes them.
type capture struct {
	t     *testing.T
	start time.Time
	at    time.Duration
	id    int
	recs  []*record.Record
}

func newCapture(t *testing.T) *capture {
	return &capture{t: t, start: time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC)}
}

type req struct {
	id       int    // 0: the next id
	method   string // tools/call by default
	tool     string
	args     string
	state    string // requestState to send ("" none)
	inputs   bool   // send inputResponses
	hdr      map[string]string
	meta     string // _meta protocolVersion (default 2026-07-28)
	client   string
	wait     time.Duration // before this request
	status   int           // 200 by default; 0 with net
	outcome  classify.Outcome
	issued   string // the answer's requestState (input_required)
	resp     string // response body
	retryAft string
	net      string // network error text (no response)
	flags    record.Flags
}

func (c *capture) add(r req) {
	c.at += r.wait
	if r.id == 0 {
		c.id++
		r.id = c.id
	}
	if r.method == "" {
		r.method = "tools/call"
	}
	if r.meta == "" {
		r.meta = classify.Protocol2026
	}
	if r.client == "" {
		r.client = "agent@1.0"
	}
	params := map[string]any{"_meta": map[string]any{"io.modelcontextprotocol/protocolVersion": r.meta}}
	if r.method == "tools/call" {
		params["name"] = r.tool
		params["arguments"] = json.RawMessage(orJSON(r.args))
	}
	if r.state != "" {
		params["requestState"] = r.state
	}
	if r.inputs {
		params["inputResponses"] = map[string]any{"q": map[string]string{"action": "accept"}}
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": r.id, "method": r.method, "params": params})
	h := http.Header{"Accept": {"application/json, text/event-stream"}, "Content-Type": {"application/json"},
		"Mcp-Protocol-Version": {r.meta}, "Mcp-Method": {r.method}}
	if r.method == "tools/call" {
		h.Set("Mcp-Name", r.tool)
	}
	for k, v := range r.hdr {
		if v == "" {
			h.Del(k)
		} else {
			h.Set(k, v)
		}
	}
	rec := &record.Record{Kind: record.KindExchange, Time: c.start.Add(c.at), Client: r.client, ProtocolVersion: r.meta,
		HTTPMethod: "POST", URL: "http://127.0.0.1:9/mcp", RequestHeaders: h, Status: r.status,
		Timings: record.Timings{Total: record.Duration(5 * time.Millisecond)}, RetryAfter: r.retryAft}
	rec.SetRequest(body)
	rec.RequestBody = &record.Body{Text: string(body)}
	switch {
	case r.net != "":
		rec.Status, rec.Outcome = 0, classify.NetworkError
		rec.Network = &record.Network{Error: r.net, Phase: "before-response", RequestSent: true}
	case r.outcome == "":
		rec.Outcome = classify.ToolSuccess
		if r.method != "tools/call" {
			rec.Outcome = classify.ResultSuccess
		}
	default:
		rec.Outcome = r.outcome
	}
	if rec.Status == 0 && r.net == "" {
		rec.Status = 200
	}
	if r.issued != "" {
		rec.Outcome, rec.ResultType = classify.InputRequired, "input_required"
		rec.Input = &record.Input{HasRequestState: true, Requests: []record.InputRequest{{Key: "q", Method: "elicitation/create"}}}
		r.resp = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"resultType":"input_required","inputRequests":{"q":{"method":"elicitation/create","params":{}}},"requestState":%q}}`, r.id, r.issued)
	}
	if r.resp != "" {
		rec.ResponseBody = &record.Body{Text: r.resp}
	}
	rec.Flags = r.flags
	c.recs = append(c.recs, rec)
	c.at += 5 * time.Millisecond
}

func orJSON(s string) string {
	if s == "" {
		return `{}`
	}
	return s
}

// toolsList adds a tools/list answer naming echo (read-only) and
// delete_item (destructive), as an event stream.
func (c *capture) toolsList() {
	c.add(req{method: "tools/list", resp: "event: message\ndata: " +
		`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"echo","annotations":{"readOnlyHint":true}},{"name":"delete_item","annotations":{"readOnlyHint":false,"destructiveHint":true,"idempotentHint":false}}]}}` + "\n\n"})
}

func (c *capture) judge() *matrix.Passive {
	c.t.Helper()
	var b bytes.Buffer
	for _, r := range c.recs {
		line, err := record.Marshal(r)
		if err != nil {
			c.t.Fatal(err)
		}
		b.Write(line)
	}
	b.WriteString("{\"v\":1,\"kind\":\"call\"}\nnot json\n")
	p, err := matrix.FromRecords(&b, "test.jsonl", matrix.Limits{})
	if err != nil {
		c.t.Fatal(err)
	}
	if p.Skipped != 1 {
		c.t.Errorf("skipped %d lines, want 1", p.Skipped)
	}
	return p
}

func passiveFailures(p *matrix.Passive) map[string]string {
	out := map[string]string{}
	for _, tr := range p.Traces {
		for _, c := range tr.Checks {
			if c.Verdict == judge.Fail {
				out[c.Rule] += c.Evidence
			}
		}
	}
	return out
}

func TestFromRecords(t *testing.T) {
	tests := []struct {
		name  string
		build func(c *capture)
		fail  map[string][]string // rule → words its evidence must hold
	}{
		{"a clean session", func(c *capture) {
			c.toolsList()
			c.add(req{tool: "echo", args: `{"text":"hi"}`, issued: "s1"})
			c.add(req{tool: "echo", args: `{"text":"hi"}`, state: "s1", inputs: true})
			c.add(req{tool: "delete_item", args: `{"id":"1"}`, status: 503, outcome: classify.HTTPError, retryAft: "1"})
			c.add(req{tool: "echo", args: `{"text":"again"}`})
		}, nil},
		{"requestState changed", func(c *capture) {
			c.add(req{tool: "echo", issued: "s1"})
			c.add(req{tool: "echo", state: "s2", inputs: true})
		}, map[string][]string{"spec.mrtr-echo-state": {"POST 2", "id 2", "was issued"}}},
		{"requestState dropped", func(c *capture) {
			c.add(req{tool: "echo", issued: "s1"})
			c.add(req{tool: "echo", inputs: true})
		}, map[string][]string{"spec.mrtr-echo-state": {"POST 2 (tools/call echo, id 2) dropped the requestState"}}},
		{"requestState invented", func(c *capture) {
			c.add(req{tool: "echo", state: "made-up"})
		}, map[string][]string{"spec.mrtr-no-invented-state": {"POST 1", "which no earlier answer issued"}}},
		{"MRTR round with the same id", func(c *capture) {
			c.add(req{id: 7, tool: "echo", issued: "s1"})
			c.add(req{id: 7, tool: "echo", state: "s1", inputs: true})
		}, map[string][]string{"spec.mrtr-new-id": {"POST 2 (tools/call echo, id 7)", "reuses the id of POST 1"}}},
		{"headers that disagree with the body", func(c *capture) {
			c.add(req{tool: "echo", hdr: map[string]string{"Mcp-Name": "delete_item"}})
			c.add(req{tool: "echo", hdr: map[string]string{"MCP-Protocol-Version": "2025-11-25", "Accept": "application/json"}})
		}, map[string][]string{
			"spec.method-headers":  {"POST 1", `Mcp-Name "delete_item"`, `"echo"`},
			"spec.protocol-header": {"POST 2", `"2025-11-25"`, `_meta says "2026-07-28"`},
			"spec.accept":          {"POST 2", `Accept "application/json"`},
		}},
		{"a destructive call repeated after a 502", func(c *capture) {
			c.toolsList()
			c.add(req{tool: "delete_item", args: `{"id":"1"}`, status: 502, outcome: classify.HTTPError})
			c.add(req{tool: "delete_item", args: `{"id":"1"}`, wait: 300 * time.Millisecond})
		}, map[string][]string{"safety.unsafe-repeat": {"delete_item (destructive or not idempotent) was sent again at POST 3", "after POST 2", "HTTP 502", "no Idempotency-Key"}}},
		{"a loop of identical calls", func(c *capture) {
			for range 4 {
				c.add(req{tool: "echo", args: `{"text":"same"}`, wait: time.Second})
			}
		}, map[string][]string{"loop.identical-calls": {"sent 4 times", "POSTs 1, 2, 3, 4"}}},
		{"a call left pending", func(c *capture) {
			c.add(req{tool: "echo"})
			c.add(req{tool: "echo", args: `{"text":"slow"}`, net: "the proxy shut down before the response ended", flags: record.Flags{record.FlagSD}})
		}, map[string][]string{"live.pending": {"POST 2", "never answered", "shut down"}}},
		{"a call left pending when the stdio server exited", func(c *capture) {
			c.add(req{tool: "echo"})
			c.add(req{tool: "echo", args: `{"text":"slow"}`, net: "EOF", flags: record.Flags{record.FlagUX}})
		}, map[string][]string{"live.pending": {"POST 2", "never answered"}}},
		{"words are not flags", func(c *capture) {
			// A version-2 record is judged by its flags: an error text
			// that happens to say "shut down" makes nothing pending.
			c.add(req{tool: "echo"})
			c.add(req{tool: "echo", args: `{"text":"slow"}`, net: "the peer shut down", flags: record.Flags{record.FlagDC}})
		}, nil},
		{"an immediate retry after Retry-After", func(c *capture) {
			c.add(req{tool: "echo", status: 429, outcome: classify.HTTPError, retryAft: "3"})
			c.add(req{tool: "echo"})
		}, map[string][]string{"safety.retry-after": {"POST 2", "Retry-After: 3"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCapture(t)
			tt.build(c)
			p := c.judge()
			if len(p.Traces) != 1 {
				t.Fatalf("%d traces, want 1", len(p.Traces))
			}
			got := passiveFailures(p)
			var gotRules, wantRules []string
			for r := range got {
				gotRules = append(gotRules, r)
			}
			for r := range tt.fail {
				wantRules = append(wantRules, r)
			}
			sort.Strings(gotRules)
			sort.Strings(wantRules)
			if strings.Join(gotRules, ",") != strings.Join(wantRules, ",") {
				t.Errorf("failed rules %v, want %v (%v)", gotRules, wantRules, got)
			}
			for rule, words := range tt.fail {
				for _, w := range words {
					if !strings.Contains(got[rule], w) {
						t.Errorf("%s: evidence %q lacks %q", rule, got[rule], w)
					}
				}
			}
			var out bytes.Buffer
			if err := p.WriteTable(&out); err != nil {
				t.Fatal(err)
			}
			if (len(tt.fail) > 0) != strings.Contains(out.String(), "FAIL agent@1.0") {
				t.Errorf("table:\n%s", out.String())
			}
			for _, r := range p.Traces[0].Checks {
				if r.Rule == "live.finish" || r.Rule == "client.classification" {
					t.Errorf("the active rule %s ran on records", r.Rule)
				}
			}
		})
	}
}

// TestFromRecordsWithoutBodies: records without bodies (the proxy's
// default) leave the body-dependent rules not applicable, and say why.
func TestFromRecordsWithoutBodies(t *testing.T) {
	c := newCapture(t)
	c.add(req{tool: "delete_item", status: 502, outcome: classify.HTTPError})
	c.add(req{tool: "delete_item"})
	for _, r := range c.recs {
		r.RequestBody, r.ResponseBody = nil, nil
	}
	p := c.judge()
	if p.Failed() || len(p.Notes) != 2 {
		t.Errorf("failed %v, notes %v", p.Failed(), p.Notes)
	}
	for _, ch := range p.Traces[0].Checks {
		if ch.Rule == "safety.unsafe-repeat" && ch.Verdict != judge.NotApplicable {
			t.Errorf("unsafe-repeat without tools/list: %+v", ch)
		}
	}
}

// judgeRecorded runs the matrix on cases with --record and judges the
// lines it wrote passively, as `mcpdiag report` does.
func judgeRecorded(t *testing.T, cases []matrix.Case) *matrix.Passive {
	t.Helper()
	var rec lines
	run(t, matrix.Options{Cases: cases, Records: &rec})
	var b bytes.Buffer
	for _, l := range rec.all() {
		b.Write(l)
	}
	p, err := matrix.FromRecords(&b, "matrix.jsonl", matrix.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestFromRecordsOfAMatrixRun judges what mcpdiag matrix --record wrote:
// the fault server's lines (one trace per endpoint) and the built-in
// client's exchange records; JSON and JUnit render.
func TestFromRecordsOfAMatrixRun(t *testing.T) {
	t.Parallel()
	p := judgeRecorded(t, selectCases(t, "", "mrtr.load_shedding", "session.expired"))
	if p.Failed() {
		var out bytes.Buffer
		_ = p.WriteTable(&out)
		t.Errorf("the built-in client's records fail:\n%s", out.String())
	}
	endpoints, echoed := 0, false
	for _, tr := range p.Traces {
		if strings.HasPrefix(tr.Trace.Name, "endpoint ") {
			endpoints++
			for _, ch := range tr.Checks {
				if ch.Rule == "spec.mrtr-echo-state" && strings.Contains(tr.Trace.Name, "load_shedding") {
					switch ch.Verdict {
					case judge.Pass:
						echoed = true
					case judge.Fail:
						t.Errorf("server lines: %+v", ch)
					}
				}
			}
		}
	}
	if !echoed {
		t.Error("no trace of mrtr.load_shedding's server lines passes spec.mrtr-echo-state")
	}
	// An endpoint's lines are one trace per client: mrtr.load_shedding's
	// (2026-07-28, one connection) one, session.expired's (2025-11-25)
	// one per session and for the initialize before each.
	if endpoints < 2 || len(p.Traces) < 3 {
		var names []string
		for _, tr := range p.Traces {
			names = append(names, tr.Trace.Name)
		}
		t.Errorf("%d traces, %d of endpoints: %s", len(p.Traces), endpoints, strings.Join(names, "; "))
	}
	var js, ju bytes.Buffer
	if err := p.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(js.Bytes(), []byte("\n")); n != len(p.Traces) {
		t.Errorf("%d JSON lines for %d traces", n, len(p.Traces))
	}
	if err := p.WriteJUnit(&ju); err != nil {
		t.Fatal(err)
	}
	checkJUnit(t, ju.Bytes(), len(p.Traces), 0)
}

// TestFromRecordsOfSessionlessRuns judges what mcpdiag matrix --record
// wrote for 2026-07-28 cases (no session): each run's client records are
// their own trace (by the call they belong to), not one trace of every run
// of the client, where the next run's initialize with id 1 read as a reissue
// of the last run's with the same id and the runs' retries added up.
func TestFromRecordsOfSessionlessRuns(t *testing.T) {
	t.Parallel()
	p := judgeRecorded(t, selectCases(t, matrix.Era2026, "errors.http_status_sequence", "errors.rate_limited"))
	var out bytes.Buffer
	_ = p.WriteTable(&out)
	if p.Failed() {
		t.Errorf("the built-in client's records fail:\n%s", out.String())
	}
	clients := 0
	for _, tr := range p.Traces {
		if !strings.HasPrefix(tr.Trace.Name, "endpoint ") {
			clients++
		}
	}
	if clients < 2 {
		t.Errorf("%d client trace(s) for two runs:\n%s", clients, out.String())
	}
}

// TestFromRecordsRoundsWithoutBodies: without bodies an MRTR round is known
// by the input_required answer before it: three of them are no loop, and a
// reused id still shows.
func TestFromRecordsRoundsWithoutBodies(t *testing.T) {
	c := newCapture(t)
	c.add(req{id: 1, tool: "echo", issued: "s1"})
	c.add(req{id: 2, tool: "echo", state: "s1", inputs: true, issued: "s2"})
	c.add(req{id: 2, tool: "echo", state: "s2", inputs: true})
	for _, r := range c.recs {
		r.RequestBody, r.ResponseBody = nil, nil
	}
	got := passiveFailures(c.judge())
	if len(got) != 1 || !strings.Contains(got["spec.mrtr-new-id"], "POST 3 (tools/call echo, id 2) is an MRTR round that reuses the id of POST 2") {
		t.Errorf("failures %v", got)
	}
}
