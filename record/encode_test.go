package record

import (
	"bytes"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/wire"
)

func TestEncodeArticleFieldsAlwaysPresent(t *testing.T) {
	t.Parallel()
	line, err := Marshal(&Record{Kind: KindExchange})
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(line, &m); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"client": `""`, "protocolVersion": `""`, "scenario": `""`, "method": `""`, "postCount": `0`,
		"httpStatuses": `[]`, "jsonrpc": `{"id":null,"errorCode":null}`, "resultType": `null`,
		"outcome": `""`, "retryOrigin": `"none"`, "v": `2`, "kind": `"exchange"`,
	}
	for k, v := range want {
		if got := string(m[k]); got != v {
			t.Errorf("%s = %s, want %s", k, got, v)
		}
	}
	if len(m["id"]) != 28 || len(m["time"]) == 0 {
		t.Errorf("id %s, time %s: want them filled in", m["id"], m["time"])
	}
	if !bytes.HasSuffix(line, []byte("\n")) || bytes.Count(line, []byte("\n")) != 1 {
		t.Errorf("not one line: %q", line)
	}
}

func TestEncodeRoundTrip(t *testing.T) {
	t.Parallel()
	code := int64(-32602)
	isErr := false
	in := &Record{
		Kind: KindExchange, ID: "01J0000000000000000000000A", CallID: "c1", Seq: 2,
		Time:   time.Date(2026, 8, 1, 12, 0, 0, 123456789, time.UTC),
		Client: "mcpdiag@dev", ProtocolVersion: "2026-07-28", Scenario: "errors.jsonrpc_error", Method: "tools/call",
		PostCount: 2, HTTPStatuses: []int{503, 200},
		JSONRPC:    JSONRPC{ID: wire.IntID(1), ErrorCode: &code, ErrorName: "InvalidParams"},
		ResultType: "complete", Outcome: classify.JSONRPCError, RetryOrigin: OriginPolicy, Layer: classify.LayerProtocol,
		Tool: "echo", ArgsHash: "sha256:00", Status: 200, ContentType: "application/json", IsError: &isErr,
		ErrorMessage: "bad", ErrorData: json.RawMessage(`{"field":"x"}`),
		Timings:  Timings{Headers: Duration(1500 * time.Microsecond), Total: Duration(3 * time.Millisecond)},
		SSE:      &SSE{Events: 3, Terminal: true, TerminalEvent: 3, End: "eof"},
		Decision: &Decision{Action: "stop", Reason: "protocol error"},
		Warnings: []Warning{{Code: "status-mismatch", Message: "m"}},
	}
	line, err := Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Decode(line)
	if err != nil {
		t.Fatal(err)
	}
	if !out.Time.Equal(in.Time) || out.Timings != in.Timings || out.JSONRPC.ID.String() != "1" ||
		*out.JSONRPC.ErrorCode != code || out.ResultType != "complete" || !reflect.DeepEqual(out.HTTPStatuses, in.HTTPStatuses) ||
		*out.SSE != *in.SSE || *out.Decision != *in.Decision || string(out.ErrorData) != `{"field":"x"}` ||
		out.Outcome != in.Outcome || out.RetryOrigin != in.RetryOrigin || out.Scenario != in.Scenario {
		t.Errorf("round trip changed the record:\n in %+v\nout %+v\nline %s", in, out, line)
	}
	if !strings.Contains(string(line), `"headersMs":1.5,`) || !strings.Contains(string(line), `"totalMs":3}`) {
		t.Errorf("timings not in milliseconds: %s", line)
	}
}

func TestEncodeDoesNotModifyRecord(t *testing.T) {
	t.Parallel()
	rec := &Record{
		Kind:           KindExchange,
		RequestHeaders: http.Header{"Authorization": {"Bearer abcdefgh"}, "Mcp-Session-Id": {"sess-1"}},
		ResponseBody:   &Body{Text: `{"access_token":"abcdefgh"}`},
		ErrorData:      json.RawMessage(`{"password":"abcdefgh"}`),
		URL:            "https://u:p@h/x?access_token=abcdefgh",
		Session:        "sess-1",
	}
	before, _ := json.Marshal(rec)
	line, err := Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	after, _ := json.Marshal(rec)
	if !bytes.Equal(before, after) {
		t.Errorf("Encode modified the record:\n%s\n%s", before, after)
	}
	if bytes.Contains(line, []byte("abcdefgh")) || bytes.Contains(line, []byte("sess-1")) {
		t.Errorf("secret in line: %s", line)
	}
	if !bytes.Contains(line, []byte(`"session":"`+HashSession("sess-1")+`"`)) {
		t.Errorf("session not hashed: %s", line)
	}
}

