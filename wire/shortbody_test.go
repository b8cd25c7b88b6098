package wire

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// TestCaptureShorterThanContentLength: a capture whose body ends before its
// Content-Length was read as complete, so `mcpdiag classify` printed
// TOOL_SUCCESS for a response a client would have seen cut. The body now
// ends with a *ShortBodyError (io.ErrUnexpectedEOF, as net/http's client
// returns) when a client would hold the body to Content-Length: not under
// a Content-Encoding (curl --compressed prints the decoded body), not
// chunked, not on a status without a body; a body of the declared length
// or longer reads as before.
func TestCaptureShorterThanContentLength(t *testing.T) {
	const body = `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}` // 48 bytes
	for _, tt := range []struct {
		name, head string
		short      bool
	}{
		{"shorter", "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 500\r\n", true},
		{"shorter, identity", "HTTP/1.1 200 OK\r\nContent-Encoding: identity\r\nContent-Length: 500\r\n", true},
		{"shorter, repeated value", "HTTP/1.1 200 OK\r\nContent-Length: 500, 500\r\n", true},
		{"exact", "HTTP/1.1 200 OK\r\nContent-Length: 48\r\n", false},
		{"longer", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n", false},
		{"gzip (curl --compressed)", "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 500\r\n", false},
		{"chunked header", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 500\r\n", false},
		{"304", "HTTP/1.1 304 Not Modified\r\nContent-Length: 500\r\n", false},
		{"conflicting values", "HTTP/1.1 200 OK\r\nContent-Length: 500, 48\r\n", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := ReadRawResponse(strings.NewReader(tt.head + "\r\n" + body))
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(resp.Body)
			if string(got) != body {
				t.Errorf("body %q, want %q", got, body)
			}
			var short *ShortBodyError
			if !tt.short {
				if err != nil {
					t.Errorf("error %v, want none", err)
				}
				return
			}
			if !errors.As(err, &short) || !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("error %v, want a *ShortBodyError wrapping io.ErrUnexpectedEOF", err)
			}
			const want = "unexpected EOF: the body ends after 48 of the 500 bytes its Content-Length declares, so a client reading it " +
				"sees an incomplete message (RFC 9112 §6.3, §8); if the capture was edited, correct or remove Content-Length"
			if err.Error() != want {
				t.Errorf("error %q, want %q", err, want)
			}
		})
	}
}
