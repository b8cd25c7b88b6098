package classify

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/wire"
)

// A golden case is one txtar file under testdata/wire: a comment saying what
// it shows, an "exchange" section (facts about the request), a "response"
// section (the raw HTTP response as curl -si prints it) and a "want" section.
type goldenCase struct {
	name     string
	purpose  string
	exchange map[string]string
	response []byte
	want     map[string]string
}

// parseTxtar reads the txtar subset the golden files use.
func parseTxtar(data []byte) (comment string, files map[string][]byte) {
	files = map[string][]byte{}
	var cur string
	var buf bytes.Buffer
	flush := func() {
		if cur == "" {
			comment = buf.String()
		} else {
			files[cur] = append([]byte(nil), buf.Bytes()...)
		}
		buf.Reset()
	}
	for _, line := range bytes.SplitAfter(data, []byte("\n")) {
		t := strings.TrimRight(string(line), "\n")
		if strings.HasPrefix(t, "-- ") && strings.HasSuffix(t, " --") && len(t) > 6 {
			flush()
			cur = strings.TrimSpace(t[3 : len(t)-3])
			continue
		}
		buf.Write(line)
	}
	flush()
	return strings.TrimSpace(comment), files
}

func keyValues(b []byte) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if ok {
			m[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return m
}

// unescape reads the escaped response form: Go escapes (\r \n \xNN \" \\)
// are interpreted and literal newlines dropped, so CR, CRLF and a BOM can be
// written in a text file.
func unescape(t *testing.T, b []byte) []byte {
	s := strings.ReplaceAll(string(b), "\n", "")
	u, err := strconv.Unquote(`"` + s + `"`)
	if err != nil {
		t.Fatalf("escaped response: %v", err)
	}
	return []byte(u)
}

func loadGolden(t *testing.T) []goldenCase {
	t.Helper()
	paths, err := filepath.Glob("testdata/wire/*.txtar")
	if err != nil || len(paths) < 60 {
		t.Fatalf("found %d golden files (err %v); want the full set", len(paths), err)
	}
	var cases []goldenCase
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		comment, files := parseTxtar(data)
		gc := goldenCase{
			name:     strings.TrimSuffix(filepath.Base(p), ".txtar"),
			purpose:  comment,
			exchange: keyValues(files["exchange"]),
			response: files["response"],
			want:     keyValues(files["want"]),
		}
		if gc.exchange["escaped"] == "true" {
			gc.response = unescape(t, gc.response)
		}
		if gc.want["outcome"] == "" || gc.want["layer"] == "" {
			t.Fatalf("%s: the want section needs outcome and layer", p)
		}
		cases = append(cases, gc)
	}
	return cases
}

// exchangeFor builds the request facts of a golden case.
func exchangeFor(t *testing.T, gc goldenCase) *Exchange {
	ex := &Exchange{
		Method:          gc.exchange["method"],
		ProtocolVersion: gc.exchange["protocol"],
		Notification:    gc.exchange["notification"] == "true",
	}
	if e := gc.exchange["extension"]; e != "" {
		ex.Extensions = strings.Split(e, ",")
	}
	if id := gc.exchange["id"]; id == "null" {
		ex.ID = wire.IDFromRaw([]byte(id)) // a request of id null, which ParseID refuses
	} else if id != "" {
		var err error
		if ex.ID, err = wire.ParseID(id); err != nil {
			t.Fatalf("%s: id: %v", gc.name, err)
		}
	}
	return ex
}

// classifierFor is the classifier a golden case asks for (max-event-size).
func classifierFor(t *testing.T, gc goldenCase) *Classifier {
	c := &Classifier{}
	if v := gc.exchange["max-event-size"]; v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatalf("%s: max-event-size: %v", gc.name, err)
		}
		c.MaxEventSize = n
	}
	return c
}

// classifyGolden classifies ex as the case says; an error is only allowed
// with a NOT_CLASSIFIED verdict, and must then be its NotClassifiedError.
func classifyGolden(t *testing.T, gc goldenCase, c *Classifier, ex *Exchange) *Result {
	t.Helper()
	r, err := c.Classify(ex)
	var nc *NotClassifiedError
	switch {
	case err == nil && r.Outcome == NotClassified:
		t.Fatalf("NOT_CLASSIFIED without its error")
	case err != nil && (!errors.As(err, &nc) || r.Outcome != NotClassified || nc.Reason != r.Reason):
		t.Fatalf("classify: %v (outcome %s)", err, r.Outcome)
	}
	return r
}

