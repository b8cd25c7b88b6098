// Package tracing turns the recording proxy's exchanges into OpenTelemetry
// spans with the MCP semantic conventions (open-telemetry/
// semantic-conventions-genai, docs/gen-ai/mcp.md; status Development): a
// SERVER span for the leg from the client to the proxy and a CLIENT span
// for the leg from the proxy to the upstream, named "{mcp.method.name}
// {target}", parented by the trace context the client sent in
// params._meta (SEP-414) or, failing that, in the traceparent header.
//
// Spans are built when an exchange has finished, with its recorded start and
// end times, so tracing adds nothing to the forwarding path. The proxy does
// not inject its own context into the request it forwards: it changes no
// byte, so the upstream's spans are siblings of the proxy's, under the
// client's span.
//
// The attribute names are the semconv names, written out here rather than
// imported: the mcp namespace is still moving between semconv releases.
package tracing

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/proxy"
	"github.com/mcpdiag/mcpdiag/record"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// The attribute keys (MCP and GenAI semantic conventions, plus mcpdiag's
// own verdict).
const (
	AttrMethod          = "mcp.method.name"
	AttrProtocolVersion = "mcp.protocol.version"
	AttrSessionID       = "mcp.session.id"
	AttrToolName        = "gen_ai.tool.name"
	AttrPromptName      = "gen_ai.prompt.name"
	AttrOperationName   = "gen_ai.operation.name"
	AttrRequestID       = "jsonrpc.request.id"
	AttrRPCStatusCode   = "rpc.response.status_code"
	AttrErrorType       = "error.type"
	AttrTransport       = "network.transport"
	AttrProtocolName    = "network.protocol.name"
	AttrHTTPStatus      = "http.response.status_code"
	AttrServerAddress   = "server.address"
	AttrServerPort      = "server.port"
	AttrClientAddress   = "client.address"
	AttrClientPort      = "client.port"
	AttrOutcome         = "mcpdiag.outcome"
	AttrLayer           = "mcpdiag.layer"
	AttrProxyError      = "mcpdiag.proxy_status.error"
)

// ErrorToolError is error.type for a tool result with isError: true.
const ErrorToolError = "tool_error"

// InstrumentationName names the tracer.
const InstrumentationName = "github.com/mcpdiag/mcpdiag/proxy"

// Tracer is a proxy.Observer that emits the spans of each exchange.
type Tracer struct {
	tracer trace.Tracer
	prop   propagation.TextMapPropagator
}

var _ proxy.Observer = (*Tracer)(nil)

// New returns a Tracer that starts spans with tp.
func New(tp trace.TracerProvider) *Tracer {
	return &Tracer{tracer: tp.Tracer(InstrumentationName), prop: propagation.TraceContext{}}
}

// Observe emits the SERVER span of the exchange and, when the request went
// upstream, its CLIENT span.
func (t *Tracer) Observe(o *proxy.Observation) {
	r := o.Record
	ctx := context.Background()
	if o.TraceParent != "" {
		carrier := propagation.MapCarrier{"traceparent": o.TraceParent}
		if o.TraceState != "" {
			carrier["tracestate"] = o.TraceState
		}
		ctx = t.prop.Extract(ctx, carrier)
	}
	name := SpanName(r)
	attrs := Attributes(o)
	errType := ErrorType(r)
	if errType != "" {
		attrs = append(attrs, attribute.String(AttrErrorType, errType))
	}
	sctx, server := t.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer),
		trace.WithTimestamp(o.Start), trace.WithAttributes(attrs...))
	if addr := o.ClientAddr; addr != "" {
		if host, port, err := net.SplitHostPort(addr); err == nil {
			server.SetAttributes(attribute.String(AttrClientAddress, host))
			if n, err := strconv.Atoi(port); err == nil {
				server.SetAttributes(attribute.Int(AttrClientPort, n))
			}
		}
	}
	if errType != "" {
		server.SetStatus(codes.Error, statusMessage(r))
	}
	if !o.Upstream.Start.IsZero() {
		cattrs := attrs
		if host, port, err := net.SplitHostPort(o.ServerAddr); err == nil {
			cattrs = append(cattrs, attribute.String(AttrServerAddress, host))
			if n, err := strconv.Atoi(port); err == nil {
				cattrs = append(cattrs, attribute.Int(AttrServerPort, n))
			}
		} else if o.ServerAddr != "" {
			cattrs = append(cattrs, attribute.String(AttrServerAddress, o.ServerAddr))
		}
		if o.ProxyError != "" {
			cattrs = append(cattrs, attribute.String(AttrProxyError, o.ProxyError))
		}
		_, client := t.tracer.Start(sctx, name, trace.WithSpanKind(trace.SpanKindClient),
			trace.WithTimestamp(o.Upstream.Start), trace.WithAttributes(cattrs...))
		if errType != "" {
			client.SetStatus(codes.Error, statusMessage(r))
		}
		client.End(trace.WithTimestamp(o.Upstream.End))
	}
	server.End(trace.WithTimestamp(o.End))
}

