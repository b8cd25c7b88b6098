package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/client"
)

// TestReportCountsRefusedAttempts: a call to a port that refuses every
// connection sent nothing; its report said "3 POST(s)" as if three requests
// had reached a server. It says they were attempts, none answered, none
// written whole, as the records' httpStatuses (0) and network.requestSent
// (false) do.
func TestReportCountsRefusedAttempts(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()

	c, err := client.New(client.Options{URL: "http://" + addr + "/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20e9)
	defer cancel()
	call, err := c.CallTool(ctx, "echo", json.RawMessage(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if call.Outcome != classify.NetworkError || len(call.Exchanges) != 3 {
		t.Fatalf("outcome %s, %d exchanges; want NETWORK_ERROR after 3 attempts", call.Outcome, len(call.Exchanges))
	}
	var report bytes.Buffer
	_ = call.WriteReport(&report)
	const want = "  exchanges: 3 POST attempt(s) (no HTTP response to any: 3 never fully sent), 2 retries, 0 input round(s)\n"
	if !strings.Contains(report.String(), want) {
		t.Errorf("report lacks %q:\n%s", want, report.String())
	}
	for _, ex := range call.Exchanges {
		if ex.Status != 0 || ex.Result.Network() == nil || ex.Result.Network().RequestSent {
			t.Errorf("#%d: status %d network %+v; want no response and requestSent false", ex.Seq, ex.Status, ex.Result.Network())
		}
	}
}