// check compares a result with the want section.
func check(t *testing.T, gc goldenCase, r *Result) {
	t.Helper()
	w := gc.want
	if string(r.Outcome) != w["outcome"] || string(r.Layer()) != w["layer"] {
		t.Errorf("got %s/%s, want %s/%s (reason: %s)", r.Layer(), r.Outcome, w["layer"], w["outcome"], r.Reason)
	}
	var wantWarn []string
	if w["warnings"] != "" {
		wantWarn = strings.Split(w["warnings"], ",")
	}
	var gotWarn []string
	for _, x := range r.Warnings() {
		if !slices.Contains(gotWarn, x.Code) {
			gotWarn = append(gotWarn, x.Code)
		}
		if x.Rule == "" {
			t.Errorf("warning %s cites no rule", x.Code)
		}
	}
	sort.Strings(wantWarn)
	sort.Strings(gotWarn)
	if !slices.Equal(wantWarn, gotWarn) {
		t.Errorf("warnings %v, want %v (%+v)", gotWarn, wantWarn, r.Warnings())
	}
	if v := w["responseId"]; v != "" && (r.JSONRPC() == nil || string(r.JSONRPC().ID.Raw()) != v) {
		t.Errorf("jsonrpc details %+v, want the response's id as spelled, %s", r.JSONRPC(), v)
	}
	if v := w["code"]; v != "" {
		if code, ok := r.JSONRPC().ErrorCode(); !ok || strconv.FormatInt(code, 10) != v {
			t.Errorf("jsonrpc details %+v, want code %s", r.JSONRPC(), v)
		}
	}
	if v := w["sse"]; v != "" {
		got := "<none>"
		if r.SSE() != nil {
			got = fmt.Sprintf("events=%d notifications=%d terminal=%d", r.SSE().Events, r.SSE().Notifications, r.SSE().TerminalEvent)
		}
		if got != v {
			t.Errorf("sse %s, want %s", got, v)
		}
	}
	if v := w["notClassified"]; v != "" || r.NotClassified() != nil {
		got := "<none>"
		if d := r.NotClassified(); d != nil {
			got = fmt.Sprintf("%s size=%d limit=%d", d.Cause, d.Size, d.Limit)
			if d.Event > 0 {
				got += fmt.Sprintf(" event=%d", d.Event)
			}
		}
		if got != v {
			t.Errorf("notClassified %s, want %s", got, v)
		}
	}
	if v := w["unterminated"]; v != "" && (r.SSE() == nil || strconv.FormatBool(r.SSE().Unterminated) != v) {
		t.Errorf("sse %+v, want unterminated=%s", r.SSE(), v)
	}
	if v := w["retryAfter"]; v != "" {
		if r.HTTP() == nil || r.HTTP().RetryAfter == nil || !r.HTTP().RetryAfter.Valid || r.HTTP().RetryAfter.Delay.String() != v {
			t.Errorf("retry-after %+v, want %s", r.HTTP(), v)
		}
	}
	auth := &WWWAuthenticate{}
	if r.HTTP() != nil && r.HTTP().WWWAuthenticate != nil {
		auth = r.HTTP().WWWAuthenticate
	}
	for key, got := range map[string]string{"resourceMetadata": auth.ResourceMetadata, "scope": auth.Scope, "authError": auth.Error} {
		if v := w[key]; v != "" && got != v {
			t.Errorf("WWW-Authenticate %s = %q, want %q", key, got, v)
		}
	}
	if v := w["input"]; v != "" {
		got := "<none>"
		if r.Input() != nil {
			var parts []string
			for _, q := range r.Input().Requests {
				parts = append(parts, q.Key+"="+q.Method)
			}
			parts = append(parts, "state="+strconv.FormatBool(r.Input().HasRequestState))
			got = strings.Join(parts, " ")
		}
		if got != v {
			t.Errorf("input %s, want %s", got, v)
		}
	}
}

// TestGoldenFromCapture classifies every golden response read as a capture
// file, the way `mcpdiag classify` reads it.
func TestGoldenFromCapture(t *testing.T) {
	for _, gc := range loadGolden(t) {
		t.Run(gc.name, func(t *testing.T) {
			if gc.exchange["network"] != "" {
				t.Skip("a network failure has no capture; TestGoldenOverSocket covers it")
			}
			raw, err := wire.ReadRawResponse(bytes.NewReader(gc.response))
			if err != nil {
				t.Fatal(err)
			}
			ex := exchangeFor(t, gc)
			ex.Status, ex.Header, ex.Body = raw.Status, raw.Header, raw.Body
			check(t, gc, classifyGolden(t, gc, classifierFor(t, gc), ex))
		})
	}
}