// SpanName is "{mcp.method.name} {target}": "tools/call echo", "prompts/get
// summary", "tools/list"; the HTTP method for an exchange that is not a
// JSON-RPC request.
func SpanName(r *record.Record) string {
	switch {
	case r.Method == "":
		if r.HTTPMethod != "" {
			return r.HTTPMethod
		}
		return "mcp"
	case r.Tool != "":
		return r.Method + " " + r.Tool
	}
	return r.Method
}

// Attributes are the semconv attributes of an exchange, without error.type.
func Attributes(o *proxy.Observation) []attribute.KeyValue {
	r := o.Record
	attrs := []attribute.KeyValue{attribute.String(AttrTransport, o.Transport)}
	if r.Method != "" {
		attrs = append(attrs, attribute.String(AttrMethod, r.Method))
	}
	switch r.Method {
	case "tools/call":
		attrs = append(attrs, attribute.String(AttrToolName, r.Tool), attribute.String(AttrOperationName, "execute_tool"))
	case "prompts/get":
		attrs = append(attrs, attribute.String(AttrPromptName, r.Tool))
	}
	if r.ProtocolVersion != "" {
		attrs = append(attrs, attribute.String(AttrProtocolVersion, r.ProtocolVersion))
	}
	if id := r.JSONRPC.ID; !id.IsZero() && !id.IsNull() {
		// The semantic conventions' jsonrpc.request.id is the id as a
		// string: 1 and "1" read alike here. A span names its request;
		// nothing pairs by this attribute (ids pair by wire.ID.Key).
		s := id.String()
		if v, ok := unquote(s); ok {
			s = v
		}
		attrs = append(attrs, attribute.String(AttrRequestID, s))
	}
	if r.Session != "" {
		// Hashed as in records: a session id is a credential.
		attrs = append(attrs, attribute.String(AttrSessionID, record.HashSession(r.Session)))
	}
	if code := r.JSONRPC.ErrorCode; code != nil {
		attrs = append(attrs, attribute.String(AttrRPCStatusCode, strconv.FormatInt(*code, 10)))
	}
	if o.Transport == proxy.TransportTCP {
		attrs = append(attrs, attribute.String(AttrProtocolName, "http"))
		if r.Status != 0 {
			attrs = append(attrs, attribute.Int(AttrHTTPStatus, r.Status))
		}
	}
	if r.Outcome != "" {
		attrs = append(attrs, attribute.String(AttrOutcome, string(r.Outcome)), attribute.String(AttrLayer, string(r.Layer)))
	}
	return attrs
}

// ErrorType is error.type for an exchange: the JSON-RPC error code, or
// tool_error for isError, or for a transport failure the HTTP status or a
// low-cardinality class ("timeout", the outcome's name); "" for success.
func ErrorType(r *record.Record) string {
	switch {
	case r.JSONRPC.ErrorCode != nil:
		return strconv.FormatInt(*r.JSONRPC.ErrorCode, 10)
	case r.Outcome == classify.ToolError:
		return ErrorToolError
	case r.Outcome.Success() || r.Outcome == classify.InputRequired || r.Outcome == classify.TaskCreated || r.Outcome == "":
		return ""
	case r.Status >= 400:
		return strconv.Itoa(r.Status)
	case r.Network != nil && r.Network.Timeout:
		return "timeout"
	}
	return string(r.Outcome)
}

// statusMessage is the span status text: the upstream's own words, so it is
// scrubbed like a record (a server may echo a token in an error message).
func statusMessage(r *record.Record) string {
	if r.ErrorMessage != "" {
		return record.Scrub(r.ErrorMessage)
	}
	return record.Scrub(r.Reason)
}

func unquote(s string) (string, bool) {
	if len(s) >= 2 && s[0] == '"' {
		v, err := strconv.Unquote(s)
		return v, err == nil
	}
	return "", false
}

