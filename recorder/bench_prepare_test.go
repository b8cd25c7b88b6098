package recorder

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// prepareBody is a request body BenchmarkPrepare refills without
// allocating.
type prepareBody struct{ strings.Reader }

func (*prepareBody) Close() error { return nil }

// BenchmarkPrepare: what the recorder does with a request before the
// handler behind it runs (begin: reading and parsing the body, the
// exchange; the request and context passed on), for a ~1 KiB 2026-07-28
// tools/call.
//
//	go test ./recorder -run '^$' -bench Prepare -benchmem
func BenchmarkPrepare(b *testing.B) {
	rc, err := New(Options{})
	if err != nil {
		b.Fatal(err)
	}
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + strings.Repeat("y", 820) + `"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"}}}}`
	w := httptest.NewRecorder()
	var rb prepareBody
	r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	r = r.WithContext(context.WithValue(r.Context(), connKey{}, "conn-1"))
	r.Header = http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"},
		"Mcp-Protocol-Version": {"2026-07-28"}, "User-Agent": {"bench"}}
	r.Body, r.ContentLength = &rb, int64(len(body))
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		rb.Reset(body)
		if rw := rc.prepare(w, r, http.NotFoundHandler()); rw.ex.malformed {
			b.Fatal("refused")
		}
	}
}
