package matrix_test

import (
	"bytes"
	"io"
	"testing"

	"github.com/mcpdiag/mcpdiag/matrix"
)

// FuzzFromRecords: any input is read without a panic, and what is judged
// renders.
func FuzzFromRecords(f *testing.F) {
	f.Add([]byte(`{"v":1,"kind":"exchange","time":"2026-08-01T12:00:00Z","client":"a@1","method":"tools/call","tool":"echo","argsHash":"sha256:x","httpMethod":"POST","status":200,"outcome":"TOOL_SUCCESS","jsonrpc":{"id":1,"errorCode":null},"requestHeaders":{"Accept":["application/json"]},"requestBody":{"text":"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"requestState\":\"x\"}}"}}` + "\n"))
	f.Add([]byte(`{"v":1,"kind":"server","httpMethod":"POST","method":"tools/call","status":0,"serve":{"endpoint":"/s/a/mcp","count":{"post":2},"requestState":"sha256:1","issuedState":"sha256:2","retryAfter":"Wed, 21 Oct 2015 07:28:00 GMT","hijacked":true}}` + "\n"))
	f.Add([]byte("not json\n{}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := matrix.FromRecords(bytes.NewReader(data), "fuzz", matrix.Limits{})
		if err != nil {
			return
		}
		if err := p.WriteTable(io.Discard); err != nil {
			t.Fatal(err)
		}
		if err := p.WriteJSON(io.Discard); err != nil {
			t.Fatal(err)
		}
		if err := p.WriteJUnit(io.Discard); err != nil {
			t.Fatal(err)
		}
	})
}
