package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mcpdiag/mcpdiag/ui"
	"github.com/spf13/cobra"
)

type uiOptions struct {
	addr string
	poll time.Duration
	// ready, when set, is called with the page's URL once it is served
	// (tests).
	ready func(url string)
}

func newUICmd() *cobra.Command {
	var o uiOptions
	var listen listenFlag
	cmd := &cobra.Command{
		Use:   "ui FILE…",
		Short: "Serve a live page over record files as they grow: every exchange with its layer, SSE timeline, retry decision and fault",
		Long: `Serves the page of docs/ui.md over record files (from call --record, proxy
--record, serve --log, matrix --record) on loopback, and prints its URL. The
URL holds an unguessable token; only direct loopback clients with a loopback
Host and Origin are served (the rule of serve's admin API). Each file is read
from its start, then followed as it grows (checked every --poll), and every
new record is pushed to the open pages as a server-sent event.

Stops cleanly on SIGINT or SIGTERM. Exit status: 0 stopped, 1 a file became
unreadable, 2 usage error.`,
		Example: `  mcpdiag proxy --upstream http://127.0.0.1:8080/mcp --record proxy.jsonl --record-bodies full &
  mcpdiag ui proxy.jsonl`,
		RunE: func(cmd *cobra.Command, args []string) error {
			var err error
			if o.addr, err = listen.value(cmd.Flags()); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runUI(ctx, cmd.OutOrStdout(), cmd.ErrOrStderr(), args, o)
		},
	}
	f := cmd.Flags()
	listen.add(f, "127.0.0.1:0", "listen address, loopback only (port 0 picks a free port; --addr is its older name)")
	f.DurationVar(&o.poll, "poll", 50*time.Millisecond, "how often each file is checked for new lines")
	return cmd
}

func runUI(ctx context.Context, stdout, stderr io.Writer, files []string, o uiOptions) error {
	if o.poll <= 0 {
		return usageError("--poll must be positive, got %v", o.poll)
	}
	err := ui.Follow(ctx, ui.FollowOptions{Files: files, Addr: o.addr, Poll: o.poll, Log: stderr, Ready: func(url string) {
		fmt.Fprintln(stdout, url)
		if o.ready != nil {
			o.ready(url)
		}
	}})
	var ie *ui.InputError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ie):
		return usageError("%s", ie.Msg)
	default:
		return &exitError{code: 1, err: err}
	}
}
