package record

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/wire"
)

var updateLegacyGolden = flag.Bool("update-legacy-golden", false, "rewrite testdata/legacy_records.txtar from this build")

// legacyCases are exchanges whose verdict carries the warning of a result
// without resultType (missing-result-type, a package constant) alone, after
// another warning, before another, and with warnings a caller appended
// afterwards (as client/setup.go does).
var legacyCases = []struct {
	name   string
	ex     classify.Exchange
	header string // Content-Type ("" none)
	body   string
	// appended are warnings added after classification, in order, each by
	// SetWarnings(append(Warnings(), w)).
	appended []classify.Warning
}{
	{name: "legacy_json", ex: classify.Exchange{ID: wire.IntID(1)}, header: "application/json",
		body: `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"legacy ok"}],"isError":false}}`},
	{name: "legacy_tool_error", ex: classify.Exchange{ID: wire.IntID(7)}, header: "application/json",
		body: `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"failed"}],"isError":true}}`},
	{name: "legacy_six_digit_id", ex: classify.Exchange{ID: wire.IntID(123456)}, header: "application/json",
		body: `{"jsonrpc":"2.0","id":123456,"result":{"content":[{"type":"text","text":"legacy ok"}]}}`},
	{name: "legacy_then_unknown_block", ex: classify.Exchange{ID: wire.IntID(2)}, header: "application/json",
		body: `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"hologram","text":"x"}],"isError":false}}`},
	{name: "no_content_type_then_legacy", ex: classify.Exchange{ID: wire.IntID(3)}, header: "",
		body: `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"legacy ok"}]}}`},
	{name: "id_not_checked_then_legacy", ex: classify.Exchange{}, header: "application/json",
		body: `{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"legacy ok"}]}}`},
	{name: "legacy_sse", ex: classify.Exchange{ID: wire.IntID(5)}, header: "text/event-stream",
		body: "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"legacy ok\"}]}}\n\n"},
	{name: "legacy_tools_list", ex: classify.Exchange{ID: wire.IntID(6), Method: "tools/list"}, header: "application/json",
		body: `{"jsonrpc":"2.0","id":6,"result":{"tools":[]}}`},
	{name: "legacy_2025_no_warning", ex: classify.Exchange{ID: wire.IntID(8), ProtocolVersion: "2025-11-25"}, header: "application/json",
		body: `{"jsonrpc":"2.0","id":8,"result":{"content":[{"type":"text","text":"ok"}]}}`},
	{name: "legacy_then_appended", ex: classify.Exchange{ID: wire.IntID(9), Method: "tools/list"}, header: "application/json",
		body: `{"jsonrpc":"2.0","id":9,"result":{"tools":[],"nextCursor":"c"}}`,
		appended: []classify.Warning{
			{Code: "cursor-loop", Message: `nextCursor "c" was already followed; pagination stopped`, Rule: "MCP pagination: cursors are opaque; a repeated cursor means the list never ends"},
			{Code: "pagination-cut", Message: "tools/list still had a nextCursor after 2 pages; the rest of the list was not read", Rule: "mcpdiag bounds tools/list pagination"},
		}},
	{name: "legacy_fast_then_appended", ex: classify.Exchange{ID: wire.IntID(10)}, header: "application/json",
		body:     `{"jsonrpc":"2.0","id":10,"result":{"content":[{"type":"text","text":"legacy ok"}]}}`,
		appended: []classify.Warning{{Code: "tools-list-unreadable", Message: "m", Rule: "MCP tools §Listing Tools: ListToolsResult"}}},
}

// TestLegacyRecordGolden: the JSON of the verdict and the record line of
// each of legacyCases, byte for byte as testdata/legacy_records.txtar has
// them (written by the build before the missing-result-type warning was
// kept inside the Result, legacy18): how a verdict keeps its warnings must
// not change what it encodes to or what a record says, nor their order.
// -update-legacy-golden rewrites it.
func TestLegacyRecordGolden(t *testing.T) {
	var got bytes.Buffer
	got.WriteString("The JSON of Classify's Result and the record line of each legacy case (TestLegacyRecordGolden).\n")
	e := Encoder{Now: func() time.Time { return time.Date(2026, 12, 7, 11, 0, 0, 0, time.UTC) }}
	for _, tc := range legacyCases {
		ex := tc.ex
		ex.Status, ex.Header, ex.BodyBytes = 200, http.Header{}, []byte(tc.body)
		if tc.header != "" {
			ex.Header.Set("Content-Type", tc.header)
		}
		res, err := (&classify.Classifier{}).Classify(&ex)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		for _, w := range tc.appended {
			res.SetWarnings(append(res.Warnings(), w))
		}
		verdict, err := json.Marshal(res)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		rec := &Record{Kind: KindExchange, ID: "01M8Y575QYDAN7V64KAABBCFYV"}
		rec.SetResult(res)
		line, err := e.Encode(rec)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		fmt.Fprintf(&got, "-- %s --\n%s\n%s", tc.name, verdict, line)
	}
	const path = "testdata/legacy_records.txtar"
	if *updateLegacyGolden {
		if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
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
				t.Errorf("line %d:\n got %s\nwant %s", i+1, g, w)
			}
		}
	}
}
