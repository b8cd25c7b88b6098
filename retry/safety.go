package retry

// Safety says whether running a call twice could do harm. It decides whether
// a call may be retried after the request may have reached the server. The
// names are stable: they go into diagnostic records.
type Safety string

// The safety classes. The zero value "" means Unknown.
const (
	// ReadOnly: the tool changes nothing (readOnlyHint from a trusted
	// server, or the user said so).
	ReadOnly Safety = "read-only"
	// Idempotent: running the tool twice with the same arguments has the
	// same effect as running it once (idempotentHint from a trusted server,
	// or the user said so).
	Idempotent Safety = "idempotent"
	// IdempotencyKey: the call carries an idempotency key, and a retry
	// re-sends the same key, so a server that honours it runs the tool at
	// most once. MCP defines no idempotency mechanism (the proposal SEP-3182
	// was not merged), so this holds only for a server known to honour the
	// key.
	IdempotencyKey Safety = "idempotency-key"
	// Unsafe: the tool is destructive or not idempotent, and the call has
	// no idempotency key.
	Unsafe Safety = "unsafe"
	// Unknown: nothing says the tool is safe to repeat. Every tools/call is
	// Unknown by default: MCP sends every call as a POST, and tool
	// annotations are untrusted hints.
	Unknown Safety = "unknown"
)

// Safeties lists every safety class, safest first.
var Safeties = []Safety{ReadOnly, Idempotent, IdempotencyKey, Unsafe, Unknown}

// Safe reports whether a call of this safety may be repeated after it may
// have reached the server: ReadOnly, Idempotent and IdempotencyKey.
func (s Safety) Safe() bool {
	return s == ReadOnly || s == Idempotent || s == IdempotencyKey
}

// orUnknown maps the zero value and unrecognised values to Unknown.
func (s Safety) orUnknown() Safety {
	switch s {
	case ReadOnly, Idempotent, IdempotencyKey, Unsafe:
		return s
	}
	return Unknown
}

// SafetyFromHints maps the tool annotations of a tools/list entry to a
// safety class. nil means the hint is absent. A read-only tool is ReadOnly,
// an idempotent one Idempotent; when hints are present but claim neither,
// the tool is Unsafe; with no hints at all it is Unknown.
//
// Annotations are hints, and clients MUST treat them as untrusted unless the
// server is trusted (MCP tools §ToolAnnotations). Use the result only for a
// server you trust; otherwise use Unknown.
func SafetyFromHints(readOnly, destructive, idempotent *bool) Safety {
	switch {
	case readOnly != nil && *readOnly:
		return ReadOnly
	case idempotent != nil && *idempotent:
		return Idempotent
	case readOnly != nil || destructive != nil || idempotent != nil:
		return Unsafe
	}
	return Unknown
}

// MethodSafety returns the safety of a request that is not tools/call:
// ReadOnly for the listing requests (tools/list, prompts/list,
// resources/list, resources/templates/list) and server/discover, which take
// no arguments that act on anything; Unknown for every other method,
// including tools/call, whose safety depends on the tool.
func MethodSafety(method string) Safety {
	switch method {
	case "tools/list", "prompts/list", "resources/list", "resources/templates/list", "server/discover":
		return ReadOnly
	}
	return Unknown
}
