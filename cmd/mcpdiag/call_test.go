package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpdiag/mcpdiag/record"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// testServer is a go-sdk v1.8.0 server on 127.0.0.1 (stateless, 2026-07-28)
// with a read-only tool, a failing tool and a destructive tool. The first
// tools/call answers 503 when fail503 is set; the server counts tools/call
// POSTs and remembers every Authorization header it saw.
type testServer struct {
	url     string
	calls   atomic.Int32
	fail503 atomic.Bool
	auth    atomic.Value
}

func newTestServer(t *testing.T) *testServer {
	s := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	obj := json.RawMessage(`{"type":"object"}`)
	s.AddTool(&mcp.Tool{Name: "echo", InputSchema: obj, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello"}}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "fail", InputSchema: obj},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			r := &mcp.CallToolResult{}
			r.SetError(errors.New("no such file"))
			return r, nil
		})
	s.AddTool(&mcp.Tool{Name: "delete_item", InputSchema: obj, Annotations: &mcp.ToolAnnotations{DestructiveHint: new(bool)}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "deleted"}}}, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true})
	ts := &testServer{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ts.auth.Store(r.Header.Get("Authorization"))
		if r.Header.Get("Mcp-Method") == "tools/call" {
			if ts.calls.Add(1) == 1 && ts.fail503.Load() {
				http.Error(w, "busy", http.StatusServiceUnavailable)
				return
			}
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	ts.url = srv.URL + "/mcp"
	return ts
}

func TestCallCommand(t *testing.T) {
	const token = "tok-SECRET-1234567"
	tests := []struct {
		name    string
		args    []string
		fail503 bool
		code    int
		out     []string
		calls   int32
	}{
		{"success", []string{"echo", "--args", `{"x":1}`}, false, 0, []string{"TOOL_SUCCESS (application layer)", "decision:  done", "result:    hello"}, 1},
		{"tool error exits 1", []string{"fail"}, false, 1, []string{"TOOL_ERROR", "surface-to-model"}, 1},
		{"503 read-only retried", []string{"echo", "--seed", "7"}, true, 0, []string{"TOOL_SUCCESS", "1 retry", "→ retry"}, 2},
		{"503 destructive not retried, exit 4", []string{"delete_item"}, true, 4, []string{"HTTP_ERROR (transport layer)", "unknown whether the tool ran"}, 1},
		{"503 destructive with an idempotency key retried", []string{"delete_item", "--idempotency-key", "k-1"}, true, 0, []string{"TOOL_SUCCESS", "idempotency-key"}, 2},
		{"--retries 0", []string{"echo", "--retries", "0"}, true, 4, []string{"HTTP_ERROR"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newTestServer(t)
			srv.fail503.Store(tt.fail503)
			rec := filepath.Join(t.TempDir(), "calls.jsonl")
			args := append([]string{"call", srv.url}, tt.args...)
			args = append(args, "--bearer", token, "--record", rec, "--backoff", "1ms")
			var out, errb bytes.Buffer
			code := run(args, strings.NewReader(""), &out, &errb)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr: %s", code, tt.code, out.String(), errb.String())
			}
			for _, s := range tt.out {
				if !strings.Contains(out.String(), s) {
					t.Errorf("report lacks %q:\n%s", s, out.String())
				}
			}
			if got := srv.calls.Load(); got != tt.calls {
				t.Errorf("server saw %d tools/call POSTs, want %d", got, tt.calls)
			}
			if srv.auth.Load() != "Bearer "+token {
				t.Errorf("the bearer token was not sent")
			}
			data, err := os.ReadFile(rec)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(data, []byte(token)) || bytes.Contains(out.Bytes(), []byte(token)) || bytes.Contains(errb.Bytes(), []byte(token)) {
				t.Fatal("the bearer token appears in the output or the record file")
			}
			checkRecords(t, data, int(tt.calls))
		})
	}
}

