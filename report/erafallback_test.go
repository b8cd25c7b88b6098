package report

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/record"
)

// TestEraFallbackLinking: the rule that makes a refused 2026-07-28 request
// recorded by the proxy (which cannot know what the client does next) an era
// fallback at read time, on hand-written record lines: the same client's next
// request must be an initialize, after it, within EraFallbackWindow. Every
// case that links was counted a failure before (no record here carries
// eraFallback).
func TestEraFallbackLinking(t *testing.T) {
	t.Parallel()
	type ex struct {
		at             int // seconds after 09:00:00
		conn, client   string
		proto, method  string
		status         int
		outcome, ecode string // ecode: the JSON-RPC error code, "null" when none
		ms             int    // milliseconds added to the line's time (which adds its index)
	}
	probe := func(at int, conn, client string) ex {
		return ex{at, conn, client, "2026-07-28", "tools/list", 400, "HTTP_ERROR", "null", 0}
	}
	initialize := func(at int, conn, client string) ex {
		return ex{at, conn, client, "2025-11-25", "initialize", 200, "RESULT_SUCCESS", "null", 0}
	}
	other := func(at int, conn, client, method string) ex {
		return ex{at, conn, client, "2025-11-25", method, 200, "RESULT_SUCCESS", "null", 0}
	}
	withCode := func(e ex, status int, code string) ex { e.status, e.ecode = status, code; return e }
	const insp, ts = "inspector@0.17", "typescript-sdk@1.20"
	for _, c := range []struct {
		name                string
		lines               []ex
		failures, fallbacks int64
	}{
		{"initialize next on the connection", []ex{probe(0, "r-1", insp), initialize(0, "r-1", insp)}, 0, 1},
		{"no next request", []ex{probe(0, "r-1", insp)}, 1, 0},
		// Records come in the order exchanges end: the proxy wrote a
		// 2025-11-25 client's notifications/initialized before its
		// initialize (TestProxiedEraFallbackNotAFailure, 2 in 200 runs).
		{"the initialize recorded after the request that followed it", []ex{
			probe(0, "r-1", insp), other(2, "r-1", insp, "notifications/initialized"), other(3, "r-1", insp, "tools/call"), initialize(1, "r-1", insp)}, 0, 1},
		{"the same client on a new connection within a second, the probe's one never again", []ex{
			probe(0, "r-1", insp), {at: 0, conn: "r-2", client: insp, proto: "2025-11-25", method: "initialize", status: 200, outcome: "RESULT_SUCCESS", ecode: "null"}}, 0, 1},
		{"the probe recorded after its quick initialize on a new connection", []ex{
			func() ex { e := initialize(0, "r-2", insp); e.ms = 5; return e }(), probe(0, "r-1", insp)}, 0, 1}, // 4 ms apart: the lines' times add their index in ms
		{"the probe recorded after a same client's initialize on a new connection 999 ms later", []ex{
			initialize(1, "r-2", insp), probe(0, "r-1", insp)}, 1, 0}, // as a Node client's second run (TestInspectorRerunNotAFallback)
		{"the probe recorded after its initialize", []ex{initialize(1, "r-1", insp), probe(0, "r-1", insp)}, 0, 1},
		{"the probe recorded after a ping and an initialize that followed it", []ex{
			other(1, "r-1", insp, "ping"), initialize(2, "r-1", insp), probe(0, "r-1", insp)}, 1, 0},
		{"a ping that started first recorded after an initialize that followed it", []ex{
			probe(0, "r-1", insp), other(2, "r-1", insp, "ping"), initialize(3, "r-1", insp), other(1, "r-1", insp, "ping")}, 1, 0},
		{"next request not an initialize", []ex{probe(0, "r-1", insp), other(1, "r-1", insp, "ping"), initialize(2, "r-1", insp)}, 1, 0},
		{"the next request a 2026-07-28 one again", []ex{probe(0, "r-1", insp), probe(1, "r-1", insp)}, 2, 0},
		{"initialize before the probe", []ex{initialize(0, "r-1", insp), probe(1, "r-1", insp)}, 1, 0},
		{"another client's initialize on another connection", []ex{probe(0, "r-1", insp), initialize(1, "r-2", ts)}, 1, 0},
		{"another client's initialize on the same connection", []ex{probe(0, "r-1", insp), initialize(1, "r-1", ts)}, 0, 1},
		{"the same client on a new connection, then on the probe's one in the session", []ex{
			probe(0, "r-1", insp), initialize(1, "r-2", insp), other(1, "r-1", insp, "notifications/initialized")}, 0, 1},
		// The MCP Inspector CLI run with --protocol-era modern (gives up on
		// the 400), then with legacy (no probe) within the window: its own
		// connections, the first never used again.
		{"a client gives up, a later run of it initializes on its own connections", []ex{
			probe(0, "r-1", insp), initialize(1, "r-2", insp), other(1, "r-3", insp, "notifications/initialized"), other(1, "r-2", insp, "tools/call")}, 1, 0},
		// The probe's connection may carry a long request first (a slow call
		// or a GET stream, recorded when it ends): once the initialize came in the
		// window, the connection's next request decides whenever it ends.
		{"the same client on a new connection, the probe's one next past the window", []ex{
			probe(0, "r-1", insp), initialize(1, "r-2", insp), other(40, "r-9", ts, "ping"), other(2, "r-1", insp, "tools/call")}, 0, 1},
		{"the same client on a new connection, the probe's one never again", []ex{probe(0, "r-1", insp), initialize(1, "r-2", insp)}, 1, 0},
		{"the same client on a new connection, then a 2026-07-28 request on the probe's one", []ex{
			probe(0, "r-1", insp), initialize(1, "r-2", insp), probe(2, "r-1", insp)}, 2, 0},
		// The Inspector CLI pinned to modern, then in auto mode: the second
		// run's probe (r-2) falls back with an initialize on r-3 and goes on
		// on r-2; the first run's probe (r-1) is the failure.
		{"a client gives up, a later run of it falls back on a new connection", []ex{
			probe(0, "r-1", insp), probe(1, "r-2", insp), initialize(1, "r-3", insp), other(1, "r-2", insp, "notifications/initialized")}, 1, 1},
		{"the same client name, unnamed", []ex{probe(0, "r-1", ""), initialize(1, "r-2", "")}, 1, 0},
		{"within the window", []ex{probe(0, "r-1", insp), initialize(29, "r-1", insp)}, 0, 1},
		{"past the window", []ex{probe(0, "r-1", insp), initialize(31, "r-1", insp)}, 1, 0},
		{"past the window, another client's request between", []ex{probe(0, "r-1", insp), other(31, "r-9", ts, "ping"), initialize(32, "r-1", insp)}, 1, 0},
		{"two of one client: a modern-only one gives up, the other falls back", []ex{
			probe(0, "r-1", insp), probe(1, "r-2", insp), initialize(2, "r-2", insp)}, 1, 1},
		{"two of one client interleaved, both fall back", []ex{
			probe(0, "r-1", insp), probe(1, "r-2", insp), initialize(2, "r-2", insp), initialize(3, "r-1", insp)}, 0, 2},
		{"-32022 listing older versions", []ex{withCode(probe(0, "r-1", insp), 400, "-32022"), initialize(1, "r-1", insp)}, 0, 1},
		{"-32600 Missing session ID", []ex{withCode(probe(0, "r-1", insp), 400, "-32600"), initialize(1, "r-1", insp)}, 0, 1},
		{"404", []ex{withCode(probe(0, "r-1", insp), 404, "null"), initialize(1, "r-1", insp)}, 0, 1},
		{"a modern error (-32602)", []ex{withCode(probe(0, "r-1", insp), 400, "-32602"), initialize(1, "r-1", insp)}, 1, 0},
		{"401, not a version signal", []ex{withCode(probe(0, "r-1", insp), 401, "null"), initialize(1, "r-1", insp)}, 1, 0},
		{"429, not a version signal", []ex{withCode(probe(0, "r-1", insp), 429, "null"), initialize(1, "r-1", insp)}, 1, 0},
		{"a refused 2025-11-25 request", []ex{func() ex { e := probe(0, "r-1", insp); e.proto = "2025-11-25"; return e }(), initialize(1, "r-1", insp)}, 1, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			acc := New(Options{KeepLinks: true})
			for i, e := range c.lines {
				line := fmt.Sprintf(`{"v":2,"kind":"exchange","id":"e%d","time":"2026-12-06T09:00:%02d.%03dZ","client":%q,"protocolVersion":%q,"scenario":"","method":%q,"postCount":1,"httpStatuses":[%d],"jsonrpc":{"id":%d,"errorCode":%s},"resultType":null,"outcome":%q,"retryOrigin":"none","httpMethod":"POST","status":%d,"conn":%q}`,
					i, e.at%60, i+e.ms, e.client, e.proto, e.method, e.status, i+1, e.ecode, e.outcome, e.status, e.conn)
				line = strings.Replace(line, "09:00:", fmt.Sprintf("09:%02d:", e.at/60), 1)
				r, err := record.Decode([]byte(line))
				if err != nil {
					t.Fatalf("%s: %v", line, err)
				}
				acc.Add(r)
			}
			acc.Close()
			// The records linked are named, once each, and only
			// refused 2026-07-28 probes (ui marks their rows).
			ids := acc.TakeEraFallbacks()
			if int64(len(ids)) != c.fallbacks {
				t.Errorf("TakeEraFallbacks %v, want %d ids", ids, c.fallbacks)
			}
			for _, id := range ids {
				var k int
				if _, err := fmt.Sscanf(id, "e%d", &k); err != nil || k >= len(c.lines) || c.lines[k].proto != "2026-07-28" {
					t.Errorf("TakeEraFallbacks named %q, not a refused probe's line", id)
				}
			}
			if again := acc.TakeEraFallbacks(); len(again) != 0 {
				t.Errorf("TakeEraFallbacks again: %v, want none", again)
			}
			got := acc.Summary().Exchanges
			if got.Total != int64(len(c.lines)) || got.Failures != c.failures || got.EraFallbacks != c.fallbacks {
				t.Errorf("%d exchanges, %d failed, %d era fallbacks; want %d, %d, %d", got.Total, got.Failures, got.EraFallbacks, len(c.lines), c.failures, c.fallbacks)
			}
			if c.failures == 0 && len(got.WorstOffenders) != 0 {
				t.Errorf("worst offenders %v, want none", got.WorstOffenders)
			}
			// Where one refused probe failed and its line is the first,
			// the failure named is that line's.
			if c.failures == 1 && c.lines[0].status >= 400 && c.lines[0].proto == "2026-07-28" {
				if len(got.WorstOffenders) != 1 || !slices.Equal(got.WorstOffenders[0].Examples, []string{"e0"}) {
					t.Errorf("worst offenders %+v, want one naming e0", got.WorstOffenders)
				}
			}
		})
	}
}

