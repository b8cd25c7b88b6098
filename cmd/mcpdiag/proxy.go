package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/mcpdiag/mcpdiag/internal/loopback"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mcpdiag/mcpdiag/faults"
	"github.com/mcpdiag/mcpdiag/internal/visible"
	"github.com/mcpdiag/mcpdiag/proxy"
	"github.com/mcpdiag/mcpdiag/proxy/metrics"
	"github.com/mcpdiag/mcpdiag/proxy/tracing"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/ui"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"
)

// defaultProxyListen is where the proxy listens unless told otherwise:
// loopback only.
const defaultProxyListen = "127.0.0.1:8081"

type proxyOptions struct {
	upstream          string
	listen            string
	stdio             bool
	recordFile        string
	recordBodies      string
	bodyLimit         int
	queue             int
	queuePolicy       string
	fsync             string
	preserveHost      bool
	maxEventSize      int
	classifyMemory    int64
	scenario          string
	params            string
	seed              uint64
	allowFaultHeader  bool
	forwardAdmin      bool
	stdioFault        string
	metricsAddr       string
	otlp              string
	shutdownTimeout   time.Duration
	idleTimeout       time.Duration
	readHeaderTimeout time.Duration
	uiAddr            string // --ui: the live page's address; "" for none

	// uiReady, when set (tests), is called with the live page's URL.
	uiReady func(url string)
	// ready, when set (tests), is called with the proxy's URL once it
	// listens.
	ready func(proxyURL, metricsURL string)
	// signals, when set (tests), replaces the process's signals.
	signals chan os.Signal
}

