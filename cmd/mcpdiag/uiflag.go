package main

import (
	"net"

	"github.com/spf13/pflag"
)

// strayUIAddr names the mistake behind `--ui 127.0.0.1:0`, with a blank
// instead of "=": --ui takes an optional value, so pflag gives it its bare
// default and leaves the address as a positional argument, which proxy,
// serve and matrix then refused for a reason that has nothing to do with it
// ("a server command needs --stdio", "unknown command", "put the client's
// command after --"). When --ui has its bare default (given bare, or as
// --ui=127.0.0.1:0, which pflag cannot tell apart) and the first argument
// before any "--" is a host:port, the error says how to write it; nil
// otherwise (the caller's own check follows).
func strayUIAddr(f *pflag.FlagSet, args []string, dash int) error {
	if dash >= 0 {
		args = args[:dash]
	}
	fl := f.Lookup("ui")
	if len(args) == 0 || fl == nil || !f.Changed("ui") || fl.Value.String() != fl.NoOptDefVal {
		return nil
	}
	if _, _, err := net.SplitHostPort(args[0]); err != nil {
		return nil
	}
	return usageError("%q is left over as an argument: --ui takes its address after \"=\", as in --ui=%s", args[0], args[0])
}
