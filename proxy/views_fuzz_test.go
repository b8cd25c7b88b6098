package proxy_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/proxy"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/wire"
)

// rawUpstream serves, on a real socket, whatever bytes are registered for a
// request's path, then closes the connection.
type rawUpstream struct {
	url   string
	mu    sync.Mutex
	bytes map[string][]byte
	n     atomic.Int64
}

func newRawUpstream(tb testing.TB) *rawUpstream {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ln.Close() })
	u := &rawUpstream{url: "http://" + ln.Addr().String(), bytes: map[string][]byte{}}
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
				req, err := http.ReadRequest(bufio.NewReader(conn))
				if err != nil {
					return
				}
				_, _ = io.Copy(io.Discard, req.Body)
				u.mu.Lock()
				b := u.bytes[req.URL.Path]
				u.mu.Unlock()
				_, _ = conn.Write(b)
			}()
		}
	}()
	return u
}

// serve registers raw and returns its URL.
func (u *rawUpstream) serve(raw []byte) string {
	path := fmt.Sprintf("/case-%d", u.n.Add(1))
	u.mu.Lock()
	u.bytes[path] = raw
	u.mu.Unlock()
	return u.url + path
}

// onTheWire turns a capture into bytes a server sends: an HTTP/1.1 status
// line, CRLF line ends in the head, Connection: close, the body as it is.
func onTheWire(capture []byte) []byte {
	if bytes.HasPrefix(capture, []byte("HTTP/2 ")) {
		capture = append([]byte("HTTP/1.1 "), capture[len("HTTP/2 "):]...)
	}
	head, body, _ := bytes.Cut(capture, []byte("\n\n"))
	head = bytes.ReplaceAll(bytes.TrimRight(head, "\r\n"), []byte("\n"), []byte("\r\n"))
	return append(append(head, "\r\nConnection: close\r\n\r\n"...), body...)
}

