package faults

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	"github.com/mcpdiag/mcpdiag/wire"
)

// Delay distributions.
const (
	DistFixed     = "fixed"
	DistUniform   = "uniform"
	DistNormal    = "normal"
	DistLognormal = "lognormal"
)

// Delay places.
const (
	// PlaceBeforeHeaders waits before the scenario (and the server) answer.
	PlaceBeforeHeaders = "before_headers"
	// PlaceBeforeFirstEvent sends the response headers, then waits before
	// the first body byte (the first SSE event).
	PlaceBeforeFirstEvent = "before_first_event"
	// PlaceBetweenEvents waits before every SSE event after the first (a
	// new draw for each gap). A JSON body has no events and is not delayed.
	PlaceBetweenEvents = "between_events"
)

// DefaultMaxDelayMs caps a drawn delay (normal and lognormal have long
// tails): 30 s.
const DefaultMaxDelayMs = 30000

// Delay is a seeded delay applied to the requests a scenario fires on. The
// zero Delay waits for nothing. Every wait ends early when the client goes
// away (the request context ends).
type Delay struct {
	// Dist is fixed, uniform, normal or lognormal; empty means fixed when
	// Ms is set and no delay otherwise.
	Dist string `json:"dist,omitempty"`
	// Ms is the fixed delay.
	Ms float64 `json:"ms,omitempty"`
	// MinMs and MaxMs bound the uniform distribution.
	MinMs float64 `json:"minMs,omitempty"`
	MaxMs float64 `json:"maxMs,omitempty"`
	// MeanMs and StddevMs shape the normal distribution (negative draws
	// are 0).
	MeanMs   float64 `json:"meanMs,omitempty"`
	StddevMs float64 `json:"stddevMs,omitempty"`
	// MedianMs and Sigma shape the lognormal distribution:
	// exp(ln(MedianMs) + Sigma·N(0,1)).
	MedianMs float64 `json:"medianMs,omitempty"`
	Sigma    float64 `json:"sigma,omitempty"`
	// CapMs caps every draw (DefaultMaxDelayMs when 0).
	CapMs float64 `json:"capMs,omitempty"`
	// Place is before_headers (default), before_first_event or
	// between_events.
	Place string `json:"place,omitempty"`
}

// UnmarshalJSON replaces the whole Delay.
func (d *Delay) UnmarshalJSON(b []byte) error {
	type plain Delay
	var p plain
	if err := strictUnmarshal(b, &p); err != nil {
		return fmt.Errorf("delay: %w", err)
	}
	*d = Delay(p)
	return nil
}

func (d Delay) dist() string {
	if d.Dist == "" && d.Ms > 0 {
		return DistFixed
	}
	return d.Dist
}

func (d Delay) place() string {
	if d.Place == "" {
		return PlaceBeforeHeaders
	}
	return d.Place
}

// active reports whether the delay waits at all.
func (d Delay) active() bool { return d.dist() != "" }

func (d Delay) validate() error {
	neg := func(name string, v float64) error {
		if v < 0 || math.IsNaN(v) {
			return fmt.Errorf("param delay.%s: %v: must not be negative", name, v)
		}
		return nil
	}
	for _, f := range []struct {
		n string
		v float64
	}{{"ms", d.Ms}, {"minMs", d.MinMs}, {"maxMs", d.MaxMs}, {"meanMs", d.MeanMs}, {"stddevMs", d.StddevMs}, {"medianMs", d.MedianMs}, {"sigma", d.Sigma}, {"capMs", d.CapMs}} {
		if err := neg(f.n, f.v); err != nil {
			return err
		}
	}
	switch d.dist() {
	case "":
	case DistFixed:
	case DistUniform:
		if d.MaxMs < d.MinMs {
			return fmt.Errorf("param delay.maxMs: %v is below delay.minMs %v", d.MaxMs, d.MinMs)
		}
	case DistNormal:
	case DistLognormal:
		if d.MedianMs <= 0 {
			return fmt.Errorf("param delay.medianMs: must be positive for the lognormal distribution")
		}
	default:
		return fmt.Errorf("param delay.dist: %q: want fixed, uniform, normal or lognormal", d.Dist)
	}
	switch d.place() {
	case PlaceBeforeHeaders, PlaceBeforeFirstEvent, PlaceBetweenEvents:
	default:
		return fmt.Errorf("param delay.place: %q: want before_headers, before_first_event or between_events", d.Place)
	}
	return nil
}

