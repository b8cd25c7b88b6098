package probe_test

import (
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/judge"
	"github.com/mcpdiag/mcpdiag/probe"
	"github.com/mcpdiag/mcpdiag/proxy"
)

// TestProbeOriginThroughProxy: mcpdiag proxy refuses a foreign Origin itself
// (its DNS-rebinding guard), before the server sees the request. Probed
// through it, a server without an Origin check passed probe.origin, where
// probed directly it fails: the proxy's 403 was read as the server's. The
// proxy's 403 now carries Proxy-Status (RFC 9209), and probe.origin is not
// applicable on it; every other verdict is the same both ways.
func TestProbeOriginThroughProxy(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"any-origin", "healthy"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			upstream, _ := badServer(t, mode)
			u, err := url.Parse(upstream)
			if err != nil {
				t.Fatal(err)
			}
			p, err := proxy.New(proxy.Options{Upstream: u})
			if err != nil {
				t.Fatal(err)
			}
			ts := httptest.NewUnstartedServer(nil)
			ts.Config = p.HTTPServer(p)
			ts.Start()
			t.Cleanup(ts.Close)
			direct := run(t, upstream, "2026-07-28", probe.Options{MaxPerTool: 1})
			proxied := run(t, ts.URL+u.Path, "2026-07-28", probe.Options{MaxPerTool: 1})
			verdicts := func(rep *probe.Report) map[string]judge.Check {
				m := map[string]judge.Check{}
				for _, c := range rep.Checks {
					m[c.Rule] = c
				}
				return m
			}
			d, px := verdicts(direct), verdicts(proxied)
			wantDirect := judge.Pass
			if mode == "any-origin" {
				wantDirect = judge.Fail
			}
			if c := d["probe.origin"]; c.Verdict != wantDirect {
				t.Errorf("direct probe.origin %s (%s), want %s", c.Verdict, c.Evidence, wantDirect)
			}
			if c := px["probe.origin"]; c.Verdict != judge.NotApplicable || !strings.Contains(c.Evidence, "Proxy-Status") {
				t.Errorf("proxied probe.origin %s (%s), want n/a naming the proxy's Proxy-Status", c.Verdict, c.Evidence)
			}
			for rule, c := range d {
				if rule != "probe.origin" && px[rule].Verdict != c.Verdict {
					t.Errorf("%s: direct %s (%s), proxied %s (%s)", rule, c.Verdict, c.Evidence, px[rule].Verdict, px[rule].Evidence)
				}
			}
		})
	}
}
