package main

import (
	"fmt"
	"io"
	"sync"

	"github.com/mcpdiag/mcpdiag/record"
)

// maxNamedLosses is how many lost records a command names one by one on
// stderr; past it they are counted, and the summary line gives the count.
const maxNamedLosses = 20

// lossReporter names lost records on stderr: the first maxNamedLosses, then
// one line saying that later ones are only counted.
type lossReporter struct {
	w      io.Writer
	prefix string // "mcpdiag proxy: "

	mu sync.Mutex
	n  int
}

// report is a record.AsyncOptions.OnLoss.
func (r *lossReporter) report(l record.Loss) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.n++
	switch {
	case r.n <= maxNamedLosses:
		fmt.Fprintf(r.w, "%s%s\n", r.prefix, l)
	case r.n == maxNamedLosses+1:
		fmt.Fprintf(r.w, "%smore than %d records lost; later losses are counted, not named\n", r.prefix, maxNamedLosses)
	}
}
