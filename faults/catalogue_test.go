package faults_test

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/client"
	"github.com/mcpdiag/mcpdiag/faults"
	"github.com/mcpdiag/mcpdiag/fixture"
	"github.com/mcpdiag/mcpdiag/internal/testwait"
	"github.com/mcpdiag/mcpdiag/retry"
)

// served is one endpoint on a real 127.0.0.1 listener over the fixture.
type served struct {
	url string
	ep  *faults.Endpoint

	mu  sync.Mutex
	obs []*faults.Observation
}

func (s *served) observations() []*faults.Observation {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*faults.Observation(nil), s.obs...)
}

// posts waits for every POST the endpoint counted to be observed (a request
// ends after its client may have left), then returns the observed POSTs.
func (s *served) posts(t *testing.T) []*faults.Observation {
	t.Helper()
	deadline := time.Now().Add(testwait.Bound)
	for {
		var out []*faults.Observation
		for _, o := range s.observations() {
			if o.HTTPMethod == "POST" {
				out = append(out, o)
			}
		}
		if len(out) >= s.ep.Counters().Posts || time.Now().After(deadline) {
			return out
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func serveSelection(t *testing.T, sel faults.Selection, seed uint64) *served {
	t.Helper()
	s := &served{}
	s.ep = faults.NewEndpoint(sel, fixture.New(fixture.Options{}), faults.EndpointOptions{Path: "/mcp", Seed: seed,
		Observe: func(o *faults.Observation) {
			s.mu.Lock()
			s.obs = append(s.obs, o)
			s.mu.Unlock()
		}})
	ts := httptest.NewServer(s.ep)
	t.Cleanup(ts.Close)
	if !strings.HasPrefix(ts.URL, "http://127.0.0.1:") {
		t.Fatalf("not on loopback: %s", ts.URL)
	}
	s.url = ts.URL + "/mcp"
	return s
}

// quick returns the entry's quick params and client timeout (10 s, as
// `mcpdiag call --timeout 10s`, when it has none).
func quick(e faults.Entry) (json.RawMessage, time.Duration) {
	timeout := 10 * time.Second
	if e.QuickTimeoutMs > 0 {
		timeout = time.Duration(e.QuickTimeoutMs) * time.Millisecond
	}
	return e.QuickParams, timeout
}

// callEntry makes the entry's call as `mcpdiag call URL TOOL --args ARGS
// --retries 0 --timeout 10s` would.
func callEntry(t *testing.T, url string, e faults.Entry, timeout time.Duration) *client.Call {
	t.Helper()
	pol := retry.DefaultPolicy()
	pol.MaxRetries = 0
	opts := client.Options{URL: url, Protocol: e.Protocol, Policy: &pol, Timeout: timeout, Rand: rand.New(rand.NewPCG(1, 2))}
	if len(e.Input) > 0 {
		in, err := client.ReadInputs(strings.NewReader(string(e.Input)))
		if err != nil {
			t.Fatal(err)
		}
		opts.Inputs = in
	}
	c, err := client.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	call, err := c.CallTool(context.Background(), e.Tool, e.Args)
	if err != nil {
		t.Fatal(err)
	}
	return call
}

// unchangedForCatalogueClient are the scenarios that leave the requests of
// a correct client as they are (its ids are small, its calls well formed;
// baseline injects nothing): they pass every request through.
var unchangedForCatalogueClient = map[string]bool{
	"baseline": true, "server.id_as_string": true, "server.malformed_call_as_success": true,
}

// TestCatalogueOutcomes calls every scenario as its entry says and checks the
// outcome a correct client sees and the POSTs the server counted. (The
// stdio entries are checked through the stdio proxy, in package proxy.)
func TestCatalogueOutcomes(t *testing.T) {
	for _, e := range faults.Catalogue() {
		if e.OnStdio() || e.UsesOAuth() {
			// The OAuth entries need mcpdiag serve's authorization
			// server: package serve checks them end to end.
			continue
		}
		t.Run(e.ID, func(t *testing.T) {
			t.Parallel()
			params, timeout := quick(e)
			sel, err := faults.Select(e.ID, params)
			if err != nil {
				t.Fatal(err)
			}
			s := serveSelection(t, sel, 1)
			call := callEntry(t, s.url, e, timeout)
			if call.Outcome != e.ExpectedOutcome {
				t.Errorf("outcome %s (%s; decision %s: %s), want %s", call.Outcome, call.Final.Reason, call.Decision.Action, call.Decision.Reason, e.ExpectedOutcome)
				for _, ex := range call.Exchanges {
					t.Logf("  %d %s %d %s %s", ex.Seq, ex.Method, ex.Status, ex.Result.Outcome, ex.Result.Reason)
				}
			}
			posts := s.posts(t)
			if len(posts) != e.ExpectedPosts {
				t.Errorf("the server observed %d POSTs, want %d", len(posts), e.ExpectedPosts)
				for _, o := range posts {
					t.Logf("  %s %s %d fired=%q %+v", o.Request.Method, o.Request.Name, o.Status, o.Fired(), o.Firings)
				}
			}
			fired, passed := false, false
			for _, o := range posts {
				fired = fired || o.Fired() != ""
				for _, f := range o.Firings {
					passed = passed || f.PassedThrough
				}
			}
			switch {
			case e.ID == "catalog.facet_unavailable" || e.ID == "catalog.rug_pull":
			case unchangedForCatalogueClient[e.ID]:
				// The scenario's schedule chose requests it left as
				// they were: passed through, not fired (no FI).
				if fired || !passed {
					t.Errorf("fired %v, passed through %v: want a pass-through and no firing (the catalogue client's requests give the scenario nothing to change)", fired, passed)
				}
			case !fired:
				t.Errorf("the scenario never fired")
			}
			if call.Outcome.Layer() == classify.LayerTransport && call.Outcome != e.ExpectedOutcome {
				t.Logf("client exchanges: %d", len(call.Exchanges))
			}
		})
	}
}
