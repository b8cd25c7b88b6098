package wire

// The MCP revisions mcpdiag speaks, and the _meta keys of the 2026-07-28
// revision, defined once: every package names them through these.
const (
	// Protocol2026 is the stateless revision (per-request _meta, no
	// initialize).
	Protocol2026 = "2026-07-28"
	// Protocol2025 is the session revision (initialize, Mcp-Session-Id).
	Protocol2025 = "2025-11-25"
)

// The _meta keys a 2026-07-28 request carries, and the tasks extension's
// capability key.
const (
	MetaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	MetaClientInfo         = "io.modelcontextprotocol/clientInfo"
	MetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	TasksExtension         = "io.modelcontextprotocol/tasks"
)
