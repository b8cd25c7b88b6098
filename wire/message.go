package wire

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"sync/atomic"
	"unicode/utf8"
)

// MessageKind says what a JSON-RPC message is.
type MessageKind uint8

// The kinds of message a body can hold.
const (
	MessageEmpty        MessageKind = iota // no body (a GET, a DELETE), or only JSON whitespace
	MessageInvalid                         // not valid JSON, or valid JSON that is no JSON-RPC message
	MessageRequest                         // a method and an id that is not null
	MessageNotification                    // a method and no id (or a null id)
	MessageResponse                        // a result or an error and no method
	MessageBatch                           // a JSON array (2025-03-26 batching); not looked into
)

// String names the kind ("request", "notification" …).
func (k MessageKind) String() string {
	switch k {
	case MessageEmpty:
		return "empty"
	case MessageInvalid:
		return "invalid"
	case MessageRequest:
		return "request"
	case MessageNotification:
		return "notification"
	case MessageResponse:
		return "response"
	case MessageBatch:
		return "batch"
	}
	return "unknown"
}

// Message holds the facts of one JSON-RPC message, read once from its bytes
// by [ParseMessage] and handed down on the request's context
// ([WithMessage], [MessageFor]) so that the recorder, the faults and the
// record's args hash do not parse the body again. Keys are matched exactly
// (JSON-RPC is case-sensitive) and, when a key repeats, the last member wins,
// as in encoding/json. The byte slices alias Body: a caller that reuses the
// buffer clones it first.
type Message struct {
	// Kind says what the message is.
	Kind MessageKind
	// Body is the bytes the message was parsed from (not copied).
	Body []byte
	// Method is the method of a request or notification; "" when absent or
	// not a string.
	Method string
	// ID is the message's id member as written (so with its JSON type):
	// zero when absent, null for a notification that says "id": null.
	ID ID
	// Params is the raw params value (of any JSON type), nil when absent.
	// What follows is read from it for requests and notifications only.
	Params []byte
	// Tool is params.name of a tools/call or prompts/get.
	Tool string
	// URI is params.uri of a resources/read.
	URI string
	// Arguments is params.arguments, raw, nil when absent.
	Arguments []byte
	// Meta is the raw params._meta object, nil when absent or not an object.
	Meta []byte
	// MetaKeys lists the keys of params._meta, sorted (nil without _meta).
	MetaKeys []string
	// Protocol is _meta's protocolVersion (2026-07-28), else initialize's
	// params.protocolVersion; "" when neither says.
	Protocol string
	// Client is "name@version" (or "name" without a version) from _meta's
	// clientInfo, else initialize's params.clientInfo.
	Client string
	// Traceparent and Tracestate come from params._meta (SEP-414).
	Traceparent, Tracestate string
	// Extensions are the keys of _meta's clientCapabilities.extensions, in
	// document order.
	Extensions []string
	// Cancelled is params.requestId of a notifications/cancelled.
	Cancelled ID
}

// IsNullIDRequest reports a message with a method and an id member that is
// null. It is a MessageNotification here, since no answer can be paired
// with it by id, but JSON-RPC 2.0 §4 makes it a request (a notification has
// no id member) and MCP forbids its null id: the proxies record it, and
// judge its answer, as a request's.
func (m *Message) IsNullIDRequest() bool {
	return m.Kind == MessageNotification && m.ID.IsNull()
}

// IsRPC reports a request, a notification or a response: a message whose
// answer can be classified as JSON-RPC.
func (m *Message) IsRPC() bool {
	return m.Kind == MessageRequest || m.Kind == MessageNotification || m.Kind == MessageResponse
}

// MetaField returns the raw value of params._meta's member key.
func (m *Message) MetaField(key string) ([]byte, bool) {
	if m.Meta == nil {
		return nil, false
	}
	return Field(m.Meta, key)
}

// messageParses counts ParseMessage calls, for the tests and benchmarks that
// measure parses per exchange (see docs/benchmarks.md).
var messageParses atomic.Int64

// MessageParses returns how many times ParseMessage has run in this process.
// It is a measuring aid: tests and benchmarks read it before and after an
// exchange to count the parses of a request body.
func MessageParses() int64 { return messageParses.Load() }

