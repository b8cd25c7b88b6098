package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/mcpdiag/mcpdiag/faults"
	"github.com/mcpdiag/mcpdiag/fixture"
	"github.com/mcpdiag/mcpdiag/internal/loopback"
	"github.com/mcpdiag/mcpdiag/internal/visible"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/serve"
	"github.com/mcpdiag/mcpdiag/ui"
	"github.com/spf13/cobra"
)

type serveOptions struct {
	addr         string
	scenario     string
	params       string
	config       string
	seed         uint64
	adminToken   string
	logFile      string
	logLimit     int
	jsonResponse bool
	auth         bool

	idleTimeout       time.Duration
	readHeaderTimeout time.Duration
	uiAddr            string // --ui: the live page's address; "" for none

	// uiReady, when set (tests), is called with the live page's URL.
	uiReady func(url string)
}

func newServeCmd() *cobra.Command {
	var o serveOptions
	var listen listenFlag
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run an MCP server that fails on purpose (fault scenarios over a healthy fixture server)",
		Long: `Serves a healthy MCP server (both protocol eras on one endpoint) wrapped in fault
scenarios: --scenario on /mcp, and every scenario of the catalogue at
/s/{id}/mcp with its params in the query string. Compose with a+b.

Admin API (loopback only unless --admin-token): GET /admin/log (JSONL),
POST /admin/reset, GET|PUT /admin/scenario, GET /admin/counters,
GET /admin/scenarios. docs/scenarios.md describes every scenario;
mcpdiag scenarios lists them.

Stops cleanly on SIGINT or SIGTERM.`,
		Example: `  mcpdiag serve
  mcpdiag serve --scenario errors.http_status_sequence --params '{"statusCodes":[503,503,200]}'
  mcpdiag serve --scenario 'baseline+errors.tool_error' --params '[{"delay":{"ms":200}},{"schedule":{"every":2}}]'
  mcpdiag serve --listen 127.0.0.1:0 --seed 42 --log server.jsonl
  mcpdiag serve --auth --scenario errors.tool_error
  mcpdiag call 'http://127.0.0.1:8080/s/sse.truncated/mcp?midEvent=true' echo --args '{"text":"hi"}'`,
		Args: func(cmd *cobra.Command, args []string) error {
			if err := strayUIAddr(cmd.Flags(), args, cmd.ArgsLenAtDash()); err != nil {
				return err
			}
			return cobra.NoArgs(cmd, args)
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if o.addr, err = listen.value(cmd.Flags()); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runServe(ctx, cmd.OutOrStdout(), cmd.ErrOrStderr(), o, cmd.Flags().Changed("seed"))
		},
	}
	f := cmd.Flags()
	listen.add(f, serve.DefaultAddr, "listen address (loopback by default; port 0 picks a free port; --addr is its older name)")
	f.StringVar(&o.scenario, "scenario", "", "scenario id(s) for /mcp, composed with + (see mcpdiag scenarios)")
	f.StringVar(&o.params, "params", "", "scenario params: a JSON object (an array or an object keyed by id for a+b), or @FILE")
	f.StringVar(&o.config, "config", "", `JSON file: {"scenario": "a+b" or [{"id":…,"params":{…}}], "params": …, "seed": N}`)
	f.Uint64Var(&o.seed, "seed", 0, "seed of every schedule and delay (default: random, printed and logged)")
	f.StringVar(&o.adminToken, "admin-token", "", "require this bearer token on the admin API, and open it to non-loopback clients")
	f.StringVar(&o.uiAddr, "ui", "", "serve a live page of every log line at `ADDR` (loopback; 127.0.0.1:0 picks a port) and print its URL (docs/ui.md)")
	f.Lookup("ui").NoOptDefVal = "127.0.0.1:0"
	f.StringVar(&o.logFile, "log", "", "also append every log line (JSONL) to FILE (\"-\" for stdout; the banner then goes to stderr)")
	f.IntVar(&o.logLimit, "log-limit", serve.DefaultLogLimit, "log lines kept in memory for GET /admin/log")
	f.DurationVar(&o.idleTimeout, "idle-timeout", serve.DefaultIdleTimeout, "close a keep-alive connection after it waited this long for its next request (a response in progress is never idle; 0: never)")
	f.DurationVar(&o.readHeaderTimeout, "read-header-timeout", serve.DefaultReadHeaderTimeout, "close a connection that takes longer than this to send a request's headers (0: never)")
	f.BoolVar(&o.jsonResponse, "json-response", false, "the healthy server answers application/json instead of text/event-stream")
	f.BoolVar(&o.auth, "auth", false, "put /mcp behind the server's own OAuth 2.1 authorization server (the auth.oauth scenario, outermost; see docs/auth.md)")
	return cmd
}

// selection builds the scenarios of /mcp and the seed from the flags and
// the config file (serve.Config).
func (o serveOptions) selection(seedSet bool) (faults.Selection, uint64, error) {
	params, err := faults.ReadParams(o.params)
	if err != nil {
		return nil, 0, usageError("--params: %v", err)
	}
	var c *serve.Config
	if o.config != "" {
		if c, err = serve.ReadConfig(o.config); err != nil {
			return nil, 0, usageError("--config %v", err)
		}
	}
	sel, err := c.Selection(o.scenario, params)
	if err != nil {
		if c != nil {
			return nil, 0, usageError("--config %s: %v", o.config, err)
		}
		return nil, 0, usageError("%v", err)
	}
	return sel, c.SeedOr(o.seed, seedSet), nil
}

