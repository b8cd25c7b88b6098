package faults_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/faults"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/recorder"
)

// firePattern sends n tools/calls one after the other and returns which
// fired ('x') and which did not ('.').
func firePattern(t *testing.T, ep http.Handler, n int) string {
	t.Helper()
	var pattern strings.Builder
	for range n {
		req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(callBody))
		rec := httptest.NewRecorder()
		ep.ServeHTTP(rec, req)
		if strings.Contains(rec.Body.String(), `"error"`) {
			pattern.WriteByte('x')
		} else {
			pattern.WriteByte('.')
		}
	}
	return pattern.String()
}

// TestScheduleDeterminism checks that a probabilistic schedule replays
// exactly from its seed: after a reset, on a new endpoint with the same
// seed, and with the seed in the params; and that another seed differs.
func TestScheduleDeterminism(t *testing.T) {
	sel, err := faults.Select("errors.jsonrpc_error", json.RawMessage(`{"schedule":{"p":0.5}}`))
	if err != nil {
		t.Fatal(err)
	}
	ep := faults.NewEndpoint(sel, standIn, faults.EndpointOptions{Seed: 42})
	first := firePattern(t, ep, 64)
	if strings.Count(first, "x") < 16 || strings.Count(first, "x") > 48 {
		t.Errorf("p=0.5 fired %d of 64: %s", strings.Count(first, "x"), first)
	}
	ep.Reset()
	if again := firePattern(t, ep, 64); again != first {
		t.Errorf("after a reset:\n%s\n%s", first, again)
	}
	if other := firePattern(t, faults.NewEndpoint(sel, standIn, faults.EndpointOptions{Seed: 42}), 64); other != first {
		t.Errorf("a new endpoint with the same seed:\n%s\n%s", first, other)
	}
	if other := firePattern(t, faults.NewEndpoint(sel, standIn, faults.EndpointOptions{Seed: 43}), 64); other == first {
		t.Errorf("another seed gave the same pattern")
	}
	seeded, _ := faults.Select("errors.jsonrpc_error", json.RawMessage(`{"schedule":{"p":0.5,"seed":42}}`))
	if got := firePattern(t, faults.NewEndpoint(seeded, standIn, faults.EndpointOptions{Seed: 7}), 64); got != first {
		t.Errorf("schedule.seed 42 on an endpoint seeded 7:\n%s\n%s", first, got)
	}
	// A random endpoint seed is reported, and replays.
	rnd := faults.NewEndpoint(sel, standIn, faults.EndpointOptions{})
	a := firePattern(t, rnd, 64)
	if b := firePattern(t, faults.NewEndpoint(sel, standIn, faults.EndpointOptions{Seed: rnd.Seed()}), 64); a != b {
		t.Errorf("replaying the reported seed %d:\n%s\n%s", rnd.Seed(), a, b)
	}
}

// TestDecisionsAreLogged checks that every decision, fired or not, and the
// seed reach the exchange record a recorder in front of the endpoint writes
// (as mcpdiag serve's log does), through the tap on the request's context.
func TestDecisionsAreLogged(t *testing.T) {
	sel, _ := faults.Select("errors.jsonrpc_error", json.RawMessage(`{"schedule":{"p":0.5}}`))
	var lines [][]byte
	var mu sync.Mutex
	rc, err := recorder.New(recorder.Options{Records: lineSink{&mu, &lines}, Bodies: recorder.BodiesNone,
		FaultScenario: true, ServerFacts: true, Sync: true})
	if err != nil {
		t.Fatal(err)
	}
	ep := rc.Handler(faults.NewEndpoint(sel, standIn, faults.EndpointOptions{Path: "/mcp", Seed: 42}))
	pattern := firePattern(t, ep, 8)
	if len(lines) != 8 {
		t.Fatalf("%d lines", len(lines))
	}
	for i, line := range lines {
		rec, err := record.Decode(line)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(line, []byte(`"serve"`)) {
			t.Errorf("line %d: a spliced serve member: %s", i, line)
		}
		d := faults.DetailsOf(rec)
		if rec.Kind != record.KindExchange || rec.Method != "tools/call" || rec.Tool != "echo" || rec.Fault.Selection != "errors.jsonrpc_error" ||
			rec.Scenario != rec.Fault.FiredString() || rec.Flags.Has(record.FlagFI) != (rec.Scenario != "") {
			t.Errorf("line %d: %s", i, line)
		}
		if d.Seed != 42 || d.Count.Post != i+1 || len(d.Faults) != 1 || d.Faults[0].Draw == nil || d.Faults[0].N != i+1 {
			t.Errorf("line %d: details %+v", i, d)
		}
		if fired := d.Faults[0].Fired; fired != (pattern[i] == 'x') || (d.Fired != "") != fired {
			t.Errorf("line %d: fired %v, pattern %c", i, fired, pattern[i])
		}
		if !bytes.Contains(line, []byte(`"seed":"42"`)) {
			t.Errorf("line %d: no seed: %s", i, line)
		}
	}
}