// ParseMessage reads the JSON-RPC facts of body. It never fails: what it
// cannot read it leaves empty, and a body that is not valid JSON, or not a
// JSON-RPC message, is MessageInvalid.
func ParseMessage(body []byte) Message {
	messageParses.Add(1)
	m := Message{Body: body}
	b := trimSpace(body)
	switch Kind(b) {
	case '{':
	case '[':
		if Valid(b) {
			m.Kind = MessageBatch
		} else {
			m.Kind = MessageInvalid
		}
		return m
	case 0:
		if len(b) == 0 {
			m.Kind = MessageEmpty
			return m
		}
		m.Kind = MessageInvalid
		return m
	default:
		m.Kind = MessageInvalid
		return m
	}
	var method, id, params []byte
	var hasMethod, hasID, hasResult bool
	if !eachMemberValid(b, func(k, v []byte) {
		switch {
		case KeyIs(k, "method"):
			method, hasMethod = v, true
		case KeyIs(k, "id"):
			id, hasID = v, true
		case KeyIs(k, "params"):
			params = v
		case KeyIs(k, "result"), KeyIs(k, "error"):
			hasResult = true
		}
	}) {
		m.Kind = MessageInvalid
		return m
	}
	m.Params = params
	if hasID {
		m.ID = IDFromRaw(id)
	}
	switch {
	case hasMethod:
		m.Method, _ = StringValue(method)
		if hasID && !m.ID.IsNull() {
			m.Kind = MessageRequest
		} else {
			m.Kind = MessageNotification
		}
	case hasResult:
		m.Kind = MessageResponse
		return m
	default:
		m.Kind = MessageInvalid
		return m
	}
	if Kind(m.Params) != '{' {
		return m
	}
	var name, uri, protocol, clientInfo, requestID []byte
	_ = EachField(m.Params, func(k, v []byte) bool {
		switch {
		case KeyIs(k, "name"):
			name = v
		case KeyIs(k, "uri"):
			uri = v
		case KeyIs(k, "arguments"):
			m.Arguments = v
		case KeyIs(k, "_meta"):
			m.Meta = v
		case KeyIs(k, "protocolVersion"):
			protocol = v
		case KeyIs(k, "clientInfo"):
			clientInfo = v
		case KeyIs(k, "requestId"):
			requestID = v
		}
		return true
	})
	switch m.Method {
	case "tools/call", "prompts/get":
		m.Tool, _ = StringValue(name)
	case "resources/read":
		m.URI, _ = StringValue(uri)
	case "initialize":
		m.Protocol, _ = StringValue(protocol)
		m.Client = implementation(clientInfo)
	case "notifications/cancelled":
		if requestID != nil {
			m.Cancelled = IDFromRaw(requestID)
		}
	}
	if Kind(m.Meta) != '{' {
		m.Meta = nil
		return m
	}
	m.MetaKeys = make([]string, 0, 4) // a 2026-07-28 request's three keys, and one more
	_ = EachField(m.Meta, func(k, v []byte) bool {
		// Every key, sorted and made distinct once all are in: a check
		// against the keys so far made the walk quadratic (30,000 keys,
		// 3.4 s of one parse; docs/decisions.md).
		key := metaKey(k)
		m.MetaKeys = append(m.MetaKeys, key)
		switch key {
		case MetaProtocolVersion:
			if s, ok := StringValue(v); ok {
				m.Protocol = s
			}
		case MetaClientInfo:
			if c := implementation(v); c != "" {
				m.Client = c
			}
		case "traceparent":
			m.Traceparent, _ = StringValue(v)
		case "tracestate":
			m.Tracestate, _ = StringValue(v)
		case MetaClientCapabilities:
			m.Extensions = nil
			if ext, ok := Field(v, "extensions"); ok && Kind(ext) == '{' {
				_ = EachField(ext, func(k, _ []byte) bool {
					if s, ok := StringValue(k); ok {
						m.Extensions = append(m.Extensions, s)
					}
					return true
				})
			}
		}
		return true
	})
	slices.Sort(m.MetaKeys)
	m.MetaKeys = slices.Compact(m.MetaKeys)
	return m
}

// MaxCapabilityNames bounds the capability names Capabilities returns: a
// client can declare any number of keys (10^5 in one request), and the
// record of every request would carry them all. Past it the schema's names
// (IsSchemaCapability) are kept, and of the others the smallest in byte
// order, so that the names kept do not depend on the members' order.
const MaxCapabilityNames = 32

