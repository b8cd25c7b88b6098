package probe_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/fixture"
	"github.com/mcpdiag/mcpdiag/judge"
	"github.com/mcpdiag/mcpdiag/probe"
	"github.com/mcpdiag/mcpdiag/record"
)

func run(t *testing.T, url, protocol string, opts probe.Options) *probe.Report {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	opts.URL, opts.Protocol = url, protocol
	if opts.Timeout == 0 {
		opts.Timeout = 10 * time.Second
	}
	rep, err := probe.Run(ctx, opts)
	if err != nil {
		t.Fatalf("probe.Run: %v", err)
	}
	return rep
}

func checks(cs []judge.Check) string {
	var b strings.Builder
	for _, c := range cs {
		b.WriteString(c.Rule + " " + string(c.Verdict) + " " + c.Evidence + "\n")
	}
	return b.String()
}

// TestProbeHealthyFixture: mcpdiag's own fixture, in both eras, passes every
// probe rule, and its destructive tool is never called.
func TestProbeHealthyFixture(t *testing.T) {
	for _, protocol := range []string{"2026-07-28", "2025-11-25", "auto"} {
		t.Run(protocol, func(t *testing.T) {
			srv := fixture.New(fixture.Options{})
			ts := httptest.NewServer(srv)
			defer ts.Close()
			rep := run(t, ts.URL, protocol, probe.Options{})
			t.Logf("%s", checks(rep.Checks))
			for _, c := range rep.Checks {
				if c.Verdict == judge.Fail {
					t.Errorf("%s failed: %s", c.Rule, c.Evidence)
				}
			}
			for _, r := range rep.Records {
				if r.Probe != nil && r.Probe.Answer != record.ProbeAnswerResponse {
					t.Errorf("probe %d %s: answer %q, want %q", r.Probe.Index, r.Probe.Kind, r.Probe.Answer, record.ProbeAnswerResponse)
				}
			}
			if n := srv.ToolRuns(fixture.ToolDeleteItem); n != 0 {
				t.Errorf("delete_item ran %d times", n)
			}
		})
	}
}

// TestProbeHealthyFixtureAllowAll: with --allow-all every tool of the
// fixture gets argument probes, the conformance tools (test_*) too, and
// still no rule fails: arguments that are not an object are refused before
// any tool runs (the conformance tools answered them with a success).
func TestProbeHealthyFixtureAllowAll(t *testing.T) {
	for _, protocol := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(protocol, func(t *testing.T) {
			ts := httptest.NewServer(fixture.New(fixture.Options{}))
			defer ts.Close()
			rep := run(t, ts.URL, protocol, probe.Options{AllowAll: true, MaxPerTool: 1})
			probed := 0
			for _, tp := range rep.Tools {
				if strings.HasPrefix(tp.Name, "test_") && tp.Probes > 0 {
					probed++
				}
			}
			if probed == 0 {
				t.Fatal("no conformance tool was probed")
			}
			for _, c := range rep.Checks {
				if c.Verdict == judge.Fail {
					t.Errorf("%s failed: %s", c.Rule, c.Evidence)
				}
			}
		})
	}
}

// TestProbeUnknownAllow: an --allow name no listed tool has (a typo)
// probes nothing, and the report says so in text and JSON.
func TestProbeUnknownAllow(t *testing.T) {
	srv := fixture.New(fixture.Options{})
	ts := httptest.NewServer(srv)
	defer ts.Close()
	rep := run(t, ts.URL, "2026-07-28", probe.Options{Allow: []string{"delet_item", fixture.ToolCounterSet}, MaxPerTool: 1})
	if len(rep.UnknownAllow) != 1 || rep.UnknownAllow[0] != "delet_item" {
		t.Errorf("UnknownAllow %q, want [delet_item]", rep.UnknownAllow)
	}
	var text, js strings.Builder
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	if want := "warning: --allow delet_item: no listed tool has that name"; !strings.Contains(text.String(), want) {
		t.Errorf("text lacks %q:\n%s", want, text.String())
	}
	if !strings.Contains(js.String(), `"unknownAllow": [`) {
		t.Errorf("JSON lacks unknownAllow")
	}
	if n := srv.ToolRuns(fixture.ToolDeleteItem); n != 0 {
		t.Errorf("delete_item ran %d times", n)
	}
}

// TestGradesCoverEveryProbeRule: every probe rule is in exactly one family
// of the grade line.
func TestGradesCoverEveryProbeRule(t *testing.T) {
	seen := map[string]int{}
	for _, f := range probe.Families {
		for _, r := range f.Rules {
			seen[r]++
		}
	}
	for _, r := range judge.Rules() {
		if r.Probe && seen[r.ID] != 1 {
			t.Errorf("%s is in %d families", r.ID, seen[r.ID])
		}
		delete(seen, r.ID)
	}
	for r := range seen {
		t.Errorf("family rule %s is no probe rule", r)
	}
}
