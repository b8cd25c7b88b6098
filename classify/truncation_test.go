package classify

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/mcpdiag/mcpdiag/wire"
)

// TestTruncatedStreamNeverSucceeds cuts valid streams whose last event is
// the response at every proper prefix: no prefix may classify as a success,
// and none may panic or fail to classify.
func TestTruncatedStreamNeverSucceeds(t *testing.T) {
	progress := `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`
	ok := `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"done"}]}}`
	streams := map[string]string{
		"LF":        "data: " + progress + "\n\ndata: " + ok + "\n\n",
		"CRLF":      ": hi\r\ndata: " + progress + "\r\n\r\ndata: " + ok + "\r\n\r\n",
		"CR":        "data: " + progress + "\r\rdata: " + ok + "\r\r",
		"multiline": "data: {\"jsonrpc\":\"2.0\",\ndata: \"id\":1,\ndata: \"result\":{\"content\":[]}}\n\n",
		"BOM":       "\xef\xbb\xbfdata: " + ok + "\n\n",
	}
	for name, full := range streams {
		t.Run(name, func(t *testing.T) {
			r := classifyStream(t, full)
			if r.Outcome != ToolSuccess {
				t.Fatalf("the whole stream: %s (%s), want TOOL_SUCCESS", r.Outcome, r.Reason)
			}
			for n := 0; n < len(full); n++ {
				r := classifyStream(t, full[:n])
				// A lone CR ends a line (WHATWG), so a CRLF stream cut just
				// before its final LF is complete: the event is dispatched.
				if n == len(full)-1 && strings.HasSuffix(full, "\r\n") {
					if r.Outcome != ToolSuccess {
						t.Fatalf("cut before the final LF: %s, want TOOL_SUCCESS (CR alone ends the blank line)", r.Outcome)
					}
					continue
				}
				if r.Outcome.Success() {
					t.Fatalf("prefix of %d/%d bytes classified as %s", n, len(full), r.Outcome)
				}
				if r.Outcome != StreamIncomplete && r.Outcome != MalformedJSON {
					t.Fatalf("prefix of %d bytes: %s (%s)", n, r.Outcome, r.Reason)
				}
			}
		})
	}
}

func classifyStream(t *testing.T, body string) *Result {
	t.Helper()
	r, err := Classify(&Exchange{
		ID: wire.IntID(1), Status: 200,
		Header: http.Header{"Content-Type": {"text/event-stream"}},
		Body:   strings.NewReader(body),
	})
	if err != nil {
		t.Fatalf("classify: %v", err)
	}
	return r
}

// FuzzClassify feeds arbitrary bodies under each content type and status:
// the classifier must never panic, must always name a known outcome in its
// layer, and must never call a body that is not JSON a success. And the
// properties of TestGoldenProperties hold for every input: the echoed
// fields equal their input, the chunking of the body is invisible (and a
// body given as bytes is judged as the same body read as a stream), and
// appending valid events after a terminal response changes nothing but
// warnings and counters.
func FuzzClassify(f *testing.F) {
	f.Add(200, "application/json", `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`)
	f.Add(200, "text/event-stream", "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[]}}\n\n")
	f.Add(200, "application/json", `{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":{"a":{"method":"roots/list"}}}}`)
	f.Add(500, "application/json", `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"x"}}`)
	f.Add(400, "application/json", `{"jsonrpc":"2.0","id":"server-error","error":{"code":-32600,"message":"Bad Request: Missing session ID"}}`)
	f.Add(200, "", `data: x`)
	f.Add(202, "text/html", ``)
	f.Add(200, "text/event-stream", "data: {\"method\":\"notifications/message\",\"jsonrpc\":\"2.0\"}\n\ndata: {\"result\":{\"content\":[]},\"id\":1,\"jsonrpc\":\"2.0\"}\n\n")
	f.Fuzz(func(t *testing.T, status int, ct, body string) {
		if status < 100 || status > 999 {
			return
		}
		const max = 1 << 16
		mk := func(stream bool, chunk func(io.Reader) io.Reader) *Exchange {
			ex := &Exchange{ID: wire.IntID(1), Status: status, Header: http.Header{"Content-Type": {ct}}}
			if stream {
				ex.Body = chunk(strings.NewReader(body))
			} else {
				ex.BodyBytes = []byte(body)
			}
			return ex
		}
		c := Classifier{MaxEventSize: max}
		var ref string
		var base *Result
		for _, ch := range chunkings(uint64(len(body))) {
			ex := mk(true, ch.wrap)
			r, err := c.Classify(ex)
			checkEcho(t, ex, []byte(body), r)
			if got := verdict(r, err); ref == "" {
				ref, base = got, r
			} else if got != ref {
				t.Fatalf("%s gives another verdict on %q:\n%s\nwant\n%s", ch.name, body, got, ref)
			}
		}
		ex := mk(false, nil)
		r, err := c.Classify(ex)
		checkEcho(t, ex, []byte(body), r)
		if r.Layer() == "" || r.Outcome.Layer() != r.Layer() {
			t.Fatalf("outcome %q has layer %q", r.Outcome, r.Layer())
		}
		if r.Outcome.Success() && !bytes.Contains([]byte(body), []byte("result")) {
			t.Fatalf("success without a result: %q", body)
		}
		if len(body) <= max && verdict(r, err) != ref {
			t.Fatalf("bytes and stream differ on %q:\n%s\n%s", body, verdict(r, err), ref)
		}
		if base.SSE() == nil || !base.SSE().Terminal || base.SSE().Unterminated || base.SSE().End != "eof" {
			return
		}
		extra := "\n" + strings.Join(afterTerminal, "")
		ex = &Exchange{ID: wire.IntID(1), Status: status, Header: http.Header{"Content-Type": {ct}}, Body: strings.NewReader(body + extra)}
		after, _ := c.Classify(ex)
		if got, want := withoutCounters(after), withoutCounters(base); got != want {
			t.Fatalf("events after the response changed the verdict on %q:\n%s\nwant\n%s", body, got, want)
		}
	})
}