// checkRecords reads a record file: exchange lines then one call line whose
// counters agree with them.
func checkRecords(t *testing.T, data []byte, toolCalls int) {
	t.Helper()
	rd := record.NewReader(bytes.NewReader(data))
	var exchanges []*record.Record
	var call *record.Record
	for r, err := range rd.All() {
		if err != nil {
			t.Fatalf("record line: %v", err)
		}
		switch r.Kind {
		case record.KindExchange:
			exchanges = append(exchanges, r)
		case record.KindCall:
			call = r
		}
	}
	if call == nil || len(exchanges) == 0 {
		t.Fatalf("want exchange lines and a call line, got %d exchanges, call %v", len(exchanges), call)
	}
	if call.PostCount != len(exchanges) || len(call.HTTPStatuses) != len(exchanges) {
		t.Errorf("call postCount %d, statuses %v, for %d exchanges", call.PostCount, call.HTTPStatuses, len(exchanges))
	}
	n := 0
	for _, ex := range exchanges {
		if ex.CallID != call.ID || ex.Outcome == "" || ex.Layer == "" || ex.ProtocolVersion == "" {
			t.Errorf("exchange %d incomplete: %+v", ex.Seq, ex)
		}
		if ex.Method == "tools/call" {
			n++
		}
		if ex.RequestHeaders.Get("Authorization") == "" {
			t.Errorf("exchange %d lost the Authorization header entirely (it should be there, redacted)", ex.Seq)
		}
	}
	if n != toolCalls {
		t.Errorf("%d tools/call exchange records, want %d", n, toolCalls)
	}
	if call.Tool == "" || call.Decision == nil || call.Client == "" || call.RetryOrigin == "" {
		t.Errorf("call record incomplete: %+v", call)
	}
}

func TestCallCommandUsage(t *testing.T) {
	for _, args := range [][]string{
		{"call"},
		{"call", "ftp://x", "t"},
		{"call", "http://127.0.0.1:1/mcp", "t", "--args", "[1]"},
		{"call", "http://127.0.0.1:1/mcp", "t", "--protocol", "1999"},
		{"call", "http://127.0.0.1:1/mcp", "t", "--safe", "--unsafe"},
		{"call", "http://127.0.0.1:1/mcp", "t", "--input", "/nonexistent"},
		{"call", "http://127.0.0.1:1/mcp", "t", "--record", "/nonexistent/dir/x.jsonl"},
		{"call", "http://127.0.0.1:1/mcp", "t", "--header", "novalue"},
		// null was sent as "arguments": null; the array's message named
		// Go's types; the headers mcpdiag sets itself were sent on some
		// requests and silently replaced on the others (initialize went
		// out with the user's MCP-Protocol-Version, the rest with the era's).
		{"call", "http://127.0.0.1:1/mcp", "t", "--args", "null"},
		{"call", "http://127.0.0.1:1/mcp", "t", "--args", `"text"`},
		{"call", "http://127.0.0.1:1/mcp", "t", "--args", "{"},
		{"call", "http://127.0.0.1:1/mcp", "t", "--header", "MCP-Protocol-Version: 2025-06-18"},
		{"call", "http://127.0.0.1:1/mcp", "t", "--header", "mcp-session-id: s1"},
		{"probe", "http://127.0.0.1:1/mcp", "--header", "Last-Event-ID: 7"},
		// A bad --fsync without --record was accepted and the call made
		// (outsider19): proxy refuses it either way.
		{"call", "http://127.0.0.1:1/mcp", "t", "--fsync", "sometimes"},
		// An empty tool name was sent, and the server's refusal reported
		// as its answer (TOOL_ERROR, or HTTP_ERROR for the missing Mcp-Name
		// header it made): exit 1 or 4 for bad input (outsider21).
		{"call", "http://127.0.0.1:1/mcp", ""},
	} {
		var out, errb bytes.Buffer
		if code := run(args, strings.NewReader(""), &out, &errb); code != 2 || strings.Count(errb.String(), "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line", args, code, errb.String())
		}
		if strings.Contains(errb.String(), "Go value") {
			t.Errorf("%v: stderr %q names Go's types", args, errb.String())
		}
	}
	// The empty tool's line names what is wrong, and nothing is recorded.
	rec := filepath.Join(t.TempDir(), "empty.jsonl")
	var out, errb bytes.Buffer
	if code := run([]string{"call", "http://127.0.0.1:1/mcp", "", "--record", rec}, strings.NewReader(""), &out, &errb); code != 2 ||
		errb.String() != "mcpdiag: TOOL is empty: give the name of a tool the server lists in tools/list\n" || out.Len() != 0 {
		t.Errorf("call URL '': exit %d, stderr %q, stdout %q; want 2 and the one line naming TOOL", code, errb.String(), out.String())
	}
	if _, err := os.Stat(rec); !os.IsNotExist(err) {
		t.Errorf("call URL '' --record: the record file was opened (%v); want nothing written for bad input", err)
	}
	// A refused connection is a transport failure, not a usage error.
	out.Reset()
	errb.Reset()
	if code := run([]string{"call", "http://127.0.0.1:1/mcp", "echo", "--retries", "0"}, strings.NewReader(""), &out, &errb); code != 4 {
		t.Errorf("connection refused: exit %d, want 4\n%s", code, out.String())
	}
}
