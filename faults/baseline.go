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
// Baseline changes nothing, so each request it is chosen for is recorded
// as passed through (no FI), unless its rules delayed it.
func (s *Baseline) Wrap(next http.Handler, env *Env) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		env.PassThrough(r, "baseline injects nothing; passed through unchanged")
		next.ServeHTTP(w, r)
	})
}