func newProxyCmd() *cobra.Command {
	var o proxyOptions
	cmd := &cobra.Command{
		Use:   "proxy --upstream URL | proxy --stdio -- COMMAND [ARGS…]",
		Short: "Sit between an MCP client and server, change nothing, and record every exchange with its layer",
		Long: `A byte-transparent recording proxy. In HTTP mode it forwards every request to
--upstream and the response back exactly as the upstream sent it (SSE event by
event, as it arrives); in stdio mode it starts the server command and passes
stdin and stdout through line by line. Either way it writes one classified
record per exchange (--record FILE) without slowing or altering the traffic.

Host: the upstream's host is sent as Host (as a client talking to it directly
would); --preserve-host forwards the client's instead. go-sdk servers on a
loopback address refuse a non-loopback Host with 403.

Admin paths: /admin and below are answered 403 by the proxy (an upstream's
loopback-only admin API, such as mcpdiag serve's, would take the proxy for a
local client); --forward-admin forwards them with a Via header, and mcpdiag
serve then wants its --admin-token.

Paths: a request path is forwarded as it is (point the client at the proxy with
the upstream's path, e.g. http://127.0.0.1:8081/mcp); only "/" maps to the
upstream URL's own path.

Upstream failures: a refused connection (or DNS, TLS, connect timeout) is
answered 502 (504 for a timeout) with a Proxy-Status header (RFC 9209); an
upstream that drops the connection before responding has the client's
connection dropped too; a response cut mid-stream reaches the client cut.

Faults: --scenario applies a scenario of the fault catalogue (mcpdiag
scenarios) to the real upstream's traffic; with --allow-fault-header a request
may pick its own with the Mcpdiag-Scenario (and Mcpdiag-Params) header. In
stdio mode --scenario takes the stdio scenarios (stdio.delay, stdio.drop,
stdio.garbage, stdio.exit), with --params and --seed as over HTTP; the older
--stdio-fault delay=500ms|drop|garbage|exit[,tool=NAME][,method=M][,times=N]
is an alias (docs/scenarios.md has the table).

Metrics: --metrics ADDR serves Prometheus /metrics. Traces: OTLP over HTTP to
--otlp URL or $OTEL_EXPORTER_OTLP_ENDPOINT. Both are off by default.

Records: a record that cannot be written (a full disk, a closed --record -
pipe) never stops the forwarding; each one is named on stderr, and the last
line counts the records written and lost.

Shutdown (HTTP): on SIGINT or SIGTERM the proxy says it is shutting down,
accepts nothing new and lets open exchanges finish for --shutdown-timeout;
then, or at once on a second signal, it cuts them. Their records say the
shutdown cut them.

Exit status: 0 after a clean shutdown (HTTP; 128+N when a second signal N
stopped it at once) or the server's own exit code (stdio; 128+N when a signal
N killed it), 1 when the proxy failed or a record was lost, 2 usage.`,
		Example: `  mcpdiag proxy --upstream https://mcp.example.com/mcp --record calls.jsonl
  mcpdiag proxy --upstream http://127.0.0.1:8080/mcp --listen 127.0.0.1:9000 --metrics 127.0.0.1:9464
  mcpdiag proxy --upstream http://127.0.0.1:8080/mcp --scenario sse.truncated --record chaos.jsonl
  mcpdiag proxy --stdio --record calls.jsonl -- npx -y @modelcontextprotocol/server-everything
  mcpdiag proxy --stdio --scenario stdio.drop --record calls.jsonl -- ./my-server --flag
  mcpdiag proxy --stdio --stdio-fault garbage,tool=echo -- ./my-server --flag`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := strayUIAddr(cmd.Flags(), args, cmd.ArgsLenAtDash()); err != nil {
				return err
			}
			if dash := cmd.ArgsLenAtDash(); dash > 0 {
				return usageError("unexpected arguments before --: %q", args[:dash])
			}
			return runProxy(cmd.Context(), cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr(), args, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.upstream, "upstream", "", "the MCP endpoint to forward to (HTTP mode)")
	f.StringVar(&o.listen, "listen", defaultProxyListen, "listen address (an address without a host binds 127.0.0.1; port 0 picks a free port)")
	f.BoolVar(&o.stdio, "stdio", false, "wrap a stdio server: the command and its arguments follow --")
	f.StringVar(&o.uiAddr, "ui", "", "serve a live page of every exchange at `ADDR` (loopback; 127.0.0.1:0 picks a port) and print its URL (docs/ui.md)")
	f.Lookup("ui").NoOptDefVal = "127.0.0.1:0"
	f.StringVar(&o.recordFile, "record", "", "append one record (JSONL) per exchange to FILE (\"-\" for stdout, HTTP mode only)")
	f.StringVar(&o.recordBodies, "record-bodies", string(proxy.BodiesErrors), "bodies in records: none, errors (response bodies of failed exchanges), all, or full (complete bytes with SSE arrival times)")
	f.IntVar(&o.bodyLimit, "record-body-limit", 0, "cap of each recorded body in bytes (default 1 MiB; 3 MiB with full); forwarded bodies are never capped")
	f.IntVar(&o.queue, "record-queue", record.DefaultQueueSize, "records queued for the writer goroutine")
	f.StringVar(&o.queuePolicy, "record-queue-policy", string(record.QueueBlock), "when the record queue is full: block (lose no record; the recorder waits, the forwarding does not) or drop (count them)")
	f.StringVar(&o.fsync, "fsync", string(record.SyncClose), "when --record syncs to disk: close, always or never")
	f.BoolVar(&o.forwardAdmin, "forward-admin", false, "forward /admin/ paths to the upstream (with Via: "+proxy.ViaValue+"); off: the proxy answers them 403, so an upstream's loopback-only admin API stays local")
	f.BoolVar(&o.preserveHost, "preserve-host", false, "forward the client's Host header instead of the upstream's")
	f.IntVar(&o.maxEventSize, "max-event-size", 0, "largest JSON body or SSE event the classifier holds (default 16 MiB); bounds memory per stream")
	f.Int64Var(&o.classifyMemory, "classify-memory", proxy.DefaultClassifyMemory, "memory all in-flight classifications may hold at once, in bytes; past it an exchange is forwarded untouched and recorded NOT_CLASSIFIED (negative: no overall bound)")
	f.StringVar(&o.scenario, "scenario", "", "fault scenario id(s) applied to the server's traffic, composed with + (stdio mode: the stdio.* scenarios)")
	f.StringVar(&o.params, "params", "", "scenario params: a JSON object (or array for a+b), or @FILE")
	f.Uint64Var(&o.seed, "seed", 0, "seed of the scenarios' schedules and delays (default: random, noted in records)")
	f.BoolVar(&o.allowFaultHeader, "allow-fault-header", false, "let a request choose a scenario with the "+proxy.HeaderScenario+" header (off: clients cannot inject faults)")
	f.StringVar(&o.stdioFault, "stdio-fault", "", "stdio mode: an alias of --scenario stdio.*: delay=DURATION, drop, garbage or exit, then ,tool=NAME ,method=M ,line=TEXT ,times=N")
	f.StringVar(&o.metricsAddr, "metrics", "", "serve Prometheus metrics at http://ADDR/metrics (an address without a host binds 127.0.0.1)")
	f.StringVar(&o.otlp, "otlp", "", "export traces with OTLP/HTTP to this URL (default: $OTEL_EXPORTER_OTLP_ENDPOINT when set; otherwise no traces)")
	f.DurationVar(&o.idleTimeout, "idle-timeout", proxy.DefaultIdleTimeout, "close a client's keep-alive connection after it waited this long for its next request (a stream in progress is never idle; 0: never)")
	f.DurationVar(&o.readHeaderTimeout, "read-header-timeout", proxy.DefaultReadHeaderTimeout, "close a client's connection that takes longer than this to send a request's headers (0: never)")
	f.DurationVar(&o.shutdownTimeout, "shutdown-timeout", 5*time.Second, "on SIGINT/SIGTERM, how long open streams may finish before they are cut (a second signal cuts them at once)")
	return cmd
}

func runProxy(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer, args []string, o proxyOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	bodies, err := proxy.ParseBodyMode(o.recordBodies)
	if err != nil {
		return usageError("--record-bodies: %v", err)
	}
	policy, err := record.ParseQueuePolicy(o.queuePolicy)
	if err != nil {
		return usageError("--record-queue-policy: %v", err)
	}
	syncPolicy, err := record.ParseSyncPolicy(o.fsync)
	if err != nil {
		return usageError("--fsync: %v", err)
	}
	if o.bodyLimit < 0 || o.maxEventSize < 0 || o.queue < 0 {
		return usageError("--record-body-limit, --max-event-size and --record-queue must not be negative")
	}
	if o.stdio {
		if o.upstream != "" || o.allowFaultHeader || o.preserveHost {
			return usageError("--stdio takes the server command after --; --upstream, --allow-fault-header and --preserve-host are for HTTP mode")
		}
		if o.stdioFault != "" && (o.scenario != "" || o.params != "") {
			return usageError("--stdio-fault is an alias of --scenario (with its params in the spec): give one or the other")
		}
		if len(args) == 0 {
			return usageError("--stdio needs the server command after --, e.g. mcpdiag proxy --stdio -- npx some-server")
		}
		if o.recordFile == "-" {
			return usageError("--record -: in stdio mode stdout carries the protocol; give a file")
		}
	} else {
		if len(args) > 0 {
			return usageError("unexpected arguments %q (a server command needs --stdio)", args)
		}
		if o.upstream == "" {
			return usageError("--upstream URL is required (or --stdio -- COMMAND)")
		}
		if o.stdioFault != "" {
			return usageError("--stdio-fault is for stdio mode; use --scenario in HTTP mode")
		}
	}
	enc := record.Encoder{BodyLimit: bodies.Limit(o.bodyLimit)}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))

	// Records: opened before anything starts, so a bad path fails first.
	// A sink that fails (a full disk, a closed pipe, a record that cannot
	// be encoded) never stops the forwarding: every lost record is named
	// on stderr and counted, and the exit status says so.
	record.CatchSinkSignals() // also for stdio mode's stdout, records or not
	var sink *record.Sink
	var pageLive atomic.Pointer[ui.Server] // --ui with --record: fed by the sink's Tee
	if o.recordFile != "" {
		so := record.SinkOptions{Stdout: visible.JSONWriter{W: stdout}, Sync: syncPolicy, Encoder: enc,
			Async: true, QueueSize: o.queue, Policy: policy, OnLoss: record.PrintLosses(stderr, "mcpdiag proxy: ")}
		if o.uiAddr != "" {
			// The live page gets the lines the file got, from the
			// writer goroutine: no second encode on the recorder's path.
			so.Tee = func(line []byte) {
				if p := pageLive.Load(); p != nil {
					_ = p.WriteLine(line)
				}
			}
		}
		sink, err = record.OpenSink(o.recordFile, so)
		if err != nil {
			return usageError("--record: %v", err)
		}
		if w := readableByOthers("--record", o.recordFile); w != "" {
			fmt.Fprintf(stderr, "mcpdiag proxy: %s\n", w)
		}
	}
	closeSink := func() error {
		if sink == nil {
			return nil
		}
		if err := sink.Close(); err != nil {
			return fmt.Errorf("--record: %w", err)
		}
		return nil
	}

	// Observers: metrics and traces, only when asked for.
	var observers proxy.Observers
	var stats func() proxy.Stats
	var metricsSrv *http.Server
	var metricsLn net.Listener
	if o.metricsAddr != "" {
		addr, err := loopback.DefaultHost(o.metricsAddr)
		if err != nil {
			closeSink()
			return usageError("--metrics %q: %v", o.metricsAddr, err)
		}
		reg := prometheus.NewRegistry()
		mo := metrics.Options{InFlight: func() int64 {
			if stats == nil {
				return 0
			}
			return stats().InFlight
		}}
		if sink != nil {
			mo.RecordsDropped = sink.Dropped
			mo.RecordErrors = func() int64 { st := sink.Stats(); return st.Lost() - st.Dropped }
		}
		m, err := metrics.New(reg, mo)
		if err != nil {
			closeSink()
			return err
		}
		observers = append(observers, m)
		metricsLn, err = net.Listen("tcp", addr)
		if err != nil {
			closeSink()
			return &exitError{code: 1, err: fmt.Errorf("--metrics: %w", err)}
		}
		// The DNS-rebinding check of a loopback listener is the
		// handler's own.
		metricsSrv = metrics.NewServer(reg)
		go func() { _ = metricsSrv.Serve(metricsLn) }()
		defer metricsSrv.Close()
	}
	otlp := o.otlp
	if otlp == "" && (os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "") {
		otlp = "env"
	}
	if otlp != "" {
		endpoint := o.otlp
		// The exporter's headers are secrets (an API key), and its
		// errors (a collector's refusal, which may quote the key) go
		// to stderr through the OpenTelemetry error handler: scrubbed
		// there, as every other output is.
		for _, v := range tracing.HeaderSecrets() {
			_ = record.AddSecret(v)
		}
		otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
			fmt.Fprintln(stderr, "mcpdiag proxy: "+record.Scrub(oneLine(err.Error())))
		}))
		tp, err := tracing.Setup(ctx, endpoint)
		if err != nil {
			closeSink()
			return usageError("--otlp: %v", err)
		}
		defer func() {
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = tp.Shutdown(sctx)
		}()
		observers = append(observers, tracing.New(trace.TracerProvider(tp)))
	}
	var observer proxy.Observer
	if len(observers) > 0 {
		observer = observers
	}
	var records proxy.Sink
	if sink != nil {
		records = sink
	}
	if o.uiAddr != "" {
		// The page sees each record as the record file does (the same
		// encoder, so the same redaction), after it was handed to it.
		page, err := ui.StartLive(o.uiAddr, "mcpdiag proxy", enc)
		if err != nil {
			closeSink()
			return usageError("--ui %v", err)
		}
		defer page.Close()
		fmt.Fprintf(stderr, "mcpdiag proxy: live page at %s\n", page.URL)
		if o.uiReady != nil {
			o.uiReady(page.URL)
		}
		if sink != nil {
			pageLive.Store(page.Server)
		} else {
			records = ui.RecordTee{Page: page.Server} // no file: the page encodes each record once
		}
	}

	summary := func() string {
		if sink == nil {
			return ""
		}
		return "; " + sink.Stats().String()
	}
	if o.stdio {
		return runStdioProxy(ctx, stdin, stdout, stderr, args, o, bodies, o.bodyLimit, records, observer, logger, closeSink, summary)
	}
	return runHTTPProxy(ctx, stderr, o, bodies, records, observer, logger, closeSink, summary, &stats, metricsLn)
}