// Capabilities returns the top-level names of the capabilities the client
// declared ("elicitation", "roots", "sampling", "tasks", …; names only,
// never their values), sorted and without repeats: the keys of _meta's
// clientCapabilities (2026-07-28) when it is an object, else of
// initialize's params.capabilities (2025-11-25 and earlier) when that is
// one; a repeated member is read as its last. nil when the message
// declares none this way (the member is absent: a 2025-11-25 tools/call,
// whose capabilities its session's initialize declared); empty, not nil,
// for an empty object (a client that declares no capability) and for a
// member that is there but no object (null, a string, an array: it
// declares nothing a server can read; docs/decisions.md). At most
// MaxCapabilityNames: see CapabilityNames, which also says whether names
// were left out. It reads the message's params again
// (no parse of the body: a field of Message would make the recorder's
// Exchange, which holds one, outgrow its size class), so a caller calls it
// once.
func (m *Message) Capabilities() []string {
	names, _ := m.CapabilityNames()
	return names
}

// CapabilityNames returns what Capabilities returns and whether the
// declaration held more than MaxCapabilityNames distinct names, some of
// which were left out (never one of the schema's: IsSchemaCapability).
func (m *Message) CapabilityNames() (names []string, truncated bool) {
	if m.Kind != MessageRequest && m.Kind != MessageNotification {
		return nil, false
	}
	meta, inMeta := m.MetaField(MetaClientCapabilities)
	if inMeta && Kind(meta) == '{' {
		return capabilityNames(meta)
	}
	if m.Method == "initialize" && Kind(m.Params) == '{' {
		if v, ok := Field(m.Params, "capabilities"); ok {
			return declaredNames(v)
		}
	}
	if inMeta {
		return []string{}, false
	}
	return nil, false
}

// declaredNames returns the names a capabilities member v declares: its
// keys when it is an object, else none ([], not nil): a member that is
// there but no object (null, a string, an array) declares no capability a
// server can read, and a server answers as to a client that declared
// none (the fault server's -32021), so the record says none, not "not
// shown".
func declaredNames(v []byte) ([]string, bool) {
	if Kind(v) != '{' {
		return []string{}, false
	}
	return capabilityNames(v)
}

// IsSchemaCapability reports whether name is one of the top-level
// capabilities the MCP schema's ClientCapabilities defines (elicitation,
// sampling, roots, tasks, experimental, extensions): those a judge asks
// about, which a capped declaration always keeps.
func IsSchemaCapability(name string) bool {
	switch name {
	case "elicitation", "sampling", "roots", "tasks", "experimental", "extensions":
		return true
	}
	return false
}

// capabilityNames returns the keys of the capabilities object v, sorted and
// without repeats (the well-known names without allocating), at most
// MaxCapabilityNames of them (the schema's, then the smallest others), and
// whether any were left out; nil when v is no object, empty (not nil, and
// no allocation) for an empty one.
func capabilityNames(v []byte) ([]string, bool) {
	if Kind(v) != '{' {
		return nil, false
	}
	names := []string{}
	truncated := false
	_ = EachField(v, func(k, _ []byte) bool {
		s, ok := capabilityName(k)
		if !ok || slices.Contains(names, s) {
			return true
		}
		if len(names) < MaxCapabilityNames {
			if cap(names) == 0 {
				// Room for the schema's usual few at once: one allocation
				// where appending one by one made three for three names.
				names = make([]string, 0, 4)
			}
			names = append(names, s)
			return true
		}
		// Full: s or the largest name that is not the schema's goes.
		truncated = true
		largest := -1
		for i, n := range names {
			if !IsSchemaCapability(n) && (largest < 0 || n > names[largest]) {
				largest = i
			}
		}
		if largest >= 0 && (IsSchemaCapability(s) || s < names[largest]) {
			names[largest] = s
		}
		return true
	})
	slices.Sort(names)
	return names, truncated
}

// capabilityName returns the capability name k (raw, quoted) as a string,
// the names the MCP schema's ClientCapabilities defines without allocating.
func capabilityName(k []byte) (string, bool) {
	if len(k) >= 2 && k[0] == '"' {
		switch inner := k[1 : len(k)-1]; string(inner) {
		case "elicitation":
			return "elicitation", true
		case "sampling":
			return "sampling", true
		case "roots":
			return "roots", true
		case "tasks":
			return "tasks", true
		case "experimental":
			return "experimental", true
		case "extensions":
			return "extensions", true
		}
	}
	return StringValue(k)
}

