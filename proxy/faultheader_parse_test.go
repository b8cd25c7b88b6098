package proxy_test

import (
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/mcpdiag/mcpdiag/proxy"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/wire"
)

// TestFaultHeaderParseLimitOnlyWhenAsked: under --allow-fault-header with no
// --scenario, a request without the Mcpdiag-Scenario header reaches no fault
// endpoint, so the proxy reads it as a proxy without faults does (up to
// DefaultMaxRequestParse, 4 MiB, forwarding the rest as it arrives): its
// record equals that proxy's record of the same request. Only a request
// whose header asks for a fault is read up to faults.DefaultMaxBody (8 MiB),
// as its endpoint reads it. Every body the upstream gets is the one sent,
// whole. Before, every request of such a proxy was read to 8 MiB: a 5 MiB
// request without the header was held whole before forwarding, and its
// record named a method the plain proxy's does not.
func TestFaultHeaderParseLimitOnlyWhenAsked(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	got := map[[32]byte]int{} // the bodies the upstream received, by hash
	// The upstream answers every tools/call itself (go-sdk's server
	// refuses a body over 4 MiB with 413).
	up := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			t.Errorf("upstream: reading the body: %v", err)
			return
		}
		mu.Lock()
		got[sha256.Sum256(b)]++
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"ok"}]}}`, wire.ParseMessage(b).ID)
	}))
	plainURL, _, plainSink, plainStop := startProxy(t, up, proxy.Options{})
	hdrURL, _, hdrSink, hdrStop := startProxy(t, up, proxy.Options{Faults: &proxy.FaultOptions{AllowHeader: true}})

	// A scenario that matches no request of the test: the endpoint reads
	// the request, decides, and passes it on.
	asked := map[string]string{proxy.HeaderScenario: "errors.http_status_sequence",
		proxy.HeaderParams: `{"statusCodes":[503],"match":{"tool":"nothing-called-this"}}`}
	sizes := []int{3 << 20, 5 << 20, 9 << 20}
	bodyOf := func(id, n int) string {
		return callBody(id, "echo", `{"text":"`+strings.Repeat("x", n)+`"}`)
	}
	type sent struct {
		id     int
		size   int
		header bool
	}
	var sends []sent
	for i, n := range sizes {
		id := 10 + i
		body := bodyOf(id, n)
		for _, u := range []string{plainURL, hdrURL} {
			status, _, _, err := post(t, http.DefaultClient, u, body, modernHeaders("echo"))
			if err != nil || status != 200 {
				t.Fatalf("%d MiB without the header: status %d, %v", n>>20, status, err)
			}
		}
		sends = append(sends, sent{id, n, false})
		if n < 8<<20 {
			hdr := modernHeaders("echo")
			for k, v := range asked {
				hdr[k] = v
			}
			id := 100 + i // three digits: a body of its own length
			status, _, _, err := post(t, http.DefaultClient, hdrURL, bodyOf(id, n), hdr)
			if err != nil || status != 200 {
				t.Fatalf("%d MiB with the header: status %d, %v", n>>20, status, err)
			}
			sends = append(sends, sent{id, n, true})
		}
	}
	plainStop()
	hdrStop()

	mu.Lock()
	for _, s := range sends {
		want := 2 // through both proxies
		if s.header {
			want = 1
		}
		if n := got[sha256.Sum256([]byte(bodyOf(s.id, s.size)))]; n != want {
			t.Errorf("id %d (%d MiB): the upstream got the body whole %d times, want %d", s.id, s.size>>20, n, want)
		}
	}
	mu.Unlock()

	// A record without a parse has no id: the records are told apart by
	// their request's length, which differs between any two sends to one
	// proxy.
	bySize := func(recs []*record.Record) map[int64]*record.Record {
		m := map[int64]*record.Record{}
		for _, r := range recs {
			if m[r.RequestBytes] != nil {
				t.Errorf("two records of %d request bytes", r.RequestBytes)
			}
			m[r.RequestBytes] = r
		}
		return m
	}
	plain, hdr := bySize(plainSink.exchanges(t)), bySize(hdrSink.exchanges(t))
	for _, s := range sends {
		id := strconv.Itoa(s.id)
		size := int64(len(bodyOf(s.id, s.size)))
		h := hdr[size]
		if h == nil {
			t.Errorf("id %d: no record of the proxy with --allow-fault-header", s.id)
			continue
		}
		if s.header {
			// Read as far as its endpoint reads: parsed below 8 MiB.
			if h.Method != "tools/call" || h.Tool != "echo" || h.JSONRPC.ID.String() != id || h.Status != 200 {
				t.Errorf("id %d (%d MiB, header): method %q tool %q id %s status %d; want tools/call, echo, %s, 200 (note %q)",
					s.id, s.size>>20, h.Method, h.Tool, h.JSONRPC.ID, h.Status, id, h.Note)
			}
			continue
		}
		p := plain[size]
		if p == nil {
			t.Errorf("id %d: no record of the plain proxy", s.id)
			continue
		}
		if h.Method != p.Method || h.Tool != p.Tool || h.JSONRPC.ID.String() != p.JSONRPC.ID.String() || h.Note != p.Note ||
			h.Status != p.Status || h.Outcome != p.Outcome || h.RequestBytes != p.RequestBytes {
			t.Errorf("id %d (%d MiB, no header): with --allow-fault-header method %q tool %q id %s status %d %s bytes %d note %q;\n"+
				"without faults method %q tool %q id %s status %d %s bytes %d note %q",
				s.id, s.size>>20, h.Method, h.Tool, h.JSONRPC.ID, h.Status, h.Outcome, h.RequestBytes, h.Note,
				p.Method, p.Tool, p.JSONRPC.ID, p.Status, p.Outcome, p.RequestBytes, p.Note)
		}
	}
	// The plain proxy's own limit, as the test assumes it: 3 MiB parsed,
	// 5 and 9 MiB not. A body over the limit still has the method its head
	// names (wire.ParseMessageHead); only a whole parse hashes the
	// arguments.
	for i, n := range sizes {
		p := plain[int64(len(bodyOf(10+i, n)))]
		if p == nil {
			continue
		}
		if parsed := p.ArgsHash != ""; parsed != (n < proxy.DefaultMaxRequestParse) || p.Method != "tools/call" {
			t.Errorf("plain proxy, %d MiB: method %q, args hash %q (note %q); parsed whole %v, want %v, and tools/call", n>>20, p.Method, p.ArgsHash, p.Note, parsed, n < proxy.DefaultMaxRequestParse)
		}
	}
}
