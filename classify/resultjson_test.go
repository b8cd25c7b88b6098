package classify

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/wire"
)

var updateResultJSON = flag.Bool("update-result-json", false, "rewrite testdata/resultjson.txtar from this build")

// resultJSONExtra are exchanges beside the wire goldens whose strings are in
// none of Result's tables (a method, a protocol revision, a content type, a
// resultType) or whose id is past the Result's room, so that both ways a
// Result keeps them are in the golden.
var resultJSONExtra = []struct {
	name   string
	ex     Exchange
	header string
	body   string
}{
	{"method_not_in_table", Exchange{Method: "resources/subscribe", ID: wire.IntID(3)}, "application/json", `{"jsonrpc":"2.0","id":3,"result":{}}`},
	{"protocol_not_in_table", Exchange{ProtocolVersion: "2099-01-01", ID: wire.IntID(3)}, "application/json", `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"x"}]}}`},
	{"content_type_not_in_table", Exchange{ID: wire.IntID(3)}, "Application/JSON; charset=UTF-8", `{"jsonrpc":"2.0","id":3,"result":{"resultType":"complete","content":[]}}`},
	{"content_type_charset", Exchange{ID: wire.IntID(3)}, "application/json; charset=utf-8", `{"jsonrpc":"2.0","id":3,"result":{"resultType":"complete","content":[],"isError":true}}`},
	{"result_type_not_in_table", Exchange{ID: wire.StringID("s")}, "application/json", `{"jsonrpc":"2.0","id":"s","result":{"resultType":"later","content":[]}}`},
	{"seven_digit_id", Exchange{ID: wire.IntID(1234567)}, "application/json", `{"jsonrpc":"2.0","id":1234567,"result":{"resultType":"complete","content":[]}}`},
	{"six_digit_id_error", Exchange{ID: wire.IntID(123456)}, "application/json", `{"jsonrpc":"2.0","id":123456,"error":{"code":-32602,"message":"m","data":{"a":1}}}`},
	{"ping", Exchange{Method: "ping", ID: wire.IntID(9), ProtocolVersion: "2025-06-18"}, "application/json", `{"jsonrpc":"2.0","id":9,"result":{}}`},
}

// TestResultJSONGolden: the JSON of the verdict on every wire golden case and
// on resultJSONExtra, byte for byte as testdata/resultjson.txtar has it (it
// was written by the build before Result's fields became methods, result17:
// the compact Result must encode exactly as the struct with every member
// did). -update-result-json rewrites it.
func TestResultJSONGolden(t *testing.T) {
	var got bytes.Buffer
	got.WriteString("The JSON of Classify's Result on every testdata/wire case and on resultJSONExtra (TestResultJSONGolden).\n")
	add := func(name string, r *Result) {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		fmt.Fprintf(&got, "-- %s --\n%s\n", name, b)
	}
	n := 0
	for _, gc := range loadGolden(t) {
		if gc.exchange["network"] != "" {
			continue
		}
		raw, err := wire.ReadRawResponse(bytes.NewReader(gc.response))
		if err != nil {
			t.Fatal(err)
		}
		ex := exchangeFor(t, gc)
		ex.Status, ex.Header, ex.Body = raw.Status, raw.Header, raw.Body
		r, _ := classifierFor(t, gc).Classify(ex)
		add(gc.name, r)
		n++
	}
	for _, tc := range resultJSONExtra {
		ex := tc.ex
		ex.Status, ex.Header, ex.BodyBytes = 200, http.Header{"Content-Type": {tc.header}}, []byte(tc.body)
		r, _ := (&Classifier{}).Classify(&ex)
		add(tc.name, r)
	}
	const path = "testdata/resultjson.txtar"
	if *updateResultJSON {
		if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if n < 60 || !bytes.Equal(got.Bytes(), want) {
		gl, wl := strings.Split(got.String(), "\n"), strings.Split(string(want), "\n")
		for i := 0; i < len(gl) || i < len(wl); i++ {
			var g, w string
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if g != w {
				t.Errorf("line %d (of %d cases):\n got %s\nwant %s", i+1, n, g, w)
			}
		}
	}
}
