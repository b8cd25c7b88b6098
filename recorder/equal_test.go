package recorder_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/faults"
	"github.com/mcpdiag/mcpdiag/fixture"
	"github.com/mcpdiag/mcpdiag/internal/testwait"
	"github.com/mcpdiag/mcpdiag/proxy"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/serve"
)

// sink keeps the proxy's records as their encoded lines decode, as a
// reader of its record file sees them.
type sink struct {
	mu   sync.Mutex
	recs []*record.Record
}

func (s *sink) Write(r *record.Record) error {
	line, err := (&record.Encoder{}).Encode(r)
	if err != nil {
		return err
	}
	d, err := record.Decode(line)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.recs = append(s.recs, d)
	s.mu.Unlock()
	return nil
}

// exchanges are the requests of the test, sent as they are: a tools/list
// with a number id, then a tools/call with a string id (2026-07-28, so no
// session).
var exchanges = []struct{ method, tool, body string }{
	{"tools/list", "", `{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"_meta":` + meta + `}}`},
	{"tools/call", "echo", `{"jsonrpc":"2.0","id":"call-1","method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"_meta":` + meta + `}}`},
}

const meta = `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"eq","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`

// send makes the test's requests to u, each on a fresh connection (a
// scenario may drop it), reading each response to its end or its error.
func send(t *testing.T, u string) {
	t.Helper()
	for _, x := range exchanges {
		req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(x.body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", x.method)
		if x.tool != "" {
			req.Header.Set("Mcp-Name", x.tool)
		}
		c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
		resp, err := c.Do(req)
		if err != nil {
			continue // a dropped connection is what the scenario does
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

// TestServeAndProxyRecordTheSame: one recorder, one record. The same
// requests under the same scenario, once to mcpdiag serve directly and
// once through mcpdiag proxy with the scenario in front of a plain
// upstream (the healthy fixture), give records with the same facts: the id
// with its JSON type, method, tool, status, outcome, layer, flags and the
// fault decision.
func TestServeAndProxyRecordTheSame(t *testing.T) {
	for _, id := range []string{
		"baseline", "errors.tool_error", "errors.jsonrpc_error", "errors.connection_close", "errors.malformed_payload",
		"errors.rate_limited", "errors.unexpected_content_type", "errors.empty_response", "errors.invalid_tool_result",
		"errors.non_compliant_envelope", "sse.truncated", "sse.wrong_id", "sse.error_in_stream", "sse.unterminated_final_event",
		"compat.legacy_result",
	} {
		t.Run(id, func(t *testing.T) {
			sel, err := faults.Select(id, nil)
			if err != nil {
				t.Fatal(err)
			}
			// Directly: mcpdiag serve's log.
			srv := serve.New(serve.Options{Selection: sel, Seed: 1})
			ts := httptest.NewServer(srv)
			defer ts.Close()
			send(t, ts.URL+serve.MainPath)
			for deadline := time.Now().Add(testwait.Bound); srv.InFlight(serve.MainPath) > 0 && time.Now().Before(deadline); {
				time.Sleep(5 * time.Millisecond)
			}
			var direct []*record.Record
			for _, l := range srv.Log() {
				r, err := record.Decode(l)
				if err != nil {
					t.Fatalf("log line %s: %v", l, err)
				}
				if r.Kind != record.KindExchange {
					t.Fatalf("a request's log line is no exchange record: %s", l)
				}
				direct = append(direct, r)
			}

			// Through the proxy, the scenario in front of the fixture.
			up := httptest.NewServer(fixture.New(fixture.Options{}))
			defer up.Close()
			uu, _ := url.Parse(up.URL + "/mcp")
			var got sink
			p, err := proxy.New(proxy.Options{Upstream: uu, Records: &got, Faults: &proxy.FaultOptions{Selection: sel, Seed: 1}})
			if err != nil {
				t.Fatal(err)
			}
			pts := httptest.NewServer(p)
			send(t, pts.URL+"/mcp")
			pts.Close()
			if err := p.Wait(t.Context()); err != nil {
				t.Fatal(err)
			}
			got.mu.Lock()
			proxied := slices.Clone(got.recs)
			got.mu.Unlock()

			if len(direct) != len(exchanges) || len(proxied) != len(exchanges) {
				t.Fatalf("%d records from serve, %d from the proxy, for %d exchanges", len(direct), len(proxied), len(exchanges))
			}
			byMethod := func(rs []*record.Record, m string) *record.Record {
				for _, r := range rs {
					if r.Method == m {
						return r
					}
				}
				t.Fatalf("no %s record", m)
				return nil
			}
			for _, x := range exchanges {
				d, q := byMethod(direct, x.method), byMethod(proxied, x.method)
				if !bytes.Equal(d.JSONRPC.ID.Raw(), q.JSONRPC.ID.Raw()) || d.Method != q.Method || d.Tool != q.Tool ||
					d.Status != q.Status || d.Outcome != q.Outcome || d.Layer != q.Layer || !slices.Equal(d.Flags, q.Flags) ||
					d.Scenario != q.Scenario {
					t.Errorf("%s: serve and proxy records differ\nserve: id %s %s %s status %d %s/%s flags %v scenario %q\nproxy: id %s %s %s status %d %s/%s flags %v scenario %q",
						x.method, d.JSONRPC.ID.Raw(), d.Method, d.Tool, d.Status, d.Outcome, d.Layer, d.Flags, d.Scenario,
						q.JSONRPC.ID.Raw(), q.Method, q.Tool, q.Status, q.Outcome, q.Layer, q.Flags, q.Scenario)
				}
				if d.Fault == nil || q.Fault == nil {
					t.Fatalf("%s: no fault member (serve %v, proxy %v)", x.method, d.Fault, q.Fault)
				}
				if d.Fault.Selection != q.Fault.Selection || d.Fault.Seed != q.Fault.Seed || !slices.Equal(d.Fault.Fired, q.Fault.Fired) ||
					!reflect.DeepEqual(d.Fault.Decisions, q.Fault.Decisions) {
					t.Errorf("%s: fault decisions differ\nserve: %+v\nproxy: %+v", x.method, *d.Fault, *q.Fault)
				}
			}
			c := byMethod(direct, "tools/call")
			t.Logf("tools/call: status %d, %s/%s, flags %v, fired %v", c.Status, c.Outcome, c.Layer, c.Flags, c.Fault.Fired)
			// The id keeps its JSON type: a number and a string.
			if string(byMethod(direct, "tools/list").JSONRPC.ID.Raw()) != "7" || string(byMethod(direct, "tools/call").JSONRPC.ID.Raw()) != `"call-1"` {
				t.Errorf("ids %s and %s", byMethod(direct, "tools/list").JSONRPC.ID.Raw(), byMethod(direct, "tools/call").JSONRPC.ID.Raw())
			}
		})
	}
}
