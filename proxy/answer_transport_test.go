package proxy_test

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/proxy"
	"github.com/mcpdiag/mcpdiag/record"
)

// answerFacts are what a record says of a request of the scenario: the
// facts the transport must not change.
type answerFacts struct {
	Outcome      string
	Layer        string
	ID           string // the id as written, with its JSON type
	ErrorCode    string
	ClientAnswer bool
}

func factsOf(r *record.Record) answerFacts {
	f := answerFacts{Outcome: string(r.Outcome), Layer: string(r.Layer), ID: string(r.JSONRPC.ID.Raw()), ClientAnswer: r.ClientAnswer}
	if r.JSONRPC.ErrorCode != nil {
		f.ErrorCode = fmt.Sprint(*r.JSONRPC.ErrorCode)
	}
	return f
}

// factsByMethod maps each record's method to its facts; HTTP GETs and
// DELETEs (no JSON-RPC message) are left out.
func factsByMethod(t *testing.T, recs []*record.Record) map[string]answerFacts {
	t.Helper()
	got := map[string]answerFacts{}
	for _, r := range recs {
		if r.Kind != record.KindExchange || r.HTTPMethod == http.MethodGet || r.HTTPMethod == http.MethodDelete {
			continue
		}
		if _, dup := got[r.Method]; dup {
			t.Errorf("two records of %q", r.Method)
		}
		got[r.Method] = factsOf(r)
	}
	return got
}

// TestClientAnswerSameOverTransports is metamorphic: the same session (a
// tools/call during which the server asks roots/list with id "srv-1", and
// the client's answer, a result or a JSON-RPC error) through the stdio
// proxy and through the HTTP proxy (the request on the tools/call's
// stream, the answer POSTed and accepted 202) gives the same records:
// one per request, with the same outcome, layer, id with its JSON type,
// error code and clientAnswer. Before, over HTTP the answer's record was
// NOTIFICATION_ACCEPTED with no method (the stdio one RESULT_SUCCESS or
// JSONRPC_ERROR under roots/list), and neither said it was an answer.
func TestClientAnswerSameOverTransports(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, answer string
		want         answerFacts
	}{
		{"result", `{"jsonrpc":"2.0","id":"srv-1","result":{"roots":[]}}`, answerFacts{Outcome: "RESULT_SUCCESS", Layer: "application", ID: `"srv-1"`, ClientAnswer: true}},
		{"error", `{"jsonrpc":"2.0","id":"srv-1","error":{"code":-32601,"message":"no roots"}}`, answerFacts{Outcome: "JSONRPC_ERROR", Layer: "protocol", ID: `"srv-1"`, ErrorCode: "-32601", ClientAnswer: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			// stdio: the scripted server writes roots/list, then the
			// tool's answer; the client answers roots/list.
			run := startStdio(t, proxy.StdioOptions{Env: append(os.Environ(), stdioScriptEnv+"=1")})
			got := strings.Join(conversation(t, run.in, run.out, []string{scriptedCall("2", "ask-roots")}), "")
			if !strings.Contains(got, `"method":"roots/list"`) {
				t.Fatalf("the client received %q, want the server's roots/list first", got)
			}
			if _, err := io.WriteString(run.in, c.answer+"\n"); err != nil {
				t.Fatal(err)
			}
			run.in.Close()
			run.wait(t)
			stdio := factsByMethod(t, run.sink.records(t))

			// HTTP: the same messages, the server request on the
			// tools/call's event stream.
			up := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				if strings.Contains(string(b), `"method":"tools/call"`) {
					w.Header().Set("Content-Type", "text/event-stream")
					io.WriteString(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"srv-1\",\"method\":\"roots/list\"}\n\n")
					io.WriteString(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"ok\"}]}}\n\n")
					return
				}
				w.WriteHeader(http.StatusAccepted)
			}))
			u, _, sink, stop := startProxy(t, up+"/mcp", proxy.Options{})
			hdr := map[string]string{"Mcp-Session-Id": "s-1", "MCP-Protocol-Version": "2025-11-25"}
			if st, _, body, err := post(t, http.DefaultClient, u, scriptedCall("2", "ask-roots"), hdr); err != nil || st != 200 || !strings.Contains(string(body), "roots/list") {
				t.Fatalf("tools/call: %d %q %v", st, body, err)
			}
			// The tools/call's record is written once the proxy read its
			// stream, roots/list included: the answer's record can name it.
			waitRecord(t, sink, "tools/call", func(r *record.Record) bool { return r.Method == "tools/call" })
			if st, _, _, err := post(t, http.DefaultClient, u, c.answer, hdr); err != nil || st != http.StatusAccepted {
				t.Fatalf("answer: %d %v", st, err)
			}
			stop()
			web := factsByMethod(t, sink.records(t))

			if len(stdio) != 2 || len(web) != 2 {
				t.Errorf("records by method: stdio %v, HTTP %v; want tools/call and roots/list in each", stdio, web)
			}
			for _, m := range []string{"tools/call", "roots/list"} {
				if stdio[m] != web[m] {
					t.Errorf("%s: stdio %+v, HTTP %+v", m, stdio[m], web[m])
				}
			}
			if web["roots/list"] != c.want {
				t.Errorf("roots/list over HTTP: %+v, want %+v", web["roots/list"], c.want)
			}
		})
	}
}
