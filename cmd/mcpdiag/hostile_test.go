package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcpdiag/mcpdiag/internal/browser"
	"github.com/mcpdiag/mcpdiag/internal/visible"
)

// hostile is a text a hostile peer sends, tagged with where it was sent:
// an OSC 52 clipboard write, an OSC 8 link, a screen clear, a carriage
// return that would overwrite a verdict, a bidi override and isolate, a
// C1 CSI and DEL.
func hostile(tag string) string {
	return tag + "<\x1b]52;c;ZXZpbA==\x07\x1b]8;;https://evil.example/\x1b\\\x1b[2J\rPASS\u202eLIAF\u2066\u009b\x7f>"
}

// hostileHeader is a header value's hostile text: what a header can carry
// past Go's reader, which refuses a control character in a value but takes
// any byte from 0x80 (obs-text): a bidi override, a C1 CSI, a byte that is
// not UTF-8.
func hostileHeader(tag string) string {
	return tag + "<\u202eLIAF\u009b2J\xff>"
}

// hostileServer is a 2026-07-28 MCP server on 127.0.0.1 whose every text a
// client shows is hostile: a tool named hostile("tool"), echo's text
// hostile("text"), fail's JSON-RPC error message hostile("rpc"), ctype's
// Content-Type hostileHeader("ctype"), the hostile tool's isError text
// hostile("tooltext").
func hostileServer(t *testing.T) string {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		m, _ := readRPCRequest(r)
		if len(m.ID) == 0 {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		str := func(s string) string { b, _ := json.Marshal(s); return string(b) }
		result := func(v string) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, m.ID, v)
		}
		text := func(s string, isError bool) string {
			return fmt.Sprintf(`{"resultType":"complete","content":[{"type":"text","text":%s}],"isError":%t}`, str(s), isError)
		}
		schema := `{"type":"object","properties":{"q":{"type":"string"}}}`
		switch {
		case m.Method == "tools/list":
			var tools []string
			for _, n := range []string{"echo", "fail", "ctype", hostile("tool")} {
				tools = append(tools, fmt.Sprintf(`{"name":%s,"description":%s,"inputSchema":%s,"annotations":{"readOnlyHint":true}}`, str(n), str(hostile("description")), schema))
			}
			result(`{"resultType":"complete","tools":[` + strings.Join(tools, ",") + `]}`)
		case m.Method != "tools/call":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":%s}}`, m.ID, str(hostile("method")))
		case m.Params.Name == "echo":
			result(text(hostile("text"), false))
		case m.Params.Name == "fail":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":%s}}`, m.ID, str(hostile("rpc")))
		case m.Params.Name == "ctype":
			w.Header()["Content-Type"] = []string{hostileHeader("ctype")}
			io.WriteString(w, "<html>")
		default:
			result(text(hostile("tooltext"), true))
		}
	}))
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}

// legacyHostileServer is a 2024-11-05 HTTP+SSE server: a POST gets 405, a
// GET an event stream whose endpoint event names a path with a percent-
// encoded screen clear, carriage return and bidi override (url.Parse
// decodes them into the path that the call's decision names).
func legacyHostileServer(t *testing.T) string {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: endpoint\ndata: /messages%1B%5B2J%0DPASS%E2%80%AE?sessionId=1\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	t.Cleanup(ts.Close)
	return ts.URL + "/sse"
}

// checkVisibleOutput fails the test for each character of out a terminal
// or a browser would obey instead of show: a control character other than
// a newline, a format (bidi) or separator character, a byte of invalid
// UTF-8.
func checkVisibleOutput(t *testing.T, name string, out []byte) {
	t.Helper()
	for i := 0; i < len(out); {
		r, n := utf8.DecodeRune(out[i:])
		if r == utf8.RuneError && n == 1 || r != '\n' && visible.Escaped(r) {
			lo, hi := max(0, i-60), min(len(out), i+20)
			t.Errorf("%s holds %q raw at byte %d: …%q…", name, out[i:i+n], i, out[lo:hi])
			return
		}
		i += n
	}
}

// hostileRun runs mcpdiag with args, checks the exit status (want -1: any
// but 2), and checks stdout and stderr with checkVisibleOutput; it returns
// stdout and stderr.
func hostileRun(t *testing.T, want int, args ...string) (string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := run(args, nil, &stdout, &stderr); code != want && (want >= 0 || code == 2) {
		t.Fatalf("%v: exit %d, want %d\n%s%s", args, code, want, stdout.String(), stderr.String())
	}
	name := strings.Join(args[:1], " ")
	checkVisibleOutput(t, name+" stdout", stdout.Bytes())
	checkVisibleOutput(t, name+" stderr", stderr.Bytes())
	return stdout.String(), stderr.String()
}

// wantShown fails the test unless out shows text rendered by visible.String.
func wantShown(t *testing.T, name, out, text string) {
	t.Helper()
	if !strings.Contains(out, visible.String(text)) {
		t.Errorf("%s does not show %q as %s:\n%s", name, text, visible.String(text), out)
	}
}