// Setup builds a tracer provider that exports spans with OTLP over HTTP, in
// batches. endpoint is a URL such as http://127.0.0.1:4318 (the traces path
// /v1/traces is added when the URL has no path); when it is "", the
// standard OTEL_EXPORTER_OTLP_ENDPOINT / OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
// variables decide. The service is named "mcpdiag-proxy" unless
// OTEL_SERVICE_NAME says otherwise. Shut the provider down before exiting,
// to send the last batch.
func Setup(ctx context.Context, endpoint string) (*sdktrace.TracerProvider, error) {
	var opts []otlptracehttp.Option
	if endpoint != "" {
		if !strings.Contains(endpoint, "://") {
			return nil, errors.New("tracing: the OTLP endpoint must be a URL such as http://127.0.0.1:4318")
		}
		u := endpoint
		if rest := u[strings.Index(u, "://")+3:]; !strings.Contains(rest, "/") {
			u += "/v1/traces"
		}
		opts = append(opts, otlptracehttp.WithEndpointURL(u))
	}
	hc, err := exportClient()
	if err != nil {
		return nil, err
	}
	opts = append(opts, otlptracehttp.WithHTTPClient(hc))
	exp, err := otlptracehttp.New(ctx, opts...)
	if err != nil {
		return nil, err
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(attribute.String("service.name", "mcpdiag-proxy")))
	if err != nil {
		res = resource.Default()
	}
	// The environment wins over the default name.
	if env, err := resource.New(ctx, resource.WithFromEnv()); err == nil {
		if merged, err := resource.Merge(res, env); err == nil {
			res = merged
		}
	}
	return sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res)), nil
}

// exportClient is the exporter's HTTP client. The SDK's own follows
// redirects, which would send the spans and the OTEL_EXPORTER_OTLP_HEADERS
// (often an API key) to whatever origin a Location names; this one hands a
// redirect back, so the export fails instead. Giving the SDK a client
// switches off its reading of the TLS and timeout variables, so they are
// read here: OTEL_EXPORTER_OTLP_[TRACES_]CERTIFICATE, _CLIENT_CERTIFICATE,
// _CLIENT_KEY and _TIMEOUT (milliseconds; 10 s by default).
func exportClient() (*http.Client, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if ca := otlpEnv("CERTIFICATE"); ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return nil, fmt.Errorf("tracing: the OTLP certificate: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("tracing: the OTLP certificate %s holds no PEM certificate", ca)
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool}
	}
	if cert, key := otlpEnv("CLIENT_CERTIFICATE"), otlpEnv("CLIENT_KEY"); cert != "" && key != "" {
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return nil, fmt.Errorf("tracing: the OTLP client certificate: %w", err)
		}
		if tr.TLSClientConfig == nil {
			tr.TLSClientConfig = &tls.Config{}
		}
		tr.TLSClientConfig.Certificates = []tls.Certificate{pair}
	}
	timeout := 10 * time.Second
	if v := otlpEnv("TIMEOUT"); v != "" {
		if ms, err := strconv.Atoi(v); err == nil && ms > 0 {
			timeout = time.Duration(ms) * time.Millisecond
		}
	}
	return &http.Client{
		Transport:     tr,
		Timeout:       timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}, nil
}

// otlpEnv reads OTEL_EXPORTER_OTLP_TRACES_<name>, else
// OTEL_EXPORTER_OTLP_<name>.
// HeaderSecrets returns the values of the OTLP exporter's headers
// (OTEL_EXPORTER_OTLP_HEADERS and OTEL_EXPORTER_OTLP_TRACES_HEADERS:
// "name=value,…", values percent-encoded), often an API key under a name
// that says nothing of it (x-honeycomb-team), for the caller to register
// as secrets: a collector that refuses the export may quote one in its
// answer, which the exporter's error repeats.
func HeaderSecrets() []string {
	var out []string
	for _, env := range []string{"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"} {
		for _, kv := range strings.Split(os.Getenv(env), ",") {
			_, v, ok := strings.Cut(kv, "=")
			if !ok {
				continue
			}
			v = strings.TrimSpace(v)
			if dv, err := url.PathUnescape(v); err == nil {
				v = dv
			}
			if len(v) >= record.MinSecretLen {
				out = append(out, v)
			}
		}
	}
	return out
}

func otlpEnv(name string) string {
	if v := os.Getenv("OTEL_EXPORTER_OTLP_TRACES_" + name); v != "" {
		return v
	}
	return os.Getenv("OTEL_EXPORTER_OTLP_" + name)
}