// FuzzProxyViewsAgree is the "three views agree" property on any response:
// the bytes a client receives through the proxy are those it receives
// directly (status, headers but the hop-by-hop ones, body), and the proxy's
// record says what the classifier says of what the client received
// directly (outcome, layer, method, the request id with its JSON type, the
// tool). Seeded with every golden wire case.
func FuzzProxyViewsAgree(f *testing.F) {
	paths, _ := filepath.Glob("../classify/testdata/wire/*.txtar")
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		_, rest, _ := bytes.Cut(data, []byte("-- response --\n"))
		resp, _, _ := bytes.Cut(rest, []byte("\n-- want --"))
		if !bytes.Contains(data, []byte("escaped: true")) && len(resp) > 0 {
			f.Add(resp, false)
		}
	}
	f.Add([]byte("HTTP/1.1 200 OK\nContent-Type: application/json\n\n{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"result\":{}}"), true)
	// The body breaks before its first byte: the client still gets the head.
	f.Add([]byte("HTTP/1.1 200 OK\nContent-Type: application/json\nContent-Length: 40\n\n"), false)
	// A field name that is not a token: net/http does not send it.
	f.Add([]byte("HTTP/1.1 200 OK\nContent-Type: application/json\nBad Name: x\n\n{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"content\":[]}}"), false)

	up := newRawUpstream(f)
	sink := &urlSink{byURL: map[string]*record.Record{}}
	const maxEvent = 4 << 10
	u, _, _, _ := startProxy(f, up.url+"/", proxy.Options{Records: sink, MaxEventSize: maxEvent, Bodies: proxy.BodiesNone})
	proxyBase := strings.TrimSuffix(u, "/")
	direct := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	via := &http.Client{Timeout: 10 * time.Second}

	f.Fuzz(func(t *testing.T, capture []byte, stringID bool) {
		if len(capture) > 64<<10 {
			return
		}
		parsed, err := wire.ReadRawResponse(bytes.NewReader(capture))
		if err != nil || parsed.Status < 200 || parsed.Status > 999 {
			return // not a response a server could send (1xx: an interim answer)
		}
		for _, n := range parsed.Notes {
			if strings.HasPrefix(n, "skipped") {
				return // interim responses and CONNECT preambles are a capture's, not one response's
			}
		}
		id, idText := wire.IntID(7), "7"
		if stringID {
			id, idText = wire.StringID("s-7"), `"s-7"`
		}
		body := `{"jsonrpc":"2.0","id":` + idText + `,"method":"tools/call","params":{"name":"x","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`
		target := up.serve(onTheWire(capture))
		path := target[len(up.url):]
		get := func(c *http.Client, u string) (status int, h http.Header, b []byte, failed bool) {
			req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
			resp, err := c.Do(req)
			if err != nil {
				return 0, nil, nil, true
			}
			defer resp.Body.Close()
			b, err = io.ReadAll(resp.Body)
			h = resp.Header.Clone()
			for _, k := range []string{"Connection", "Keep-Alive", "Proxy-Connection", "Transfer-Encoding", "Te", "Trailer", "Upgrade"} {
				h.Del(k)
			}
			return resp.StatusCode, h, b, err != nil
		}
		ds, dh, db, dfail := get(direct, target)
		ps, ph, pb, pfail := get(via, proxyBase+path)
		if ds == 0 && dfail && (ps == http.StatusBadGateway || ps == http.StatusGatewayTimeout) && strings.HasPrefix(ph.Get("Proxy-Status"), proxy.ProxyName+"; error=") {
			// No response a client could read (a malformed status line or
			// header): the proxy answers 502 itself and says why, as
			// documented. The record must say so.
			rec := sink.take(t, up.url+path)
			if rec.Status != ps || rec.Outcome != classify.HTTPError || !strings.Contains(rec.Note, "proxy-generated") || rec.Network == nil {
				t.Fatalf("a proxy-made %d recorded as %d %s (%s)", ps, rec.Status, rec.Outcome, rec.Note)
			}
			return
		}
		// net/http's server never sends a field whose name is not a token;
		// the proxy cannot either, and its record must say it dropped one.
		wantHeader, dropped := dh.Clone(), false
		for k := range wantHeader {
			if !isToken(k) {
				delete(wantHeader, k)
				dropped = true
			}
		}
		if _, ok := dh["Content-Length"]; !ok {
			// Framing is per connection: a close-delimited body reaches
			// the client chunked, or with Content-Length 0 when empty.
			ph.Del("Content-Length")
		}
		if ds != ps || dfail != pfail || !bytes.Equal(db, pb) || fmt.Sprint(wantHeader) != fmt.Sprint(ph) {
			t.Fatalf("directly %d %v (failed %v) %q\nthrough the proxy %d %v (failed %v) %q", ds, dh, dfail, db, ps, ph, pfail, pb)
		}
		// The record of this exchange.
		rec := sink.take(t, up.url+path)
		if dropped != strings.Contains(rec.Note, "invalid names") {
			t.Fatalf("invalid header names dropped: %v; the record's note: %q", dropped, rec.Note)
		}
		if rec.JSONRPC.ID.String() != idText || rec.Method != "tools/call" || rec.Tool != "x" {
			t.Fatalf("record id %s method %q tool %q; the request's are %s, tools/call, x", rec.JSONRPC.ID, rec.Method, rec.Tool, idText)
		}
		if dfail {
			// What the client got was cut: the record must say a
			// transport failure, never a verdict on a whole response.
			if rec.Layer != classify.LayerTransport && rec.Outcome != classify.NotClassified {
				t.Fatalf("the client's exchange failed, the record says %s/%s (%s)", rec.Layer, rec.Outcome, rec.Reason)
			}
			return
		}
		res, _ := (&classify.Classifier{MaxEventSize: maxEvent}).Classify(&classify.Exchange{
			Method: "tools/call", ID: id, ProtocolVersion: classify.Protocol2026,
			Status: ds, Header: dh, BodyBytes: db,
		})
		if rec.Outcome != res.Outcome || rec.Layer != res.Layer() {
			t.Fatalf("record %s/%s (%s), classify %s/%s (%s)", rec.Layer, rec.Outcome, rec.Reason, res.Layer(), res.Outcome, res.Reason)
		}
		if res.JSONRPC() != nil && !res.JSONRPC().ID.IsZero() && !res.JSONRPC().ID.Equal(id) && !rec.JSONRPC.ResponseID.Equal(res.JSONRPC().ID) {
			t.Fatalf("record responseId %s, classify's response id %s", rec.JSONRPC.ResponseID, res.JSONRPC().ID)
		}
	})
}

// urlSink keeps each record, encoded and decoded again as a file would hold
// it, by its URL until taken.
type urlSink struct {
	enc   record.Encoder
	mu    sync.Mutex
	byURL map[string]*record.Record
}

func (s *urlSink) Write(rec *record.Record) error {
	line, err := s.enc.Encode(rec)
	if err != nil {
		return err
	}
	r, err := record.Decode(line)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.byURL[r.URL] = r
	s.mu.Unlock()
	return nil
}

// take waits for the record of url and forgets it.
func (s *urlSink) take(t *testing.T, url string) *record.Record {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		s.mu.Lock()
		r := s.byURL[url]
		delete(s.byURL, url)
		s.mu.Unlock()
		if r != nil {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("no record for %s", url)
		}
	}
}

// isToken reports whether s is an RFC 9110 token.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}
