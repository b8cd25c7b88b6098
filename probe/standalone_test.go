package probe_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/judge"
	"github.com/mcpdiag/mcpdiag/probe"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpgoserver "github.com/mark3labs/mcp-go/server"
)

// noFlush hides the http.Flusher of a POST's ResponseWriter, as a framework
// that cannot stream a response does: mcp-go v1.2.1 then answers the POST
// with JSON and sends the server requests a tool makes on the session's
// standalone GET stream (its fallback when the POST cannot carry them).
type noFlush struct{ w http.ResponseWriter }

func (n noFlush) Header() http.Header         { return n.w.Header() }
func (n noFlush) Write(b []byte) (int, error) { return n.w.Write(b) }
func (n noFlush) WriteHeader(code int)        { n.w.WriteHeader(code) }

// TestProbeStandaloneStreamQuestion: a 2025-11-25 server whose read-only
// tool asks a question (elicitation/create) on the standalone GET stream,
// not on the tools/call's own response, and waits for the answer. The
// probe opens that stream for each tools/call, as mcpdiag call does, and
// declines there: the tool finishes and probe.answered passes. Without the
// stream the question is never read and every call times out.
func TestProbeStandaloneStreamQuestion(t *testing.T) {
	var mu sync.Mutex
	var actions []string
	s := mcpgoserver.NewMCPServer("mcpgo-asks-on-get", "1", mcpgoserver.WithToolCapabilities(false), mcpgoserver.WithElicitation())
	s.AddTool(mcpgo.NewTool("confirm", mcpgo.WithReadOnlyHintAnnotation(true), mcpgo.WithString("text", mcpgo.MaxLength(3))),
		func(ctx context.Context, _ mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			res, err := s.RequestElicitation(ctx, mcpgo.ElicitationRequest{Params: mcpgo.ElicitationParams{
				Message:         "Approve the lookup?",
				RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"ok": map[string]any{"type": "boolean"}}},
			}})
			if err != nil {
				return mcpgo.NewToolResultError("no answer to the question: " + err.Error()), nil
			}
			mu.Lock()
			actions = append(actions, string(res.Action))
			mu.Unlock()
			return mcpgo.NewToolResultError("not confirmed: " + string(res.Action)), nil
		})
	h := mcpgoserver.NewStreamableHTTPServer(s)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			h.ServeHTTP(noFlush{w}, r)
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()
	rep := run(t, ts.URL, "2025-11-25", probe.Options{MaxPerTool: 2, Timeout: 3 * time.Second})
	t.Logf("%s", checks(rep.Checks))
	for _, c := range rep.Checks {
		if c.Rule == "probe.answered" && (c.Verdict != judge.Pass || !strings.Contains(c.Evidence, "asked the client (elicitation/create)")) {
			t.Errorf("probe.answered %s: %s, want a pass saying the server asked", c.Verdict, c.Evidence)
		}
	}
	answers := 0
	for _, r := range rep.Records {
		if r.Probe == nil && r.ClientAnswer && r.Method == "elicitation/create" {
			answers++
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(actions) == 0 || answers != len(actions) {
		t.Errorf("the tool got %d answers %v, the run recorded %d", len(actions), actions, answers)
	}
	for _, a := range actions {
		if a != "decline" {
			t.Errorf("the probe answered the elicitation with %q, want decline", a)
		}
	}
}
