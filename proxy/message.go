package proxy

import (
	"bytes"
	"strconv"

	"github.com/mcpdiag/mcpdiag/wire"
)

// msgKind says what a JSON-RPC message is.
type msgKind int

const (
	kindNone         msgKind = iota // no body (GET, DELETE)
	kindInvalid                     // not a JSON object, or not a JSON-RPC message
	kindRequest                     // method and id
	kindNotification                // method, no id
	kindResponse                    // result or error: the client answering a server request
	kindBatch                       // a JSON array (2025-03-26 batching)
)

// The _meta keys of 2026-07-28 requests the proxy reads.
const (
	metaProtocolVersion    = wire.MetaProtocolVersion
	metaClientInfo         = wire.MetaClientInfo
	metaClientCapabilities = wire.MetaClientCapabilities
)

// message is what the proxy learns from one JSON-RPC message a client sent.
type message struct {
	kind   msgKind
	method string
	id     wire.ID
	// tool is params.name of a tools/call or prompts/get.
	tool string
	// protocol is params._meta's protocolVersion (2026-07-28), or
	// initialize's params.protocolVersion.
	protocol string
	// client is "name@version" from params._meta's clientInfo or
	// initialize's params.clientInfo.
	client string
	// traceparent and tracestate come from params._meta (SEP-414).
	traceparent, tracestate string
	// extensions are the keys of the declared clientCapabilities.extensions.
	extensions []string
	// cancelled is params.requestId of a notifications/cancelled.
	cancelled wire.ID
}

// parseMessage reads a client message. It never fails: what it cannot read
// it leaves empty.
func parseMessage(body []byte) message {
	var m message
	b := bytes.TrimSpace(body)
	switch wire.Kind(b) {
	case '{':
	case '[':
		m.kind = kindBatch
		return m
	case 0:
		if len(b) == 0 {
			m.kind = kindNone
			return m
		}
		m.kind = kindInvalid
		return m
	default:
		m.kind = kindInvalid
		return m
	}
	if !wire.Valid(b) {
		m.kind = kindInvalid
		return m
	}
	var method, id, params []byte
	var hasMethod, hasID, hasResult bool
	_ = wire.EachField(b, func(k, v []byte) bool {
		switch {
		case wire.KeyIs(k, "method"):
			method, hasMethod = v, true
		case wire.KeyIs(k, "id"):
			id, hasID = v, true
		case wire.KeyIs(k, "params"):
			params = v
		case wire.KeyIs(k, "result"), wire.KeyIs(k, "error"):
			hasResult = true
		}
		return true
	})
	switch {
	case hasMethod:
		m.method, _ = wire.StringValue(method)
		if hasID && !wire.IDFromRaw(id).IsNull() {
			m.kind = kindRequest
			m.id = wire.IDFromRaw(bytes.Clone(id))
		} else {
			m.kind = kindNotification
		}
	case hasResult:
		m.kind = kindResponse
		if hasID {
			m.id = wire.IDFromRaw(bytes.Clone(id))
		}
		return m
	default:
		m.kind = kindInvalid
		return m
	}
	if wire.Kind(params) != '{' {
		return m
	}
	if m.method == "tools/call" || m.method == "prompts/get" {
		if v, ok := wire.Field(params, "name"); ok {
			m.tool, _ = wire.StringValue(v)
		}
	}
	if m.method == "initialize" {
		if v, ok := wire.Field(params, "protocolVersion"); ok {
			m.protocol, _ = wire.StringValue(v)
		}
		if v, ok := wire.Field(params, "clientInfo"); ok {
			m.client = implementation(v)
		}
	}
	if m.method == "notifications/cancelled" {
		if v, ok := wire.Field(params, "requestId"); ok {
			m.cancelled = wire.IDFromRaw(bytes.Clone(v))
		}
	}
	meta, ok := wire.Field(params, "_meta")
	if !ok || wire.Kind(meta) != '{' {
		return m
	}
	_ = wire.EachField(meta, func(k, v []byte) bool {
		switch {
		case wire.KeyIs(k, metaProtocolVersion):
			if s, ok := wire.StringValue(v); ok && m.protocol == "" {
				m.protocol = s
			}
		case wire.KeyIs(k, metaClientInfo):
			if c := implementation(v); c != "" {
				m.client = c
			}
		case wire.KeyIs(k, "traceparent"):
			m.traceparent, _ = wire.StringValue(v)
		case wire.KeyIs(k, "tracestate"):
			m.tracestate, _ = wire.StringValue(v)
		case wire.KeyIs(k, metaClientCapabilities):
			if ext, ok := wire.Field(v, "extensions"); ok && wire.Kind(ext) == '{' {
				_ = wire.EachField(ext, func(k, _ []byte) bool {
					if s, ok := wire.StringValue(k); ok {
						m.extensions = append(m.extensions, s)
					}
					return true
				})
			}
		}
		return true
	})
	return m
}

// implementation formats an Implementation object as "name@version" (or
// "name" without a version).
func implementation(v []byte) string {
	if wire.Kind(v) != '{' {
		return ""
	}
	var name, version string
	if n, ok := wire.Field(v, "name"); ok {
		name, _ = wire.StringValue(n)
	}
	if n, ok := wire.Field(v, "version"); ok {
		version, _ = wire.StringValue(n)
	}
	switch {
	case name == "":
		return ""
	case version == "":
		return name
	}
	return name + "@" + version
}

// idKey is a map key for a JSON-RPC id that agrees with wire.ID.Equal:
// numbers by value, strings after unescaping.
func idKey(id wire.ID) string {
	switch {
	case id.IsString():
		s, _ := wire.StringValue(id.Raw())
		return "s" + s
	case id.IsNumber():
		if f, err := strconv.ParseFloat(string(id.Raw()), 64); err == nil {
			return "n" + strconv.FormatFloat(f, 'g', -1, 64)
		}
	}
	return "r" + string(id.Raw())
}
