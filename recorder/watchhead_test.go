package recorder

import (
	"slices"
	"strings"
	"testing"
)

// TestRequestWatchResponseHead: an event of 1 KiB or more whose first
// data bytes show a result or an error member (wire.HeadRulesOutRequest)
// is no request, and the watch keeps none of its data; it notes what the
// classifier reads as requests all the same, however the stream is cut
// into writes (events under 1 KiB included).
func TestRequestWatchResponseHead(t *testing.T) {
	t.Parallel()
	pad := strings.Repeat("x", 12<<10)
	stream := "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"" + pad + "\"}]}}\n\n" +
		"data: {\"result\":{},\"jsonrpc\":\"2.0\",\"id\":2}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{},\"method\":\"roots/list\"}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":4,\"\\u0065rror\":{\"code\":1,\"message\":\"x\"},\"method\":\"roots/list\"}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\ndata: \"id\":5,\"error\":{}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"sampling/createMessage\",\"params\":{\"result\":1,\"error\":2,\"x\":\"" + pad + "\"}}\n\n" +
		"data: {\"method\":\"elicitation/create\",\"params\":{\"message\":\"" + pad + "\"},\"jsonrpc\":\"2.0\",\"id\":7}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"roots/list\"}\n\n"
	// The three requests, as the classifier reads them (ids 6, 7, 8).
	want := readRequests([]byte(stream))
	var methods []string
	for _, r := range want {
		methods = append(methods, strings.Fields(r)[0])
	}
	if w := []string{"sampling/createMessage", "elicitation/create", "roots/list"}; !slices.Equal(methods, w) {
		t.Fatalf("the reader finds %q, the case wants the methods %q", want, w)
	}
	for _, size := range []int{1, 2, 3, 7, 100, 255, 256, 257, 4 << 10, len(stream)} {
		var cuts []int
		for i := size; i < len(stream); i += size {
			cuts = append(cuts, i)
		}
		if got := watched([]byte(stream), cuts); !slices.Equal(got, want) {
			t.Errorf("in writes of %d bytes: noted %q, want %q", size, got, want)
		}
	}

	// What the watch keeps of an event's first 4 KiB (the proxy's first
	// write of a larger event): nothing of a result's, all of a
	// notification's, which may yet be a request.
	for _, c := range []struct {
		name, ev string
		kept     int
	}{
		{"result", "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"" + pad + "\"}]}}\n\n", 0},
		{"notification", "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"data\":\"" + pad + "\"}}\n\n", 4<<10 - len("data: ")},
	} {
		w := newRequestWatch()
		var s serverRequests
		w.feed([]byte(c.ev[:4<<10]), &s, "s")
		if len(w.data) != c.kept {
			t.Errorf("%s: kept %d bytes of its first 4 KiB, want %d", c.name, len(w.data), c.kept)
		}
		w.feed([]byte(c.ev[4<<10:]), &s, "s")
		if len(s.order) != 0 {
			t.Errorf("%s: noted %q", c.name, s.order)
		}
		w.release()
	}
}