// TestCountersAndReset checks the endpoint's counters and their reset, and
// that a new selection takes effect on the next request with zeroed
// counters.
func TestCountersAndReset(t *testing.T) {
	ep := faults.NewEndpoint(nil, standIn, faults.EndpointOptions{Seed: 1})
	send := func(body string) string {
		rec := httptest.NewRecorder()
		ep.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body)))
		return rec.Body.String()
	}
	send(callBody)
	send(callBody)
	send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	send(`not json`)
	ep.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/mcp", nil))
	c := ep.Counters()
	if c.Posts != 4 || c.Methods["tools/call"] != 2 || c.Methods["tools/list"] != 1 || c.Tools["echo"] != 2 {
		t.Errorf("counters %+v", c)
	}
	ep.Reset()
	if c := ep.Counters(); c.Posts != 0 || len(c.Methods) != 0 {
		t.Errorf("after reset %+v", c)
	}
	sel, _ := faults.Select("errors.jsonrpc_error", json.RawMessage(`{"schedule":{"nth":2}}`))
	send(callBody)
	ep.SetSelection(sel)
	if got := send(callBody); strings.Contains(got, "error") {
		t.Errorf("the new selection counted a request made before it: %s", got)
	}
	if got := send(callBody); !strings.Contains(got, "-32602") {
		t.Errorf("the second call under the new selection: %s", got)
	}
}

// TestDelayPlaces checks the three delay places on the wire timing.
func TestDelayPlaces(t *testing.T) {
	for _, tt := range []struct {
		place string
		min   time.Duration
	}{
		{"before_headers", 80 * time.Millisecond},
		{"before_first_event", 80 * time.Millisecond},
		{"between_events", 160 * time.Millisecond}, // 3 events, 2 gaps
	} {
		t.Run(tt.place, func(t *testing.T) {
			sel, err := faults.Select("sse.notifications_then_result", json.RawMessage(`{"notifications":2,"intervalMs":0,"delay":{"ms":80,"place":"`+tt.place+`"}}`))
			if err != nil {
				t.Fatal(err)
			}
			var obs *faults.Observation
			ep := faults.NewEndpoint(sel, standIn, faults.EndpointOptions{Seed: 1, Observe: func(o *faults.Observation) { obs = o }})
			start := time.Now()
			rec := serveVia(ep)
			if d := time.Since(start); d < tt.min {
				t.Errorf("took %s, want at least %s", d, tt.min)
			}
			want := ev(progress(1, 2)) + ev(progress(2, 2)) + ev(result("7"))
			if rec.Body.String() != want {
				t.Errorf("the delay changed the bytes: %q", rec.Body.String())
			}
			if len(obs.Firings[0].DelayMs) == 0 {
				t.Errorf("no delay logged")
			}
		})
	}
}

func serveVia(h http.Handler) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(callBody))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// lineSink keeps a recorder's records as encoded lines.
type lineSink struct {
	mu    *sync.Mutex
	lines *[][]byte
}

func (s lineSink) Write(r *record.Record) error {
	line, err := (&record.Encoder{}).Encode(r)
	if err != nil {
		return err
	}
	s.mu.Lock()
	*s.lines = append(*s.lines, line)
	s.mu.Unlock()
	return nil
}
