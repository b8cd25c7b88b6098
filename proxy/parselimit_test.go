package proxy_test

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/proxy"
)

// TestRequestParseLimit: a request body over Options.MaxRequestParse
// reaches the upstream byte for byte, its answer reaches the client, and
// the record says the body was forwarded whole but not parsed (with the
// limit), instead of guessing its JSON-RPC facts from a prefix.
func TestRequestParseLimit(t *testing.T) {
	const limit = 1024
	var mu sync.Mutex
	var got []byte
	up := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = b
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"ok"}]}}`)
	}))
	u, p, sink, stop := startProxy(t, up, proxy.Options{MaxRequestParse: limit})
	body := callBody(1, "echo", `{"text":"`+strings.Repeat("x", 5*limit)+`"}`)
	status, _, resp, err := post(t, &http.Client{Timeout: 10 * time.Second}, u, body, modernHeaders("echo"))
	if err != nil || status != 200 || !bytes.Contains(resp, []byte(`"text":"ok"`)) {
		t.Fatalf("client got %d %v %s", status, err, resp)
	}
	waitExchanges(t, p, 1)
	stop()
	mu.Lock()
	defer mu.Unlock()
	if !bytes.Equal(got, []byte(body)) {
		t.Errorf("the upstream received %d bytes, want the %d sent, unchanged", len(got), len(body))
	}
	recs := sink.exchanges(t)
	if len(recs) != 1 {
		t.Fatalf("%d records", len(recs))
	}
	if r := recs[0]; !strings.Contains(r.Note, "larger than 1024 bytes; it was forwarded whole but not parsed") || r.Method != "" {
		t.Errorf("record method %q, note %q: want the body named unparsed, no method guessed", r.Method, r.Note)
	}
}
