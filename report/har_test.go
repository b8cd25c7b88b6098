package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/record"
)

// checkHAR validates the HAR 1.2 structure of data, parsed as plain JSON so
// that the member names are checked, not the Go types: the required members
// with their types, custom members starting with "_", and time = the sum of
// the timings that are not -1. It returns the entries.
func checkHAR(t *testing.T, data []byte) []map[string]any {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("HAR is not JSON: %v\n%s", err, data)
	}
	c := harChecker{t: t}
	log := c.object(doc, "log", "")
	c.only(doc, "", "log")
	c.only(log, "log", "version", "creator", "browser", "pages", "entries", "comment")
	if v := c.str(log, "version", "log"); v != "1.2" {
		t.Errorf("log.version %q", v)
	}
	creator := c.object(log, "creator", "log")
	c.str(creator, "name", "log.creator")
	c.str(creator, "version", "log.creator")
	var entries []map[string]any
	for i, e := range c.array(log, "entries", "log") {
		at := fmt.Sprintf("entries[%d]", i)
		entry, ok := e.(map[string]any)
		if !ok {
			t.Fatalf("%s is not an object", at)
		}
		entries = append(entries, entry)
		c.only(entry, at, "pageref", "startedDateTime", "time", "request", "response", "cache", "timings", "serverIPAddress", "connection", "comment")
		if _, err := time.Parse(time.RFC3339Nano, c.str(entry, "startedDateTime", at)); err != nil {
			t.Errorf("%s.startedDateTime: %v", at, err)
		}
		total := c.num(entry, "time", at)
		req := c.object(entry, "request", at)
		c.only(req, at+".request", "method", "url", "httpVersion", "cookies", "headers", "queryString", "postData", "headersSize", "bodySize", "comment")
		for _, k := range []string{"method", "url", "httpVersion"} {
			c.str(req, k, at+".request")
		}
		for _, k := range []string{"cookies", "headers", "queryString"} {
			c.pairs(req, k, at+".request")
		}
		c.num(req, "headersSize", at+".request")
		c.num(req, "bodySize", at+".request")
		if _, ok := req["postData"]; ok {
			pd := c.object(req, "postData", at+".request")
			c.str(pd, "mimeType", at+".request.postData")
		}
		resp := c.object(entry, "response", at)
		c.only(resp, at+".response", "status", "statusText", "httpVersion", "cookies", "headers", "content", "redirectURL", "headersSize", "bodySize", "comment")
		c.num(resp, "status", at+".response")
		for _, k := range []string{"statusText", "httpVersion", "redirectURL"} {
			c.str(resp, k, at+".response")
		}
		c.pairs(resp, "cookies", at+".response")
		c.pairs(resp, "headers", at+".response")
		content := c.object(resp, "content", at+".response")
		c.num(content, "size", at+".response.content")
		c.str(content, "mimeType", at+".response.content")
		c.num(resp, "headersSize", at+".response")
		c.num(resp, "bodySize", at+".response")
		c.object(entry, "cache", at)
		tm := c.object(entry, "timings", at)
		c.only(tm, at+".timings", "blocked", "dns", "connect", "send", "wait", "receive", "ssl", "comment")
		sum := 0.0
		for _, k := range []string{"send", "wait", "receive"} {
			if v := c.num(tm, k, at+".timings"); v < 0 {
				t.Errorf("%s.timings.%s = %v < 0", at, k, v)
			} else {
				sum += v
			}
		}
		for _, k := range []string{"blocked", "dns", "connect", "ssl"} {
			if v, ok := tm[k]; ok {
				if f, isNum := v.(float64); !isNum || f < 0 && f != -1 {
					t.Errorf("%s.timings.%s = %v", at, k, v)
				} else if f > 0 && k != "ssl" { // ssl is included in connect
					sum += f
				}
			}
		}
		if math.Abs(sum-total) > 0.0015 {
			t.Errorf("%s: time %v but the timings add up to %v", at, total, sum)
		}
	}
	return entries
}

type harChecker struct{ t *testing.T }