// TestHostilePeerTextIsShownNotObeyed (term15): text a hostile server sends
// (a JSON-RPC error's message, a tool's text, a tool's name, a
// Content-Type, a 2024-11-05 endpoint path) reached the terminal raw
// through call, classify, probe and report: an escape sequence cleared the
// screen or wrote the clipboard, a carriage return overwrote the verdict.
// Every output of the real CLI over it holds no raw control, bidi or
// invalid byte, and shows what was sent, escaped.
func TestHostilePeerTextIsShownNotObeyed(t *testing.T) {
	u := hostileServer(t)
	dir := t.TempDir()
	rec := filepath.Join(dir, "calls.jsonl")

	out, _ := hostileRun(t, 0, "call", u, "echo", "--record", rec)
	wantShown(t, "call echo", out, hostile("text"))
	out, _ = hostileRun(t, 3, "call", u, "fail", "--record", rec)
	wantShown(t, "call fail", out, hostile("rpc"))
	hostileRun(t, 4, "call", u, "ctype", "--record", rec, "--retries", "0")
	out, _ = hostileRun(t, 1, "call", u, hostile("tool"), "--record", rec)
	wantShown(t, "call of the hostile tool", out, hostile("tooltext"))
	hostileRun(t, 2, "call", u, "echo", "--args", "{\"q\":\"\x1b[2J\u202e\"")

	out, _ = hostileRun(t, 4, "call", legacyHostileServer(t), "echo", "--retries", "0")
	wantShown(t, "call of a 2024-11-05 server", out, "/messages\x1b[2J\rPASS\u202e")

	out, _ = hostileRun(t, 0, "report", rec)
	wantShown(t, "report", out, hostile("tool"))
	page := filepath.Join(dir, "report.html")
	hostileRun(t, 0, "report", rec, "--html", page)
	if b, err := os.ReadFile(page); err != nil {
		t.Fatal(err)
	} else {
		checkVisibleOutput(t, "report --html", b)
	}

	junit, precs := filepath.Join(dir, "probe.xml"), filepath.Join(dir, "probe.jsonl")
	out, _ = hostileRun(t, 1, "probe", u, "--junit", junit, "--record", precs)
	wantShown(t, "probe", out, hostile("tool"))
	b, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	checkVisibleOutput(t, "probe --junit", b)
	if !bytes.Contains(b, []byte(`tool&lt;\x1b]52;c;ZXZpbA==\x07`)) {
		t.Errorf("probe --junit does not name the hostile tool escaped:\n%s", b)
	}
	hostileRun(t, 0, "report", precs)

	// classify --text on a capture whose Content-Type and JSON-RPC error
	// message are hostile (a capture file holds any byte).
	capture := filepath.Join(dir, "capture.txt")
	msg, _ := json.Marshal(hostile("rpc"))
	if err := os.WriteFile(capture, []byte("HTTP/1.1 200 OK\r\nContent-Type: application/json; x="+hostileHeader("ctype")+"\r\n\r\n"+
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":`+string(msg)+`}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	out, _ = hostileRun(t, 0, "classify", "--text", "--id", "1", capture)
	wantShown(t, "classify --text", out, hostile("rpc"))
	wantShown(t, "classify --text", out, "application/json; x="+hostileHeader("ctype"))
	hostileRun(t, 0, "classify", "--id", "1", capture)
	checkHostileJSON(t, u, rec, precs)
	// A control character in a header is refused by the capture reader:
	// one line that shows the header, escaped, and exit 2.
	if err := os.WriteFile(capture, []byte("HTTP/1.1 200 OK\r\nContent-Type: text/x\x1b[2J\r\n\r\n{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, errOut := hostileRun(t, 2, "classify", "--text", capture); strings.Count(errOut, "\n") != 1 {
		t.Errorf("classify of a header with ESC: %q, want one line", errOut)
	}
}

// checkHostileJSON: the JSON outputs over the hostile server's answers.
// encoding/json escapes C0 but writes a bidi override, a C1 control and
// DEL as they are: the CLI's JSON on stdout has them as \u escapes, the
// same JSON value.
func checkHostileJSON(t *testing.T, u, rec, precs string) {
	t.Helper()
	out, _ := hostileRun(t, 0, "call", u, "echo", "--json")
	decodeRecords(t, []byte(out)) // still records
	if !strings.Contains(out, `\u202e`) {
		t.Errorf("call --json does not escape the bidi override: %s", out)
	}
	out, _ = hostileRun(t, 0, "report", rec, "--json")
	var v any
	if err := json.Unmarshal([]byte(out), &v); err != nil || !strings.Contains(out, "tool\u003c") && !strings.Contains(out, "tool<") {
		t.Errorf("report --json: %v\n%s", err, out)
	}
	hostileRun(t, 1, "probe", u, "--json")
	hostileRun(t, -1, "matrix", "--from-records", precs)

	// A record file is input: a recorded client's name (what a client
	// says in its initialize) names its trace in matrix --from-records.
	raw, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		m["client"] = hostile("client")
		b, _ := json.Marshal(m)
		lines = append(lines, string(b))
	}
	named := filepath.Join(filepath.Dir(rec), "named.jsonl")
	if err := os.WriteFile(named, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	junit := filepath.Join(filepath.Dir(rec), "passive.xml")
	out, _ = hostileRun(t, -1, "matrix", "--from-records", named, "--junit", junit)
	if !strings.Contains(out, `client<\x1b]52;c;ZXZpbA==\x07`) {
		t.Errorf("matrix --from-records does not name the client escaped:\n%s", out)
	}
	if b, err := os.ReadFile(junit); err != nil {
		t.Fatal(err)
	} else {
		checkVisibleOutput(t, "matrix --from-records --junit", b)
	}
	hostileRun(t, -1, "matrix", "--from-records", named, "--json")
	hostileRun(t, -1, "report", named)
}

// TestHostileMatrixClient (term15): a client under test whose stderr, and
// whose printed outcome, and a recorded client whose name are hostile:
// matrix's text, --json, --junit and --html hold no raw control, bidi or
// invalid byte, and the JUnit and the page are created 0600 as records are.
func TestHostileMatrixClient(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("uses sh")
	}
	dir := t.TempDir()
	junit, page := filepath.Join(dir, "matrix.xml"), filepath.Join(dir, "matrix.html")
	client := `printf 'stderr<\033]52;c;ZXZpbA==\007\033[2J\rPASS\342\200\256LIAF\302\233>\n' >&2; printf 'outcome: \033[2J\342\200\256\n'`
	out, _ := hostileRun(t, 1, "matrix", "--scenarios", "baseline", "--protocol", "2026-07-28", "--junit", junit, "--html", page, "--", "sh", "-c", client)
	wantShown(t, "matrix", out, "stderr<\x1b]52;c;ZXZpbA==\x07\x1b[2J\rPASS\u202eLIAF\u009b>")
	for _, f := range []string{junit, page} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		checkVisibleOutput(t, f, b)
		if st, err := os.Stat(f); err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v (%v), want 0600", f, st.Mode().Perm(), err)
		}
	}
	hostileRun(t, 1, "matrix", "--scenarios", "baseline", "--protocol", "2026-07-28", "--json", "--", "sh", "-c", client)

	// The page as a browser shows it: the case's detail quotes the
	// client's stderr, escaped; no text or title on the page holds a raw
	// control or bidi character.
	p := browser.Open(t, (&url.URL{Scheme: "file", Path: page}).String())
	browser.WaitFor(t, p, "the grid", `document.querySelector('#matrix-grid button.cell[data-case="baseline"]') !== null`)
	browser.Eval[bool](t, p, `(() => { document.querySelector('#matrix-grid button.cell[data-case="baseline"]').click(); return true })()`)
	browser.WaitFor(t, p, "the case's detail", `document.querySelector('#detail [data-section="checks"]') !== null`)
	shown := browser.Eval[string](t, p, `document.body.innerText + '\n' + [...document.querySelectorAll('[title]')].map((e) => e.title).join('\n')`)
	for _, r := range shown {
		if r != '\n' && r != '\t' && visible.Escaped(r) {
			t.Errorf("the page shows %U raw:\n%s", r, shown)
			break
		}
	}
	if want := `PASS\u202eLIAF\u009b>`; !strings.Contains(shown, want) {
		t.Errorf("the page does not show the client's stderr escaped (%s):\n%s", want, shown)
	}
}

