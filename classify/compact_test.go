package classify

import (
	"bytes"
	"encoding/json"
	"net/http"
	"reflect"
	"testing"

	"github.com/mcpdiag/mcpdiag/wire"
)

// TestResultStrings: the strings Result keeps as table indexes read back
// exactly as set, whether the table has them or not, in any order; a copy
// made before a setter keeps its own.
func TestResultStrings(t *testing.T) {
	for _, f := range []struct {
		name   string
		get    func(*Result) string
		set    func(*Result, string)
		values []string
	}{
		{"ContentType", (*Result).ContentType, (*Result).SetContentType,
			[]string{"application/json", "text/event-stream; charset=utf-8", "Application/JSON", "", "text/html", "text/event-stream"}},
		{"Method", (*Result).Method, (*Result).SetMethod,
			[]string{"tools/call", "x/custom", AnswerAckMethod, "", "ping", "resources/subscribe"}},
		{"Protocol", (*Result).Protocol, (*Result).SetProtocol,
			[]string{Protocol2026, "2099-01-01", Protocol2025, "", "2024-11-05", "draft"}},
		{"ResultType", (*Result).ResultType, (*Result).SetResultType,
			[]string{"complete", "task", "input_required", "", "later", "complete"}},
	} {
		t.Run(f.name, func(t *testing.T) {
			var r Result
			if got := f.get(&r); got != "" {
				t.Fatalf("zero Result: %q", got)
			}
			for i, v := range f.values {
				before := r
				prev := f.get(&before)
				f.set(&r, v)
				if got := f.get(&r); got != v {
					t.Errorf("set %q: got %q", v, got)
				}
				if got := f.get(&before); got != prev {
					t.Errorf("set %q on a copy: the original's %q became %q", v, prev, got)
				}
				// The other strings are untouched.
				if i > 0 && r.Outcome != "" {
					t.Fatal("a string setter wrote the outcome")
				}
			}
		})
	}
	var r Result
	r.SetMethod("x/custom")
	r.SetProtocol("2099-01-01")
	r.SetContentType("text/html")
	r.SetResultType("later")
	if r.Method() != "x/custom" || r.Protocol() != "2099-01-01" || r.ContentType() != "text/html" || r.ResultType() != "later" {
		t.Errorf("four strings outside the tables: %q %q %q %q", r.Method(), r.Protocol(), r.ContentType(), r.ResultType())
	}
}

// TestResultTables: each table of Result.codes fits its field (its
// highest value is "in extra"), has no duplicate (a value must read back
// from one index), and the classifier's own indexes name what they say.
func TestResultTables(t *testing.T) {
	for _, f := range []*stringField{&fieldMethod, &fieldProto, &fieldCT, &fieldRT} {
		if len(f.names) > int(f.radix())-1 {
			t.Errorf("table %q…: %d entries for a field of %d values", f.names[1], len(f.names), f.radix())
		}
		seen := map[string]bool{}
		for _, n := range f.names {
			if seen[n] {
				t.Errorf("table %q…: %q twice", f.names[1], n)
			}
			seen[n] = true
		}
	}
	// The fields of codeGroup fit its bits; the other fields and the flags
	// overlap nothing.
	if n := codeFieldProto.radix() * codeFieldCT.radix() * codeFieldIsError.radix(); n > codeGroupMask+1 ||
		ctStride != protoRadix || isErrorStride != protoRadix*ctRadix {
		t.Errorf("codeGroup: %d values in %d", n, codeGroupMask+1)
	}
	var used uint16
	for _, m := range []uint16{codeMethodMask << codeMethodShift, codeGroupMask << codeGroupShift, codeRTMask << codeRTShift, codeJSONRPC, codeWarnNoRT} {
		if used&m != 0 {
			t.Errorf("bits %#x overlap %#x", m, used)
		}
		used |= m
	}
	if used != 0xffff {
		t.Errorf("codes uses %#x of its bits", used)
	}
	// A string in a table costs a Result nothing beside itself.
	for _, f := range []*stringField{&fieldMethod, &fieldProto, &fieldCT, &fieldRT} {
		for _, n := range f.names {
			var r Result
			r.setString(f, n, (*Result).setRare, func(x *rare, s string) { x.method = s })
			if r.extra != nil || f.get(&r, rareMethod) != n {
				t.Errorf("%q: extra %v, reads back %q", n, r.extra, f.get(&r, rareMethod))
			}
		}
	}
	if methodNames[methodToolsCall] != "tools/call" || protoNames[protoIndex2026] != Protocol2026 ||
		rtypeNames[rtypeComplete] != "complete" || rtypeNames[rtypeInputRequired] != "input_required" {
		t.Error("a fixed index names another string")
	}
}

