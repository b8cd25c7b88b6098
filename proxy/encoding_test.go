package proxy_test

import (
	"compress/gzip"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/mcpdiag/mcpdiag/proxy"
)

// The proxy forwards the client's Accept-Encoding as it is: it adds none
// (Go's transport would ask for gzip and unpack the answer itself), so an
// upstream that compresses when asked sees the request the client sent, and
// the client receives the bytes the upstream sent, compressed or not, as it
// would directly.
func TestAcceptEncodingUnchanged(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var seen []string
	result := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"ok"}]}}`
	up := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		ae := strings.Join(r.Header.Values("Accept-Encoding"), ",")
		mu.Lock()
		seen = append(seen, ae)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if strings.Contains(ae, "gzip") {
			w.Header().Set("Content-Encoding", "gzip")
			zw := gzip.NewWriter(w)
			io.WriteString(zw, result)
			zw.Close()
			return
		}
		io.WriteString(w, result)
	}))
	via, _, _, _ := startProxy(t, up, proxy.Options{})
	body := callBody(1, "echo", `{"text":"hi"}`)
	for _, hdr := range []map[string]string{nil, {"Accept-Encoding": "gzip"}, {"Accept-Encoding": "identity"}} {
		mu.Lock()
		seen = nil
		mu.Unlock()
		direct := fetch(t, up, body, hdr)
		proxied := fetch(t, via, body, hdr)
		if direct.String() != proxied.String() {
			t.Errorf("Accept-Encoding %q: direct %s\n  through the proxy %s", hdr["Accept-Encoding"], direct, proxied)
		}
		mu.Lock()
		if len(seen) != 2 || seen[0] != seen[1] {
			t.Errorf("Accept-Encoding %q: the upstream saw %q directly and through the proxy", hdr["Accept-Encoding"], seen)
		}
		mu.Unlock()
	}
}
