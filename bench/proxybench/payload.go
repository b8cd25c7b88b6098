package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcpdiag/mcpdiag/wire"
)

// The canned payloads: a 1 KiB tools/call request (2026-07-28, its _meta
// carrying the protocol version, client info and capabilities), a 1 KiB
// JSON tool result and a 64 KiB event stream of 4 events (three
// notifications/message, then the tool result), all to request id 1.

const (
	requestSize   = 1 << 10
	jsonSize      = 1 << 10
	sseSize       = 64 << 10
	sseEvents     = 4
	idlePriming   = ": priming\n\n"
	idleEventData = `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hi"}}`
)

// padTo returns the JSON made by build(pad) for the pad of x's that makes
// it exactly n bytes long.
func padTo(n int, build func(pad string) []byte) []byte {
	base := len(build(""))
	if base > n {
		panic(fmt.Sprintf("payload of %d bytes without padding exceeds %d", base, n))
	}
	b := build(strings.Repeat("x", n-base))
	if len(b) != n || !json.Valid(b) {
		panic(fmt.Sprintf("payload: made %d bytes (valid %v), want %d", len(b), json.Valid(b), n))
	}
	return b
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// toolsCall is the client's request body.
func toolsCall() []byte {
	return padTo(requestSize, func(pad string) []byte {
		return mustJSON(map[string]any{
			"jsonrpc": "2.0", "id": 1, "method": "tools/call",
			"params": map[string]any{
				"name":      "search",
				"arguments": map[string]any{"query": "mcp error layers", "text": pad},
				"_meta": map[string]any{
					wire.MetaProtocolVersion:    wire.Protocol2026,
					wire.MetaClientInfo:         map[string]any{"name": "proxybench", "version": "1"},
					wire.MetaClientCapabilities: map[string]any{},
				},
			},
		})
	})
}

// toolResult is a complete CallToolResult of one text block, n bytes.
func toolResult(n int) []byte {
	return padTo(n, func(pad string) []byte {
		return mustJSON(map[string]any{
			"jsonrpc": "2.0", "id": 1,
			"result": map[string]any{
				"resultType": "complete",
				"content":    []any{map[string]any{"type": "text", "text": "result: " + pad}},
				"isError":    false,
			},
		})
	})
}

// notification is a notifications/message of n bytes.
func notification(i, n int) []byte {
	return padTo(n, func(pad string) []byte {
		return mustJSON(map[string]any{
			"jsonrpc": "2.0", "method": "notifications/message",
			"params": map[string]any{"level": "info", "logger": "proxybench", "data": fmt.Sprintf("event %d %s", i, pad)},
		})
	})
}

// sseStream returns the 64 KiB stream split into its events (each ending
// in its blank line), which the upstream flushes one at a time.
func sseStream() [][]byte {
	const frame = len("id: ev-1\ndata: ") + len("\n\n")
	per := sseSize / sseEvents
	var events [][]byte
	for i := 1; i <= sseEvents; i++ {
		var data []byte
		if i < sseEvents {
			data = notification(i, per-frame)
		} else {
			data = toolResult(per - frame)
		}
		var b bytes.Buffer
		fmt.Fprintf(&b, "id: ev-%d\ndata: %s\n\n", i, data)
		if b.Len() != per {
			panic(fmt.Sprintf("event %d: %d bytes, want %d", i, b.Len(), per))
		}
		events = append(events, b.Bytes())
	}
	return events
}