// TestResultCodesIndependent: every value of every field of Result.codes
// reads back as written whatever the others hold, and writing one field
// leaves every other as it was (the three of codeGroup share their bits as
// one number): every combination of the group's 126 values, with each
// method, result type and flag written before and after.
func TestResultCodesIndependent(t *testing.T) {
	fields := []codeField{codeFieldMethod, codeFieldProto, codeFieldCT, codeFieldRT, codeFieldIsError}
	flags := []uint16{0, codeJSONRPC, codeWarnNoRT, codeJSONRPC | codeWarnNoRT}
	n := 0
	for p := range codeFieldProto.radix() {
		for c := range codeFieldCT.radix() {
			for ie := range codeFieldIsError.radix() {
				for m := range codeFieldMethod.radix() {
					for rt := range codeFieldRT.radix() {
						want := []uint16{m, p, c, rt, ie}
						fl := flags[n%len(flags)]
						n++
						var r Result
						r.codes = fl
						// Written in two orders, over a Result that held other values.
						for k, f := range fields {
							f.setIndex(&r, (want[k]+1)%f.radix())
						}
						for k := len(fields) - 1; k >= 0; k-- {
							fields[k].setIndex(&r, want[k])
						}
						for k, f := range fields {
							if got := f.index(&r); got != want[k] {
								t.Fatalf("field %d: %d, want %d (codes %#x, want %v)", k, got, want[k], r.codes, want)
							}
						}
						if r.codes&(codeJSONRPC|codeWarnNoRT) != fl {
							t.Fatalf("flags %#x, want %#x (codes %#x, want %v)", r.codes&(codeJSONRPC|codeWarnNoRT), fl, r.codes, want)
						}
					}
				}
			}
		}
	}
	// Through the methods: IsError's three states and the strings beside them.
	for _, v := range []int{0, 1, 2} {
		var r Result
		r.SetContentType("text/event-stream; charset=utf-8")
		r.SetProtocol("2024-11-05")
		if v > 0 {
			r.SetIsError(v == 2)
		}
		r.SetContentType("text/event-stream")
		if got, ok := r.IsError(); got != (v == 2) || ok != (v > 0) || r.ContentType() != "text/event-stream" || r.Protocol() != "2024-11-05" || r.extra != nil {
			t.Errorf("isError state %d: IsError %v %v, content type %q, protocol %q, extra %v", v, got, ok, r.ContentType(), r.Protocol(), r.extra)
		}
	}
}

// TestResultSetters: JSONRPC, IsError, Warnings and Input read back as set;
// SetJSONRPC copies; a setter on a copy leaves the original as it was.
func TestResultSetters(t *testing.T) {
	var r Result
	if r.JSONRPC() != nil || r.Warnings() != nil || r.Input() != nil {
		t.Fatal("a zero Result has details")
	}
	if v, ok := r.IsError(); v || ok {
		t.Fatal("a zero Result has isError")
	}
	d := &JSONRPCDetails{ID: wire.StringID("a")}
	r.SetJSONRPC(d)
	d.ID = wire.IntID(2)
	if got := r.JSONRPC().ID.String(); got != `"a"` {
		t.Errorf("JSONRPC after its argument changed: id %s, want \"a\"", got)
	}
	for _, v := range []bool{true, false, true} {
		r.SetIsError(v)
		if got, ok := r.IsError(); got != v || !ok {
			t.Errorf("SetIsError(%v): %v %v", v, got, ok)
		}
	}
	w := []Warning{{Code: "c", Message: "m", Rule: "r"}}
	r.SetWarnings(w)
	in := &InputDetails{HasRequestState: true}
	r.SetInput(in)
	cp := r
	cp.SetWarnings(nil)
	cp.SetInput(nil)
	cp.SetJSONRPC(nil)
	if len(r.Warnings()) != 1 || !reflect.DeepEqual(r.Input(), in) || r.JSONRPC() == nil {
		t.Errorf("the original changed with its copy: %v %v %v", r.Warnings(), r.Input(), r.JSONRPC())
	}
	if cp.Warnings() != nil || cp.Input() != nil || cp.JSONRPC() != nil {
		t.Errorf("the copy lost its setters: %v %v %v", cp.Warnings(), cp.Input(), cp.JSONRPC())
	}
	b, _ := json.Marshal(cp)
	if !bytes.Contains(b, []byte(`"warnings":[]`)) {
		t.Errorf("no warnings encode as []: %s", b)
	}
}

