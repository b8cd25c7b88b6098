package recorder

import "testing"

// TestFirstEndpoint: the 2024-11-05 HTTP+SSE transport's endpoint event is
// found in the first bytes of a stream, whole, after comments, with CRLF or
// LF line ends; any other first event is not an endpoint, and one cut by
// the chunk's end (or none yet) is partial: more bytes may complete it.
func TestFirstEndpoint(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		chunk, want string
		ok, partial bool
	}{
		{"event: endpoint\ndata: /message?sessionId=abc\n\n", "/message?sessionId=abc", true, false},
		{"event:endpoint\r\ndata:/m?s=1\r\n\r\nevent: message\n", "/m?s=1", true, false},
		{"\xef\xbb\xbf: hello\n\nevent: endpoint\ndata: /m\n\n", "/m", true, false},
		{"event: message\ndata: {}\n\n", "", false, false},
		{"data: /m\n\n", "", false, false},
		{"event: endpoint\ndata: /message?sessionId=abc\n", "", false, true},
		{"event: endpoint\ndata: /mess", "", false, true},
		{": keep-alive\n\n", "", false, true},
		{"", "", false, true},
	} {
		got, ok, partial := firstEndpoint([]byte(tc.chunk))
		if ok != tc.ok || ok && got != tc.want || partial != tc.partial {
			t.Errorf("firstEndpoint(%q) = %q, %v, partial %v; want %q, %v, partial %v", tc.chunk, got, ok, partial, tc.want, tc.ok, tc.partial)
		}
	}
}