// TestHostileServerThroughTheProxy (term15): the proxy in front of the
// hostile server, then call through it: the proxy's own lines on stderr,
// and report, matrix --from-records and report --html over its records,
// hold no raw control, bidi or invalid byte.
func TestHostileServerThroughTheProxy(t *testing.T) {
	u := hostileServer(t)
	dir := t.TempDir()
	rec := filepath.Join(dir, "proxy.jsonl")
	p := runHTTPProxyForTest(t, proxyOptions{upstream: u, recordFile: rec, recordBodies: "all"})
	via := p.base + "/mcp"
	hostileRun(t, 0, "call", via, "echo")
	hostileRun(t, 3, "call", via, "fail", "--retries", "0")
	hostileRun(t, 1, "call", via, hostile("tool"))
	hostileRun(t, 1, "probe", via)
	p.stop()
	checkVisibleOutput(t, "proxy stderr", []byte(p.stderr.String()))
	out, _ := hostileRun(t, -1, "report", rec)
	wantShown(t, "report of the proxy's records", out, hostile("tool"))
	hostileRun(t, -1, "report", rec, "--json")
	hostileRun(t, -1, "matrix", "--from-records", rec)
	page := filepath.Join(dir, "proxy.html")
	hostileRun(t, -1, "report", rec, "--html", page)
	if b, err := os.ReadFile(page); err != nil {
		t.Fatal(err)
	} else {
		checkVisibleOutput(t, "report --html of the proxy's records", b)
	}
}