// draw returns one delay from the distribution.
func (d Delay) draw(rng *rand.Rand) time.Duration {
	var ms float64
	switch d.dist() {
	case DistFixed:
		ms = d.Ms
	case DistUniform:
		ms = d.MinMs + rng.Float64()*(d.MaxMs-d.MinMs)
	case DistNormal:
		ms = d.MeanMs + d.StddevMs*rng.NormFloat64()
	case DistLognormal:
		ms = math.Exp(math.Log(d.MedianMs) + d.Sigma*rng.NormFloat64())
	}
	capMs := d.CapMs
	if capMs == 0 {
		capMs = DefaultMaxDelayMs
	}
	ms = min(max(ms, 0), capMs)
	return time.Duration(ms * float64(time.Millisecond))
}

// sleep waits d or until ctx ends; it reports whether the wait completed.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// delayWriter applies a delay at the first SSE event or between events of
// what the handler writes.
type delayWriter struct {
	http.ResponseWriter
	ctx    context.Context
	place  string
	next   func() time.Duration // the next draw
	waited func(time.Duration)  // reports each wait

	wroteHeader bool
	started     bool   // first body byte handled
	sse         bool   // the body is an event stream (between_events)
	pending     []byte // bytes of an event not yet complete
	base        int64  // the stream offset of pending[0]
	scan        wire.SSEScanner
	events      int
}

func (d *delayWriter) Unwrap() http.ResponseWriter { return d.ResponseWriter }

func (d *delayWriter) WriteHeader(code int) {
	if d.wroteHeader {
		return
	}
	d.wroteHeader = true
	d.sse = strings.HasPrefix(strings.ToLower(d.Header().Get("Content-Type")), "text/event-stream")
	d.ResponseWriter.WriteHeader(code)
}

func (d *delayWriter) Write(p []byte) (int, error) {
	if !d.wroteHeader {
		d.WriteHeader(http.StatusOK)
	}
	switch d.place {
	case PlaceBeforeFirstEvent:
		if !d.started && len(p) > 0 {
			d.started = true
			_ = http.NewResponseController(d.ResponseWriter).Flush()
			w := d.next()
			d.waited(w)
			if !sleep(d.ctx, w) {
				return 0, d.ctx.Err()
			}
		}
		return d.ResponseWriter.Write(p)
	case PlaceBetweenEvents:
		if !d.sse {
			return d.ResponseWriter.Write(p)
		}
		d.pending = append(d.pending, p...)
		for _, end := range d.eventEnds(p) {
			if d.events > 0 {
				w := d.next()
				d.waited(w)
				if !sleep(d.ctx, w) {
					return 0, d.ctx.Err()
				}
			}
			if _, err := d.ResponseWriter.Write(d.pending[:end]); err != nil {
				return 0, err
			}
			_ = http.NewResponseController(d.ResponseWriter).Flush()
			d.events++
			d.pending = d.pending[end:]
		}
		return len(p), nil
	}
	return d.ResponseWriter.Write(p)
}

// Flush passes the flush on, except that a partial event stays held back.
func (d *delayWriter) Flush() {
	if !d.wroteHeader {
		d.WriteHeader(http.StatusOK)
	}
	_ = http.NewResponseController(d.ResponseWriter).Flush()
}

// finish writes what is still held back (an event the handler never
// terminated).
func (d *delayWriter) finish() {
	if len(d.pending) > 0 {
		_, _ = d.ResponseWriter.Write(d.pending)
		d.pending = nil
	}
}

// eventEnds feeds p (just appended to d.pending) to the scanner and
// returns where, in d.pending, the blocks it completes end, each counted
// from the end of the one before (the length to write, then drop). A block
// is any lines up to a blank line, events and keep-alive comments alike;
// blank lines that end nothing stay with the next block. A blank line
// ending in a CR ends its block at the CR: the LF, if it follows, goes out
// with the next.
func (d *delayWriter) eventEnds(p []byte) []int {
	var ends []int
	d.scan.Feed(p)
	for t := d.scan.Next(); t != nil; t = d.scan.Next() {
		if t.Kind == wire.SSEEnd {
			ends = append(ends, int(t.End-d.base))
			d.base = t.End
		}
	}
	return ends
}
