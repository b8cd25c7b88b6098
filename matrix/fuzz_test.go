package matrix_test

import (
	"bytes"
	"io"
	"os"
	"slices"
	"testing"

	"github.com/mcpdiag/mcpdiag/matrix"
	"github.com/mcpdiag/mcpdiag/record"
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

// FuzzFromRecordsLineOrder: the order of a record file's lines is no fact
// FromRecords reads (a record is written when its exchange ends): a file
// whose every record has a time is judged the same, byte for byte, with its
// lines in any order (here: reversed, and rotated by shift).
func FuzzFromRecordsLineOrder(f *testing.F) {
	for _, name := range []string{"testdata/serve-e244dc8-retries.jsonl", "testdata/serve-two-clients-503.jsonl"} {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, uint16(1))
		f.Add(b, uint16(7))
	}
	f.Fuzz(func(t *testing.T, data []byte, shift uint16) {
		var ls [][]byte
		for _, l := range bytes.SplitAfter(data, []byte("\n")) {
			if len(bytes.TrimSpace(l)) == 0 {
				continue
			}
			if r, err := record.Decode(bytes.TrimSpace(l)); err == nil && r.Time.IsZero() {
				return // a line without a time: the file's order is kept
			}
			if !bytes.HasSuffix(l, []byte("\n")) {
				l = append(bytes.Clone(l), '\n')
			}
			ls = append(ls, l)
		}
		if len(ls) > 200 {
			return
		}
		judged := func(ls [][]byte) string {
			p, err := matrix.FromRecords(bytes.NewReader(bytes.Join(ls, nil)), "fuzz", matrix.Limits{})
			if err != nil {
				return "error: " + err.Error()
			}
			var b bytes.Buffer
			if err := p.WriteJSON(&b); err != nil {
				t.Fatal(err)
			}
			return b.String()
		}
		want := judged(ls)
		rev := slices.Clone(ls)
		slices.Reverse(rev)
		if got := judged(rev); got != want {
			t.Fatalf("reversed:\n%s\nwant\n%s", got, want)
		}
		if len(ls) > 1 {
			k := int(shift) % len(ls)
			rot := append(slices.Clone(ls[k:]), ls[:k]...)
			if got := judged(rot); got != want {
				t.Fatalf("rotated by %d:\n%s\nwant\n%s", k, got, want)
			}
		}
	})
}
