package retry

import (
	"encoding/json"

	"github.com/mcpdiag/mcpdiag/classify"
)

// ClientVersions are the protocol revisions mcpdiag speaks, newest first. It
// is the default for Facts.Versions.
var ClientVersions = []string{classify.Protocol2026, classify.Protocol2025}

// PickVersion returns the newest revision that both the server (supported)
// and the client (client) list, and false when they share none. MCP
// revisions are dates (YYYY-MM-DD), so the newest is the greatest string.
func PickVersion(supported, client []string) (string, bool) {
	best, ok := "", false
	for _, c := range client {
		for _, s := range supported {
			if c == s && (!ok || c > best) {
				best, ok = c, true
			}
		}
	}
	return best, ok
}

// UnsupportedVersion reads the data of an UnsupportedProtocolVersion error
// (-32022; also the 2025-11-25 initialize error -32602 and the early-draft
// -32004, which carry the same shape): the revisions the server supports and
// the one the request asked for. ok is false when res has no JSON-RPC error
// data with a non-empty supported list. Entries that are not strings are
// skipped.
func UnsupportedVersion(res *classify.Result) (supported []string, requested string, ok bool) {
	if res == nil || res.JSONRPC() == nil || res.JSONRPC().Error == nil || len(res.JSONRPC().Error.Data) == 0 {
		return nil, "", false
	}
	var data struct {
		Supported []json.RawMessage `json:"supported"`
		Requested json.RawMessage   `json:"requested"`
	}
	if json.Unmarshal(res.JSONRPC().Error.Data, &data) != nil {
		return nil, "", false
	}
	for _, raw := range data.Supported {
		var s string
		if json.Unmarshal(raw, &s) == nil && s != "" {
			supported = append(supported, s)
		}
	}
	_ = json.Unmarshal(data.Requested, &requested)
	return supported, requested, len(supported) > 0
}
