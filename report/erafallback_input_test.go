package report

import (
	"fmt"
	"strings"
	"testing"
)

// TestEraFallbackPerInput: as an authorization challenge, a refused
// 2026-07-28 request is settled within its input (a record file, one
// recording process): an initialize of the same connection and client in
// another input does not make it an era fallback, recorded after it or
// before it (recall). Over one input the same lines are a fallback.
// Before, Read linked across inputs: the probe of one file was counted an
// era fallback by an initialize in another.
func TestEraFallbackPerInput(t *testing.T) {
	t.Parallel()
	line := func(id string, sec int, proto, method string, status int, outcome string) string {
		return fmt.Sprintf(`{"v":2,"kind":"exchange","id":%q,"time":"2026-12-06T09:00:%02d.000Z","client":"inspector@0.17","protocolVersion":%q,"scenario":"","method":%q,"postCount":1,"httpStatuses":[%d],"jsonrpc":{"id":1,"errorCode":null},"resultType":null,"outcome":%q,"retryOrigin":"none","httpMethod":"POST","status":%d,"conn":"r-1"}`+"\n",
			id, sec, proto, method, status, outcome, status)
	}
	probe := line("p", 0, "2026-07-28", "tools/list", 400, "HTTP_ERROR")
	initialize := line("i", 1, "2025-11-25", "initialize", 200, "RESULT_SUCCESS")
	for _, c := range []struct {
		name                string
		inputs              []string
		failures, fallbacks int64
	}{
		{"one input", []string{probe + initialize}, 0, 1},
		{"one input, the initialize recorded first", []string{initialize + probe}, 0, 1},
		{"the initialize in the next input", []string{probe, initialize}, 1, 0},
		{"the initialize in the input before", []string{initialize, probe}, 1, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			acc := New(Options{KeepLinks: true})
			for i, in := range c.inputs {
				if _, err := Read(strings.NewReader(in), fmt.Sprintf("in%d", i), nil, acc); err != nil {
					t.Fatal(err)
				}
			}
			acc.Close()
			ids := acc.TakeEraFallbacks()
			if int64(len(ids)) != c.fallbacks || c.fallbacks == 1 && ids[0] != "p" {
				t.Errorf("TakeEraFallbacks %q, want %d naming p", ids, c.fallbacks)
			}
			got := acc.Summary().Exchanges
			if got.Total != 2 || got.Failures != c.failures || got.EraFallbacks != c.fallbacks {
				t.Errorf("%d exchanges, %d failed, %d era fallbacks; want 2, %d, %d", got.Total, got.Failures, got.EraFallbacks, c.failures, c.fallbacks)
			}
		})
	}
}
