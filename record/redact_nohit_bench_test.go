package record

import (
	"strings"
	"testing"
)

// noHitText is a plain-text body with no credential in it, as a tool's
// log output or an upstream's error page reads: prose, paths, numbers,
// dotted names and "name: value" lines whose names are no credential
// names (names21 measured the gate's cost on it).
var noHitText = strings.Repeat("2026-12-07T19:00:00Z INFO server started on 127.0.0.1:8080 (pid 4242)\n"+
	"params.name: echo\nhttp.request.method: POST\nthe tool call completed in 12 ms with 3 results\n"+
	"retrying GET /v1/items?page=2&limit=50 after 503 Service Unavailable\n"+
	"  at handler (/srv/app/lib/handler.js:120:15)\nelapsed=0.42s items=50 status=ok\n", 8)

// noHitJSON is a tool result holding noHitText as its text content.
var noHitJSON = `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":` + jsonQuote(noHitText) + `}],"isError":false}}`

// BenchmarkBodyTextNoHit is Body over a plain-text body without a
// credential: redactText's line-by-line Scrub behind the gate.
func BenchmarkBodyTextNoHit(b *testing.B) {
	red := NewRedactorKey([]byte("bench"))
	in := []byte(noHitText)
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		if out, _ := red.Body(in, 1<<20); len(out) != len(in) {
			b.Fatal("changed")
		}
	}
}

// BenchmarkBodyJSONNoHit is Body over a tool result whose text holds no
// credential: the JSON walk and one Scrub of the text behind the gate.
func BenchmarkBodyJSONNoHit(b *testing.B) {
	red := NewRedactorKey([]byte("bench"))
	in := []byte(noHitJSON)
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		if out, _ := red.Body(in, 1<<20); len(out) != len(in) {
			b.Fatal("changed")
		}
	}
}
