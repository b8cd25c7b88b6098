package proxy_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/proxy"
)

// TestRequestBodyAttack: whatever the request's size and framing (a
// Content-Length or chunked, sent whole or in pieces with pauses, empty,
// around and above the bytes the recorder reads before forwarding), the
// upstream receives the client's body bytes exactly, and the one record
// of the exchange counts them.
func TestRequestBodyAttack(t *testing.T) {
	var mu sync.Mutex
	got := map[string][]byte{}
	upstream := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			t.Errorf("upstream: %s: reading the body: %v", r.URL.RawQuery, err)
		}
		mu.Lock()
		got[r.URL.Query().Get("case")] = b
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`)
	}))
	const maxParse = 4096
	u, _, sink, stop := startProxy(t, upstream, proxy.Options{MaxRequestParse: maxParse, Bodies: proxy.BodiesAll})
	addr := strings.TrimPrefix(strings.TrimSuffix(u, "/mcp"), "http://")
	type reqCase struct {
		body    []byte
		chunked bool
		piece   int  // bytes per write; 0: all at once
		expect  bool // Expect: 100-continue, the body sent after the 100
	}
	var cases []reqCase
	for _, n := range []int{0, 1, 100, maxParse - 1, maxParse, maxParse + 1, 3 * maxParse, 200 << 10} {
		body := []byte(callBody(1, "t", `{"q":"`+strings.Repeat("q", max(n-80, 0))+`"}`))
		if n == 0 {
			body = nil
		}
		for _, chunked := range []bool{false, true} {
			for _, piece := range []int{0, 1000, 7} {
				if piece == 7 && len(body) > 10000 {
					continue
				}
				cases = append(cases, reqCase{body, chunked, piece, false})
			}
		}
	}
	for _, n := range []int{100, 3 * maxParse} {
		body := []byte(callBody(1, "t", `{"q":"`+strings.Repeat("e", n)+`"}`))
		cases = append(cases, reqCase{body, false, 0, true}, reqCase{body, true, 0, true})
	}
	for i, c := range cases {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		var head bytes.Buffer
		fmt.Fprintf(&head, "POST /mcp?case=%d HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n", i, addr)
		if c.expect {
			head.WriteString("Expect: 100-continue\r\n")
		}
		var wire []byte
		if c.chunked {
			head.WriteString("Transfer-Encoding: chunked\r\n\r\n")
			var b bytes.Buffer
			for rest := c.body; len(rest) > 0; {
				n := min(len(rest), 3000)
				fmt.Fprintf(&b, "%x\r\n%s\r\n", n, rest[:n])
				rest = rest[n:]
			}
			b.WriteString("0\r\n\r\n")
			wire = b.Bytes()
		} else {
			head.WriteString("Content-Length: " + strconv.Itoa(len(c.body)) + "\r\n\r\n")
			wire = c.body
		}
		all := append(head.Bytes(), wire...)
		br := bufio.NewReader(conn)
		if c.expect {
			// The head alone, then the body once the proxy says 100.
			if _, err := conn.Write(head.Bytes()); err != nil {
				t.Fatal(err)
			}
			_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
			line, err := br.ReadString('\n')
			if err != nil || !strings.HasPrefix(line, "HTTP/1.1 100") {
				t.Fatalf("case %d: %q %v, want a 100 Continue", i, line, err)
			}
			if _, err := br.ReadString('\n'); err != nil {
				t.Fatal(err)
			}
			all = wire
		}
		for rest := all; len(rest) > 0; {
			n := len(rest)
			if c.piece > 0 {
				n = min(n, c.piece)
			}
			if _, err := conn.Write(rest[:n]); err != nil {
				t.Fatal(err)
			}
			rest = rest[n:]
			if c.piece > 0 && len(rest) > 0 && len(rest)%5 == 0 {
				time.Sleep(time.Millisecond)
			}
		}
		_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
		resp, err := http.ReadResponse(br, nil)
		for err == nil && resp.StatusCode < 200 {
			// A second 100 Continue (the upstream's, passed on after the
			// proxy's own): a client talking to the upstream gets one.
			t.Errorf("case %d: a second interim response %d after the 100 Continue", i, resp.StatusCode)
			resp, err = http.ReadResponse(br, nil)
		}
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		conn.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("case %d: status %d", i, resp.StatusCode)
		}
	}
	stop()
	recs := sink.exchanges(t)
	if len(recs) != len(cases) {
		t.Fatalf("%d records for %d requests", len(recs), len(cases))
	}
	mu.Lock()
	defer mu.Unlock()
	for i, c := range cases {
		b, ok := got[strconv.Itoa(i)]
		if !ok || !bytes.Equal(b, c.body) {
			t.Errorf("case %d (%d bytes, chunked %v, pieces of %d): the upstream got %d bytes (%v), first difference at %d", i, len(c.body), c.chunked, c.piece, len(b), ok, firstDiffBytes(b, c.body))
		}
	}
	for _, r := range recs {
		var i int
		if _, err := fmt.Sscanf(r.URL[strings.Index(r.URL, "case=")+5:], "%d", &i); err != nil {
			t.Fatalf("record URL %q", r.URL)
		}
		c := cases[i]
		if r.RequestBytes != int64(len(c.body)) {
			t.Errorf("case %d (%d bytes, chunked %v): the record counts %d request bytes", i, len(c.body), c.chunked, r.RequestBytes)
		}
		if len(c.body) > 0 && (r.RequestBody == nil || !strings.HasPrefix(string(c.body), unmarked(r.RequestBody))) {
			t.Errorf("case %d: the record's request body is not the start of the body", i)
		}
		if len(c.body) > 0 && len(c.body) <= maxParse && r.Tool != "t" {
			t.Errorf("case %d: tool %q", i, r.Tool)
		}
	}
}

func firstDiffBytes(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