func runServe(ctx context.Context, out, stderr io.Writer, o serveOptions, seedSet bool) error {
	sel, seed, err := o.selection(seedSet)
	if err != nil {
		return err
	}
	if o.auth {
		if sel, err = serve.WithAuthServer(sel); err != nil {
			return usageError("--auth: %v", err)
		}
	}
	opts := serve.Options{Selection: sel, Seed: seed, AdminToken: o.adminToken, LogLimit: o.logLimit,
		IdleTimeout: flagTimeout(o.idleTimeout), ReadHeaderTimeout: flagTimeout(o.readHeaderTimeout),
		NewServer: func() http.Handler { return fixture.New(fixture.Options{JSONResponse: o.jsonResponse}) }}
	if o.adminToken != "" {
		if err := record.AddSecret(o.adminToken); err != nil {
			return usageError("--admin-token: %v", err)
		}
	}
	// A log line that cannot be written (a full disk, a closed pipe) never
	// stops the server: it is named on stderr and counted, and the exit
	// status says so.
	record.CatchSinkSignals()
	opts.OnLogLoss = record.PrintLosses(stderr, "mcpdiag serve: --log: ")
	var logFile *record.Sink
	if o.logFile != "" {
		w, err := record.OpenSink(o.logFile, record.SinkOptions{Stdout: visible.JSONWriter{W: out}})
		if err != nil {
			return usageError("--log: %v", err)
		}
		defer w.Close()
		if warn := readableByOthers("--log", o.logFile); warn != "" {
			fmt.Fprintf(stderr, "mcpdiag serve: %s\n", warn)
		}
		logFile = w
		opts.LogFile = w
	}
	var page *ui.Live
	if o.uiAddr != "" {
		page, err = ui.StartLive(o.uiAddr, "mcpdiag serve", record.Encoder{})
		if err != nil {
			return usageError("--ui %v", err)
		}
		defer page.Close()
		var primary record.LineWriter
		if logFile != nil {
			primary = logFile
		}
		opts.LogFile = ui.LineTee{Primary: primary, Page: page.Server}
		if o.uiReady != nil {
			o.uiReady(page.URL)
		}
	}
	// A bare ":PORT" means loopback here, as for the proxy: binding every
	// interface takes an explicit "0.0.0.0:PORT".
	addr, err := loopback.DefaultHost(o.addr)
	if err != nil {
		return usageError("--listen %q: %v", o.addr, err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return &exitError{code: 1, err: fmt.Errorf("listen on %s: %w", addr, err)}
	}
	s := serve.New(opts)
	name := sel.String()
	if name == "" {
		name = "none (healthy)"
	}
	// With --log - the log lines are stdout: what serve says goes to stderr.
	banner := out
	if o.logFile == "-" {
		banner = stderr
	}
	err = s.Serve(ctx, ln, func(u string) {
		base := strings.TrimSuffix(u, serve.MainPath)
		admin := "loopback only"
		if o.adminToken != "" {
			admin = "bearer token required"
		}
		fmt.Fprintf(banner, "mcpdiag serve: %s\n", u)
		fmt.Fprintf(banner, "  scenario:  %s (seed %d)\n", name, s.Seed())
		fmt.Fprintf(banner, "  per scenario: %s/s/{id}/mcp (mcpdiag scenarios lists the ids)\n", base)
		fmt.Fprintf(banner, "  admin:     %s/admin/log, /admin/reset, /admin/scenario, /admin/counters (%s)\n", base, admin)
		if o.auth {
			fmt.Fprintf(banner, "  auth:      /mcp needs an OAuth token from this server's own authorization server, %s%sN (made on the first request; a test user approves at once)\n", base, serve.OAuthPrefix)
		}
		if page != nil {
			fmt.Fprintf(banner, "  live page: %s\n", page.URL)
		}
		if !loopback.Listener(ln.Addr()) {
			fmt.Fprintf(banner, "  warning:   listening beyond loopback on %s\n", ln.Addr())
		}
	})
	var cerr error
	if logFile != nil {
		cerr = logFile.Close()
	}
	if logFile != nil || s.LogStats().Lost() > 0 {
		fmt.Fprintf(stderr, "mcpdiag serve: log: %s\n", s.LogStats())
	}
	if err != nil {
		return &exitError{code: 1, err: err}
	}
	if err := s.LogLost(); err != nil {
		return &exitError{code: 1, err: fmt.Errorf("--log: %w", err)}
	}
	if cerr != nil {
		return &exitError{code: 1, err: fmt.Errorf("--log: %w", cerr)}
	}
	fmt.Fprintln(banner, "mcpdiag serve: stopped")
	return nil
}

// flagTimeout maps a timeout flag to a library option: the flag's 0 (or a
// negative value) means "never", the option's 0 means "the default".
func flagTimeout(d time.Duration) time.Duration {
	if d <= 0 {
		return -1
	}
	return d
}