func runHTTPProxy(ctx context.Context, stderr io.Writer, o proxyOptions, bodies proxy.BodyMode, records proxy.Sink,
	observer proxy.Observer, logger *slog.Logger, closeSink func() error, summary func() string, stats *func() proxy.Stats, metricsLn net.Listener) error {
	up, err := url.Parse(o.upstream)
	if err != nil || (up.Scheme != "http" && up.Scheme != "https") || up.Host == "" {
		closeSink()
		return usageError("--upstream %q: want an http:// or https:// URL", o.upstream)
	}
	opts := proxy.Options{
		Upstream: up, Records: records, Bodies: bodies, BodyLimit: o.bodyLimit, MaxEventSize: o.maxEventSize, ClassifyMemory: o.classifyMemory,
		PreserveHost: o.preserveHost, Observer: observer, Logger: logger, ForwardAdmin: o.forwardAdmin,
		ReadHeaderTimeout: flagTimeout(o.readHeaderTimeout), IdleTimeout: flagTimeout(o.idleTimeout),
	}
	if o.scenario != "" || o.allowFaultHeader {
		params, err := faults.ReadParams(o.params)
		if err != nil {
			closeSink()
			return usageError("--params: %v", err)
		}
		sel, err := faults.Select(o.scenario, params)
		if err != nil {
			closeSink()
			return usageError("--scenario: %v", err)
		}
		opts.Faults = &proxy.FaultOptions{Selection: sel, AllowHeader: o.allowFaultHeader, Seed: o.seed}
	} else if o.params != "" {
		closeSink()
		return usageError("--params needs --scenario")
	}
	// A second signal during the shutdown closes cutNow (after setting
	// forced): the open exchanges are cut at once.
	cutNow := make(chan struct{})
	var forced os.Signal
	opts.Shutdown = proxy.ShutdownOptions{Timeout: flagTimeout(o.shutdownTimeout), CutNow: cutNow, OnShutdown: func(ev proxy.ShutdownEvent) {
		switch ev.Stage {
		case proxy.ShutdownBegin:
			why := "stopping"
			var sc signalCause
			if errors.As(ev.Cause, &sc) {
				why = sc.sig.String()
			}
			fmt.Fprintf(stderr, "mcpdiag proxy: %s: shutting down; no new connections, %d open exchanges get up to %s to finish (a second signal stops at once)\n",
				why, ev.InFlight, o.shutdownTimeout)
		case proxy.ShutdownTimedOut:
			fmt.Fprintf(stderr, "mcpdiag proxy: %s passed; cutting %d open exchanges\n", o.shutdownTimeout, ev.InFlight)
		case proxy.ShutdownCut:
			fmt.Fprintf(stderr, "mcpdiag proxy: %s again: stopping now; cutting %d open exchanges\n", forced, ev.InFlight)
		}
	}}
	p, err := proxy.New(opts)
	if err != nil {
		closeSink()
		return usageError("%v", err)
	}
	*stats = p.Stats
	addr, err := loopback.DefaultHost(o.listen)
	if err != nil {
		closeSink()
		return usageError("--listen %q: %v", o.listen, err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		closeSink()
		return &exitError{code: 1, err: fmt.Errorf("--listen: %w", err)}
	}
	// The DNS-rebinding check of a loopback listener is the proxy's own
	// (proxy.Options.AllowForeignHost).
	path := up.EscapedPath()
	if path == "" {
		path = "/"
	}
	proxyURL := "http://" + ln.Addr().String() + path
	fmt.Fprintf(stderr, "mcpdiag proxy: %s → %s\n", proxyURL, record.RedactURL(o.upstream))
	if w := beyondLoopback("--listen", ln.Addr()); w != "" {
		fmt.Fprintf(stderr, "mcpdiag proxy: %s\n", w)
	}
	metricsURL := ""
	if metricsLn != nil {
		metricsURL = "http://" + metricsLn.Addr().String() + "/metrics"
		fmt.Fprintf(stderr, "mcpdiag proxy: metrics at %s\n", metricsURL)
		if w := beyondLoopback("--metrics", metricsLn.Addr()); w != "" {
			fmt.Fprintf(stderr, "mcpdiag proxy: %s\n", w)
		}
	}
	if o.ready != nil {
		o.ready(proxyURL, metricsURL)
	}

	// The first signal (or the end of ctx) starts the shutdown, a second
	// one cuts the open exchanges at once: proxy.Proxy.Serve holds the
	// order (stop accepting, drain, cut, flush and close the records).
	sigs := o.signals
	if sigs == nil {
		sigs = make(chan os.Signal, 2)
		signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
		defer signal.Stop(sigs)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	served, watched := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(watched)
		select {
		case s := <-sigs:
			cancel(signalCause{s})
		case <-ctx.Done():
		case <-served:
			return
		}
		select {
		case forced = <-sigs:
			close(cutNow)
		case <-served:
		}
	}()
	serveErr := p.Serve(ctx, ln)
	close(served)
	<-watched
	st := p.Stats()
	fmt.Fprintf(stderr, "mcpdiag proxy: %d exchanges", st.Exchanges)
	if st.UpstreamErrors+st.UpstreamResets+st.ClientGone+st.CutByShutdown > 0 {
		fmt.Fprintf(stderr, " (%d upstream failures, %d cut by the upstream, %d left by the client", st.UpstreamErrors, st.UpstreamResets, st.ClientGone)
		if st.CutByShutdown > 0 {
			fmt.Fprintf(stderr, ", %d cut by the shutdown", st.CutByShutdown)
		}
		fmt.Fprint(stderr, ")")
	}
	if st.ClosedByShutdown > 0 {
		// Not cut: their records hold their verdicts (report counts
		// them so too).
		fmt.Fprintf(stderr, "; %d closed by the shutdown after their answer began (an open event stream, say): not cut, judged by what came", st.ClosedByShutdown)
	}
	fmt.Fprint(stderr, summary())
	if st.InFlight > 0 {
		fmt.Fprintf(stderr, "; %d exchanges still open at exit have no record", st.InFlight)
	}
	fmt.Fprintln(stderr)
	switch {
	case serveErr != nil:
		return &exitError{code: 1, err: serveErr}
	case forced != nil:
		code := 130
		if s, ok := forced.(syscall.Signal); ok {
			code = 128 + int(s)
		}
		return &exitError{code: code, err: errSilent}
	}
	return nil
}

func runStdioProxy(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer, args []string, o proxyOptions, bodies proxy.BodyMode,
	bodyLimit int, records proxy.Sink, observer proxy.Observer, logger *slog.Logger, closeSink func() error, summary func() string) error {
	opts := proxy.StdioOptions{
		Command: args[0], Args: args[1:], Stdin: stdin, Stdout: stdout, Stderr: stderr,
		Records: records, Bodies: bodies, BodyLimit: bodyLimit, MaxLineSize: o.maxEventSize, Observer: observer, Logger: logger,
	}
	switch {
	case o.stdioFault != "":
		sel, err := faults.ParseStdioAlias(o.stdioFault)
		if err != nil {
			closeSink()
			return usageError("--stdio-fault: %v", err)
		}
		opts.Faults = &proxy.FaultOptions{Selection: sel, Seed: o.seed}
	case o.scenario != "":
		params, err := faults.ReadParams(o.params)
		if err != nil {
			closeSink()
			return usageError("--params: %v", err)
		}
		sel, err := faults.SelectStdio(o.scenario, params)
		if err != nil {
			closeSink()
			return usageError("--scenario: %v", err)
		}
		opts.Faults = &proxy.FaultOptions{Selection: sel, Seed: o.seed}
	case o.params != "":
		closeSink()
		return usageError("--params needs --scenario")
	}
	sigs := o.signals
	if sigs == nil {
		sigs = make(chan os.Signal, 4)
		signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
		defer signal.Stop(sigs)
	}
	opts.Signals = sigs
	res, err := proxy.RunStdio(ctx, opts)
	cerr := closeSink()
	if err != nil && res == nil {
		var start *proxy.StartError
		if errors.As(err, &start) {
			// A server command that cannot start is bad input: one
			// line naming it, exit 2 (docs/decisions.md, mend21).
			return usageError("%v", err)
		}
		return &exitError{code: 1, err: err}
	}
	if records != nil {
		fmt.Fprintf(stderr, "mcpdiag proxy: %d exchanges%s\n", res.Exchanges, summary())
	}
	if cerr != nil {
		fmt.Fprintln(stderr, "mcpdiag proxy:", cerr)
	}
	switch {
	case res.Signal != 0:
		return &exitError{code: 128 + int(res.Signal), err: errSilent}
	case res.ExitCode != 0:
		return &exitError{code: res.ExitCode, err: errSilent}
	case cerr != nil:
		return &exitError{code: 1, err: errSilent}
	}
	return nil
}

// beyondLoopback is the warning for a listener of flag that is not on a
// loopback address, "" for one that is. Beyond loopback the DNS-rebinding
// check does not apply (it is the defence of a loopback listener), so every
// host that can reach the address can use it: the proxy forwards its
// requests, with the credentials of whoever configured the upstream, and
// /metrics shows the traffic.
func beyondLoopback(flag string, addr net.Addr) string {
	if loopback.Listener(addr) {
		return ""
	}
	return fmt.Sprintf("warning: %s %s is beyond loopback: any host that reaches it can use it, and the loopback Host/Origin check does not apply there", flag, addr)
}
