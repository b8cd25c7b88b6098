package judge

import (
	"testing"

	"github.com/mcpdiag/mcpdiag/retry"
)

// TestReadSafetyLineEnds: the tools of a tools/list answer are read from an
// event stream whatever its line ends (LF, CRLF, CR alone) and after a BOM.
func TestReadSafetyLineEnds(t *testing.T) {
	msg := `{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"get","annotations":{"readOnlyHint":true}}]}}`
	for name, body := range map[string]string{
		"JSON":    msg,
		"LF":      "event: message\ndata: " + msg + "\n\n",
		"CRLF":    "event: message\r\ndata: " + msg + "\r\n\r\n",
		"CR only": "event: message\rdata: " + msg + "\r\r",
		"BOM":     "\xef\xbb\xbfdata: " + msg + "\n\n",
	} {
		safety := map[string]retry.Safety{}
		if !readSafety([]byte(body), safety) || safety["get"] != retry.SafetyFromHints(ptr(true), nil, nil) {
			t.Errorf("%s: tools %v", name, safety)
		}
	}
}

func ptr[T any](v T) *T { return &v }