func (c harChecker) get(m map[string]any, k, at string) any {
	v, ok := m[k]
	if !ok {
		c.t.Errorf("%s lacks the required %q", at, k)
	}
	return v
}

func (c harChecker) object(m map[string]any, k, at string) map[string]any {
	o, ok := c.get(m, k, at).(map[string]any)
	if !ok {
		c.t.Fatalf("%s.%s is not an object", at, k)
	}
	return o
}

func (c harChecker) array(m map[string]any, k, at string) []any {
	a, ok := c.get(m, k, at).([]any)
	if !ok {
		c.t.Fatalf("%s.%s is not an array", at, k)
	}
	return a
}

func (c harChecker) str(m map[string]any, k, at string) string {
	s, ok := c.get(m, k, at).(string)
	if !ok {
		c.t.Errorf("%s.%s is not a string", at, k)
	}
	return s
}

func (c harChecker) num(m map[string]any, k, at string) float64 {
	f, ok := c.get(m, k, at).(float64)
	if !ok {
		c.t.Errorf("%s.%s is not a number", at, k)
	}
	return f
}

// pairs checks an array of {name, value} objects.
func (c harChecker) pairs(m map[string]any, k, at string) {
	for i, p := range c.array(m, k, at) {
		o, ok := p.(map[string]any)
		if !ok {
			c.t.Errorf("%s.%s[%d] is not an object", at, k, i)
			continue
		}
		c.str(o, "name", fmt.Sprintf("%s.%s[%d]", at, k, i))
		c.str(o, "value", fmt.Sprintf("%s.%s[%d]", at, k, i))
	}
}

