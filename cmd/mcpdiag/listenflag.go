package main

import "github.com/spf13/pflag"

// listenFlag is the listen address of serve and ui: --listen, the name the
// proxy has always used, and --addr, their older name, kept as an alias.
type listenFlag struct{ listen, addr string }

// add registers --listen with def and usage, and --addr as its alias.
func (l *listenFlag) add(f *pflag.FlagSet, def, usage string) {
	f.StringVar(&l.listen, "listen", def, usage)
	f.StringVar(&l.addr, "addr", def, "alias of --listen")
}

// value returns the address given with either name; both names with two
// different addresses are a usage error.
func (l *listenFlag) value(f *pflag.FlagSet) (string, error) {
	if !f.Changed("addr") {
		return l.listen, nil
	}
	if f.Changed("listen") && l.listen != l.addr {
		return "", usageError("--listen %q and --addr %q: --addr is an alias of --listen; give one address", l.listen, l.addr)
	}
	return l.addr, nil
}
