package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestReportAgainstBase: in the table of mcpdiag against the base binary,
// each column compares the two binaries, the first event's p99 too (the
// column once printed mcpdiag's against direct's). Round results are made
// up: the table is arithmetic on them.
func TestReportAgainstBase(t *testing.T) {
	ms := time.Millisecond
	res := func(p99, ttfe99 time.Duration) result {
		return result{requests: 1000, elapsed: time.Second, p50: ms, p99: p99, ttfe50: ms, ttfe99: ttfe99, cpu: 100 * ms}
	}
	results := map[string]map[string][]result{"sse/1": {
		"direct":  {res(2*ms, 1*ms)},
		"plain":   {res(3*ms, 2*ms)},
		"mcpdiag": {res(4*ms, 3*ms)},
		"base":    {res(5*ms, 7*ms)},
	}}
	var order []*target
	for _, n := range []string{"direct", "plain", "mcpdiag", "base"} {
		order = append(order, &target{name: n})
	}
	var out bytes.Buffer
	report(&out, &config{rounds: 1, workloads: []string{"sse/1"}}, order, results, nil, "0", "0", time.Second, nil)
	text := out.String()
	i := strings.Index(text, "mcpdiag proxy against mcpdiag proxy (base, -base)")
	if i < 0 {
		t.Fatalf("no table of mcpdiag against base:\n%s", text)
	}
	var row string
	for _, l := range strings.Split(text[i:], "\n") {
		if strings.HasPrefix(l, "| sse/1 |") {
			row = l
			break
		}
	}
	// mcpdiag − base: p99 4 − 5 ms, first event p99 3 − 7 ms (against
	// direct it would be +2000 µs).
	if !strings.Contains(row, "| -1000 µs |") || !strings.HasSuffix(row, "| -4000 µs |") {
		t.Errorf("mcpdiag against base: %q, want p99 difference -1000 µs and first event p99 difference -4000 µs", row)
	}
}
