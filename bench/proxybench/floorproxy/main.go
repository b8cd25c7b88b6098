// Command floorproxy is proxybench's target "floor": the plain reverse
// proxy of the target "plain" plus only what a recording proxy cannot skip
// (package floor: the request parsed once, every response byte scanned
// once as it is forwarded and classified, one redacted record per exchange
// appended to a file as the CLI's default writes it), in a process image
// of its own, for the cost of the guarantees without mcpdiag's design
// around them (docs/benchmarks.md, ssefloor19).
//
//	floorproxy UPSTREAM_URL RECORD_FILE
//
// It listens on 127.0.0.1:0, prints "listening ADDR" on stdout and serves
// until SIGTERM or the end of its stdin, then writes the last records and
// closes the file (an error when a record was lost). With
// PROXYBENCH_PROFILE=DIR it writes DIR/floor-cpu.pprof and
// DIR/floor-allocs.pprof when it stops and its idle profiles
// (DIR/floor-idle-*) on SIGUSR1; PROXYBENCH_MEMPROFILERATE sets
// runtime.MemProfileRate. proxybench builds and starts it.
package main

import (
	"errors"
	"fmt"
	"net/url"
	"os"

	"github.com/mcpdiag/mcpdiag/bench/proxybench/internal/child"
	"github.com/mcpdiag/mcpdiag/bench/proxybench/internal/floor"
	"github.com/mcpdiag/mcpdiag/bench/proxybench/internal/plain"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "floorproxy: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) != 2 {
		return errors.New("want two arguments, the upstream URL and the record file")
	}
	if err := child.Setup(); err != nil {
		return err
	}
	u, err := url.Parse(args[0])
	if err != nil {
		return fmt.Errorf("upstream: %w", err)
	}
	p, closeRecords, err := floor.Open(u, plain.Transport(), args[1])
	if err != nil {
		return err
	}
	stopProfile := func() error { return nil }
	if dir := os.Getenv(child.ProfileEnv); dir != "" {
		if stopProfile, err = child.Profile(dir, "floor-"); err != nil {
			return err
		}
	}
	return child.Serve("floor", p, func() error {
		perr := stopProfile()
		return errors.Join(closeRecords(), perr)
	})
}
