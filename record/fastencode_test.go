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

// fuzzRecord builds a record with every member set from the inputs, so the
// hand encoder and encoding/json see the same odd strings (escapes, control
// characters, bytes that are not UTF-8, U+2028, HTML characters) in every
// place.
func fuzzRecord(s1, s2 string, n int64, raw []byte, flags uint32) *Record {
	bit := func(i uint) bool { return flags&(1<<i) != 0 }
	code := n % 100000
	isErr := bit(0)
	r := &Record{
		V: int(n % 7), Kind: Kind(s1), ID: s2, Time: time.Unix(0, n).UTC(),
		Client: s1 + s2, ProtocolVersion: s2, Scenario: s1, Method: s2, PostCount: int(n % 5),
		JSONRPC:    JSONRPC{ID: wire.IDFromRaw(raw)},
		ResultType: ResultType(s1), Outcome: classify.Outcome(s2), RetryOrigin: RetryOrigin(s1),
		Layer: classify.Layer(s2), Reason: s1, Tool: s2, ArgsHash: s1, Session: s2, HTTPMethod: s1, URL: s2,
		Status: int(n % 600), ContentType: s1, ErrorMessage: s2, RetryAfter: s1, Note: s1 + s2,
		RequestBytes: n, ResponseBytes: n / 3, Dropped: n % 3, Summarized: n % 2,
		Timings: Timings{Headers: Duration(n % 1e9), Total: Duration(n)},
	}
	if bit(1) {
		r.CallID, r.Seq, r.Exchanges, r.AttemptOf = s1, int(n%9), int(n%4), s2
	}
	if bit(2) {
		r.HTTPStatuses = []int{int(n % 600), 200}
	} else if bit(3) {
		r.HTTPStatuses = []int{}
	}
	if bit(4) {
		r.JSONRPC.ErrorCode, r.JSONRPC.ErrorName = &code, s1
		r.JSONRPC.ResponseID = wire.IDFromRaw(raw)
	}
	if bit(5) {
		r.IsError = &isErr
		r.ErrorData, r.ErrorDataTruncated = json.RawMessage(raw), bit(6)
	}
	if bit(7) {
		r.SSE = &SSE{Events: int(n % 9), Terminal: bit(8), TerminalEvent: int(n % 3), Unterminated: bit(9), End: s1, Skipped: 1}
	}
	if bit(10) {
		r.Network = &Network{Error: s1, Phase: s2, RequestSent: bit(11)}
		r.Input = &Input{Requests: []InputRequest{{Key: s1, Method: s2}}}
		r.Task = &Task{TaskID: s1, Status: s2}
		r.NotClassified = &NotClassified{Cause: s1, Size: n}
		r.Auth = &Auth{Step: s1, Issuer: s2, InURL: []string{s1}}
		r.Decision = &Decision{Action: s1, DelayMs: n}
		r.Fault = &Fault{Selection: s1, Fired: []string{s2}, Seed: uint64(n)}
		r.Params = &Params{Meta: []string{s1}, RequestState: s2}
		r.Probe = &Probe{Kind: s1, Seed: s2, Index: int(n % 7), Property: s1, Detail: s2}
	}
	if bit(12) {
		r.Warnings = []Warning{{Code: s1, Message: s2}, {Code: s2}}
		r.Flags = Flags{Flag(s1), FlagDC}
		r.SSEArrivals = []Arrival{{End: n, At: time.Duration(n)}, {End: 1, At: 1500 * time.Microsecond}}
	}
	if bit(13) {
		r.RequestHeaders = http.Header{s1: {s2, s1}, "B": nil, s2: {}, "Content-Type": {"application/json"}}
		r.ResponseHeaders = http.Header{}
	}
	if bit(14) {
		r.RequestBody, r.ResponseBody = &Body{Text: s1}, &Body{Text: s2, Truncated: bit(15)}
	}
	r.PolicyRetries, r.InputRounds = int(n%2), int(n%3)
	return r
}

func checkAppendRecord(t *testing.T, r *Record) {
	t.Helper()
	want, werr := encodeLine(r)
	got, ok := appendRecord(nil, r)
	if !ok {
		// Left to encodeLine: only for what the hand encoder does not
		// take (a time it does not format, an id or errorData to check).
		return
	}
	if werr != nil {
		t.Fatalf("encodeLine fails (%v) where the hand encoder wrote %s", werr, got)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("hand encoder and encoding/json differ:\nhand %s\njson %s", got, want)
	}
}

