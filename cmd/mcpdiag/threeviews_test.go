package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/internal/recordtest"
	"github.com/mcpdiag/mcpdiag/internal/testwait"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/wire"
)

// The "three views agree" property: every golden wire case of
// classify/testdata/wire, served byte for byte on a real socket, is fetched
// directly and through `mcpdiag proxy` (its real listeners and record file).
// The client must receive the same status, headers and body bytes both
// ways, and the proxy's record must say what `mcpdiag classify` says of the
// same bytes: outcome, layer, method, the request id with its JSON type (and
// the response's id when it differs), and the tool.

// wireCase is one golden case, read the way classify/golden_test.go reads it.
type wireCase struct {
	name     string
	exchange map[string]string
	response []byte
}

func loadWireCases(t *testing.T) []wireCase {
	t.Helper()
	paths, err := filepath.Glob("../../classify/testdata/wire/*.txtar")
	if err != nil || len(paths) < 60 {
		t.Fatalf("found %d golden files (%v); want the full set", len(paths), err)
	}
	var out []wireCase
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		files := map[string][]byte{}
		var cur string
		var buf bytes.Buffer
		flush := func() {
			if cur != "" {
				files[cur] = bytes.Clone(buf.Bytes())
			}
			buf.Reset()
		}
		for _, line := range bytes.SplitAfter(data, []byte("\n")) {
			s := strings.TrimRight(string(line), "\n")
			if strings.HasPrefix(s, "-- ") && strings.HasSuffix(s, " --") && len(s) > 6 {
				flush()
				cur = strings.TrimSpace(s[3 : len(s)-3])
				continue
			}
			buf.Write(line)
		}
		flush()
		c := wireCase{name: strings.TrimSuffix(filepath.Base(p), ".txtar"), exchange: map[string]string{}, response: files["response"]}
		for _, line := range strings.Split(string(files["exchange"]), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok {
				c.exchange[strings.TrimSpace(k)] = strings.TrimSpace(v)
			}
		}
		if c.exchange["escaped"] == "true" {
			u, err := strconv.Unquote(`"` + strings.ReplaceAll(string(c.response), "\n", "") + `"`)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			c.response = []byte(u)
		}
		out = append(out, c)
	}
	return out
}

func (c wireCase) method() string {
	if m := c.exchange["method"]; m != "" {
		return m
	}
	return "tools/call"
}

func (c wireCase) protocol() string {
	if p := c.exchange["protocol"]; p != "" {
		return p
	}
	return classify.Protocol2026
}

func (c wireCase) notification() bool { return c.exchange["notification"] == "true" }

