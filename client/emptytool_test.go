package client_test

import (
	"context"
	"errors"
	"testing"

	"github.com/mcpdiag/mcpdiag/client"
)

// TestCallToolEmptyName: no tool has an empty name (the spec's tool names
// are 1 to 128 characters), so CallTool refuses one as bad input
// (ErrUsage) before any request, on either era: it was sent, and the
// server's refusal reported as the call's outcome (outsider21).
func TestCallToolEmptyName(t *testing.T) {
	t.Parallel()
	for _, protocol := range []string{client.ProtocolAuto, client.Protocol2025} {
		f, url := serve(t, bothEras(), "")
		c, err := client.New(client.Options{URL: url, Protocol: protocol})
		if err != nil {
			t.Fatal(err)
		}
		call, err := c.CallTool(context.Background(), "", nil)
		if !errors.Is(err, client.ErrUsage) || call != nil {
			t.Errorf("%s: CallTool(\"\") = %v, %v; want nil and an ErrUsage error", protocol, call, err)
		}
		f.mu.Lock()
		posts := f.posts
		f.mu.Unlock()
		if posts != 0 {
			t.Errorf("%s: %d POSTs reached the server; want none", protocol, posts)
		}
	}
}
