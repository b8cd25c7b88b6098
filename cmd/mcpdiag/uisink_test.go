package main

import (
	"net/http/httptest"
	"syscall"
	"testing"

	"github.com/mcpdiag/mcpdiag/fixture"
)

// TestProxyUIKeepsTheRecordAccounting: with --ui the records go through the
// page's sink in front of the --record sink; the proxy's shutdown must
// still flush and close the record sink, so that a record file on a full
// device is counted, named and ends the proxy with exit 1, as without --ui.
func TestProxyUIKeepsTheRecordAccounting(t *testing.T) {
	bin := testBinary(t)
	up := httptest.NewServer(fixture.New(fixture.Options{}))
	defer up.Close()
	p := startProcess(t, nil, bin, "proxy", "--upstream", up.URL+"/mcp", "--listen", "127.0.0.1:0", "--record-queue", "4",
		"--record", "/dev/full", "--ui=127.0.0.1:0")
	u := p.waitLine(t, proxyURLLine)[1]
	n := callsSucceed(t, u, 3)
	if code := p.stop(t, syscall.SIGTERM); code != 1 {
		t.Errorf("exit %d, want 1; stderr:\n%s", code, p.stderr.String())
	}
	checkLossReport(t, p.stderr.String(), n, 0, "no space left on device")
}
