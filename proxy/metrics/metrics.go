// Package metrics counts the recording proxy's exchanges for Prometheus: a
// proxy.Observer that keeps counters and histograms, and the /metrics
// handler that serves them. It is a separate package so that the proxy
// itself does not depend on the Prometheus client.
//
//	reg := prometheus.NewRegistry()
//	m, err := metrics.New(reg, metrics.Options{RecordsDropped: async.Dropped})
//	p, err := proxy.New(proxy.Options{…, Observer: m})
//	srv := metrics.NewServer(reg) // or http.Handle("/metrics", metrics.Handler(reg))
//	go srv.Serve(ln)
//
// The handler refuses a request that arrived at a loopback address with a
// foreign Host or Origin (DNS rebinding: a web page must not read the
// metrics, which name tools and the upstream), whoever serves it.
package metrics

import (
	"net/http"
	"sync"

	"github.com/mcpdiag/mcpdiag/internal/loopback"
	"github.com/mcpdiag/mcpdiag/proxy"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// The metric names.
const (
	NameExchanges        = "mcpdiag_proxy_exchanges_total"
	NameDuration         = "mcpdiag_proxy_exchange_duration_seconds"
	NameUpstreamDuration = "mcpdiag_proxy_upstream_duration_seconds"
	NameUpstreamErrors   = "mcpdiag_proxy_upstream_errors_total"
	NameClientGone       = "mcpdiag_proxy_client_disconnects_total"
	NameToolDrift        = "mcpdiag_proxy_tool_drift_total"
	NameRecordsDropped   = "mcpdiag_proxy_records_dropped_total"
	NameRecordErrors     = "mcpdiag_proxy_record_errors_total"
	NameInFlight         = "mcpdiag_proxy_in_flight"
)

// DefaultMaxTools bounds the distinct values of the tool label: tool names
// come from clients, and a label must not grow without bound. Past it, new
// names are counted as "_other".
const DefaultMaxTools = 200

// Options configure New.
type Options struct {
	// RecordsDropped returns the records dropped by a full queue so far
	// (record.Async.Dropped); nil leaves the metric out.
	RecordsDropped func() int64
	// RecordErrors returns the records the sink refused so far; nil leaves
	// the metric out.
	RecordErrors func() int64
	// InFlight returns the exchanges in flight now (from proxy.Stats); nil
	// leaves the metric out.
	InFlight func() int64
	// MaxTools bounds the tool label's values (DefaultMaxTools when 0).
	MaxTools int
	// Buckets are the duration histogram's buckets in seconds
	// (DefaultBuckets when nil).
	Buckets []float64
}

// DefaultBuckets span a fast local call to a slow tool: 1 ms to 60 s.
var DefaultBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}

// Collector is a proxy.Observer that keeps the proxy's metrics.
type Collector struct {
	exchanges        *prometheus.CounterVec
	duration         *prometheus.HistogramVec
	upstreamDuration *prometheus.HistogramVec
	upstreamErrors   *prometheus.CounterVec
	clientGone       prometheus.Counter
	drift            *prometheus.CounterVec

	maxTools int
	mu       sync.Mutex
	tools    map[string]bool
}

var _ proxy.Observer = (*Collector)(nil)

