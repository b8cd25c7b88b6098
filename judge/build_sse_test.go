package judge

import (
	"testing"

	"github.com/mcpdiag/mcpdiag/record"
)

// TestIssuedStateLineEnds: result.requestState is found in an event stream
// whatever its line ends (LF, CRLF, CR alone: WHATWG allows all three),
// after a BOM, and in a stream whose last event lost its blank line.
func TestIssuedStateLineEnds(t *testing.T) {
	msg := `{"jsonrpc":"2.0","id":1,"result":{"resultType":"incomplete","requestState":"st-1"}}`
	want := record.StateHash([]byte(`"st-1"`))
	for name, body := range map[string]string{
		"LF":                      "event: message\ndata: " + msg + "\n\n",
		"CRLF":                    "event: message\r\ndata: " + msg + "\r\n\r\n",
		"CR only":                 "event: message\rdata: " + msg + "\r\r",
		"CR after a notification": ": c\rdata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\r\rdata: " + msg + "\r\r",
		"BOM":                     "\xef\xbb\xbfdata: " + msg + "\n\n",
		"unterminated":            "data: " + msg + "\n",
		"JSON":                    msg,
	} {
		got, ok := issuedState([]byte(body))
		if !ok || got != want {
			t.Errorf("%s: issuedState = %q, %v; want %q", name, got, ok, want)
		}
	}
	if got, ok := issuedState([]byte("data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\r\r")); ok {
		t.Errorf("no requestState: got %q", got)
	}
}
