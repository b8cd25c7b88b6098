// Command plainproxy is proxybench's target "plain": the plain
// httputil.ReverseProxy of package plain in a process image of its own,
// standard library only, so that its live heap, and with it the number of
// collections it runs, is a plain proxy's and not the proxybench binary's
// (which links mcpdiag's packages and holds the payloads).
//
//	plainproxy UPSTREAM_URL
//
// It listens on 127.0.0.1:0, prints "listening ADDR" on stdout and serves
// until SIGTERM or the end of its stdin. With PROXYBENCH_PROFILE=DIR it
// writes DIR/plain-cpu.pprof and DIR/plain-allocs.pprof when it stops and
// its idle profiles (DIR/plain-idle-*) on SIGUSR1; PROXYBENCH_MEMPROFILERATE
// sets runtime.MemProfileRate. proxybench builds and starts it.
package main

import (
	"errors"
	"fmt"
	"net/url"
	"os"

	"github.com/mcpdiag/mcpdiag/bench/proxybench/internal/child"
	"github.com/mcpdiag/mcpdiag/bench/proxybench/internal/plain"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "plainproxy: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) != 1 {
		return errors.New("want one argument, the upstream URL")
	}
	if err := child.Setup(); err != nil {
		return err
	}
	u, err := url.Parse(args[0])
	if err != nil {
		return fmt.Errorf("upstream: %w", err)
	}
	var stop func() error
	if dir := os.Getenv(child.ProfileEnv); dir != "" {
		if stop, err = child.Profile(dir, "plain-"); err != nil {
			return err
		}
	}
	return child.Serve("plain", plain.New(u, plain.Transport()), stop)
}