// request is the client's request of the case: the facts `mcpdiag
// classify` is told with its flags, sent as a real request.
func (c wireCase) request() (body string, hdr http.Header) {
	params := map[string]any{}
	meta := map[string]any{"io.modelcontextprotocol/protocolVersion": c.protocol()}
	if e := c.exchange["extension"]; e != "" {
		exts := map[string]any{}
		for _, x := range strings.Split(e, ",") {
			exts[x] = map[string]any{}
		}
		meta["io.modelcontextprotocol/clientCapabilities"] = map[string]any{"extensions": exts}
	}
	if c.method() == "tools/call" {
		params["name"] = "x"
		params["arguments"] = map[string]any{}
	}
	params["_meta"] = meta
	p, _ := json.Marshal(params)
	m, _ := json.Marshal(c.method())
	if c.notification() {
		body = fmt.Sprintf(`{"jsonrpc":"2.0","method":%s,"params":%s}`, m, p)
	} else {
		body = fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%s,"params":%s}`, c.exchange["id"], m, p)
	}
	hdr = http.Header{
		"Content-Type":         {"application/json"},
		"Accept":               {"application/json, text/event-stream"},
		"Mcp-Protocol-Version": {c.protocol()},
		"Mcp-Method":           {c.method()},
	}
	if c.method() == "tools/call" {
		hdr.Set("Mcp-Name", "x")
	}
	return body, hdr
}

// serveWireCases answers each request for /NAME with case NAME's raw bytes,
// as classify/golden_test.go's serveRaw does: the status line of an HTTP/2
// capture becomes HTTP/1.1, the head gets CRLF line ends and
// "Connection: close", the body is sent byte for byte and ends at close.
func serveWireCases(t *testing.T, cases []wireCase) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	byPath := map[string]wireCase{}
	for _, c := range cases {
		byPath["/"+c.name] = c
	}
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
				req, err := http.ReadRequest(bufio.NewReader(conn))
				if err != nil {
					return
				}
				_, _ = io.Copy(io.Discard, req.Body)
				c, ok := byPath[req.URL.Path]
				if !ok || c.exchange["network"] == "close-after-request" {
					return
				}
				raw := c.response
				if bytes.HasPrefix(raw, []byte("HTTP/2 ")) {
					raw = append([]byte("HTTP/1.1 "), raw[len("HTTP/2 "):]...)
				}
				head, body, _ := bytes.Cut(raw, []byte("\n\n"))
				head = bytes.ReplaceAll(bytes.TrimRight(head, "\r"), []byte("\n"), []byte("\r\n"))
				_, _ = conn.Write(append(append(head, "\r\nConnection: close\r\n\r\n"...), body...))
			}()
		}
	}()
	return "http://" + ln.Addr().String()
}

// received is what a client got.
type received struct {
	status int
	header http.Header
	body   []byte
	err    bool // the exchange failed (no response, or a body cut)
}

// hopByHop are the headers that describe one connection, not the message:
// a proxy sets its own (RFC 9110 §7.6.1), and net/http moves
// Transfer-Encoding out of the header map.
var hopByHop = []string{"Connection", "Keep-Alive", "Proxy-Connection", "Transfer-Encoding", "Te", "Trailer", "Upgrade"}

func fetchCase(t *testing.T, client *http.Client, u string, c wireCase) received {
	body, hdr := c.request()
	req, err := http.NewRequest(http.MethodPost, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = hdr
	resp, err := client.Do(req)
	if err != nil {
		return received{err: true}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	h := resp.Header.Clone()
	for _, k := range hopByHop {
		h.Del(k)
	}
	return received{status: resp.StatusCode, header: h, body: b, err: err != nil}
}

// classifyView runs `mcpdiag classify` on the case's bytes with the flags
// that tell it the request.
func classifyView(t *testing.T, c wireCase) (outcome, layer, method string, respID wire.ID) {
	t.Helper()
	path := filepath.Join(t.TempDir(), c.name+".txt")
	if err := os.WriteFile(path, c.response, 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"classify", "--method", c.method(), "--protocol", c.protocol()}
	if c.notification() {
		args = append(args, "--notification")
	} else {
		args = append(args, "--id", c.exchange["id"])
	}
	if e := c.exchange["extension"]; e != "" {
		for _, x := range strings.Split(e, ",") {
			args = append(args, "--extension", x)
		}
	}
	if m := c.exchange["max-event-size"]; m != "" {
		args = append(args, "--max-event-size", m)
	}
	var out, errb bytes.Buffer
	code := run(append(args, path), strings.NewReader(""), &out, &errb)
	if code != 0 && code != 3 { // 3: NOT_CLASSIFIED, with the verdict printed
		t.Fatalf("classify %v: exit %d: %s", args, code, errb.String())
	}
	var v struct {
		Outcome string `json:"outcome"`
		Layer   string `json:"layer"`
		Method  string `json:"method"`
		JSONRPC *struct {
			ID wire.ID `json:"id"`
		} `json:"jsonrpc"`
	}
	if err := json.Unmarshal(out.Bytes(), &v); err != nil {
		t.Fatalf("classify output: %v\n%s", err, out.String())
	}
	if v.JSONRPC != nil {
		respID = v.JSONRPC.ID
	}
	return v.Outcome, v.Layer, v.Method, respID
}

func TestThreeViewsAgree(t *testing.T) {
	cases := loadWireCases(t)
	raw := serveWireCases(t, cases)
	direct := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	viaClient := &http.Client{Timeout: 20 * time.Second}

	// One proxy per classifier limit the cases ask for.
	groups := map[string][]wireCase{}
	for _, c := range cases {
		if c.exchange["capture-only"] == "true" {
			continue // valid only as a curl capture, not on a socket
		}
		if c.exchange["id"] == "" && !c.notification() {
			// classify told no id (the id is not checked): a request
			// through the proxy always has one, so there is no such view.
			continue
		}
		groups[c.exchange["max-event-size"]] = append(groups[c.exchange["max-event-size"]], c)
	}
	limits := make([]string, 0, len(groups))
	for k := range groups {
		limits = append(limits, k)
	}
	sort.Strings(limits)
	checked := 0
	for _, limit := range limits {
		path := filepath.Join(t.TempDir(), "records.jsonl")
		ready := make(chan string, 1)
		sigs := make(chan os.Signal, 2)
		o := proxyOptions{
			upstream: raw + "/", listen: "127.0.0.1:0", recordFile: path, recordBodies: "errors",
			queue: 64, queuePolicy: "block", fsync: "never", shutdownTimeout: 5 * time.Second,
			ready: func(p, _ string) { ready <- p }, signals: sigs,
		}
		if limit != "" {
			n, err := strconv.Atoi(limit)
			if err != nil {
				t.Fatal(err)
			}
			o.maxEventSize = n
		}
		var stderr syncBuffer
		done := make(chan error, 1)
		go func() { done <- runProxy(context.Background(), nil, io.Discard, &stderr, nil, o) }()
		var proxyURL string
		select {
		case proxyURL = <-ready:
		case err := <-done:
			t.Fatalf("the proxy ended: %v", err)
		case <-time.After(testwait.Bound):
			t.Fatalf("the proxy neither gave its URL nor ended within %s", testwait.Bound)
		}
		proxyBase := strings.TrimSuffix(proxyURL, "/")

		for _, c := range groups[limit] {
			d := fetchCase(t, direct, raw+"/"+c.name, c)
			p := fetchCase(t, viaClient, proxyBase+"/"+c.name, c)
			if d.err != p.err || d.status != p.status || !bytes.Equal(d.body, p.body) {
				t.Errorf("%s: directly %d (failed %v) %d bytes, through the proxy %d (failed %v) %d bytes", c.name, d.status, d.err, len(d.body), p.status, p.err, len(p.body))
			}
			if fmt.Sprint(d.header) != fmt.Sprint(p.header) {
				t.Errorf("%s: headers differ\ndirectly:          %v\nthrough the proxy: %v", c.name, d.header, p.header)
			}
		}
		sigs <- syscall.SIGTERM
		if err := testwait.Recv(t, done, "the proxy to end after SIGTERM"); err != nil {
			t.Fatalf("runProxy: %v\n%s", err, stderr.String())
		}

		byCase := map[string]*record.Record{}
		for _, r := range recordtest.ReadFile(t, path) {
			if r.Kind == record.KindExchange {
				byCase[r.URL[strings.LastIndexByte(r.URL, '/')+1:]] = r
			}
		}

		for _, c := range groups[limit] {
			r := byCase[c.name]
			if r == nil {
				t.Errorf("%s: no record", c.name)
				continue
			}
			checked++
			wantID := "null"
			if !c.notification() {
				wantID = c.exchange["id"]
			}
			if got := recordID(r.JSONRPC.ID); got != wantID {
				t.Errorf("%s: record id %s, the request's is %s", c.name, got, wantID)
			}
			if r.Method != c.method() || (c.method() == "tools/call") != (r.Tool == "x") {
				t.Errorf("%s: record method %q tool %q, the request's are %q and x", c.name, r.Method, r.Tool, c.method())
			}
			if c.exchange["network"] != "" {
				// No bytes to classify: the proxy's view must be the
				// direct client's (the golden test's over a socket).
				if r.Outcome != classify.NetworkError || r.Layer != classify.LayerTransport {
					t.Errorf("%s: record %s/%s, want transport/NETWORK_ERROR", c.name, r.Layer, r.Outcome)
				}
				continue
			}
			outcome, layer, method, respID := classifyView(t, c)
			if string(r.Outcome) != outcome || string(r.Layer) != layer || method != r.Method {
				t.Errorf("%s: record %s/%s (%s), classify %s/%s (%s); reason: %s", c.name, r.Layer, r.Outcome, r.Method, layer, outcome, method, r.Reason)
			}
			wantResp := ""
			if !respID.IsZero() && recordID(respID) != wantID {
				wantResp = recordID(respID)
			}
			if got := recordID(r.JSONRPC.ResponseID); wantResp != "" && got != wantResp || wantResp == "" && !r.JSONRPC.ResponseID.IsZero() {
				t.Errorf("%s: record responseId %s, classify's response id %s (request id %s)", c.name, got, recordID(respID), wantID)
			}
		}
	}
	if checked < 60 {
		t.Errorf("only %d cases checked", checked)
	}
}

// recordID is an id as JSON text ("null" for none).
func recordID(id wire.ID) string {
	if id.IsZero() {
		return "null"
	}
	return id.String()
}