// FuzzFastPath: wherever the single-pass fast path answers, its verdict is
// exactly the general path's (compared as the JSON a user sees), for JSON
// bodies and the same message as an SSE event, on both protocol revisions.
func FuzzFastPath(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"ok"}],"isError":false}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"content":[{"text":"x","type":"text"},{"type":"text","text":"y"}],"isError":true}}`,
		`{"id":"a","jsonrpc":"2.0","result":{"content":[],"structuredContent":[1,{"a":null}],"_meta":{"k":1},"x":true}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"MCP error -32602: no"}],"isError":true}}`,
		`{"jsonrpc":"2.0","id":1.0,"result":{"content":[]},"extra":[1,2,{"b":"c"}]}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"x":[1]}}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`,
		`{"jsonrpc":"2.0","id":7,"error":{"code":1.5,"message":"x"}}`,
		`{"jsonrpc":"2.0","id":7,"error":{"message":"\xff\xfe","code":123456789012345678,"data":null}}`,
		`{"jsonrpc":"2.0","id":7,"error":{"code":-0,"message":"x","data":[1],"extra":{}}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"content":[]},"error":{"code":1,"message":"x"}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"x"},"result":{"content":[]}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":{"approval":{"method":"elicitation/create","params":{"mode":"form","message":"synthetic input"}}}}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"inputRequests":{"a":{"method":"sampling/createMessage","params":{"messages":[]}},"b":{"params":{"message":"m"},"method":"elicitation/create"},"c":{"method":"roots/list"}},"requestState":"s","resultType":"input_required","_meta":{}}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","requestState":"\u0041","content":[{"type":"image"}],"isError":true}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":{"x":{"method":"elicitation/create","params":{"mode":3,"message":"m"}}}}}`,
		// The key scanner's words: keys of 7, 8 and 9 bytes, an escape or
		// a control character past the first word, spaces around the
		// colon and the commas, a body cut inside a key.
		` { "jsonrpc" : "2.0" , "id" : 1 , "result" : { "content" : [ { "type" : "text" , "text" : "ok" } ] , "isError" : false } } `,
		`{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":false,"abcdefgh":1,"abcdefghi":2,"resultType":"complete"}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"content":[],"resultTyp\u0065":"complete"}}`,
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[],\"structured\x01Content\":{}}}",
		`{"jsonrpc":"2.0","id":1,"result":{"content":[],"isErr`,
		`{"jsonrpc":"2.0","id":12345678,"result":{"content":[{"type":"text","text":"a long id, copied on its own"}]}}`,
		// The values the fast path compares as they are spelled: a
		// resultType, a method and a mode that only start like one, an
		// error code without a name, a renamed one.
		`{"jsonrpc":"2.0","id":1,"result":{"resultType":"completed","content":[]}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":{"a":{"method":"roots/lists"}}}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":{"b":{"method":"elicitation/create","params":{"mode":"formal","message":"m"}},"c":{"method":"elicitation/create","params":{"mode":"url","message":"m"}}}}}`,
		`{"jsonrpc":"2.0","id":-3,"error":{"code":-32099,"message":"x"}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32042,"message":"needs a URL"}}`,
	} {
		f.Add(s, "1", false)
	}
	f.Fuzz(func(t *testing.T, body, id string, legacy bool) {
		ex := func() *Exchange {
			e := &Exchange{Status: 200, Header: http.Header{"Content-Type": {"application/json"}}, BodyBytes: []byte(body)}
			if legacy {
				e.ProtocolVersion = Protocol2025
			}
			if pid, err := wire.ParseID(id); err == nil {
				e.ID = pid
			}
			return e
		}
		fex := ex()
		fast, _ := (&Classifier{KeepResponse: true}).Classify(fex)
		slow, _ := (&Classifier{KeepResponse: true, noFastPath: true}).Classify(ex())
		a, _ := json.Marshal(fast)
		b, _ := json.Marshal(slow)
		if string(a) != string(b) || string(fast.Response()) != string(slow.Response()) {
			t.Fatalf("fast and general paths differ on %q:\nfast    %s\ngeneral %s", body, a, b)
		}
		// ClassifyInto (the fast path inside into, not Classify's own
		// reading before it allocates) writes the same verdict.
		var in Result
		_ = (&Classifier{KeepResponse: true}).ClassifyInto(ex(), &in)
		if c, _ := json.Marshal(in); string(c) != string(a) || string(in.Response()) != string(fast.Response()) {
			t.Fatalf("Classify and ClassifyInto differ on %q:\n%s\n%s", body, a, c)
		}
		// And into a Result that held another verdict: its extra evidence,
		// warnings' array and input request's room are reused (result17).
		for _, prev := range benchBodies[1:] {
			pex := &Exchange{Status: 200, Header: http.Header{"Content-Type": {"application/json"}}, BodyBytes: []byte(prev), ID: wire.IntID(1)}
			var re Result
			c := &Classifier{KeepResponse: true}
			_ = c.ClassifyInto(pex, &re)
			_ = c.ClassifyInto(ex(), &re)
			if got, _ := json.Marshal(&re); string(got) != string(a) || string(re.Response()) != string(fast.Response()) {
				t.Fatalf("ClassifyInto after %s differs on %q:\n%s\n%s", prev, body, a, got)
			}
		}
		// The echoed fields equal their input, and the same body read in
		// 1-byte reads is judged the same.
		checkEcho(t, fex, []byte(body), fast)
		sex := ex()
		sex.Body, sex.BodyBytes = iotest.OneByteReader(strings.NewReader(body)), nil
		streamed, _ := (&Classifier{KeepResponse: true}).Classify(sex)
		if c, _ := json.Marshal(streamed); string(c) != string(a) || string(streamed.Response()) != string(fast.Response()) {
			t.Fatalf("bytes and 1-byte reads differ on %q:\n%s\n%s", body, a, c)
		}
		// The same message as the data of an SSE event, after a
		// notification: the fast path (which takes results only on a
		// stream) and the general path agree, also in 1-byte reads.
		if strings.ContainsAny(body, "\r\n") {
			return
		}
		stream := "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\ndata: " + body + "\n\n"
		sse := func(oneByte bool) *Exchange {
			e := ex()
			e.Header = http.Header{"Content-Type": {"text/event-stream"}}
			e.BodyBytes = nil
			e.Body = strings.NewReader(stream)
			if oneByte {
				e.Body = iotest.OneByteReader(e.Body)
			}
			return e
		}
		fs, _ := (&Classifier{KeepResponse: true}).Classify(sse(false))
		gs, _ := (&Classifier{KeepResponse: true, noFastPath: true}).Classify(sse(true))
		x, _ := json.Marshal(fs)
		y, _ := json.Marshal(gs)
		if string(x) != string(y) || string(fs.Response()) != string(gs.Response()) {
			t.Fatalf("fast and general paths differ on the event %q:\nfast    %s\ngeneral %s", body, x, y)
		}
	})
}