// TestAppendRecordMatchesEncodeLine: the hand-written encoder writes the
// bytes encoding/json writes, on records like the proxy's and on every
// member set with strings that need escaping; and Encode takes the hand
// path for them.
func TestAppendRecordMatchesEncodeLine(t *testing.T) {
	odd := []string{"", "plain", "quote\" back\\slash", "ctl\x00\x01\x08\x0c\n\r\t\x1f", "<html>&amp;", "bad\xff\xfeutf8", "line\u2028para\u2029", "año — 🙂", strings.Repeat("x", 5000)}
	raws := [][]byte{nil, []byte("1"), []byte(`"a\u0041"`), []byte("null"), []byte(`{"a":[1, 2]}`), []byte("not json"), []byte("-1.5e3")}
	taken := 0
	for i, s1 := range odd {
		for j, s2 := range odd {
			for k, raw := range raws {
				r := fuzzRecord(s1, s2, int64(i*1000003+j*7919+k), raw, uint32(i*31+j*17+k*131)*2654435761)
				checkAppendRecord(t, r)
				r = fuzzRecord(s1, s2, int64(i+j+k), raw, 0xffffffff)
				checkAppendRecord(t, r)
				if _, ok := appendRecord(nil, r); ok {
					taken++
				}
			}
		}
	}
	if taken < len(odd)*len(odd) {
		t.Errorf("the hand encoder took only %d records; the comparison is too thin", taken)
	}
	// A record as the proxy makes it, through Encode.
	code := int64(-32602)
	rec := &Record{Kind: KindExchange, Time: time.Date(2026, 12, 3, 12, 0, 0, 120000000, time.UTC), Client: "bench/1", ProtocolVersion: "2026-07-28",
		Method: "tools/call", PostCount: 1, HTTPStatuses: []int{200}, JSONRPC: JSONRPC{ID: wire.IntID(1), ErrorCode: &code},
		Outcome: classify.ToolSuccess, Layer: classify.LayerApplication, Tool: "search", ArgsHash: "sha256:ab", Status: 200,
		HTTPMethod: "POST", URL: "http://127.0.0.1:1/mcp?token=secret", ContentType: "application/json",
		RequestHeaders:  http.Header{"Authorization": {"Bearer abc"}, "Mcp-Session-Id": {"s"}, "Content-Type": {"application/json"}},
		ResponseHeaders: http.Header{"Content-Type": {"application/json"}}, Timings: Timings{Headers: Duration(time.Millisecond), Total: Duration(2 * time.Millisecond)},
		RequestBytes: 1024, ResponseBytes: 1024}
	var e Encoder
	line, err := e.Encode(rec)
	if err != nil {
		t.Fatal(err)
	}
	c := e.sanitize(e.redactor().withHeaderSecrets(rec.RequestHeaders, rec.ResponseHeaders), rec)
	var m map[string]any
	if err := json.Unmarshal(line, &m); err != nil || m["id"] == "" {
		t.Fatalf("Encode: %s (%v)", line, err)
	}
	c.V, c.ID, c.Time, c.RetryOrigin = SchemaVersion, m["id"].(string), rec.Time, OriginNone
	checkAppendRecord(t, &c)
	if want, _ := encodeLine(&c); !bytes.Equal(line, want) {
		t.Errorf("Encode wrote\n%s\nencoding/json writes\n%s", line, want)
	}
}

// FuzzAppendRecord: wherever the hand encoder writes a line, it is the
// line encoding/json writes.
func FuzzAppendRecord(f *testing.F) {
	f.Add("a", "b", int64(1), []byte("1"), uint32(0xffffffff))
	f.Add("<\u2028\xff", "\"\\\x00", int64(-5), []byte(`"x"`), uint32(0x5555))
	f.Add("", "", int64(0), []byte(nil), uint32(0))
	f.Fuzz(func(t *testing.T, s1, s2 string, n int64, raw []byte, flags uint32) {
		checkAppendRecord(t, fuzzRecord(s1, s2, n, raw, flags))
	})
}

// TestAppendRecordCoversEveryField sets each field of Record in turn (and
// everything below it) to a value that is not zero and checks that the
// hand encoder writes what encoding/json writes: a field added to Record
// and not to appendRecord fails here.
func TestAppendRecordCoversEveryField(t *testing.T) {
	var fill func(v reflect.Value)
	fill = func(v reflect.Value) {
		switch v.Interface().(type) {
		case wire.ID:
			v.Set(reflect.ValueOf(wire.IntID(7)))
			return
		case time.Time:
			v.Set(reflect.ValueOf(time.Date(2026, 12, 3, 1, 2, 3, 4000, time.UTC)))
			return
		case json.RawMessage:
			v.Set(reflect.ValueOf(json.RawMessage(`{"a": [1]}`)))
			return
		}
		switch v.Kind() {
		case reflect.String:
			v.SetString("x<y")
		case reflect.Int, reflect.Int64, reflect.Int32:
			v.SetInt(3)
		case reflect.Uint64, reflect.Uint:
			v.SetUint(5)
		case reflect.Float64:
			v.SetFloat(0.5)
		case reflect.Bool:
			v.SetBool(true)
		case reflect.Pointer:
			v.Set(reflect.New(v.Type().Elem()))
			fill(v.Elem())
		case reflect.Slice:
			v.Set(reflect.MakeSlice(v.Type(), 1, 1))
			fill(v.Index(0))
		case reflect.Map:
			m := reflect.MakeMap(v.Type())
			k := reflect.New(v.Type().Key()).Elem()
			fill(k)
			e := reflect.New(v.Type().Elem()).Elem()
			fill(e)
			m.SetMapIndex(k, e)
			v.Set(m)
		case reflect.Struct:
			for i := range v.NumField() {
				if v.Type().Field(i).IsExported() {
					fill(v.Field(i))
				}
			}
		default:
			t.Fatalf("no filler for %s", v.Type())
		}
	}
	rt := reflect.TypeFor[Record]()
	for i := range rt.NumField() {
		var r Record
		fill(reflect.ValueOf(&r).Elem().Field(i))
		want, err := encodeLine(&r)
		if err != nil {
			t.Fatalf("%s: encodeLine: %v", rt.Field(i).Name, err)
		}
		got, ok := appendRecord(nil, &r)
		if !ok || !bytes.Equal(got, want) {
			t.Errorf("field %s: hand encoder (ok %v)\n%s\nencoding/json\n%s", rt.Field(i).Name, ok, got, want)
		}
	}
	var all Record
	fill(reflect.ValueOf(&all).Elem())
	checkAppendRecord(t, &all)
	if _, ok := appendRecord(nil, &all); !ok {
		t.Error("the hand encoder declined a record with every field set")
	}
}
