package classify_test

import (
	"bytes"
	"math/big"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/wire"
)

// FuzzIDWarning: for any id a request can carry (a JSON number or
// string), answered under the same id text, the classifier warns
// id-not-mcp exactly when the id is a number with a fractional part, and
// id-beyond-safe-integer exactly when it is an integer past ±(2^53−1)
// (math/big's reading, not wire's), at most once, on the fast and the
// general path alike; and the id comes back byte for byte: in the
// verdict's JSON-RPC details and in the record SetResult fills (1.0 stays
// 1.0, 1e2 stays 1e2). Metamorphic: the same value spelled as a string
// gets no id warning.
func FuzzIDWarning(f *testing.F) {
	for _, s := range []string{"0.5", "-1.5e-3", "9007199254740993", "1.0", "1e2", "-0", "7", `"a"`, "1.0000000000000001", "12.50e1", "-9007199254740992"} {
		f.Add(s)
	}
	limit := new(big.Rat).SetInt64(1<<53 - 1)
	f.Fuzz(func(t *testing.T, s string) {
		id, err := wire.ParseID(s)
		if err != nil || string(id.Raw()) != s {
			return // not an id, or one with space around it
		}
		if i := strings.IndexAny(s, "eE"); id.IsNumber() && i >= 0 && len(strings.TrimLeft(s[i+1:], "+-")) > 4 {
			return // big.Rat would build 10^N
		}
		want := ""
		if id.IsNumber() {
			r, ok := new(big.Rat).SetString(s)
			if !ok {
				t.Fatalf("big.Rat cannot read the number %q", s)
			}
			switch {
			case !r.IsInt():
				want = classify.WarnIDNotMCP
			case new(big.Rat).Abs(r).Cmp(limit) > 0:
				want = classify.WarnIDBeyondSafeInteger
			}
		}
		body := []byte(`{"jsonrpc":"2.0","id":` + s + `,"result":{"resultType":"complete","content":[{"type":"text","text":"ok"}]}}`)
		for _, fast := range []bool{true, false} {
			ex := &classify.Exchange{ID: id, Method: "tools/call", Status: 200, Header: http.Header{"Content-Type": {"application/json"}}, BodyBytes: body}
			c := &classify.Classifier{}
			if !fast {
				c = classify.GeneralPath()
			}
			res, err := c.Classify(ex)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, w := range res.Warnings() {
				if w.Code == classify.WarnIDNotMCP || w.Code == classify.WarnIDBeyondSafeInteger {
					got = append(got, w.Code)
				}
			}
			if want == "" && len(got) > 0 || want != "" && !slices.Equal(got, []string{want}) {
				t.Fatalf("id %s (fast path %v, %s): id warnings %v, want %q", s, fast, res.Outcome, got, want)
			}
			if d := res.JSONRPC(); d == nil || !bytes.Equal(d.ID.Raw(), id.Raw()) {
				t.Fatalf("id %s (fast path %v): the response's id is %+v, not the bytes sent", s, fast, d)
			}
			rec := &record.Record{}
			rec.JSONRPC.ID = id
			rec.SetResult(res)
			if !bytes.Equal(rec.JSONRPC.ID.Raw(), id.Raw()) || !rec.JSONRPC.ResponseID.IsZero() {
				t.Fatalf("id %s: the record's id %s (response id %s), not the bytes sent", s, rec.JSONRPC.ID, rec.JSONRPC.ResponseID)
			}
		}
		if id.IsNumber() {
			// The same value as a string is a string id: no warning.
			str := wire.StringID(s)
			ex := &classify.Exchange{ID: str, Method: "tools/call", Status: 200, Header: http.Header{"Content-Type": {"application/json"}},
				BodyBytes: []byte(`{"jsonrpc":"2.0","id":` + str.String() + `,"result":{"resultType":"complete","content":[{"type":"text","text":"ok"}]}}`)}
			res, _ := (&classify.Classifier{}).Classify(ex)
			for _, w := range res.Warnings() {
				if w.Code == classify.WarnIDNotMCP || w.Code == classify.WarnIDBeyondSafeInteger {
					t.Fatalf("the string id %s: warning %s", str, w.Code)
				}
			}
		}
	})
}