// TestGoldenOverSocket serves every golden response byte for byte from a
// real TCP listener on 127.0.0.1 and classifies what net/http's client got:
// the outcomes must be the same as from the capture, produced from real bytes
// on a real socket.
func TestGoldenOverSocket(t *testing.T) {
	cases := loadGolden(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	byPath := map[string]goldenCase{}
	for _, gc := range cases {
		byPath["/"+gc.name] = gc
	}
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go serveRaw(conn, byPath)
		}
	}()
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	for _, gc := range cases {
		t.Run(gc.name, func(t *testing.T) {
			if gc.exchange["capture-only"] == "true" {
				t.Skip("the bytes are only valid as a curl capture, not on a socket")
			}
			ex := exchangeFor(t, gc)
			sent := false
			trace := &httptrace.ClientTrace{WroteRequest: func(i httptrace.WroteRequestInfo) { sent = i.Err == nil }}
			ctx := httptrace.WithClientTrace(context.Background(), trace)
			req, _ := http.NewRequestWithContext(ctx, "POST", "http://"+ln.Addr().String()+"/"+gc.name,
				strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`))
			resp, err := client.Do(req)
			if err != nil {
				ex.Err, ex.RequestSent = err, sent
			} else {
				defer resp.Body.Close()
				ex.Status, ex.Header, ex.Body = resp.StatusCode, resp.Header, resp.Body
			}
			r := classifyGolden(t, gc, classifierFor(t, gc), ex)
			check(t, gc, r)
			if gc.exchange["network"] != "" && (r.Network() == nil || !r.Network().RequestSent) {
				t.Errorf("network details %+v: the request was fully sent before the close", r.Network())
			}
		})
	}
}

// serveRaw reads one request and answers with the case's raw bytes.
func serveRaw(conn net.Conn, cases map[string]goldenCase) {
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(conn)
	req, err := http.ReadRequest(br)
	if err != nil {
		return
	}
	_, _ = io.Copy(io.Discard, req.Body)
	gc, ok := cases[req.URL.Path]
	if !ok || gc.exchange["network"] == "close-after-request" {
		return
	}
	raw := gc.response
	// net/http's client speaks HTTP/1.1 here; curl's "HTTP/2 200" line is
	// rewritten, the rest is sent byte for byte and the body ends at close.
	if bytes.HasPrefix(raw, []byte("HTTP/2 ")) {
		raw = append([]byte("HTTP/1.1 "), raw[len("HTTP/2 "):]...)
	}
	head, body, _ := bytes.Cut(raw, []byte("\n\n"))
	head = bytes.ReplaceAll(bytes.TrimRight(head, "\r"), []byte("\n"), []byte("\r\n"))
	_, _ = conn.Write(append(append(head, "\r\nConnection: close\r\n\r\n"...), body...))
}

// TestGoldenCoverage requires a golden case for every outcome and every
// warning the classifier can produce.
func TestGoldenCoverage(t *testing.T) {
	outcomes := map[string]bool{}
	warnings := map[string]bool{}
	for _, gc := range loadGolden(t) {
		outcomes[gc.want["outcome"]] = true
		for _, w := range strings.Split(gc.want["warnings"], ",") {
			warnings[w] = true
		}
	}
	for _, o := range Outcomes {
		if !outcomes[string(o)] {
			t.Errorf("no golden case produces outcome %s", o)
		}
		if _, ok := Guides[o]; !ok {
			t.Errorf("outcome %s has no guide", o)
		}
	}
	for _, w := range WarningCodes() {
		if !warnings[w] {
			t.Errorf("no golden case produces warning %s", w)
		}
		if Rule(w) == "" {
			t.Errorf("warning %s cites no rule", w)
		}
	}
}

// TestGoldenBothPaths classifies every golden capture with and without the
// single-pass fast path: the verdicts must be identical.
func TestGoldenBothPaths(t *testing.T) {
	fastTaken := 0
	for _, gc := range loadGolden(t) {
		if gc.exchange["network"] != "" {
			continue
		}
		var out [2][]byte
		for i, c := range []Classifier{*classifierFor(t, gc), {MaxEventSize: classifierFor(t, gc).MaxEventSize, noFastPath: true}} {
			raw, err := wire.ReadRawResponse(bytes.NewReader(gc.response))
			if err != nil {
				t.Fatal(err)
			}
			ex := exchangeFor(t, gc)
			ex.Status, ex.Header, ex.Body = raw.Status, raw.Header, raw.Body
			r, _ := c.Classify(ex)
			out[i], _ = json.Marshal(r)
		}
		if !bytes.Equal(out[0], out[1]) {
			t.Errorf("%s: fast path %s\ngeneral path %s", gc.name, out[0], out[1])
		}
		body := gc.response[bytes.Index(gc.response, []byte("\n\n"))+2:]
		var r Result
		r.SetMethod("tools/call")
		r.SetProtocol(Protocol2026)
		if (&Classifier{}).fastToolCall(&r, exchangeFor(t, gc), bytes.TrimSpace(body), false) {
			fastTaken++
		}
	}
	if fastTaken < 10 {
		t.Errorf("the fast path answered only %d golden cases; the comparison is too thin", fastTaken)
	}
}
