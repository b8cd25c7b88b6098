package faults_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/faults"
)

// killCount is the LineServer of these tests: it counts the kills.
type killCount struct{ n int }

func (k *killCount) Kill() { k.n++ }

func callLine(id int, tool string) []byte {
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{}}}`, id, tool)
}

func lineEndpoint(t *testing.T, spec, params string) *faults.LineEndpoint {
	t.Helper()
	sel, err := faults.SelectStdio(spec, json.RawMessage(params))
	if err != nil {
		t.Fatal(err)
	}
	e, err := faults.NewLineEndpoint(sel, faults.EndpointOptions{Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// The stdio scenarios do to a response what their names say, on the
// requests their rules pick, with the same schedule as over HTTP.
func TestLineScenarios(t *testing.T) {
	resp := []byte(`{"jsonrpc":"2.0","id":2,"result":{}}`)
	for _, tt := range []struct {
		spec, params string
		lines        []string // forwarded for the matching call ("" : dropped)
		kills        int
	}{
		{"stdio.drop", "", nil, 0},
		{"stdio.garbage", "", []string{faults.DefaultGarbage + " (injected)", string(resp)}, 0},
		{"stdio.garbage", `{"line":"hello"}`, []string{"hello (injected)", string(resp)}, 0},
		{"stdio.delay", `{"delay":{"ms":1}}`, []string{string(resp)}, 0},
		{"stdio.exit", "", []string{string(resp)}, 1},
		// Composition: the inner scenario writes what the outer one sees,
		// and the outer one acts on the response line only.
		{"stdio.garbage+stdio.garbage", `[{"line":"outer"},{"line":"inner"}]`, []string{"inner (injected)", "outer (injected)", string(resp)}, 0},
		{"stdio.garbage+stdio.drop", "", nil, 0},
	} {
		t.Run(tt.spec+tt.params, func(t *testing.T) {
			e := lineEndpoint(t, tt.spec, tt.params)
			srv := &killCount{}
			// initialize does not match the default rules (tools/call).
			d := e.Request(context.Background(), faults.LineRequest{Line: []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`)}, srv)
			if d.Fired() != "" || srv.n != 0 {
				t.Fatalf("fired %q on initialize", d.Fired())
			}
			d = e.Request(context.Background(), faults.LineRequest{Line: callLine(2, "echo")}, srv)
			if d.Fired() != tt.spec {
				t.Errorf("fired %q, want %q", d.Fired(), tt.spec)
			}
			if srv.n != tt.kills {
				t.Errorf("%d kills, want %d", srv.n, tt.kills)
			}
			out, err := d.Response(context.Background(), resp)
			var got []string
			for _, o := range out {
				l := string(o.Line)
				if o.Injected {
					l += " (injected)"
				}
				got = append(got, l)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.lines) {
				t.Errorf("forwarded %q, want %q", got, tt.lines)
			}
			if (tt.lines == nil) != (err != nil) {
				t.Errorf("error %v with %d lines", err, len(out))
			}
			if c := e.Counters(); c.Posts != 2 || c.Methods["tools/call"] != 1 || c.Tools["echo"] != 1 {
				t.Errorf("counters %+v", c)
			}
		})
	}
}

// The schedule and the match count request lines as they count POSTs:
// {"first":2} fires on the first two matching calls, and a call of another
// tool neither matches nor counts.
func TestLineSchedule(t *testing.T) {
	e := lineEndpoint(t, "stdio.drop", `{"match":{"method":"tools/call","tool":"echo"},"schedule":{"first":2}}`)
	var fired []int
	for i, tool := range []string{"echo", "other", "echo", "echo", "echo"} {
		d := e.Request(context.Background(), faults.LineRequest{Line: callLine(i+1, tool)}, &killCount{})
		if d.Fired() != "" {
			fired = append(fired, i+1)
		}
		f := d.Firings()
		if len(f) != 1 || f[0].Scenario != "stdio.drop" || f[0].Why == "" {
			t.Fatalf("firings %+v", f)
		}
	}
	if fmt.Sprint(fired) != "[1 3]" {
		t.Errorf("fired on requests %v, want [1 3]", fired)
	}
}

// A seeded probability gives the same decisions for the same seed, as over
// HTTP.
func TestLineScheduleSeeded(t *testing.T) {
	run := func() []bool {
		e := lineEndpoint(t, "stdio.drop", `{"schedule":{"p":0.5,"seed":42}}`)
		var got []bool
		for i := range 40 {
			got = append(got, e.Request(context.Background(), faults.LineRequest{Line: callLine(i, "echo")}, &killCount{}).Fired() != "")
		}
		return got
	}
	a, b := run(), run()
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Errorf("two runs with seed 42 differ:\n%v\n%v", a, b)
	}
	if !strings.Contains(fmt.Sprint(a), "true") || !strings.Contains(fmt.Sprint(a), "false") {
		t.Errorf("p=0.5 over 40 draws: %v", a)
	}
}

