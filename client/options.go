package client

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/mcpdiag/mcpdiag/retry"
	"github.com/mcpdiag/mcpdiag/wire"
)

// Protocol modes.
const (
	ProtocolAuto = "auto"
	Protocol2026 = wire.Protocol2026
	Protocol2025 = wire.Protocol2025
)

// Defaults for Options.
const (
	DefaultTimeout   = 30 * time.Second
	DefaultMaxRounds = 10
	// DefaultMaxPages bounds tools/list pagination, so a server whose
	// cursors never end cannot keep the client busy.
	DefaultMaxPages = 100
)

// Implementation identifies the client in _meta and initialize.
type Implementation struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// DefaultClientInfo is what the client calls itself.
var DefaultClientInfo = Implementation{Name: "mcpdiag", Version: "0.1.0"}

// Options configure a Client. The zero value of every field is a documented
// default.
type Options struct {
	// URL is the MCP endpoint.
	URL string
	// Protocol is ProtocolAuto (default), Protocol2026 or Protocol2025.
	Protocol string
	// HTTPClient sends the requests; a fresh client with no timeout of its own
	// when nil (the call's timeouts apply). Its CheckRedirect is replaced:
	// the client never follows a redirect to another origin (see
	// FollowRedirect).
	HTTPClient *http.Client
	// Header is added to every request.
	Header http.Header
	// Bearer, when set, is sent as "Authorization: Bearer …" and is never
	// printed or recorded. It turns the OAuth flow (Auth) off: the caller
	// brought the token.
	Bearer string
	// Auth, when set (and Bearer is not), runs the OAuth 2.1 flow of the
	// MCP authorization spec on a 401 or a 403 insufficient_scope: every
	// exchange of the chain is recorded with its step (Exchange.Auth), and
	// a chain that fails ends the call AUTH_FAILED (Call.Auth says where).
	Auth *AuthOptions
	// Timeout bounds the whole logical call (DefaultTimeout when 0).
	Timeout time.Duration
	// FirstByteTimeout bounds the wait for each response's headers
	// (Timeout when 0).
	FirstByteTimeout time.Duration
	// ClientInfo is sent in _meta / initialize (DefaultClientInfo when zero).
	ClientInfo Implementation
	// Capabilities are the client capabilities declared on every request.
	// nil declares what Inputs answers: its Declares when it has that
	// method (MapInputs: sampling and roots only when the file answers
	// them), elicitation (form and url) for any other provider, and nothing
	// when Inputs is nil.
	Capabilities json.RawMessage
	// Extensions are extension ids declared in the capabilities (for
	// example io.modelcontextprotocol/tasks).
	Extensions []string
	// Inputs answers MRTR input requests; nil answers none.
	Inputs InputProvider
	// MaxRounds bounds MRTR rounds (DefaultMaxRounds when 0).
	MaxRounds int
	// Policy decides retries; retry.DefaultPolicy() when nil.
	Policy *retry.Policy
	// Safety overrides what the tool's annotations say ("" = annotations).
	Safety retry.Safety
	// IdempotencyKey is sent as Idempotency-Key on tools/call and makes the
	// call retryable.
	IdempotencyKey string
	// Rand is the jitter source (seed it for reproducible backoff).
	Rand retry.Rand
	// Sleep waits between retries; a context-aware timer when nil. Tests
	// replace it.
	Sleep func(ctxDone <-chan struct{}, d time.Duration) bool
	// MaxEventSize bounds one JSON body or SSE event held in memory.
	MaxEventSize int
	// OnExchange, when set, is called after every exchange, in order.
	OnExchange func(*Exchange)
}

func (o *Options) timeout() time.Duration {
	if o.Timeout > 0 {
		return o.Timeout
	}
	return DefaultTimeout
}

func (o *Options) firstByte() time.Duration {
	if o.FirstByteTimeout > 0 {
		return o.FirstByteTimeout
	}
	return o.timeout()
}

func (o *Options) maxRounds() int {
	if o.MaxRounds > 0 {
		return o.MaxRounds
	}
	return DefaultMaxRounds
}

func (o *Options) clientInfo() Implementation {
	if o.ClientInfo.Name != "" {
		return o.ClientInfo
	}
	return DefaultClientInfo
}

func (o *Options) policy() retry.Policy {
	if o.Policy != nil {
		return *o.Policy
	}
	return retry.DefaultPolicy()
}

// capabilities returns the ClientCapabilities object to declare.
func (o *Options) capabilities() json.RawMessage {
	if o.Capabilities != nil {
		return o.Capabilities
	}
	caps := map[string]any{}
	if d, ok := o.Inputs.(interface{ Declares() []string }); ok {
		for _, c := range d.Declares() {
			caps[c] = capability(c)
		}
	} else if o.Inputs != nil {
		caps["elicitation"] = capability("elicitation")
	}
	if len(o.Extensions) > 0 {
		ext := map[string]any{}
		for _, e := range o.Extensions {
			ext[e] = map[string]any{}
		}
		caps["extensions"] = ext
	}
	b, _ := json.Marshal(caps)
	return b
}

// capability is the value declaring client capability name: elicitation
// in both modes (form and url), the others empty.
func capability(name string) any {
	if name == "elicitation" {
		return map[string]any{"form": map[string]any{}, "url": map[string]any{}}
	}
	return map[string]any{}
}

// FollowRedirect is the decision on a same-origin 307 or 308 that the client
// followed: the same request (method, body, headers, id) went to the
// Location, once. Every other redirect ends the call as HTTP_ERROR with a
// reason that says why it was refused; nothing is ever sent to another
// origin (scheme, host, port) by following a redirect.
const FollowRedirect retry.Action = "follow-redirect"
