package report

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/wire"
)

// TestClientAnswersTold: the records of clients' answers to server requests
// with the same method, status and outcome (JSONRPC_ERROR, HTTP 200) are
// told apart by the typed fact answerRefused, never by their reasons: the
// client's own JSON-RPC error counts in ErrorAnswers, the server's refusal
// in RefusedAnswers, and the text says which is which. Both are failures,
// as before. The reasons are swapped on purpose.
func TestClientAnswersTold(t *testing.T) {
	t.Parallel()
	f := newRecFile(t)
	code := int64(-32600)
	for i, refused := range []bool{false, true, true} {
		reason := "the server refused the client's answer"
		if refused {
			reason = "the client answered with an error"
		}
		f.write(&record.Record{
			Kind: record.KindExchange, ID: "ANS" + string(rune('1'+i)), Time: f.now, Method: "elicitation/create", HTTPMethod: http.MethodPost,
			URL: "http://127.0.0.1:8080/mcp", Status: 200, Outcome: classify.JSONRPCError, Layer: classify.JSONRPCError.Layer(), Reason: reason,
			JSONRPC: record.JSONRPC{ID: wire.IDFromRaw([]byte(`"srv-1"`)), ErrorCode: &code}, ClientAnswer: true, AnswerRefused: refused,
		})
	}
	f.write(&record.Record{
		Kind: record.KindExchange, ID: "ANS4", Time: f.now, Method: "elicitation/create", HTTPMethod: http.MethodPost,
		URL: "http://127.0.0.1:8080/mcp", Status: 202, Outcome: classify.ResultSuccess, Layer: classify.ResultSuccess.Layer(),
		JSONRPC: record.JSONRPC{ID: wire.IDFromRaw([]byte(`"srv-2"`))}, ClientAnswer: true,
	})
	s, _ := summarize(t, f.bytes(), Options{})
	ex := s.Exchanges
	if ex.Total != 4 || ex.Failures != 3 || ex.ErrorAnswers != 1 || ex.RefusedAnswers != 2 {
		t.Errorf("total %d failures %d errorAnswers %d refusedAnswers %d, want 4, 3, 1, 2", ex.Total, ex.Failures, ex.ErrorAnswers, ex.RefusedAnswers)
	}
	var text bytes.Buffer
	if err := NewTextReporter(s).Report(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"1 error answer to server requests (the client's JSON-RPC error)", "2 client answers to server requests the server refused (its JSON-RPC error in a 2xx)"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the text report does not say %q:\n%s", want, text.String())
		}
	}
}
