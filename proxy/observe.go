package proxy

import (
	"time"

	"github.com/mcpdiag/mcpdiag/record"
)

// Observer receives every finished exchange: a Prometheus collector, a
// tracer. Observe is called once per exchange, on the goroutine that
// finishes it, after the response has ended and before the record is
// written; it must not block for long and must be safe for concurrent use.
// With no observers configured, nothing is measured beyond the record, so
// metrics and traces cost nothing when they are off.
type Observer interface {
	Observe(o *Observation)
}

// Network transports, with the OpenTelemetry values.
const (
	TransportTCP  = "tcp"  // HTTP mode
	TransportPipe = "pipe" // stdio mode
)

// Observation is one finished exchange as an observer sees it.
type Observation struct {
	// Record is the exchange record, complete but not yet redacted: an
	// observer must not export its headers or bodies. It must not modify it.
	Record *record.Record
	// Start and End bound the exchange as the proxy saw it (the inbound leg).
	Start, End time.Time
	// Upstream is the outbound leg; its Start is zero when the request never
	// went upstream (a fault answered it, or the client left first).
	Upstream Leg
	// Transport is TransportTCP or TransportPipe.
	Transport string
	// TraceParent and TraceState are the W3C trace context the client sent,
	// from params._meta (SEP-414) or else the traceparent header.
	TraceParent, TraceState string
	// ClientAddr is the client's address (HTTP mode).
	ClientAddr string
	// ServerAddr is the upstream's host:port (HTTP mode).
	ServerAddr string
	// ProxyError is the RFC 9209 error type when the proxy answered the
	// request itself because the upstream failed (see ProxyStatus); "" when
	// the response came from the upstream.
	ProxyError string
	// UpstreamError is the RFC 9209 error type of an upstream failure
	// before any response: ProxyError when the proxy answered, or
	// connection_terminated when the upstream dropped the connection and the
	// proxy dropped the client's the same way.
	UpstreamError string
	// UpstreamReset reports that the upstream cut the response after it
	// had started (Envoy's UR); the client received a cut response.
	UpstreamReset bool
	// ClientGone reports that the client disconnected before the end of the
	// response (Envoy's DC).
	ClientGone bool
	// Drift lists the tool definitions this exchange (a tools/list) showed
	// changed.
	Drift []Drift
}

// Leg is the time span of the upstream leg.
type Leg struct {
	Start, End time.Time
}

// Observers fans one observation out to several observers.
type Observers []Observer

// Observe calls every observer in turn.
func (os Observers) Observe(o *Observation) {
	for _, ob := range os {
		ob.Observe(o)
	}
}
