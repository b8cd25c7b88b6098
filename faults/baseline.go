package faults

import "net/http"

// Baseline injects nothing: the request reaches the healthy server, after
// the optional delay of its rules.
type Baseline struct {
	Rules
}

// Validate implements Scenario.
func (s *Baseline) Validate() error { return nil }

// Wrap implements Scenario.
func (s *Baseline) Wrap(next http.Handler, _ *Env) http.Handler { return next }