// TestStdioEraFallback: over stdio a client that speaks both eras sends
// server/discover first, and any error but UnsupportedProtocolVersion
// (-32022) means a legacy server (basic/transports/stdio §Backward
// Compatibility): the MCP Inspector CLI in auto mode through mcpdiag proxy
// --stdio in front of server-everything gets -32601 and initializes. The
// stdio proxy records the -32601 as JSONRPC_ERROR; report counted it a
// failure.
func TestStdioEraFallback(t *testing.T) {
	t.Parallel()
	discover := func(code string) string {
		return `{"v":2,"kind":"exchange","id":"e0","time":"2026-12-06T09:00:00Z","client":"inspector-cli@2.12.0","protocolVersion":"2026-07-28","method":"server/discover","postCount":0,"httpStatuses":[],"jsonrpc":{"id":"server-discover-probe-1","errorCode":` + code + `},"outcome":"JSONRPC_ERROR","retryOrigin":"none","url":"stdio:node","conn":"s-1"}`
	}
	next := func(method, proto, conn string) string {
		return `{"v":2,"kind":"exchange","id":"e1","time":"2026-12-06T09:00:01Z","client":"inspector-cli@2.12.0","protocolVersion":"` + proto + `","method":"` + method + `","postCount":0,"httpStatuses":[],"jsonrpc":{"id":0,"errorCode":null},"resultType":"complete","outcome":"RESULT_SUCCESS","retryOrigin":"none","url":"stdio:node","conn":"` + conn + `"}`
	}
	for _, c := range []struct {
		name                string
		lines               []string
		failures, fallbacks int64
	}{
		{"-32601, then initialize", []string{discover("-32601"), next("initialize", "2025-11-25", "s-1")}, 0, 1},
		{"-32601, nothing more (a client pinned to 2026-07-28)", []string{discover("-32601")}, 1, 0},
		{"-32601, then a 2026-07-28 request", []string{discover("-32601"), next("tools/list", "2026-07-28", "s-1")}, 1, 0},
		{"-32022, then initialize (a modern server on another version)", []string{discover("-32022"), next("initialize", "2025-11-25", "s-1")}, 1, 0},
		{"-32601, initialize of another stdio session", []string{discover("-32601"), next("initialize", "2025-11-25", "s-2")}, 1, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			acc := New(Options{})
			for _, line := range c.lines {
				r, err := record.Decode([]byte(line))
				if err != nil {
					t.Fatalf("%s: %v", line, err)
				}
				acc.Add(r)
			}
			acc.Close()
			got := acc.Summary().Exchanges
			if got.Total != int64(len(c.lines)) || got.Failures != c.failures || got.EraFallbacks != c.fallbacks {
				t.Errorf("%d exchanges, %d failed, %d era fallbacks; want %d, %d, %d", got.Total, got.Failures, got.EraFallbacks, len(c.lines), c.failures, c.fallbacks)
			}
		})
	}
}

