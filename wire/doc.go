// Package wire holds the few pieces of JSON-RPC 2.0, MCP and Server-Sent
// Events framing that mcpdiag needs to read and write messages exactly as they
// travel: request ids that keep their JSON type, a fast navigator over raw JSON
// objects that never re-encodes a value, and a WHATWG-conformant SSE reader that
// can report the raw bytes of every event it parses.
//
// Nothing here decides whether a message is a failure; that is package
// classify. wire only answers "what bytes arrived, and what do they say".
package wire
