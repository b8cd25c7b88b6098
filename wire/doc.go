// Package wire holds the few pieces of JSON-RPC 2.0, MCP and Server-Sent
// Events framing that mcpdiag needs to read and write messages exactly as they
// travel: request ids that keep their JSON type, a fast navigator over raw JSON
// objects that never re-encodes a value, and the one Server-Sent Events parse:
// SSEScanner, a push-mode WHATWG scanner that yields fields and event ends
// with their byte offsets however the bytes are cut, and SSEReader, which
// builds events from its tokens and can report the raw bytes of each. Every
// package that reads an event stream uses one of the two.
//
// Nothing here decides whether a message is a failure; that is package
// classify. wire only answers "what bytes arrived, and what do they say".
package wire
