package proxy_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/proxy"
	"github.com/mcpdiag/mcpdiag/record"
)

// TestStdioIDsMCPForbids: through the stdio proxy in front of a real
// go-sdk stdio server, a request whose id MCP forbids (2.5, -1.5e-3, a
// number with a fractional part) has the warning id-not-mcp, an integer
// past ±(2^53−1) the warning id-beyond-safe-integer, and an integer
// spelled 1e2 or 3.0, or a string, none; every record keeps the request's
// id as sent, byte for byte. go-sdk answers each (2.5 under the id 2,
// 9007199254740993 under 9007199254740992: it reads ids as doubles and
// cuts them to integers), so the answers match no pending request, and
// the requests' own records name their ids as the cause. Before, none of
// them had a word on its id.
func TestStdioIDsMCPForbids(t *testing.T) {
	t.Parallel()
	ids := []struct {
		id, warning string
	}{
		{"2.5", classify.WarnIDNotMCP},
		{"-1.5e-3", classify.WarnIDNotMCP},
		{"9007199254740993", classify.WarnIDBeyondSafeInteger},
		{"1e2", ""},
		{"3.0", ""},
		{`"s-1"`, ""},
	}
	run := startStdio(t, proxy.StdioOptions{})
	lines := []string{initLine, readyLine}
	for _, x := range ids {
		lines = append(lines, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`, x.id))
	}
	if _, err := io.WriteString(run.in, strings.Join(lines, "\n")+"\n"); err != nil {
		t.Fatal(err)
	}
	// Every request is answered (go-sdk answers each, under its own
	// reading of the id) before the client ends the session.
	for answered := 0; answered < len(ids)+1; {
		line, err := run.out.ReadString('\n')
		if err != nil {
			t.Fatalf("after %d answers: %v", answered, err)
		}
		if strings.Contains(line, `"result"`) || strings.Contains(line, `"error"`) {
			answered++
		}
	}
	go io.Copy(io.Discard, run.out)
	run.in.Close()
	run.wait(t)
	byID := map[string]*record.Record{}
	for _, r := range run.sink.exchanges(t) {
		if r.Method == "tools/call" {
			byID[r.JSONRPC.ID.String()] = r
		}
	}
	for _, x := range ids {
		r := byID[x.id]
		if r == nil {
			t.Errorf("id %s: no tools/call record with the id as sent (records by id: %v)", x.id, keys(byID))
			continue
		}
		var codes []string
		for _, w := range r.Warnings {
			if w.Code == classify.WarnIDNotMCP || w.Code == classify.WarnIDBeyondSafeInteger {
				codes = append(codes, w.Code)
				if !strings.Contains(w.Message, "the request's id "+x.id+" ") {
					t.Errorf("id %s: warning %q does not name the request's id", x.id, w.Message)
				}
			}
		}
		want := []string{}
		if x.warning != "" {
			want = []string{x.warning}
		}
		if fmt.Sprint(codes) != fmt.Sprint(want) {
			t.Errorf("id %s (%s): id warnings %v, want %v", x.id, r.Outcome, codes, want)
		}
	}
}

// keys lists a map's keys, for a failure message.
func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestProxyIDsMCPForbids: through the HTTP proxy (the recorder) in front
// of a real go-sdk server, the record of a tools/call of id 2.5 has the
// warning id-not-mcp naming the request's id, the id kept as sent; an id
// spelled 1e2 has none. Before, neither had a word on its id.
func TestProxyIDsMCPForbids(t *testing.T) {
	t.Parallel()
	up := serve(t, bothEras(mcpServer(), true))
	purl, _, sink, stop := startProxy(t, up, proxy.Options{})
	for _, id := range []string{"2.5", "1e2"} {
		body := strings.Replace(callBody(1, "echo", `{"text":"x"}`), `"id":1,`, `"id":`+id+`,`, 1)
		if !strings.Contains(body, `"id":`+id+`,`) {
			t.Fatalf("no id in %s", body)
		}
		if _, _, _, err := post(t, http.DefaultClient, purl, body, modernHeaders("echo")); err != nil {
			t.Fatal(err)
		}
	}
	stop()
	recs := sink.exchanges(t)
	if len(recs) != 2 {
		t.Fatalf("%d records, want 2", len(recs))
	}
	for _, r := range recs {
		var codes []string
		for _, w := range r.Warnings {
			if w.Code == classify.WarnIDNotMCP || w.Code == classify.WarnIDBeyondSafeInteger {
				codes = append(codes, w.Code+": "+w.Message)
			}
		}
		switch id := r.JSONRPC.ID.String(); id {
		case "2.5":
			if len(codes) != 1 || !strings.HasPrefix(codes[0], classify.WarnIDNotMCP+": the request's id 2.5 is a number with a fractional part") {
				t.Errorf("id 2.5 (%s %s): id warnings %q, want id-not-mcp on the request's id", r.Outcome, r.Reason, codes)
			}
		case "1e2":
			if len(codes) != 0 {
				t.Errorf("id 1e2: id warnings %q, want none", codes)
			}
		default:
			t.Errorf("a record of id %s: not the id as sent", id)
		}
	}
}