// only checks that every member of m is one of the spec's, or custom ("_…").
func (c harChecker) only(m map[string]any, at string, allowed ...string) {
	for k := range m {
		if !strings.HasPrefix(k, "_") && !contains(allowed, k) {
			c.t.Errorf("%s has %q: neither a HAR 1.2 member nor a custom one", at, k)
		}
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func TestHAR(t *testing.T) {
	t.Parallel()
	data, ids := mixedFile(t)
	var out bytes.Buffer
	h := NewHARWriter(&out, HAROptions{Version: "9.9"})
	acc := New(Options{})
	if _, err := Read(bytes.NewReader(data), "x", nil, acc, h); err != nil {
		t.Fatal(err)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	entries := checkHAR(t, out.Bytes())
	if len(entries) != 8 || h.Entries() != 8 {
		t.Fatalf("%d entries (%d counted), want the 8 exchanges, no call or server lines", len(entries), h.Entries())
	}
	if bytes.Contains(out.Bytes(), []byte("abcdefgh12345")) {
		t.Error("the bearer token reached the HAR")
	}
	var har HAR
	if err := json.Unmarshal(out.Bytes(), &har); err != nil {
		t.Fatal(err)
	}
	if c := har.Log.Creator; c.Name != "mcpdiag" || c.Version != "9.9" {
		t.Errorf("creator %+v", c)
	}
	first := har.Log.Entries[0]
	if first.MCP == nil || first.MCP.ID != ids["a.ex"][0] || first.MCP.Outcome != "HTTP_ERROR" || first.Response.Status != 503 ||
		first.Response.StatusText != "Service Unavailable" || first.Request.Method != "POST" || first.Time != 2 ||
		first.Timings.Wait != 1 || first.Timings.Receive != 1 || first.Comment != "HTTP_ERROR (transport): because HTTP_ERROR" {
		t.Errorf("first entry %+v", first)
	}
	if q := first.Request.QueryString; len(q) != 1 || q[0] != (HARNameValue{"x", "1"}) {
		t.Errorf("query string %+v", q)
	}
	if len(first.Request.Headers) != 2 || first.Request.Headers[0].Name != "Authorization" || !record.IsRedacted(first.Request.Headers[0].Value) {
		t.Errorf("request headers %+v", first.Request.Headers)
	}
	var netErr *HAREntry
	for i := range har.Log.Entries {
		if har.Log.Entries[i].MCP.Outcome == "NETWORK_ERROR" {
			netErr = &har.Log.Entries[i]
		}
	}
	if netErr == nil || netErr.Response.Status != 0 || netErr.Response.Error != "connection reset by peer" || netErr.Response.BodySize != -1 {
		t.Errorf("network error entry %+v", netErr)
	}
}

func TestHAREmptyAndOdd(t *testing.T) {
	t.Parallel()
	// No exchanges: still a valid archive.
	var out bytes.Buffer
	h := NewHARWriter(&out, HAROptions{})
	h.Add(&record.Record{Kind: record.KindCall})
	if err := h.Close(); err != nil || h.Close() != nil {
		t.Fatal(err)
	}
	if entries := checkHAR(t, out.Bytes()); len(entries) != 0 {
		t.Errorf("%d entries", len(entries))
	}
	// Records with nothing filled in, negative and inconsistent timings,
	// bodies, a GET.
	out.Reset()
	h = NewHARWriter(&out, HAROptions{})
	h.Add(&record.Record{Kind: record.KindExchange})
	h.Add(&record.Record{Kind: record.KindExchange, Timings: record.Timings{Total: -5e6, Headers: 7e6}})
	h.Add(&record.Record{Kind: record.KindExchange, Timings: record.Timings{Total: 3e6, Headers: 7e6, FirstEvent: 2e6}, HTTPMethod: "GET",
		URL: "http://h/mcp?a=%20b&c&=d#frag", RequestBody: &record.Body{Text: `{"x":1}`, Truncated: true}, ResponseBody: &record.Body{Text: "data: {}\n\n"}})
	h.Close()
	entries := checkHAR(t, out.Bytes())
	if len(entries) != 3 {
		t.Fatalf("%d entries", len(entries))
	}
	var har HAR
	json.Unmarshal(out.Bytes(), &har)
	if e := har.Log.Entries[2]; e.Request.Method != "GET" || e.Request.BodySize != 0 || e.Request.PostData == nil || !e.Request.PostData.Truncated ||
		e.Response.Content.Text != "data: {}\n\n" || e.Timings.Wait != 3 || e.Timings.FirstEvent != 2 || len(e.Request.QueryString) != 3 {
		t.Errorf("entry %+v", e)
	}
}

type brokenWriter struct{}

func (brokenWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestHARWriteError(t *testing.T) {
	t.Parallel()
	h := NewHARWriter(brokenWriter{}, HAROptions{})
	for range 2000 { // more than the buffer
		h.Add(&record.Record{Kind: record.KindExchange, Note: strings.Repeat("x", 100)})
	}
	if err := h.Close(); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("Close = %v, want the write error", err)
	}
}

// TestHARLeavesOutStdio: a stdio exchange (the stdio proxy's or probe's
// record: no HTTP method, a "stdio:" URL) is not a HAR entry. It was
// written as a POST to stdio:NAME with status 0, which a viewer shows as a
// failed request whatever the outcome (server-everything's RESULT_SUCCESS
// lines through proxy --stdio and probe included).
func TestHARLeavesOutStdio(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	h := NewHARWriter(&out, HAROptions{})
	h.Add(&record.Record{Kind: record.KindExchange, URL: "stdio:node", Method: "initialize", Outcome: "RESULT_SUCCESS"})
	h.Add(&record.Record{Kind: record.KindExchange, URL: "http://127.0.0.1:1/mcp", Method: "tools/call", Status: 200, Outcome: "TOOL_SUCCESS"})
	h.Add(&record.Record{Kind: record.KindExchange, URL: "stdio:server-everything", Method: "tools/call", Outcome: "TOOL_SUCCESS"})
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	entries := checkHAR(t, out.Bytes())
	if len(entries) != 1 || h.Entries() != 1 || h.Stdio() != 2 {
		t.Fatalf("%d entries (%d counted), %d stdio left out; want 1 entry (the HTTP exchange) and 2 left out", len(entries), h.Entries(), h.Stdio())
	}
	if bytes.Contains(out.Bytes(), []byte("stdio:")) {
		t.Errorf("a stdio exchange reached the HAR:\n%s", out.Bytes())
	}
}
