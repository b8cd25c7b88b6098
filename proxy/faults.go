package proxy

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"github.com/mcpdiag/mcpdiag/faults"
)

// The request headers that choose a fault scenario per request when
// FaultOptions.AllowHeader is on. The proxy removes them from the request it
// forwards.
const (
	HeaderScenario = "Mcpdiag-Scenario" // "a+b", as --scenario
	HeaderParams   = "Mcpdiag-Params"   // the params, JSON, as --params
)

// maxHeaderEndpoints bounds the fault endpoints made for distinct header
// selections (each has its own counters).
const maxHeaderEndpoints = 64

// FaultOptions put the fault catalogue (package faults) in front of the
// upstream: the chain is recorder → faults → reverse proxy, so records show
// what the client saw after the fault acted.
type FaultOptions struct {
	// Selection applies to every request (empty: none).
	Selection faults.Selection
	// AllowHeader lets a request choose its own selection with the
	// Mcpdiag-Scenario and Mcpdiag-Params headers; it replaces Selection for
	// that request. Off by default: a client must not be able to make the
	// proxy fail on purpose unless the operator asked for it.
	AllowHeader bool
	// Seed seeds the scenarios' schedules and delays (0: random).
	Seed uint64
}

// faultLayer holds the fault endpoints of a proxy.
type faultLayer struct {
	p    *Proxy
	opts FaultOptions
	main *faults.Endpoint
	next http.Handler

	mu     sync.Mutex
	byHead map[string]*faults.Endpoint
}

func (p *Proxy) newFaultLayer(opts FaultOptions, next http.Handler) *faultLayer {
	f := &faultLayer{p: p, opts: opts, next: next, byHead: map[string]*faults.Endpoint{}}
	if len(opts.Selection) > 0 {
		f.main = f.endpoint("proxy", opts.Selection)
	}
	return f
}

func (f *faultLayer) endpoint(name string, sel faults.Selection) *faults.Endpoint {
	return faults.NewEndpoint(sel, f.next, faults.EndpointOptions{
		Path: f.p.upstream.Path, Name: name, Seed: f.opts.Seed,
	})
}

func (f *faultLayer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ep := f.main
	if f.opts.AllowHeader {
		if spec := r.Header.Get(HeaderScenario); spec != "" {
			var err error
			ep, err = f.headerEndpoint(spec, r.Header.Get(HeaderParams))
			if err != nil {
				status := http.StatusBadRequest
				if errors.Is(err, faults.ErrUnknownScenario) {
					status = http.StatusNotFound
				}
				w.Header().Set("Content-Type", "text/plain; charset=utf-8")
				w.WriteHeader(status)
				fmt.Fprintf(w, "mcpdiag proxy: %s: %v\n", HeaderScenario, err)
				return
			}
		}
	}
	if ep == nil {
		f.next.ServeHTTP(w, r)
		return
	}
	// The endpoint tells the exchange its decision through the tap the
	// recorder put on the request's context (faults.WithTap).
	ep.ServeHTTP(w, r)
}

// headerEndpoint returns the endpoint of a header selection.
func (f *faultLayer) headerEndpoint(spec, params string) (*faults.Endpoint, error) {
	key := spec + "\x00" + params
	f.mu.Lock()
	defer f.mu.Unlock()
	if ep := f.byHead[key]; ep != nil {
		return ep, nil
	}
	var raw json.RawMessage
	if params != "" {
		raw = json.RawMessage(params)
	}
	sel, err := faults.Select(spec, raw)
	if err != nil {
		return nil, err
	}
	if len(f.byHead) >= maxHeaderEndpoints {
		for k := range f.byHead {
			delete(f.byHead, k)
			break
		}
	}
	ep := f.endpoint("header:"+spec, sel)
	f.byHead[key] = ep
	return ep, nil
}