// TestInspectorRerunNotAFallback: the MCP Inspector CLI through mcpdiag
// proxy in front of server-everything, run with --protocol-era modern (it
// gives up on the refused server/discover, exit 1) and at once with
// --protocol-era legacy (no probe): the second run's initialize started
// 944 ms after the first run's probe, on connections of its own (the
// records as measured, trimmed to the typed fields). A failure, not a
// fallback; with the quick fallback at 1 s it was counted a fallback.
func TestInspectorRerunNotAFallback(t *testing.T) {
	t.Parallel()
	line := func(at, conn, httpMethod, method, proto string, status int, outcome string) string {
		return fmt.Sprintf(`{"v":2,"kind":"exchange","id":"%s-%s","time":"2026-12-06T09:43:%sZ","client":"inspector-cli@2.12.0","protocolVersion":%q,"method":%q,"postCount":1,"httpStatuses":[%d],"jsonrpc":{"id":null,"errorCode":null},"outcome":%q,"retryOrigin":"none","httpMethod":%q,"status":%d,"conn":%q}`,
			conn, at, at, proto, method, status, outcome, httpMethod, status, conn)
	}
	lines := []string{
		line("28.477006499", "077e9ec6-1", "POST", "server/discover", "2026-07-28", 400, "HTTP_ERROR"),
		line("29.42198562", "077e9ec6-2", "POST", "initialize", "2025-11-25", 200, "RESULT_SUCCESS"),
		line("29.453562159", "077e9ec6-3", "POST", "notifications/initialized", "2025-11-25", 202, "NOTIFICATION_ACCEPTED"),
		line("29.474077492", "077e9ec6-3", "POST", "logging/setLevel", "2025-11-25", 200, "RESULT_SUCCESS"),
		line("29.500690346", "077e9ec6-4", "POST", "tools/list", "2025-11-25", 200, "RESULT_SUCCESS"),
		line("29.536768457", "077e9ec6-3", "POST", "tools/call", "2025-11-25", 200, "TOOL_SUCCESS"),
		line("29.46957516", "077e9ec6-2", "GET", "", "2025-11-25", 200, "HTTP_SUCCESS"),
	}
	acc := New(Options{})
	for _, l := range lines {
		r, err := record.Decode([]byte(l))
		if err != nil {
			t.Fatalf("%s: %v", l, err)
		}
		acc.Add(r)
	}
	acc.Close()
	if got := acc.Summary().Exchanges; got.Failures != 1 || got.EraFallbacks != 0 {
		t.Errorf("%d failed, %d era fallbacks; want 1, 0", got.Failures, got.EraFallbacks)
	}
}

// TestRecallRing: a probe recorded after its initialize is decided from the
// latest maxRecentRequests requests, oldest overwritten first: an
// initialize among them makes it a fallback, one pushed out does not.
func TestRecallRing(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name     string
		initAt   int // the initialize's place among the requests read first
		fallback bool
	}{
		{"initialize among the latest", 300 - maxRecentRequests, true},
		{"initialize pushed out", 300 - maxRecentRequests - 1, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := New(Options{})
			for k := range 300 {
				r := &record.Record{Kind: record.KindExchange, Method: "ping", Conn: fmt.Sprintf("c-%d", k), HTTPMethod: "POST",
					Time: start.Add(time.Second + time.Duration(k)*time.Millisecond)}
				if k == c.initAt {
					r.Method, r.Conn = "initialize", "probe-conn"
				}
				a.remember(r)
			}
			probe := &record.Record{Kind: record.KindExchange, Conn: "probe-conn", Time: start}
			if got := a.recall(probe); got != c.fallback {
				t.Errorf("recall %v, want %v", got, c.fallback)
			}
		})
	}
}
