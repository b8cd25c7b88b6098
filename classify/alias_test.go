package classify

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/mcpdiag/mcpdiag/wire"
)

// The terminal responses and the events that follow them in
// TestVerdictOwnsItsBytes (issue 10, defect 1).
const (
	aliasResult = `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"ok"}]}}`
	aliasError  = `{"jsonrpc":"2.0","id":"call-1","error":{"code":-32603,"message":"boom","data":{"detail":[1,2,3]}}}`
)

var aliasAfter = map[string]string{
	"response for id 777":            `{"jsonrpc":"2.0","id":777,"result":{}}`,
	"notification with method first": `{"method":"notifications/message","jsonrpc":"2.0","params":{"level":"info","data":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}}`,
	"request with method first":      `{"method":"ping","id":9,"jsonrpc":"2.0"}`,
	"error for another id":           `{"error":{"message":"other","code":-32000,"data":"zzzzzzzzzzzzzzzz"},"id":"zz","jsonrpc":"2.0"}`,
}

// TestVerdictOwnsItsBytes: the id (with its JSON type) and the error data
// of the terminal response survive the events that come after it. They
// used to alias the SSE reader's event buffer, which the next event
// overwrites: a stream with the result for id 1 then a response for id 777
// reported id 7, and a following notification whose first member is
// "method" made the id invalid JSON (json.Marshal failed).
func TestVerdictOwnsItsBytes(t *testing.T) {
	terminals := []struct {
		name, event, id string
		data            string
	}{
		{"result", aliasResult, "1", ""},
		{"error", aliasError, `"call-1"`, `{"detail":[1,2,3]}`},
	}
	readers := map[string]func(string) io.Reader{
		"one read":     func(s string) io.Reader { return strings.NewReader(s) },
		"1-byte reads": func(s string) io.Reader { return iotest.OneByteReader(strings.NewReader(s)) },
	}
	for _, term := range terminals {
		for after, ev := range aliasAfter {
			for rname, mk := range readers {
				t.Run(term.name+"/"+after+"/"+rname, func(t *testing.T) {
					id, _ := wire.ParseID(term.id)
					stream := "data: " + term.event + "\n\ndata: " + ev + "\n\n"
					r, err := (&Classifier{}).Classify(&Exchange{ID: id, Status: 200,
						Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: mk(stream)})
					if err != nil {
						t.Fatal(err)
					}
					if r.JSONRPC() == nil || string(r.JSONRPC().ID.Raw()) != term.id {
						t.Fatalf("response id %v, want %s (the request's, with its type)", r.JSONRPC(), term.id)
					}
					if term.data != "" && (r.JSONRPC().Error == nil || string(r.JSONRPC().Error.Data) != term.data) {
						t.Errorf("error details %+v, want data %s", r.JSONRPC().Error, term.data)
					}
					out, err := json.Marshal(r)
					if err != nil {
						t.Fatalf("the verdict does not encode: %v", err)
					}
					var back struct {
						JSONRPC struct {
							ID   json.RawMessage `json:"id"`
							Data json.RawMessage `json:"data"`
						} `json:"jsonrpc"`
					}
					if err := json.Unmarshal(out, &back); err != nil || string(back.JSONRPC.ID) != term.id {
						t.Fatalf("encoded id %s (err %v), want %s", back.JSONRPC.ID, err, term.id)
					}
					if term.data != "" && string(back.JSONRPC.Data) != term.data {
						t.Errorf("encoded error data %s, want %s", back.JSONRPC.Data, term.data)
					}
				})
			}
		}
	}
}

// TestVerdictDoesNotAliasBodyBytes: a verdict on Exchange.BodyBytes stays
// the same after the caller reuses its buffer (a stdio proxy reading the
// next line into it).
func TestVerdictDoesNotAliasBodyBytes(t *testing.T) {
	for _, body := range []string{aliasResult, aliasError, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"m","data":[1]}}`} {
		for _, fast := range []bool{true, false} {
			buf := []byte(body)
			id, _ := wire.ParseID(string(bytes.TrimSpace(mustField(t, buf, "id"))))
			c := &Classifier{KeepResponse: true, noFastPath: !fast}
			r, err := c.Classify(&Exchange{ID: id, Status: 200, Header: http.Header{"Content-Type": {"application/json"}}, BodyBytes: buf})
			if err != nil {
				t.Fatal(err)
			}
			before, _ := json.Marshal(r)
			resp := string(r.Response())
			for i := range buf {
				buf[i] = ' '
			}
			after, err := json.Marshal(r)
			if err != nil || string(before) != string(after) || string(r.Response()) != resp {
				t.Fatalf("fast=%v: the verdict changed with the caller's buffer:\nbefore %s\nafter  %s (%v)\nresponse %q", fast, before, after, err, r.Response())
			}
		}
	}
}

func mustField(t *testing.T, obj []byte, name string) []byte {
	t.Helper()
	v, ok := wire.Field(obj, name)
	if !ok {
		t.Fatalf("no %s in %s", name, obj)
	}
	return v
}