func TestEncodeLimits(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", 5000)
	rec := &Record{Kind: KindExchange, ResponseBody: &Body{Text: big}, RequestBody: &Body{Text: "small"}}
	e := Encoder{BodyLimit: 1000}
	line, err := e.Encode(rec)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := Decode(line)
	if len(got.ResponseBody.Text) != 1000 || !got.ResponseBody.Truncated || got.RequestBody.Truncated {
		t.Errorf("body limit: %d bytes, truncated %v/%v", len(got.ResponseBody.Text), got.ResponseBody.Truncated, got.RequestBody.Truncated)
	}
	// A line over MaxLineSize loses its body texts, not the record.
	e = Encoder{MaxLineSize: 2000}
	line, err = e.Encode(rec)
	if err != nil {
		t.Fatal(err)
	}
	got, _ = Decode(line)
	if len(line) > 2000 || got.ResponseBody.Text != "" || !got.ResponseBody.Truncated || !got.RequestBody.Truncated {
		t.Errorf("max line: %d bytes: %s", len(line), line)
	}
	// Too large even without bodies.
	e = Encoder{MaxLineSize: 100}
	if _, err := e.Encode(&Record{Kind: KindExchange, Reason: big}); err == nil {
		t.Error("an oversized record was encoded")
	}
	// Large error data becomes a string excerpt.
	e = Encoder{BodyLimit: 100}
	line, err = e.Encode(&Record{Kind: KindExchange, ErrorData: json.RawMessage(`{"a":"` + big + `"}`)})
	if err != nil {
		t.Fatal(err)
	}
	got, _ = Decode(line)
	if !got.ErrorDataTruncated || got.ErrorData[0] != '"' || len(got.ErrorData) > 110 {
		t.Errorf("error data: %s", line)
	}
}

// fillStrings sets every settable string of v (recursively) to s.
func fillStrings(t *testing.T, v reflect.Value, s string) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(s)
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		fillStrings(t, v.Elem(), s)
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() || v.Type() == reflect.TypeFor[wire.ID]() {
			return
		}
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				fillStrings(t, v.Field(i), s)
			}
		}
	case reflect.Slice:
		switch v.Type() {
		case reflect.TypeFor[json.RawMessage]():
			b, _ := json.Marshal(map[string]string{"k": s})
			v.SetBytes(b)
			return
		case reflect.TypeFor[[]int]():
			return
		}
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fillStrings(t, v.Index(0), s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		if v.Type().Elem().Kind() == reflect.Slice {
			m.SetMapIndex(reflect.ValueOf("X-Custom"), reflect.ValueOf([]string{s}))
		} else {
			// A counter keyed by a method or tool name.
			m.SetMapIndex(reflect.ValueOf(s), reflect.Zero(v.Type().Elem()))
		}
		v.Set(m)
	case reflect.Int, reflect.Int64, reflect.Uint64, reflect.Float64, reflect.Bool:
	default:
		t.Fatalf("fillStrings: unhandled kind %s", v.Kind())
	}
}

// TestEveryStringFieldIsScrubbed guards against a new field that the
// encoder forgets to redact: a registered secret put in every string of a
// record must not reach the line.
func TestEveryStringFieldIsScrubbed(t *testing.T) {
	t.Parallel()
	const secret = "SEKRIT-0123456789-abcdef"
	red := NewRedactor()
	if err := red.AddSecret(secret); err != nil {
		t.Fatal(err)
	}
	var rec Record
	fillStrings(t, reflect.ValueOf(&rec).Elem(), "pre "+secret+" post")
	rec.JSONRPC.ID = wire.StringID(secret)
	rec.JSONRPC.ResponseID = wire.StringID("x" + secret)
	e := Encoder{Redactor: red}
	line, err := e.Encode(&rec)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(line, []byte("0123456789-abcdef")) {
		t.Errorf("secret survived: %s", line)
	}
	// Without the last-line check (which would hide a forgotten field), the
	// field-by-field scrub alone must already remove it.
	c := e.sanitize(e.redactor(), &rec)
	raw, _ := encodeLine(&c)
	if bytes.Contains(raw, []byte(secret)) {
		t.Errorf("a field is not scrubbed by sanitize: %s", raw)
	}
}