// TestClassifyIntoSequence: ClassifyInto writes each verdict into a Result
// that held another (its extra evidence, warnings' array and input
// request's room reused) exactly as Classify writes it into a new one, for
// every ordered pair of these responses.
func TestClassifyIntoSequence(t *testing.T) {
	type resp struct {
		name   string
		ex     Exchange
		header string
		body   string
	}
	rs := []resp{
		{"success", Exchange{ID: wire.IntID(1)}, "application/json", benchBodies[0]},
		{"jsonrpc_error", Exchange{ID: wire.IntID(1)}, "application/json", benchBodies[1]},
		{"tool_error", Exchange{ID: wire.IntID(1)}, "application/json", benchBodies[2]},
		{"input_required", Exchange{ID: wire.IntID(1)}, "application/json", benchBodies[3]},
		{"input_required_other", Exchange{ID: wire.IntID(1)}, "application/json", `{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":{"k":{"method":"sampling/createMessage","params":{}}},"requestState":"s"}}`},
		{"input_required_two", Exchange{ID: wire.IntID(1)}, "application/json", `{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":{"a":{"method":"roots/list","params":{}},"b":{"method":"elicitation/create","params":{"mode":"url","message":"m"}}}}}`},
		{"legacy", Exchange{ID: wire.IntID(1)}, "application/json", benchBodies[4]},
		// The missing-result-type warning before another, after another
		// (kept in extra then, legacy18), and an error's warning.
		{"legacy_unknown_block", Exchange{ID: wire.IntID(1)}, "application/json", `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"hologram"}]}}`},
		{"no_content_type_legacy", Exchange{ID: wire.IntID(1)}, "", benchBodies[4]},
		{"legacy_error_code", Exchange{ID: wire.IntID(1)}, "application/json", `{"jsonrpc":"2.0","id":1,"error":{"code":-32005,"message":"m"}}`},
		{"sse", Exchange{ID: wire.IntID(1)}, "text/event-stream", "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\ndata: " + benchBodies[4] + "\n\n"},
		{"http_error", Exchange{ID: wire.IntID(1)}, "text/plain", "busy"},
		{"strings_outside_tables", Exchange{Method: "x/custom", ProtocolVersion: "2099-01-01", ID: wire.IntID(1234567)}, "application/json; charset=UTF-8", `{"jsonrpc":"2.0","id":1234567,"result":{"resultType":"later"}}`},
	}
	exOf := func(p resp) *Exchange {
		ex := p.ex
		ex.Status, ex.Header, ex.BodyBytes = 200, http.Header{"Content-Type": {p.header}}, []byte(p.body)
		if p.header == "" {
			ex.Header = http.Header{}
		}
		if p.name == "http_error" {
			ex.Status = 503
			ex.Header.Set("Retry-After", "5")
		}
		return &ex
	}
	c := &Classifier{}
	for _, a := range rs {
		for _, b := range rs {
			want, _ := c.Classify(exOf(b))
			wantJSON, _ := json.Marshal(want)
			var r Result
			_ = c.ClassifyInto(exOf(a), &r)
			_ = c.ClassifyInto(exOf(b), &r)
			got, _ := json.Marshal(&r)
			if !bytes.Equal(got, wantJSON) {
				t.Errorf("%s then %s:\n got %s\nwant %s", a.name, b.name, got, wantJSON)
			}
			checkWarningReaders(t, &r)
			// And into a Result that Classify allocated for a.
			first, _ := c.Classify(exOf(a))
			_ = c.ClassifyInto(exOf(b), first)
			if got, _ := json.Marshal(first); !bytes.Equal(got, wantJSON) {
				t.Errorf("%s (Classify's) then %s:\n got %s\nwant %s", a.name, b.name, got, wantJSON)
			}
		}
	}
}

// benchBodies are the article's five small responses (bench_test.go's
// benchSeedSmall, which is in the external test package).
var benchBodies = [...]string{
	`{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"ok"}],"isError":false}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"synthetic invalid params"}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"failed"}],"isError":true}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":{"approval":{"method":"elicitation/create","params":{"mode":"form","message":"synthetic input"}}}}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"legacy ok"}],"isError":false}}`,
}
