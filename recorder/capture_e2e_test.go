package recorder_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/recorder"
)

// TestRecordedResponseBodyPrefix: over a real connection, a response
// written in small flushed writes, in larger unflushed ones or whole is
// recorded as its first BodyLimit bytes, marked truncated when longer (and
// without the token the cut left unfinished, which record.Redacted
// replaces); in the errors mode a success records no response body.
func TestRecordedResponseBodyPrefix(t *testing.T) {
	errBody := `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"` + strings.Repeat("e", 300) + `"}}`
	okBody := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"` + strings.Repeat("o", 300) + `"}]}}`
	// cut is a body's first n bytes as recorded: to the quote before the
	// run of letters the cut ends in, then the mark.
	cut := func(body string, n int) string {
		return body[:strings.LastIndexByte(body[:n], '"')+1] + record.Redacted
	}
	for _, tc := range []struct {
		mode  recorder.BodyMode
		body  string
		limit int
		write int // bytes per write; 0: the whole body at once
		flush bool
		want  string // "" for no response body
	}{
		{recorder.BodiesErrors, errBody, 100, 7, true, cut(errBody, 100)},
		{recorder.BodiesErrors, errBody, 100, 40, false, cut(errBody, 100)},
		{recorder.BodiesErrors, errBody, 100, 0, false, cut(errBody, 100)},
		{recorder.BodiesErrors, errBody, len(errBody), 7, true, errBody},
		{recorder.BodiesErrors, errBody, 1 << 20, 0, true, errBody},
		{recorder.BodiesErrors, okBody, 100, 7, true, ""},
		{recorder.BodiesAll, okBody, 100, 7, true, cut(okBody, 100)},
		{recorder.BodiesAll, okBody, len(okBody) - 1, 0, false, okBody[:len(okBody)-1]},
	} {
		name := fmt.Sprintf("%s/limit=%d/write=%d/flush=%v", tc.mode, tc.limit, tc.write, tc.flush)
		t.Run(name, func(t *testing.T) {
			s := &sink{}
			rc, err := recorder.New(recorder.Options{Records: s, Bodies: tc.mode, BodyLimit: tc.limit, Sync: true})
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(rc.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				rest := tc.body
				for len(rest) > 0 {
					n := len(rest)
					if tc.write > 0 {
						n = min(n, tc.write)
					}
					_, _ = io.WriteString(w, rest[:n])
					rest = rest[n:]
					if tc.flush {
						w.(http.Flusher).Flush()
					}
				}
			})))
			defer srv.Close()
			resp, err := http.Post(srv.URL, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{}}}`))
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(got) != tc.body {
				t.Fatalf("the client got %q", got)
			}
			s.mu.Lock()
			defer s.mu.Unlock()
			if len(s.recs) != 1 {
				t.Fatalf("%d records, want 1", len(s.recs))
			}
			rb := s.recs[0].ResponseBody
			if tc.want == "" {
				if rb != nil {
					t.Fatalf("response body %q recorded for a success in the errors mode", rb.Text)
				}
				return
			}
			if rb == nil {
				t.Fatal("no response body recorded")
			}
			if rb.Text != tc.want || rb.Truncated != (len(tc.body) > tc.limit) {
				t.Fatalf("recorded %q (truncated %v), want %q (truncated %v)", rb.Text, rb.Truncated, tc.want, len(tc.body) > tc.limit)
			}
		})
	}
}
