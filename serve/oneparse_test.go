package serve_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/serve"
	"github.com/mcpdiag/mcpdiag/wire"
)

// One parse per request in serve too: the recorder parses the body, the
// fault endpoint and its log line read that parse from the context
// (wire.MessageParses counts wire.ParseMessage). Not parallel: the counter is
// the process's.
func TestServeParsesTheRequestOnce(t *testing.T) {
	_, base := start(t, serve.Options{Seed: 5})
	const n = 4
	before := wire.MessageParses()
	for i := 1; i <= n; i++ {
		body := `{"jsonrpc":"2.0","id":` + string(rune('0'+i)) + `,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"},"_meta":{"` +
			wire.MetaProtocolVersion + `":"` + wire.Protocol2026 + `","` + wire.MetaClientCapabilities + `":{}}}}`
		req, _ := http.NewRequest(http.MethodPost, base+"/s/errors.tool_error/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", wire.Protocol2026)
		req.Header.Set("Mcp-Method", "tools/call")
		req.Header.Set("Mcp-Name", "echo")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("status %d", resp.StatusCode)
		}
	}
	lines := postsLogged(t, base, "/s/errors.tool_error/mcp", n)
	parses := wire.MessageParses() - before
	if len(lines) != n || parses != n {
		t.Errorf("%d requests: %d log lines, %d parses of a request body; want %d and %d", n, len(lines), parses, n, n)
	}
	for _, l := range lines {
		if l.rec.Tool != "echo" || l.rec.ArgsHash == "" || l.rec.Method != "tools/call" {
			t.Errorf("log line: tool %q method %q args hash %q", l.rec.Tool, l.rec.Method, l.rec.ArgsHash)
		}
	}
}
