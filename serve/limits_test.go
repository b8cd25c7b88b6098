package serve_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/faults"
	"github.com/mcpdiag/mcpdiag/serve"
	"github.com/mcpdiag/mcpdiag/wire"
)

// get sends a GET and returns the status (the body read and dropped).
func get(t *testing.T, u string) int {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// TestEndpointCap: serve keeps serve.MaxEndpoints /s/ endpoints; the next
// new one gets 503 with a line that says how to drop them (an existing one
// is still served), and after POST /admin/reset?dropEndpoints=1 a new one
// is served again.
func TestEndpointCap(t *testing.T) {
	_, base := start(t, serve.Options{Seed: 1})
	ep := func(i int) string { return fmt.Sprintf("%s/s/baseline/mcp?match.tool=never-%d", base, i) }
	for i := range serve.MaxEndpoints {
		if code := get(t, ep(i)); code == http.StatusServiceUnavailable {
			t.Fatalf("endpoint %d of %d: 503", i+1, serve.MaxEndpoints)
		}
	}
	resp, err := http.Get(ep(serve.MaxEndpoints))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "dropEndpoints=1") {
		t.Fatalf("endpoint %d: %d %q, want 503 naming the reset", serve.MaxEndpoints+1, resp.StatusCode, body)
	}
	if code := get(t, ep(0)); code == http.StatusServiceUnavailable {
		t.Errorf("an existing endpoint got 503 at the cap")
	}
	if code := get(t, base+"/mcp"); code == http.StatusServiceUnavailable {
		t.Errorf("the main endpoint got 503 at the cap")
	}
	r, err := http.Post(base+"/admin/reset?dropEndpoints=1", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode/100 != 2 {
		t.Fatalf("reset: %d", r.StatusCode)
	}
	if code := get(t, ep(serve.MaxEndpoints)); code == http.StatusServiceUnavailable {
		t.Errorf("after dropEndpoints=1 a new endpoint still gets 503")
	}
}

// TestLogLimit: the in-memory log keeps the last LogLimit lines; GET
// /admin/log returns those, the newest last, and counts the dropped ones
// in Mcpdiag-Log-Dropped.
func TestLogLimit(t *testing.T) {
	const limit, requests = 5, 12
	_, base := start(t, serve.Options{Seed: 1, LogLimit: limit})
	for i := range requests {
		get(t, fmt.Sprintf("%s/mcp?n=%d", base, i))
	}
	resp, err := http.Get(base + "/admin/log")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	lines := strings.Split(strings.TrimSpace(string(body)), "\n")
	if len(lines) != limit {
		t.Fatalf("%d log lines, want the last %d:\n%s", len(lines), limit, body)
	}
	for i, l := range lines {
		if want := fmt.Sprintf(`n=%d"`, requests-limit+i); !strings.Contains(l, want) {
			t.Errorf("line %d is not request %s: %.200s", i, want, l)
		}
	}
	if got := resp.Header.Get("Mcpdiag-Log-Dropped"); got != fmt.Sprint(requests-limit) {
		t.Errorf("Mcpdiag-Log-Dropped %q, want %d", got, requests-limit)
	}
}

// TestServeRecordsTheMethodTheEndpointRead: the recorder reads as much of a
// request body as the fault endpoint does (faults.DefaultMaxBody), so a
// request the endpoint read (and its scenarios matched against) has its
// method, id and tool in its record. Before, a 5 MiB tools/call (over the
// recorder's 4 MiB parse limit, under the endpoint's 8 MiB) was recorded
// with no method, id or tool while the endpoint read it: report and the
// judge missed the call. Over the endpoint's limit the endpoint answers
// 413 itself without matching a scenario; the record has what the body's
// head says (method, tool, id: wire.ParseMessageHead) and says so.
func TestServeRecordsTheMethodTheEndpointRead(t *testing.T) {
	_, base := start(t, serve.Options{Seed: 1})
	const endpoint = "/s/errors.tool_error/mcp"
	sizes := []int{3 << 20, 5 << 20, faults.DefaultMaxBody + 1}
	for i, size := range sizes {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"%s"},"_meta":{"%s":"%s","%s":{}}}}`,
			i+1, strings.Repeat("x", size), wire.MetaProtocolVersion, wire.Protocol2026, wire.MetaClientCapabilities)
		req, _ := http.NewRequest(http.MethodPost, base+endpoint, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", wire.Protocol2026)
		req.Header.Set("Mcp-Method", "tools/call")
		req.Header.Set("Mcp-Name", "echo")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	lines := postsLogged(t, base, endpoint, len(sizes))
	if len(lines) != len(sizes) {
		t.Fatalf("%d log lines, want %d", len(lines), len(sizes))
	}
	// 3 MiB: the scenario's tool error. 5 MiB: the endpoint read it and
	// passed it on, and the fixture (go-sdk's 4 MiB limit) answered 413.
	for i, want := range []struct {
		scenario string
		outcome  classify.Outcome
		status   int
	}{{"errors.tool_error", classify.ToolError, http.StatusOK}, {"", classify.HTTPError, http.StatusRequestEntityTooLarge}} {
		r := lines[i].rec
		if r.Method != "tools/call" || r.Tool != "echo" || r.JSONRPC.ID.String() != fmt.Sprint(i+1) || r.Scenario != want.scenario || r.Outcome != want.outcome || r.Status != want.status {
			t.Errorf("%d MiB: method %q, tool %q, id %s, scenario %q, outcome %s, status %d; want tools/call, echo, %d, %q, %s, %d (note %q)",
				sizes[i]>>20, r.Method, r.Tool, r.JSONRPC.ID, r.Scenario, r.Outcome, r.Status, i+1, want.scenario, want.outcome, want.status, r.Note)
		}
	}
	over := lines[2].rec
	wantNote := fmt.Sprintf("the request body is larger than %d bytes", faults.DefaultMaxBody)
	wantHead := "method tools/call, tool echo and id read from its head"
	if over.Status != http.StatusRequestEntityTooLarge || over.Method != "tools/call" || over.Tool != "echo" || over.JSONRPC.ID.String() != "3" || over.ArgsHash != "" ||
		over.Scenario != "" || !strings.Contains(over.Note, wantNote) || !strings.Contains(over.Note, wantHead) {
		t.Errorf("over the endpoint's limit: status %d, method %q, tool %q, id %s, argsHash %q, scenario %q, note %q; want 413, tools/call, echo, 3, none, none, %q… %q",
			over.Status, over.Method, over.Tool, over.JSONRPC.ID, over.ArgsHash, over.Scenario, over.Note, wantNote, wantHead)
	}
}
