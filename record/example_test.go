package record_test

import (
	"net/http"
	"os"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/record"
)

// A tools/call that got a JSON-RPC error inside HTTP 200: one exchange line
// and the call's summary line, as the diagnostic client writes them.
func Example() {
	// A fixed hash key makes the masks reproducible; by default each
	// redactor draws its own.
	w := record.NewStreamWriter(os.Stdout, record.Encoder{Redactor: record.NewRedactorKey([]byte("example"))})
	defer w.Close()

	start := time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC)
	call := record.NewCall(record.Record{
		ID: "01K1GZ8Y3R6J0W4C2D7N9QH5TB", Client: "mcpdiag@0.1.0", Scenario: "errors.jsonrpc_error",
	})

	req := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`)
	resp := []byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params: text too short"}}`)
	ex := &record.Record{
		Kind: record.KindExchange, ID: "01K1GZ8Y3S0000000000000001", Time: start,
		ProtocolVersion: "2026-07-28", HTTPMethod: "POST", URL: "http://127.0.0.1:8080/mcp",
		RequestHeaders:  http.Header{"Authorization": {"Bearer eyJhbGciOi.secret"}, "Content-Type": {"application/json"}},
		ResponseHeaders: http.Header{"Content-Type": {"application/json"}, "Mcp-Session-Id": {"4f1c-session"}},
		ResponseBody:    &record.Body{Text: string(resp)},
		Timings: record.Timings{
			Headers: record.Duration(4200 * time.Microsecond),
			Total:   record.Duration(4800 * time.Microsecond),
		},
		Decision: &record.Decision{Action: "stop", Reason: "a protocol error is not retried"},
	}
	ex.SetRequest(req)
	res, _ := classify.Classify(&classify.Exchange{
		ID: ex.JSONRPC.ID, Status: 200, Header: http.Header{"Content-Type": {"application/json"}}, BodyBytes: resp,
	})
	ex.SetResult(res)
	call.Add(ex)

	_ = w.Write(ex)
	_ = w.Write(call.Summary())
	// Output:
	// {"v":2,"kind":"exchange","id":"01K1GZ8Y3S0000000000000001","callId":"01K1GZ8Y3R6J0W4C2D7N9QH5TB","seq":1,"time":"2026-08-01T12:00:00Z","client":"mcpdiag@0.1.0","protocolVersion":"2026-07-28","scenario":"errors.jsonrpc_error","method":"tools/call","postCount":1,"httpStatuses":[200],"jsonrpc":{"id":1,"errorCode":-32602,"errorName":"InvalidParams"},"resultType":null,"outcome":"JSONRPC_ERROR","retryOrigin":"none","layer":"protocol","reason":"JSON-RPC error -32602 InvalidParams: Invalid params: text too short","tool":"echo","argsHash":"sha256:9703d8cbc472a4a39aa68e8f71acf06a949bef5ce398841cc2812347afbfbdf1","httpMethod":"POST","url":"http://127.0.0.1:8080/mcp","status":200,"contentType":"application/json","errorMessage":"Invalid params: text too short","timings":{"headersMs":4.2,"totalMs":4.8},"decision":{"action":"stop","reason":"a protocol error is not retried"},"requestHeaders":{"Authorization":["Bearer [redacted:len=17:h=51e32aa4]"],"Content-Type":["application/json"]},"responseHeaders":{"Content-Type":["application/json"],"Mcp-Session-Id":["sha256:034dee757f97135d"]},"requestBytes":97,"responseBytes":91,"responseBody":{"text":"{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32602,\"message\":\"Invalid params: text too short\"}}"}}
	// {"v":2,"kind":"call","id":"01K1GZ8Y3R6J0W4C2D7N9QH5TB","exchanges":1,"time":"2026-08-01T12:00:00Z","client":"mcpdiag@0.1.0","protocolVersion":"2026-07-28","scenario":"errors.jsonrpc_error","method":"tools/call","postCount":1,"httpStatuses":[200],"jsonrpc":{"id":1,"errorCode":-32602,"errorName":"InvalidParams"},"resultType":null,"outcome":"JSONRPC_ERROR","retryOrigin":"none","layer":"protocol","reason":"JSON-RPC error -32602 InvalidParams: Invalid params: text too short","tool":"echo","argsHash":"sha256:9703d8cbc472a4a39aa68e8f71acf06a949bef5ce398841cc2812347afbfbdf1","httpMethod":"POST","url":"http://127.0.0.1:8080/mcp","status":200,"contentType":"application/json","errorMessage":"Invalid params: text too short","timings":{"totalMs":4.8},"decision":{"action":"stop","reason":"a protocol error is not retried"}}
}
