package recorder

import "testing"

// TestFirstEndpoint: the 2024-11-05 HTTP+SSE transport's endpoint event is
// found in the first bytes of a stream, whole, after comments, with CRLF or
// LF line ends; any other first event, or one cut by the chunk's end, is
// not an endpoint.
func TestFirstEndpoint(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		chunk, want string
		ok          bool
	}{
		{"event: endpoint\ndata: /message?sessionId=abc\n\n", "/message?sessionId=abc", true},
		{"event:endpoint\r\ndata:/m?s=1\r\n\r\nevent: message\n", "/m?s=1", true},
		{"\xef\xbb\xbf: hello\n\nevent: endpoint\ndata: /m\n\n", "/m", true},
		{"event: message\ndata: {}\n\n", "", false},
		{"data: /m\n\n", "", false},
		{"event: endpoint\ndata: /message?sessionId=abc\n", "", false},
		{"event: endpoint\ndata: /mess", "", false},
		{"", "", false},
	} {
		got, ok := firstEndpoint([]byte(tc.chunk))
		if ok != tc.ok || ok && got != tc.want {
			t.Errorf("firstEndpoint(%q) = %q, %v; want %q, %v", tc.chunk, got, ok, tc.want, tc.ok)
		}
	}
}
