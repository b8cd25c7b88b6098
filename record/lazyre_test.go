package record

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// TestLazyREsCompile: every pattern compiled on first use is a valid
// expression (regexp.MustCompile at package initialization said so
// before), and all of the text patterns and tokenCountRE are lazy.
func TestLazyREsCompile(t *testing.T) {
	if len(lazyREs) != 27 {
		t.Errorf("%d lazy patterns, want 27 (bearer, pem, jwt, netrc, curl's user, userinfo, the six name and six value patterns, tokenCount, the flag name and value, the JSON argument list's flag and value, the three pair patterns, the escaped pair)", len(lazyREs))
	}
	for _, l := range lazyREs {
		if _, err := regexp.Compile(l.expr); err != nil {
			t.Errorf("%s: %v", l.expr, err)
		}
	}
}

// proxyRecords are the records `mcpdiag proxy` writes for
// bench/proxybench's workloads in the default body mode (a 1 KiB JSON
// tools/call, a 64 KiB SSE response of 4 events; measured lines), and the
// JSON one with a client's bearer token.
func proxyRecords() []*Record {
	js := benchProxyJSONRecord()
	sse := benchProxyJSONRecord()
	sse.URL, sse.ContentType, sse.ResponseBytes = "http://127.0.0.1:45359/sse", "text/event-stream", 65536
	sse.ResponseHeaders = http.Header{"Content-Type": {"text/event-stream"}, "Date": {"Sun, 06 Dec 2026 11:11:04 GMT"}}
	sse.SSE = &SSE{Events: 4, Notifications: 3, Messages: 3, Terminal: true, TerminalEvent: 4, End: "eof"}
	sse.Timings = Timings{Headers: 3326000, FirstEvent: 3636000, Total: 4097000}
	auth := benchProxyJSONRecord()
	auth.RequestHeaders = auth.RequestHeaders.Clone()
	auth.RequestHeaders.Set("Authorization", "Bearer abcdefghijklmnopqrstu")
	return []*Record{js, sse, auth}
}

// compiledREs names the lazy patterns compiled so far.
func compiledREs() []string {
	var c []string
	for _, l := range lazyREs {
		if l.compiled() {
			c = append(c, l.expr)
		}
	}
	return c
}

// TestProxyRecordsCompileNoPattern: encoding the proxy's records compiles
// none of the redaction patterns (the gate keeps every string of them from
// the patterns), so the proxy's heap never holds their ~150 KB of
// programs; a string that needs one compiles it. It runs in a child
// process, whose patterns no other test has compiled.
func TestProxyRecordsCompileNoPattern(t *testing.T) {
	if os.Getenv("RECORD_LAZYRE_CHILD") != "" {
		fmt.Printf("start=%q\n", compiledREs())
		var e Encoder
		for _, rec := range proxyRecords() {
			line, err := e.Encode(rec)
			if err != nil || !strings.Contains(string(line), `"outcome":"TOOL_SUCCESS"`) {
				fmt.Printf("encode: %v %s\n", err, line)
				os.Exit(3)
			}
		}
		fmt.Printf("records=%q\n", compiledREs())
		if got := Scrub("upstream said: Bearer abcdefghijklmnop is expired"); !strings.Contains(got, "[redacted:len=16:") {
			fmt.Printf("scrub: %s\n", got)
			os.Exit(3)
		}
		fmt.Printf("bearer=%q\n", compiledREs())
		os.Exit(0)
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestProxyRecordsCompileNoPattern$")
	cmd.Env = append(os.Environ(), "RECORD_LAZYRE_CHILD=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	want := fmt.Sprintf("start=[]\nrecords=[]\nbearer=%q\n", []string{bearerRE.expr})
	if string(out) != want {
		t.Errorf("compiled patterns:\n%s\nwant\n%s", out, want)
	}
}
