package proxy

import (
	"net/url"
	"testing"
)

// TestTargetURLWithoutAllocation: the URL a record names, the path the
// admin guard checks and the upstream request's URL are what targetURL
// gives, for every shape of path and query, also when paths alternate
// (targetString keeps the last one); a repeated path costs no allocation
// (each exchange built the URL three times before: the record's, the
// admin guard's and the upstream request's).
func TestTargetURLWithoutAllocation(t *testing.T) {
	for _, upstream := range []string{"http://u:p@127.0.0.1:9/mcp?k=v", "https://host", "http://h/a%2Fb"} {
		up, _ := url.Parse(upstream)
		p, err := New(Options{Upstream: up})
		if err != nil {
			t.Fatal(err)
		}
		ins := []string{"/mcp", "/", "", "/?q=1", "/x%2Fy?z", "/mcp", "/.well-known/oauth", "/mcp?a=b", "/mcp"}
		for i := 0; i < 2; i++ {
			for _, s := range ins {
				in, err := url.ParseRequestURI("http://proxy" + s)
				if err != nil {
					in = &url.URL{}
				}
				want := p.targetURL(in)
				if got := p.targetString(in); got != want.String() {
					t.Errorf("upstream %s, %q: targetString %q, want %q", upstream, s, got, want)
				}
				if got := p.targetPath(in); got != want.Path {
					t.Errorf("upstream %s, %q: targetPath %q, want %q", upstream, s, got, want.Path)
				}
				out := *in
				out.Fragment, out.Opaque = "frag", ""
				p.targetInto(&out, in)
				if out != *want {
					t.Errorf("upstream %s, %q: targetInto %+v, want %+v", upstream, s, out, *want)
				}
			}
		}
		in, _ := url.ParseRequestURI("/mcp")
		if n := testing.AllocsPerRun(100, func() {
			p.targetString(in)
			p.targetPath(in)
			var out url.URL
			p.targetInto(&out, in)
		}); n != 0 {
			t.Errorf("%v allocations per exchange's URLs", n)
		}
	}
}