// eachMemberValid calls fn with each member of the object obj (trimmed of
// whitespace, obj[0] == '{'), raw key and raw value, and reports whether
// obj is valid JSON, as Valid(obj) would: the object is validated in the
// same walk that reads its members, not in a pass of its own before it.
// When obj is not valid, fn may have been called for the members before
// the fault.
func eachMemberValid(obj []byte, fn func(key, value []byte)) bool {
	i := skipSpace(obj, 1)
	if i < len(obj) && obj[i] == '}' {
		return i+1 == len(obj)
	}
	for i < len(obj) && obj[i] == '"' {
		kend, _ := ScanString(obj, i)
		if kend < 0 {
			return false
		}
		key := obj[i:kend]
		i = skipSpace(obj, kend)
		if i >= len(obj) || obj[i] != ':' {
			return false
		}
		vstart := skipSpace(obj, i+1)
		vend := ValidValue(obj, vstart, 1)
		if vend < 0 {
			return false
		}
		fn(key, obj[vstart:vend])
		i = skipSpace(obj, vend)
		switch {
		case i >= len(obj):
			return false
		case obj[i] == '}':
			return i+1 == len(obj)
		case obj[i] != ',':
			return false
		}
		i = skipSpace(obj, i+1)
	}
	return false
}

// trimSpace trims JSON whitespace (not every Unicode space, as
// bytes.TrimSpace does: a form feed before a message makes it invalid).
func trimSpace(b []byte) []byte {
	b = trimLeft(b)
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

// metaKey returns the _meta key k (raw, quoted) as a string, the
// 2026-07-28 keys every request repeats without allocating.
func metaKey(k []byte) string {
	if len(k) >= 2 && k[0] == '"' {
		switch inner := k[1 : len(k)-1]; string(inner) {
		case MetaProtocolVersion:
			return MetaProtocolVersion
		case MetaClientInfo:
			return MetaClientInfo
		case MetaClientCapabilities:
			return MetaClientCapabilities
		case "traceparent":
			return "traceparent"
		case "tracestate":
			return "tracestate"
		case "progressToken":
			return "progressToken"
		}
	}
	s, _ := StringValue(k)
	return s
}

// implementation formats an Implementation object as "name@version" (or
// "name" without a version); "" when v is no object with a name. One walk
// of the object, and one allocation when name and version are plain
// strings (no escapes).
func implementation(v []byte) string {
	if Kind(v) != '{' {
		return ""
	}
	var n, ver []byte
	var hasName, hasVersion bool
	_ = EachField(v, func(k, v []byte) bool {
		switch {
		case KeyIs(k, "name"):
			n, hasName = v, true
		case KeyIs(k, "version"):
			ver, hasVersion = v, true
		}
		return true
	})
	if !hasName {
		return ""
	}
	if pn, ok := plainString(n); ok {
		pv, vok := plainString(ver)
		switch {
		case len(pn) == 0:
			return ""
		case !hasVersion || vok && len(pv) == 0:
			return string(pn)
		case vok:
			var b strings.Builder
			b.Grow(len(pn) + 1 + len(pv))
			b.Write(pn)
			b.WriteByte('@')
			b.Write(pv)
			return b.String()
		}
	}
	name, _ := StringValue(n)
	var version string
	if hasVersion {
		version, _ = StringValue(ver)
	}
	switch {
	case name == "":
		return ""
	case version == "":
		return name
	}
	return name + "@" + version
}

// plainString returns the bytes of the raw JSON string v when they are its
// value (no escapes, valid UTF-8).
func plainString(v []byte) ([]byte, bool) {
	v = trimLeft(v)
	if len(v) < 2 || v[0] != '"' {
		return nil, false
	}
	inner := v[1 : len(v)-1]
	if hasBackslash(inner) || !utf8.Valid(inner) {
		return nil, false
	}
	return inner, true
}

type messageKey struct{}

// WithMessage returns ctx carrying m, the message parsed from the request
// body a handler further down will read.
func WithMessage(ctx context.Context, m *Message) context.Context {
	return context.WithValue(ctx, messageKey{}, m)
}

// IsMessageKey reports whether key is the context key WithMessage puts a
// message under. A context type of its own that carries several values in
// one node (the recorder's) answers it: its Value returns the *Message for
// this key, as a context made by WithMessage would.
func IsMessageKey(key any) bool {
	_, ok := key.(messageKey)
	return ok
}

// MessageFrom returns the message WithMessage put on ctx, or nil.
func MessageFrom(ctx context.Context) *Message {
	m, _ := ctx.Value(messageKey{}).(*Message)
	return m
}

// MessageFor returns the facts of body: the message on ctx when it was
// parsed from the same bytes (compared, not parsed), else a parse of body. A
// handler that re-reads a body the layer above has parsed so pays a
// comparison, and a body something in between has changed is parsed anew.
func MessageFor(ctx context.Context, body []byte) *Message {
	if m := MessageFrom(ctx); m != nil && bytes.Equal(m.Body, body) {
		return m
	}
	m := ParseMessage(body)
	return &m
}

// ParseMessageHead reads what the first bytes of a JSON-RPC message larger
// than head, cut anywhere, say: the top-level members in order while each
// one's whole value is in head (as [ScanHead]), taking "method" (a string)
// and "id", and of a "params" object cut by the end of head its members in
// order while whole, taking "name" (the tool of a tools/call or
// prompts/get) and "uri" (of a resources/read). Members after the first
// one that runs past the end are not seen; neither is a member repeated
// after it (a complete parse would take the last). Kind is MessageRequest
// when a method and an id that is not null were seen, else MessageInvalid
// with what was seen (the id, or the method, may follow). Params, Arguments
// and _meta's facts stay empty: a caller tells such a message from a whole
// one by what it parsed (the recorder: a body over its limit). It does not
// count as a parse (MessageParses): it reads a body ParseMessage could not.
func ParseMessageHead(head []byte) Message {
	m := Message{Kind: MessageInvalid}
	var method, id, name, uri []byte
	var hasID bool
	eachHeadMember(head, skipSpace(head, 0), func(key, v []byte, whole bool) bool {
		switch {
		case !whole:
			if string(key) == "params" && len(v) > 0 && v[0] == '{' {
				eachHeadMember(v, 0, func(k, pv []byte, whole bool) bool {
					switch {
					case !whole:
					case string(k) == "name":
						name = pv
					case string(k) == "uri":
						uri = pv
					}
					return whole
				})
			}
			return false
		case string(key) == "method":
			method = v
		case string(key) == "id":
			id, hasID = v, true
		case string(key) == "params" && Kind(v) == '{':
			_ = EachField(v, func(k, pv []byte) bool {
				switch {
				case KeyIs(k, "name"):
					name = pv
				case KeyIs(k, "uri"):
					uri = pv
				}
				return true
			})
		}
		return true
	})
	var ok bool
	if m.Method, ok = StringValue(method); !ok {
		m.Method = ""
	}
	if hasID {
		m.ID = IDFromRaw(id)
	}
	if m.Method != "" && hasID && !m.ID.IsNull() {
		m.Kind = MessageRequest
	}
	switch m.Method {
	case "tools/call", "prompts/get":
		m.Tool, _ = StringValue(name)
	case "resources/read":
		m.URI, _ = StringValue(uri)
	}
	return m
}

// eachHeadMember calls fn with the key (unescaped) and raw value of each
// member of the object that starts at data[i], in order, while the data
// holds them: whole is false for the last call when the value starts but
// does not end in data (v is then the rest of data). It stops when fn
// returns false, at the end of the object, or at anything that is not a
// member.
func eachHeadMember(data []byte, i int, fn func(key, v []byte, whole bool) bool) {
	if i >= len(data) || data[i] != '{' {
		return
	}
	i = skipSpace(data, i+1)
	for i < len(data) && data[i] == '"' {
		end, _ := ScanString(data, i)
		if end < 0 {
			return
		}
		key := Key(data[i:end])
		i = skipSpace(data, end)
		if i >= len(data) || data[i] != ':' {
			return
		}
		i = skipSpace(data, i+1)
		if i >= len(data) {
			return
		}
		vend := ScanValue(data, i)
		if vend < 0 || vend == len(data) && (data[i] == '-' || isDigit(data[i])) {
			// Cut (or malformed): the rest is the value's start. A
			// number that ends where data does may go on past it.
			fn(key, data[i:], false)
			return
		}
		if !fn(key, data[i:vend], true) {
			return
		}
		i = skipSpace(data, vend)
		if i >= len(data) || data[i] != ',' {
			return
		}
		i = skipSpace(data, i+1)
	}
}