// The protocol rule reads the session's revision when the line names none.
func TestLineProtocolMatch(t *testing.T) {
	e := lineEndpoint(t, "stdio.drop", `{"match":{"method":"tools/call","protocol":"2025-11-25"}}`)
	if d := e.Request(context.Background(), faults.LineRequest{Line: callLine(1, "echo")}, &killCount{}); d.Fired() != "" {
		t.Errorf("fired without a protocol")
	}
	if d := e.Request(context.Background(), faults.LineRequest{Line: callLine(2, "echo"), Protocol: faults.Protocol2025}, &killCount{}); d.Fired() == "" {
		t.Errorf("did not fire in a 2025-11-25 session: %+v", d.Firings())
	}
}

// The delay waits before the response line and ends with the run's
// context: a cancelled run gets an error at once, not the response.
func TestLineDelayHonoursContext(t *testing.T) {
	e := lineEndpoint(t, "stdio.delay", `{"delay":{"ms":30000}}`)
	d := e.Request(context.Background(), faults.LineRequest{Line: callLine(1, "echo")}, &killCount{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out, err := d.Response(ctx, []byte(`{}`))
	if out != nil || !errors.Is(err, context.Canceled) {
		t.Errorf("Response after the run ended: %v, %v; want nothing and context.Canceled", out, err)
	}
	f := d.Firings()
	if len(f) != 1 || len(f[0].DelayMs) != 1 || f[0].DelayMs[0] != 30000 {
		t.Errorf("firings %+v, want the 30 s draw noted", f)
	}
}

// The transports refuse each other's scenarios by name, whichever way
// they are given.
func TestTransportsRefuse(t *testing.T) {
	for _, tt := range []struct {
		name string
		err  func() error
		want string
	}{
		{"serve --scenario stdio.drop", func() error { _, err := faults.Select("stdio.drop", nil); return err },
			"stdio.drop applies to stdio servers (mcpdiag proxy --stdio), not to an HTTP server"},
		{"/s/stdio.exit/mcp", func() error { _, err := faults.SelectQuery("stdio.exit", nil); return err },
			"stdio.exit applies to stdio servers (mcpdiag proxy --stdio), not to an HTTP server"},
		{"a config file", func() error {
			var sel faults.Selection
			return json.Unmarshal([]byte(`[{"id":"stdio.garbage"}]`), &sel)
		}, "stdio.garbage applies to stdio servers"},
		{"--stdio --scenario errors.tool_error", func() error { _, err := faults.SelectStdio("errors.tool_error", nil); return err },
			"errors.tool_error applies to HTTP servers (mcpdiag serve, mcpdiag proxy --upstream), not to a stdio server"},
		{"--stdio a+b", func() error { _, err := faults.SelectStdio("stdio.drop+baseline", nil); return err },
			"baseline applies to HTTP servers"},
		{"a hand-made selection", func() error {
			sel, err := faults.Select("baseline", nil)
			if err != nil {
				return err
			}
			_, err = faults.NewLineEndpoint(sel, faults.EndpointOptions{})
			return err
		}, "baseline applies to HTTP servers (mcpdiag serve, mcpdiag proxy --upstream), not to a stdio server"},
		{"a delay between events", func() error {
			_, err := faults.SelectStdio("stdio.delay", json.RawMessage(`{"delay":{"ms":5,"place":"between_events"}}`))
			if err != nil {
				return err
			}
			sel, _ := faults.SelectStdio("stdio.delay", json.RawMessage(`{"delay":{"ms":5,"place":"between_events"}}`))
			_, err = faults.NewLineEndpoint(sel, faults.EndpointOptions{})
			return err
		}, `stdio.delay: param delay.place: "between_events": a stdio response is one line`},
		{"stdio.delay without a delay", func() error { _, err := faults.SelectStdio("stdio.delay", json.RawMessage(`{"delay":{}}`)); return err },
			"stdio.delay: param delay: no delay set"},
		{"a garbage line of two lines", func() error {
			_, err := faults.SelectStdio("stdio.garbage", json.RawMessage(`{"line":"a\nb"}`))
			return err
		}, "stdio.garbage: param line: must be one line"},
	} {
		err := tt.err()
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
}

// A hand-made Selection holding a line scenario, put on an HTTP endpoint,
// says so on every request rather than pass it through.
func TestHTTPEndpointRefusesLineScenario(t *testing.T) {
	sel, err := faults.SelectStdio("stdio.drop", nil)
	if err != nil {
		t.Fatal(err)
	}
	ep := faults.NewEndpoint(sel, standIn, faults.EndpointOptions{Path: "/mcp", Seed: 1})
	req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(callBody))
	rec := httptest.NewRecorder()
	ep.ServeHTTP(rec, req)
	if rec.Code != http.StatusInternalServerError || !strings.Contains(rec.Body.String(), "stdio.drop applies to stdio servers") {
		t.Errorf("got %d %q", rec.Code, rec.Body.String())
	}
}
