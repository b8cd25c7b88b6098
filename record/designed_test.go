package record

import (
	"testing"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/wire"
)

// TestDesignedAnswer: the answers the spec designs to a request that is no
// JSON-RPC message (a GET or DELETE answered 405, a GET answered 3xx) are
// designed, with their reason; the same status to a JSON-RPC message (a
// POST with a method or an id, a client's answer, a batch), to another
// HTTP method, with another outcome or on a call is not.
func TestDesignedAnswer(t *testing.T) {
	base := func(method string, status int) Record {
		return Record{Kind: KindExchange, HTTPMethod: method, Status: status, Outcome: classify.HTTPError,
			JSONRPC: JSONRPC{ID: wire.IDFromRaw([]byte("null"))}}
	}
	cases := []struct {
		name string
		r    func() Record
		want Designed
	}{
		{"GET 405", func() Record { return base("GET", 405) }, DesignedNoStream},
		{"GET 405 id absent", func() Record { r := base("GET", 405); r.JSONRPC.ID = wire.ID{}; return r }, DesignedNoStream},
		{"DELETE 405", func() Record { return base("DELETE", 405) }, DesignedNoSessionEnd},
		{"GET 302", func() Record { return base("GET", 302) }, DesignedRedirect},
		{"GET 300", func() Record { return base("GET", 300) }, DesignedRedirect},
		{"GET 399", func() Record { return base("GET", 399) }, DesignedRedirect},
		{"GET 400", func() Record { return base("GET", 400) }, ""},
		{"GET 404", func() Record { return base("GET", 404) }, ""},
		{"GET 406", func() Record { return base("GET", 406) }, ""},
		{"GET 500", func() Record { return base("GET", 500) }, ""},
		{"DELETE 302", func() Record { return base("DELETE", 302) }, ""},
		{"DELETE 404", func() Record { return base("DELETE", 404) }, ""},
		{"POST 405", func() Record { return base("POST", 405) }, ""},
		{"POST 302", func() Record { return base("POST", 302) }, ""},
		{"GET 405 with a method", func() Record { r := base("GET", 405); r.Method = "tools/list"; return r }, ""},
		{"GET 405 with an id", func() Record { r := base("GET", 405); r.JSONRPC.ID = wire.IntID(1); return r }, ""},
		{"GET 405 with a string id", func() Record { r := base("GET", 405); r.JSONRPC.ID = wire.StringID("1"); return r }, ""},
		{"a client's answer", func() Record { r := base("GET", 405); r.ClientAnswer = true; return r }, ""},
		{"a batch", func() Record { r := base("GET", 405); r.Batch = 2; return r }, ""},
		{"NETWORK_ERROR", func() Record { r := base("GET", 405); r.Outcome = classify.NetworkError; return r }, ""},
		{"HTTP_SUCCESS", func() Record { r := base("GET", 302); r.Outcome = classify.HTTPSuccess; return r }, ""},
		{"a call", func() Record { r := base("GET", 405); r.Kind = KindCall; return r }, ""},
	}
	for _, c := range cases {
		r := c.r()
		if got := r.DesignedAnswer(); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
