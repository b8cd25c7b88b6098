package faults

import (
	"context"
	"fmt"
	"net/http"
	"time"
)

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

func checkMs(param string, v int) error {
	if v < 0 {
		return fmt.Errorf("param %s: %d: must not be negative", param, v)
	}
	if v > 10*60*1000 {
		return fmt.Errorf("param %s: %d: at most 600000 (10 minutes)", param, v)
	}
	return nil
}

// runDetached runs next for a request whose client has gone away, with a
// context that is not cancelled, and discards the answer: the tool runs
// anyway, as on a server that ignores cancellation.
func runDetached(next http.Handler, r *http.Request, env *Env) {
	c := capture(next, r.WithContext(context.WithoutCancel(r.Context())))
	env.Note(r, "the tool ran anyway after %s (cancellation ignored): HTTP %d, %d bytes discarded", gone(r), c.status, c.body.Len())
}

// UncooperativeHang holds the request for HangMs before the server sees it,
// sending nothing. If the client gives up first, the request is still run
// (its answer discarded): the server ignores the cancellation. If the hang
// ends first, the answer is sent, late.
type UncooperativeHang struct {
	Rules
	HangMs int `json:"hangMs"`
}

// Validate implements Scenario.
func (s *UncooperativeHang) Validate() error { return checkMs("hangMs", s.HangMs) }

// Wrap implements Scenario.
func (s *UncooperativeHang) Wrap(next http.Handler, env *Env) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		if !sleep(r.Context(), ms(s.HangMs)) {
			env.Note(r, "%s after %s", gone(r), time.Since(start).Round(time.Millisecond))
			runDetached(next, r, env)
			return
		}
		env.Note(r, "hung for %s, then answered", ms(s.HangMs))
		next.ServeHTTP(w, r)
	})
}

// CooperativeDeadline waits DelayMs before the server handles the request.
// With HonorCancellation a client that gives up cancels the work (the tool
// does not run); without it the request runs anyway.
type CooperativeDeadline struct {
	Rules
	DelayMs           int  `json:"delayMs"`
	HonorCancellation bool `json:"honorCancellation"`
}

// Validate implements Scenario.
func (s *CooperativeDeadline) Validate() error { return checkMs("delayMs", s.DelayMs) }

// Wrap implements Scenario.
func (s *CooperativeDeadline) Wrap(next http.Handler, env *Env) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		if sleep(r.Context(), ms(s.DelayMs)) {
			next.ServeHTTP(w, r)
			return
		}
		if s.HonorCancellation {
			env.Note(r, "cancelled after %s: the tool was not run", time.Since(start).Round(time.Millisecond))
			return
		}
		runDetached(next, r, env)
	})
}

// LateResponse runs the request at once and sends the answer DelayMs later:
// the work is done, the answer is late. A client that gives up never gets
// it, though the tool ran.
type LateResponse struct {
	Rules
	DelayMs int `json:"delayMs"`
}

// Validate implements Scenario.
func (s *LateResponse) Validate() error { return checkMs("delayMs", s.DelayMs) }

// Wrap implements Scenario.
func (s *LateResponse) Wrap(next http.Handler, env *Env) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := capture(next, r.WithContext(context.WithoutCancel(r.Context())))
		if !sleep(r.Context(), ms(s.DelayMs)) {
			env.Note(r, "the tool had run (HTTP %d); %s before the late answer", c.status, gone(r))
			return
		}
		c.replay(w)
	})
}

// InitHang delays session set-up requests (initialize, server/discover)
// before the server sees them.
type InitHang struct {
	Rules
	DelayMs           int  `json:"delayMs"`
	HonorCancellation bool `json:"honorCancellation"`
}

// Validate implements Scenario.
func (s *InitHang) Validate() error { return checkMs("delayMs", s.DelayMs) }

// Wrap implements Scenario.
func (s *InitHang) Wrap(next http.Handler, env *Env) http.Handler {
	cd := &CooperativeDeadline{DelayMs: s.DelayMs, HonorCancellation: s.HonorCancellation}
	return cd.Wrap(next, env)
}
