package client_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/client"
	"github.com/mcpdiag/mcpdiag/retry"
)

// TestReportMixedGETAndPOST: a 2025-11-25 call whose tools/call stream
// broke after an event id, resumed with a GET that got no HTTP response
// (the server dropped the connection). The exchanges line named every
// POST an attempt and did not say which request went unanswered ("4 POST
// attempt(s) and 1 GET attempt(s) (no HTTP response to 1: 1 sent
// whole)"), though the four POSTs were answered. It now counts each method
// apart: "4 POST(s) and 1 GET attempt(s) (no HTTP response to the GET:
// sent whole)".
func TestReportMixedGETAndPOST(t *testing.T) {
	s := &legacyServer{t: t}
	s.call = func(w http.ResponseWriter, m rpc, _ []byte) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "id: ev-1\ndata: \n\n")
	}
	s.get = func(w http.ResponseWriter, r *http.Request) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	pol := retry.DefaultPolicy()
	pol.MaxRetries = 1 // one resume
	c, _ := client.New(client.Options{URL: ts.URL, Protocol: client.Protocol2025, Policy: &pol, Sleep: func(_ <-chan struct{}, _ time.Duration) bool { return true }})
	call, _ := c.CallTool(context.Background(), "t", nil)
	var report bytes.Buffer
	_ = call.WriteReport(&report)
	t.Log(report.String())
	if want := "  exchanges: 4 POST(s) and 1 GET attempt(s) (no HTTP response to the GET: sent whole), 0 retries"; !strings.Contains(report.String(), want) {
		t.Errorf("report lacks %q:\n%s", want, report.String())
	}
}
