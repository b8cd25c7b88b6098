package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/internal/testwait"
)

// hangingServer is a 2026-07-28 MCP server on 127.0.0.1 that answers
// tools/list with the tools of toolsJSON (a JSON array), leaves every
// request whose method hang names unanswered until its client leaves or
// the test ends, and answers the rest 400. Each request it
// leaves so sends on hung.
func hangingServer(t *testing.T, toolsJSON string, hang func(method string) bool) (url string, hung <-chan struct{}) {
	t.Helper()
	got := make(chan struct{}, 64)
	release := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m, _ := readRPCRequest(r)
		w.Header().Set("Content-Type", "application/json")
		switch {
		case m.Method == "tools/list":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"resultType":"complete","tools":%s}}`, m.ID, toolsJSON)
		case hang(m.Method):
			select {
			case got <- struct{}{}:
			default:
			}
			select { // the client leaving (its interrupt) or the test's end releases it
			case <-r.Context().Done():
			case <-release:
			}
		default:
			w.WriteHeader(http.StatusBadRequest)
		}
	}))
	t.Cleanup(ts.Close)
	t.Cleanup(func() { close(release) })
	return ts.URL, got
}

// interruptWhenHung waits until the hanging server holds the request (what
// names it in the failure; bounded by testwait.Bound) and then stops p with
// SIGINT, returning its exit code.
func interruptWhenHung(t *testing.T, p *process, hung <-chan struct{}, what string) int {
	t.Helper()
	select {
	case <-hung:
	case <-time.After(testwait.Bound):
		t.Fatalf("the server got no %s within %s (a bound against a hang); stderr:\n%s", what, testwait.Bound, p.stderr.String())
	}
	return p.stop(t, syscall.SIGINT)
}
