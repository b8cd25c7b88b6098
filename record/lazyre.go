package record

import (
	"regexp"
	"sync"
	"sync/atomic"
)

// lazyRE is a regular expression compiled on its first use, so that a
// process whose strings never reach it (the proxy's records: the gate of
// redact_gate.go keeps them from the patterns) never holds its program.
// The name patterns' counted repetitions ({1,200}) compile into programs
// of 25–42 KB each, about 150 KB for all of them: live heap that every
// garbage collection cycle scans and that, under the runtime's 4 MB
// minimum heap goal, costs cycles (docs/benchmarks.md, "liveheap").
type lazyRE struct {
	expr string
	once sync.Once
	re   atomic.Pointer[regexp.Regexp]
}

// lazyREs lists every lazyRE, for the tests (each must compile; the
// proxy's records must compile none).
var lazyREs []*lazyRE

// lazyRegexp returns expr to be compiled on first use. It is called only
// in the initialization of package variables, so lazyREs needs no lock.
func lazyRegexp(expr string) *lazyRE {
	l := &lazyRE{expr: expr}
	lazyREs = append(lazyREs, l)
	return l
}

// get returns the compiled expression, compiling it on the first call
// (regexp.MustCompile: TestLazyREsCompile compiles each one).
func (l *lazyRE) get() *regexp.Regexp {
	if re := l.re.Load(); re != nil {
		return re
	}
	l.once.Do(func() { l.re.Store(regexp.MustCompile(l.expr)) })
	return l.re.Load()
}

// compiled reports whether get has compiled the expression.
func (l *lazyRE) compiled() bool { return l.re.Load() != nil }
