package classify_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/wire"
)

// TestRecordEchoesGolden: the record built from every golden case (the
// request through record.SetRequest, the verdict through
// record.SetResult, then encoded and decoded as a record file holds it)
// echoes its input: the request's id with its JSON type, method, tool and
// protocol; the response's status, content type and id (responseId when
// its text differs, as spelled); and the verdict's outcome and layer.
func TestRecordEchoesGolden(t *testing.T) {
	for _, gc := range classify.GoldenCaptures(t) {
		t.Run(gc.Name, func(t *testing.T) {
			ex := gc.Exchange()
			raw, err := wire.ReadRawResponse(bytes.NewReader(gc.Raw))
			if err != nil {
				t.Fatal(err)
			}
			ex.Status, ex.Header, ex.Body = raw.Status, raw.Header, raw.Body
			reqID := ex.ID
			if reqID.IsZero() {
				reqID = wire.StringID("req-" + gc.Name)
			}
			method := ex.Method
			if method == "" {
				method = "tools/call"
			}
			proto := ex.ProtocolVersion
			if proto == "" {
				proto = classify.Protocol2026
			}
			res, _ := gc.Classifier.Classify(ex)
			req := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q,"params":{"name":"tool-%s","arguments":{"a":1}}}`, reqID.Raw(), method, gc.Name)
			rec := &record.Record{Kind: record.KindExchange, ProtocolVersion: proto}
			rec.SetRequest([]byte(req))
			rec.SetResult(res)
			line, err := record.Marshal(rec)
			if err != nil {
				t.Fatalf("the record does not encode: %v", err)
			}
			back, err := record.Decode(line)
			if err != nil {
				t.Fatal(err)
			}
			wantTool := ""
			if method == "tools/call" || method == "prompts/get" {
				wantTool = "tool-" + gc.Name
			}
			if string(back.JSONRPC.ID.Raw()) != string(reqID.Raw()) || back.Method != method || back.Tool != wantTool || back.ProtocolVersion != proto {
				t.Errorf("request echo: id %s method %q tool %q protocol %q; want %s %q %q %q",
					back.JSONRPC.ID, back.Method, back.Tool, back.ProtocolVersion, reqID.Raw(), method, wantTool, proto)
			}
			if back.Status != ex.Status || back.ContentType != ex.Header.Get("Content-Type") || back.Outcome != res.Outcome || back.Layer != res.Layer() {
				t.Errorf("response echo: status %d content type %q %s/%s; want %d %q %s/%s",
					back.Status, back.ContentType, back.Outcome, back.Layer, ex.Status, ex.Header.Get("Content-Type"), res.Outcome, res.Layer())
			}
			var wantResp []byte
			// responseId is the response's id as spelled, whenever its text
			// is not the request id's: the same id spelled otherwise (1.0
			// answering 1) included.
			if res.JSONRPC() != nil && !res.JSONRPC().ID.IsZero() && !bytes.Equal(res.JSONRPC().ID.Raw(), reqID.Raw()) {
				wantResp, _ = json.Marshal(res.JSONRPC().ID)
			}
			if got := back.JSONRPC.ResponseID.Raw(); string(got) != string(wantResp) {
				t.Errorf("responseId %s, want %s", got, wantResp)
			}
		})
	}
}