// New registers the proxy's metrics with reg and returns the collector.
func New(reg prometheus.Registerer, opts Options) (*Collector, error) {
	buckets := opts.Buckets
	if buckets == nil {
		buckets = DefaultBuckets
	}
	c := &Collector{
		exchanges: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: NameExchanges,
			Help: "Exchanges through the proxy, by JSON-RPC method, tool, layer and outcome (one per record).",
		}, []string{"method", "tool", "layer", "outcome", "transport"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    NameDuration,
			Help:    "Duration of exchanges as the client saw them, from the request to the end of the response.",
			Buckets: buckets,
		}, []string{"method", "layer", "transport"}),
		upstreamDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    NameUpstreamDuration,
			Help:    "Duration of the upstream leg, from sending the request to the end of the upstream response.",
			Buckets: buckets,
		}, []string{"method"}),
		upstreamErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: NameUpstreamErrors,
			Help: "Upstream failures: the RFC 9209 error type of a failure before any response, or reset_after_response_started.",
		}, []string{"error"}),
		clientGone: prometheus.NewCounter(prometheus.CounterOpts{
			Name: NameClientGone,
			Help: "Exchanges the client left before the response ended.",
		}),
		drift: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: NameToolDrift,
			Help: "Tool definitions that changed between tools/list responses, by warning code.",
		}, []string{"code"}),
		maxTools: opts.MaxTools,
		tools:    map[string]bool{},
	}
	if c.maxTools <= 0 {
		c.maxTools = DefaultMaxTools
	}
	cs := []prometheus.Collector{c.exchanges, c.duration, c.upstreamDuration, c.upstreamErrors, c.clientGone, c.drift}
	if f := opts.RecordsDropped; f != nil {
		cs = append(cs, prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: NameRecordsDropped,
			Help: "Records dropped because the record queue was full (policy drop).",
		}, func() float64 { return float64(f()) }))
	}
	if f := opts.RecordErrors; f != nil {
		cs = append(cs, prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: NameRecordErrors,
			Help: "Records the record sink refused.",
		}, func() float64 { return float64(f()) }))
	}
	if f := opts.InFlight; f != nil {
		cs = append(cs, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: NameInFlight,
			Help: "Exchanges in flight.",
		}, func() float64 { return float64(f()) }))
	}
	for _, m := range cs {
		if err := reg.Register(m); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// Observe counts one finished exchange.
func (c *Collector) Observe(o *proxy.Observation) {
	r := o.Record
	method := methodLabel(r.Method)
	c.exchanges.WithLabelValues(method, c.toolLabel(r.Tool), string(r.Layer), string(r.Outcome), o.Transport).Inc()
	if !o.End.IsZero() && !o.Start.IsZero() {
		c.duration.WithLabelValues(method, string(r.Layer), o.Transport).Observe(o.End.Sub(o.Start).Seconds())
	}
	if !o.Upstream.Start.IsZero() && o.Upstream.End.After(o.Upstream.Start) {
		c.upstreamDuration.WithLabelValues(method).Observe(o.Upstream.End.Sub(o.Upstream.Start).Seconds())
	}
	if o.UpstreamError != "" {
		c.upstreamErrors.WithLabelValues(o.UpstreamError).Inc()
	}
	if o.UpstreamReset {
		c.upstreamErrors.WithLabelValues("reset_after_response_started").Inc()
	}
	if o.ClientGone {
		c.clientGone.Inc()
	}
	for _, d := range o.Drift {
		c.drift.WithLabelValues(d.Code).Inc()
	}
}

func (c *Collector) toolLabel(tool string) string {
	if tool == "" {
		return ""
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tools[tool] {
		return tool
	}
	if len(c.tools) >= c.maxTools || len(tool) > 128 {
		return "_other"
	}
	c.tools[tool] = true
	return tool
}

// knownMethods are the method label's values; any other method is
// "_other", so that clients cannot grow the label.
var knownMethods = map[string]bool{}

func init() {
	for _, m := range []string{
		"initialize", "ping", "server/discover", "tools/list", "tools/call", "resources/list", "resources/read",
		"resources/templates/list", "resources/subscribe", "resources/unsubscribe", "prompts/list", "prompts/get",
		"completion/complete", "logging/setLevel", "subscriptions/listen", "sampling/createMessage",
		"elicitation/create", "roots/list", "tasks/get", "tasks/result", "tasks/list", "tasks/cancel", "tasks/update",
		"notifications/initialized", "notifications/cancelled", "notifications/progress", "notifications/message",
		"notifications/roots/list_changed", "notifications/tools/list_changed", "notifications/resources/updated",
		"notifications/resources/list_changed", "notifications/prompts/list_changed", "notifications/elicitation/complete",
		"notifications/tasks/status",
	} {
		knownMethods[m] = true
	}
}

func methodLabel(m string) string {
	if m == "" || knownMethods[m] {
		return m
	}
	return "_other"
}

// Handler serves the metrics of g in the Prometheus text format. On a
// loopback listener it applies the DNS-rebinding check of every mcpdiag
// loopback listener (a loopback Host, an allowed Origin) and answers 403
// otherwise.
func Handler(g prometheus.Gatherer) http.Handler {
	return loopback.GuardLoopback("mcpdiag proxy metrics", promhttp.HandlerFor(g, promhttp.HandlerOpts{}))
}

// NewServer returns an http.Server that serves Handler(g) at /metrics (and
// 404 elsewhere) with the proxy's connection timeouts.
func NewServer(g prometheus.Gatherer) *http.Server {
	mux := http.NewServeMux()
	mux.Handle("/metrics", Handler(g))
	return &http.Server{Handler: mux, ReadHeaderTimeout: proxy.DefaultReadHeaderTimeout, IdleTimeout: proxy.DefaultIdleTimeout}
}