func TestSetResult(t *testing.T) {
	t.Parallel()
	body := `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad arguments","data":{"client_secret":"zzzzzzzz","field":"x"}}}`
	res, err := classify.Classify(&classify.Exchange{
		ID: wire.IntID(1), Status: 200, Header: http.Header{"Content-Type": {"application/json"}}, BodyBytes: []byte(body),
	})
	if err != nil {
		t.Fatal(err)
	}
	var rec Record
	rec.Kind = KindExchange
	rec.JSONRPC.ID = wire.IntID(1)
	rec.SetResult(res)
	if rec.Outcome != classify.JSONRPCError || rec.Layer != classify.LayerProtocol || *rec.JSONRPC.ErrorCode != -32602 ||
		rec.JSONRPC.ErrorName != "InvalidParams" || rec.ErrorMessage != "bad arguments" || rec.Status != 200 ||
		rec.ContentType != "application/json" || rec.Method != "tools/call" || rec.ProtocolVersion != classify.Protocol2026 ||
		rec.ResponseBytes != int64(len(body)) || !rec.JSONRPC.ResponseID.IsZero() {
		t.Errorf("SetResult: %+v", rec)
	}
	line, err := Marshal(&rec)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains([]byte(unmask(string(line))), []byte(`"errorData":{"client_secret":"[redacted]","field":"x"}`)) {
		t.Errorf("error data not redacted: %s", line)
	}

	sse := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":\"a\",\"result\":{\"content\":[],\"isError\":true,\"resultType\":\"complete\"}}\n\n"
	res, err = classify.Classify(&classify.Exchange{
		ID: wire.StringID("a"), Status: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, BodyBytes: []byte(sse),
	})
	if err != nil {
		t.Fatal(err)
	}
	rec = Record{}
	rec.SetResult(res)
	if rec.Outcome != classify.ToolError || rec.SSE == nil || rec.SSE.Events != 2 || rec.SSE.Progress != 1 ||
		rec.IsError == nil || !*rec.IsError || rec.ResultType != "complete" || rec.JSONRPC.ID.String() != `"a"` {
		t.Errorf("SetResult(sse): %+v %+v", rec, rec.SSE)
	}
	rec.SetResult(nil) // no-op
}

func TestDurationJSON(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		d    time.Duration
		want string
	}{
		{1500 * time.Microsecond, "1.5"}, {2 * time.Second, "2000"}, {1234567 * time.Nanosecond, "1.235"}, {0, "0"},
	} {
		b, _ := Duration(tt.d).MarshalJSON()
		if string(b) != tt.want {
			t.Errorf("Duration(%v) = %s, want %s", tt.d, b, tt.want)
		}
		var d Duration
		if err := d.UnmarshalJSON(b); err != nil || time.Duration(d).Round(time.Microsecond) != tt.d.Round(time.Microsecond) {
			t.Errorf("UnmarshalJSON(%s) = %v, %v", b, time.Duration(d), err)
		}
	}
}

func TestNewID(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for range 1000 {
		id := NewID()
		if len(id) != 26 || seen[id] {
			t.Fatalf("NewID = %q (len %d, seen %v)", id, len(id), seen[id])
		}
		seen[id] = true
	}
	a := newIDAt(time.UnixMilli(1_000_000))
	b := newIDAt(time.UnixMilli(1_000_001))
	if a >= b {
		t.Errorf("ids do not sort by time: %s >= %s", a, b)
	}
	if c := newIDAt(time.UnixMilli(1<<48 - 1)); c[0] != '7' {
		t.Errorf("the first digit holds 3 bits: %s", c)
	}
}

// TestSetResultCopiesOnlyAnIDItKeeps: a response that answers with the
// request's id (most do) costs SetResult no copy of it (one allocation
// per exchange before, thrown away: 2 here, 1 now, the isError flag's
// copy); a response id that differs is kept as a copy of its own, not the
// classifier's bytes.
func TestSetResultCopiesOnlyAnIDItKeeps(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	body := []byte(`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"ok"}],"isError":false,"resultType":"complete"}}`)
	res, err := classify.Classify(&classify.Exchange{
		ID: wire.IntID(7), Status: 200, Header: http.Header{"Content-Type": {"application/json"}}, BodyBytes: body,
	})
	if err != nil {
		t.Fatal(err)
	}
	var rec Record
	id := wire.IntID(7)
	n := testing.AllocsPerRun(100, func() {
		rec = Record{}
		rec.JSONRPC.ID = id
		rec.SetResult(res)
	})
	if n > 1 || rec.JSONRPC.ID.String() != "7" || !rec.JSONRPC.ResponseID.IsZero() || rec.IsError == nil {
		t.Errorf("SetResult with the request's id: %v allocations (want 1, the isError flag's), id %s, response id %s", n, rec.JSONRPC.ID, rec.JSONRPC.ResponseID)
	}

	other := `{"jsonrpc":"2.0","id":8,"result":{"content":[{"type":"text","text":"ok"}],"isError":false,"resultType":"complete"}}`
	for _, start := range []wire.ID{wire.IntID(7), {}} {
		res, err := classify.Classify(&classify.Exchange{
			ID: wire.IntID(7), Status: 200, Header: http.Header{"Content-Type": {"application/json"}}, BodyBytes: []byte(other),
		})
		if err != nil || res.JSONRPC() == nil {
			t.Fatal(err)
		}
		rec = Record{}
		rec.JSONRPC.ID = start
		rec.SetResult(res)
		kept := rec.JSONRPC.ResponseID
		if start.IsZero() {
			kept = rec.JSONRPC.ID
		}
		raw := res.JSONRPC().ID.Raw()
		for i := range raw {
			raw[i] = 'x' // the classifier's bytes, overwritten: the record's copy stays
		}
		if kept.String() != "8" {
			t.Errorf("request id %q: the response id kept is %q, want its own copy of 8", start, kept)
		}
	}
}
