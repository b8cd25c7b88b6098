package record

import (
	"bytes"
	"net/http"
	"testing"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/wire"
)

// respelledRecord classifies a 200 JSON answer whose id is the token resp
// to a tools/call of id req, and returns the record SetRequest and
// SetResult make of it, and the classifier's result.
func respelledRecord(t *testing.T, req, resp []byte) (*Record, *classify.Result) {
	t.Helper()
	id, err := wire.ParseID(string(req))
	if err != nil {
		t.Fatalf("request id %s: %v", req, err)
	}
	r := &Record{Kind: KindExchange}
	r.SetRequest([]byte(`{"jsonrpc":"2.0","id":` + string(req) + `,"method":"tools/call","params":{"name":"x"}}`))
	body := []byte(`{"jsonrpc":"2.0","id":` + string(resp) + `,"result":{"resultType":"complete","content":[{"type":"text","text":"ok"}],"isError":false}}`)
	res, _ := (&classify.Classifier{}).Classify(&classify.Exchange{Method: "tools/call", ID: id, Status: http.StatusOK,
		Header: http.Header{"Content-Type": {"application/json"}}, BodyBytes: body})
	r.SetResult(res)
	return r, res
}

// TestResponseIDKeptAsSpelled: the record keeps the response's id as the
// response spelled it whenever its text is not the request id's, the same
// id spelled otherwise included (the verdict is the same as for the
// request's own spelling), and writes it byte for byte in the line.
func TestResponseIDKeptAsSpelled(t *testing.T) {
	for _, tt := range []struct {
		req, resp string
		want      string // responseId as written; "" for none
		outcome   classify.Outcome
	}{
		{"1", "1", "", classify.ToolSuccess},
		{`"a"`, `"a"`, "", classify.ToolSuccess},
		{"1", "1.0", "1.0", classify.ToolSuccess},
		{"1", "1e0", "1e0", classify.ToolSuccess},
		{"1", "10e-1", "10e-1", classify.ToolSuccess},
		{"-0", "0", "0", classify.ToolSuccess},
		{`"a"`, `"\u0061"`, `"\u0061"`, classify.ToolSuccess},
		{`"\u0061"`, `"a"`, `"a"`, classify.ToolSuccess},
		{"1", "99", "99", classify.InvalidEnvelope},
		{"7", `"7"`, `"7"`, classify.InvalidEnvelope},
		{`"a"`, `"A"`, `"A"`, classify.InvalidEnvelope},
	} {
		t.Run(tt.req+"/"+tt.resp, func(t *testing.T) {
			r, res := respelledRecord(t, []byte(tt.req), []byte(tt.resp))
			if r.Outcome != tt.outcome {
				t.Errorf("outcome %s (%s), want %s", r.Outcome, res.Reason, tt.outcome)
			}
			if string(r.JSONRPC.ID.Raw()) != tt.req {
				t.Errorf("id %s, want the request's %s", r.JSONRPC.ID, tt.req)
			}
			if got := string(r.JSONRPC.ResponseID.Raw()); got != tt.want {
				t.Errorf("responseId %q, want %q", got, tt.want)
			}
			line, err := (&Encoder{}).Encode(r)
			if err != nil {
				t.Fatal(err)
			}
			back, err := Decode(line)
			if err != nil {
				t.Fatal(err)
			}
			hasMember := bytes.Contains(line, []byte(`"responseId":`))
			if got := string(back.JSONRPC.ResponseID.Raw()); got != tt.want || hasMember != (tt.want != "") ||
				tt.want != "" && !bytes.Contains(line, []byte(`"responseId":`+tt.want)) {
				t.Errorf("line's responseId %q, want %q:\n%s", got, tt.want, line)
			}
		})
	}
}

// FuzzResponseIDAsSpelled: for any request id and response id, the
// record's responseId, when present, is byte-equal to the response's id
// token, and present exactly when the classifier read a response id whose
// text is not the request id's; re-spelling the same id never changes the
// verdict; and a number, or a string of printable ASCII the redactor leaves
// alone, is written in the line byte for byte.
func FuzzResponseIDAsSpelled(f *testing.F) {
	for _, s := range [][2]string{{"1", "1.0"}, {"1", "1e0"}, {`"a"`, `"\u0061"`}, {"1", "99"}, {"7", `"7"`},
		{"9007199254740993", "9007199254740993.0"}, {"-0", "0E+5"}, {`"\ud800"`, `"\uD800"`}, {`"x"`, `"x"`}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, req, resp string) {
		reqID, err1 := wire.ParseID(req)
		respID, err2 := wire.ParseID(resp)
		if err1 != nil || err2 != nil || reqID.IsNull() || respID.IsNull() {
			return
		}
		reqTok, respTok := reqID.Raw(), respID.Raw()
		r, res := respelledRecord(t, reqTok, respTok)
		got := r.JSONRPC.ResponseID.Raw()
		if len(got) > 0 && !bytes.Equal(got, respTok) {
			t.Fatalf("responseId %s, the response's id token %s", got, respTok)
		}
		if res.JSONRPC() != nil && !res.JSONRPC().ID.IsZero() {
			if !bytes.Equal(res.JSONRPC().ID.Raw(), respTok) {
				t.Fatalf("the classifier read the response id %s from the token %s", res.JSONRPC().ID, respTok)
			}
			if differs := !bytes.Equal(reqTok, respTok); differs != (len(got) > 0) {
				t.Fatalf("request id %s, response id %s: responseId %q", reqTok, respTok, got)
			}
		}
		if reqID.Equal(respID) {
			same, sameRes := respelledRecord(t, reqTok, reqTok)
			if same.Outcome != r.Outcome || same.Layer != r.Layer {
				t.Fatalf("id %s answered as %s: %s/%s (%s); answered as itself: %s/%s (%s)", reqTok, respTok,
					r.Layer, r.Outcome, res.Reason, same.Layer, same.Outcome, sameRes.Reason)
			}
		}
		if len(got) == 0 || respID.IsString() && !plainASCII(respTok) {
			return
		}
		if v, ok := wire.StringValue(respTok); respID.IsString() && (!ok || Default.Scrub(v) != v) {
			return // a credential in the id: masked, as it must be
		}
		line, err := (&Encoder{}).Encode(r)
		if err != nil {
			t.Fatal(err)
		}
		back, err := Decode(line)
		if err != nil {
			t.Fatalf("%v:\n%s", err, line)
		}
		if !bytes.Equal(back.JSONRPC.ResponseID.Raw(), respTok) {
			t.Fatalf("the line's responseId %s, the response's id token %s:\n%s", back.JSONRPC.ResponseID, respTok, line)
		}
	})
}

// plainASCII reports whether b is printable ASCII only.
func plainASCII(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}
