package faults_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mcpdiag/mcpdiag/faults"
	"github.com/mcpdiag/mcpdiag/record"
)

// TestServerDetailsMRTR checks the log members the matrix judges MRTR and
// headers by: _meta's protocol version, a hash of the capabilities, the
// requestState issued and the one echoed, the inputResponses keys, and the
// Retry-After sent.
func TestServerDetailsMRTR(t *testing.T) {
	sel, err := faults.Select("errors.rate_limited+mrtr.load_shedding", nil)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []faults.ServerDetails
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":3,"result":{"resultType":"complete","content":[]}}`)
	})
	ep := faults.NewEndpoint(sel, ok, faults.EndpointOptions{Path: "/mcp", Seed: 1, Observe: func(o *faults.Observation) {
		mu.Lock()
		f, params := o.Facts()
		seen = append(seen, faults.DetailsOf(&record.Record{Fault: f, Params: params, RetryAfter: o.RetryAfter}))
		mu.Unlock()
	}})
	srv := httptest.NewServer(ep)
	defer srv.Close()
	post := func(id int, extra string) string {
		body := `{"jsonrpc":"2.0","id":` + string(rune('0'+id)) + `,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}` + extra +
			`,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}}}`
		resp, err := http.Post(srv.URL, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	post(1, "") // 429
	answer := post(2, "")
	var m struct {
		Result struct {
			RequestState string `json:"requestState"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(answer), &m); err != nil || m.Result.RequestState == "" {
		t.Fatalf("no requestState in %s", answer)
	}
	state, _ := json.Marshal(m.Result.RequestState)
	post(3, `,"requestState":`+string(state)+`,"inputResponses":{"b":{},"a":{}}`)
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 3 {
		t.Fatalf("%d observations", len(seen))
	}
	if seen[0].RetryAfter != "2" || seen[1].RetryAfter != "" {
		t.Errorf("retryAfter %q, %q", seen[0].RetryAfter, seen[1].RetryAfter)
	}
	want := faults.StateHash(state)
	if seen[1].IssuedState != want || seen[1].RequestState != "" {
		t.Errorf("round 1: issued %q (want %q), sent %q", seen[1].IssuedState, want, seen[1].RequestState)
	}
	if seen[2].RequestState != want || strings.Join(seen[2].InputResponses, ",") != "a,b" || seen[2].IssuedState != "" {
		t.Errorf("round 2: %+v", seen[2])
	}
	for _, d := range seen {
		if d.MetaProtocolVersion != faults.Protocol2026 || !strings.HasPrefix(d.Capabilities, "sha256:") {
			t.Errorf("meta %q, capabilities %q", d.MetaProtocolVersion, d.Capabilities)
		}
	}
	if faults.StateHash(json.RawMessage(`"a\u0062"`)) != faults.StateHash(json.RawMessage(`"ab"`)) || faults.StateHash(nil) != "" || faults.StateHash(json.RawMessage(`null`)) != "" {
		t.Error("StateHash must hash the decoded string, and nothing for absent or null")
	}
	if ep.InFlight() != 0 {
		t.Errorf("in flight %d after every request was observed", ep.InFlight())
	}
}
