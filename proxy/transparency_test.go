package proxy_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/proxy"
	"github.com/mcpdiag/mcpdiag/record"
)

// scripted answers each path with exact bytes, some of them broken on
// purpose.
func scripted() http.Handler {
	mux := http.NewServeMux()
	sse := func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		w.WriteHeader(http.StatusOK)
	}
	flush := func(w http.ResponseWriter) { w.(http.Flusher).Flush() }
	progress := `data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}` + "\n\n"
	result := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"ok"}]}}`
	mux.HandleFunc("/json-error-200", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad arguments"}}`)
	})
	mux.HandleFunc("/http-503", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "3")
		http.Error(w, "overloaded", http.StatusServiceUnavailable)
	})
	mux.HandleFunc("/no-content-type", func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Content-Type"] = nil
		io.WriteString(w, result)
	})
	mux.HandleFunc("/html-200", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<html><body>Sign in</body></html>")
	})
	mux.HandleFunc("/empty-202", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusAccepted)
	})
	mux.HandleFunc("/sse-progress", func(w http.ResponseWriter, r *http.Request) {
		sse(w)
		for range 3 {
			io.WriteString(w, progress)
			flush(w)
			time.Sleep(5 * time.Millisecond)
		}
		io.WriteString(w, "event: message\ndata: "+result+"\n\n")
	})
	mux.HandleFunc("/sse-crlf", func(w http.ResponseWriter, r *http.Request) {
		sse(w)
		io.WriteString(w, ": keep-alive\r\n\r\n")
		flush(w)
		io.WriteString(w, "id: 7\r\ndata: "+result+"\r\n\r")
		flush(w)
		io.WriteString(w, "\n")
	})
	mux.HandleFunc("/sse-unterminated", func(w http.ResponseWriter, r *http.Request) {
		sse(w)
		io.WriteString(w, progress+"data: "+result)
	})
	mux.HandleFunc("/sse-cut", func(w http.ResponseWriter, r *http.Request) {
		sse(w)
		io.WriteString(w, progress)
		flush(w)
		time.Sleep(5 * time.Millisecond)
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close()
		}
	})
	mux.HandleFunc("/json-cut", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", "200")
		io.WriteString(w, result[:40])
		flush(w)
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close()
		}
	})
	return mux
}

// toolOf returns params.name of a tools/call body.
func toolOf(body string) string {
	var m struct {
		Params struct{ Name string }
	}
	_ = json.Unmarshal([]byte(body), &m)
	return m.Params.Name
}

// fetched is what a client received: status, headers, a hash of the body
// bytes, and whether reading ended in an error.
type fetched struct {
	status  int
	header  http.Header
	bodyLen int
	hash    string
	cut     bool
}

func fetch(t *testing.T, u, body string, hdr map[string]string) fetched {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	c := &http.Client{Transport: &http.Transport{DisableCompression: true}, Timeout: 10 * time.Second}
	defer c.CloseIdleConnections()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", u, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	sum := sha256.Sum256(b)
	h := resp.Header.Clone()
	h.Del("Date")
	// Hop-by-hop headers describe one connection, not the message: a proxy
	// must not forward them (RFC 9110 §7.6.1).
	for _, k := range []string{"Connection", "Keep-Alive", "Proxy-Connection", "Transfer-Encoding", "Te", "Trailer", "Upgrade"} {
		h.Del(k)
	}
	return fetched{status: resp.StatusCode, header: h, bodyLen: len(b), hash: hex.EncodeToString(sum[:8]), cut: err != nil}
}

func (f fetched) String() string {
	keys := slices.Sorted(maps.Keys(f.header))
	var hs []string
	for _, k := range keys {
		hs = append(hs, fmt.Sprintf("%s=%q", k, f.header[k]))
	}
	return fmt.Sprintf("status %d, %d bytes sha256:%s, cut=%v, headers %s", f.status, f.bodyLen, f.hash, f.cut, strings.Join(hs, " "))
}

// Transparency: what a client receives through the proxy (status, headers,
// body bytes, and whether the body was cut) is what it receives directly,
// for healthy, failing and broken responses, JSON and SSE; and each record
// names the outcome the client saw.
func TestTransparency(t *testing.T) {
	t.Parallel()
	realJSON := serve(t, bothEras(mcpServer(), true))
	realSSE := serve(t, bothEras(mcpServer(), false))
	fake := serve(t, scripted())
	base := strings.TrimSuffix(fake, "/mcp")
	cases := []struct {
		name     string
		upstream string
		body     string
		want     classify.Outcome
	}{
		{"real-json-tool-success", realJSON, callBody(1, "echo", `{"text":"hi"}`), classify.ToolSuccess},
		{"real-json-tool-error", realJSON, callBody(1, "fail", ""), classify.ToolError},
		{"real-sse-progress", realSSE, callBody(1, "slow", `{"steps":4}`), classify.ToolSuccess},
		{"real-unknown-tool", realSSE, callBody(1, "nope", ""), classify.HTTPError},
		{"json-error-200", base + "/json-error-200", callBody(1, "echo", ""), classify.JSONRPCError},
		{"http-503", base + "/http-503", callBody(1, "echo", ""), classify.HTTPError},
		{"no-content-type", base + "/no-content-type", callBody(1, "echo", ""), classify.ToolSuccess},
		{"html-200", base + "/html-200", callBody(1, "echo", ""), classify.UnexpectedContentType},
		{"empty-202", base + "/empty-202", callBody(1, "echo", ""), classify.EmptyResponse},
		{"sse-progress", base + "/sse-progress", callBody(1, "echo", ""), classify.ToolSuccess},
		{"sse-crlf", base + "/sse-crlf", callBody(1, "echo", ""), classify.ToolSuccess},
		{"sse-unterminated", base + "/sse-unterminated", callBody(1, "echo", ""), classify.StreamIncomplete},
		{"sse-cut", base + "/sse-cut", callBody(1, "echo", ""), classify.StreamIncomplete},
		{"json-cut", base + "/json-cut", callBody(1, "echo", ""), classify.NetworkError},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			purl, _, sink, stop := startProxy(t, tc.upstream, proxy.Options{})
			hdr := modernHeaders(toolOf(tc.body))
			direct := fetch(t, tc.upstream, tc.body, hdr)
			via := fetch(t, purl, tc.body, hdr)
			if direct.String() != via.String() {
				t.Errorf("through the proxy the client received something else\ndirect: %s\nproxy:  %s", direct, via)
			}
			stop()
			recs := sink.exchanges(t)
			if len(recs) != 1 {
				t.Fatalf("%d records, want 1", len(recs))
			}
			r := recs[0]
			if r.Outcome != tc.want {
				t.Errorf("record outcome %s (%s), want %s", r.Outcome, r.Reason, tc.want)
			}
			if r.Status != via.status || r.ResponseBytes != int64(via.bodyLen) {
				t.Errorf("record status %d, %d bytes; the client got %d, %d bytes", r.Status, r.ResponseBytes, via.status, via.bodyLen)
			}
			if via.cut && (!strings.Contains(r.Note, "upstream reset") || !r.Flags.Has(record.FlagUR)) {
				t.Errorf("a cut response's record does not say the upstream cut it: note %q flags %v", r.Note, r.Flags)
			}
		})
	}
}
