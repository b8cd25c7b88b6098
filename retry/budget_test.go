package retry_test

import (
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/internal/testwait"
	"github.com/mcpdiag/mcpdiag/retry"
)

func TestBudgetDrainsAndRefills(t *testing.T) {
	b := retry.NewBudget(3, 0.1)
	for i := range 3 {
		if !b.Take() {
			t.Fatalf("take %d refused with %v tokens", i+1, b.Tokens())
		}
	}
	if b.Take() {
		t.Fatal("a drained budget allowed a retry")
	}
	if got := b.Tokens(); got != 0 {
		t.Errorf("tokens %v, want 0", got)
	}
	// Nine refunds of 0.1 are not a token; the tenth is, exactly.
	for range 9 {
		b.Deposit()
	}
	if b.Take() {
		t.Fatalf("took a retry with %v tokens", b.Tokens())
	}
	b.Deposit()
	if got := b.Tokens(); got != 1 {
		t.Errorf("tokens %v after ten refunds of 0.1, want exactly 1", got)
	}
	if !b.Take() {
		t.Fatal("a refilled budget refused a retry")
	}
	// Refunds stop at the capacity.
	for range 100 {
		b.Deposit()
	}
	if got := b.Tokens(); got != 3 {
		t.Errorf("tokens %v, want the capacity 3", got)
	}
}

func TestBudgetNil(t *testing.T) {
	var b *retry.Budget
	if !b.Take() {
		t.Error("a nil budget refused a retry")
	}
	b.Deposit()
	if !math.IsInf(b.Tokens(), 1) {
		t.Errorf("nil budget tokens %v", b.Tokens())
	}
}

func TestNewBudgetPanics(t *testing.T) {
	for _, tc := range []struct {
		capacity int
		refund   float64
	}{{0, 0.1}, {-1, 0.1}, {1, -0.1}, {1, math.NaN()}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("NewBudget(%d, %v) did not panic", tc.capacity, tc.refund)
				}
			}()
			retry.NewBudget(tc.capacity, tc.refund)
		}()
	}
}

// TestBudgetConcurrent hammers one budget from many goroutines (run with
// -race). However the calls interleave, the bucket never goes below zero or
// above its capacity, and the retries granted never exceed the capacity plus
// what the deposits paid for.
func TestBudgetConcurrent(t *testing.T) {
	const workers, rounds = 16, 500
	b := retry.NewBudget(10, 0.25)
	var taken, deposits atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range rounds {
				if (i+w)%3 == 0 {
					b.Deposit()
					deposits.Add(1)
				} else if b.Take() {
					taken.Add(1)
				}
				if tk := b.Tokens(); tk < 0 || tk > 10 {
					t.Errorf("tokens %v outside [0, 10]", tk)
				}
			}
		}()
	}
	testwait.Wait(t, &wg, "the budget's concurrent takers and depositors")
	if limit := 10 + float64(deposits.Load())*0.25; float64(taken.Load()) > limit {
		t.Errorf("%d retries granted, more than %v", taken.Load(), limit)
	}
	// Every token is accounted for: start + deposits·refund (capped) − taken.
	if left := b.Tokens(); left < 0 || float64(taken.Load())+left > 10+float64(deposits.Load())*0.25 {
		t.Errorf("%v tokens left after %d takes and %d deposits", left, taken.Load(), deposits.Load())
	}
}

// TestDecideUsesBudget: Decide takes a token per retry, fails with "retry
// budget exhausted" when none is left, and refills on healthy answers; the
// other actions cost nothing.
func TestDecideUsesBudget(t *testing.T) {
	p := retry.DefaultPolicy()
	p.Budget = retry.NewBudget(2, 0.5)
	f := retry.Facts{Safety: retry.ReadOnly, Rand: seeded()}
	for i := range 2 {
		if d := p.Decide(httpErr(503), f); d.Action != retry.Retry {
			t.Fatalf("retry %d: %s", i+1, d)
		}
	}
	d := p.Decide(httpErr(503), f)
	if d.Action != retry.Fail || !strings.Contains(d.Reason, "retry budget exhausted") {
		t.Fatalf("drained: %s", d)
	}
	// Neither a refused unsafe call, nor a reauthorization, nor a tool
	// error costs a token.
	p.Decide(httpErr(503), retry.Facts{Safety: retry.Unsafe})
	p.Decide(httpErr(401), retry.Facts{})
	if got := p.Budget.Tokens(); got != 0 {
		t.Errorf("tokens %v, want 0", got)
	}
	// Two healthy answers (a success and a tool error) refill one token.
	p.Decide(res(classify.ToolSuccess), retry.Facts{})
	p.Decide(res(classify.ToolError), retry.Facts{})
	if got := p.Budget.Tokens(); got != 1 {
		t.Errorf("tokens %v after two healthy answers, want 1", got)
	}
	if d := p.Decide(httpErr(503), f); d.Action != retry.Retry {
		t.Errorf("refilled: %s", d)
	}
}

// TestBudgetSharedAcrossCalls runs a loop of failing calls through one
// policy: with capacity 10 and no successes, at most 10 retries happen in
// all, however many calls are made.
func TestBudgetSharedAcrossCalls(t *testing.T) {
	p := retry.DefaultPolicy()
	var retries atomic.Int64
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f := retry.Facts{Safety: retry.Idempotent, Rand: seeded()}
			for {
				d := p.Decide(httpErr(502), f)
				if d.Action != retry.Retry {
					return
				}
				retries.Add(1)
				f.Count(d)
			}
		}()
	}
	testwait.Wait(t, &wg, "the concurrent deciders")
	if got := retries.Load(); got != retry.DefaultBudgetCapacity {
		t.Errorf("%d retries across 50 failing calls, want %d", got, retry.DefaultBudgetCapacity)
	}
}

// TestBudgetRefundsEveryHealthyAnswer: each outcome Decide calls done
// without a failure (judge's healthy answers) refunds the budget, the
// 2024-11-05 HTTP+SSE request the server accepted (REQUEST_ACCEPTED) and
// a 2xx to a non-request exchange (HTTP_SUCCESS) among them; a failure
// does not. Before, those two were Done but refunded nothing.
func TestBudgetRefundsEveryHealthyAnswer(t *testing.T) {
	for _, tc := range []struct {
		outcome classify.Outcome
		refund  bool
	}{
		{classify.ToolSuccess, true},
		{classify.ResultSuccess, true},
		{classify.NotificationAccepted, true},
		{classify.HTTPSuccess, true},
		{classify.RequestAccepted, true},
		{classify.ToolError, true},
		{classify.JSONRPCError, false},
	} {
		b := retry.NewBudget(1, 0.5)
		if !b.Take() {
			t.Fatal("a full budget refused a retry")
		}
		retry.Policy{Budget: b}.Decide(&classify.Result{Outcome: tc.outcome, Status: 200}, retry.Facts{})
		if got, want := b.Tokens(), map[bool]float64{true: 0.5, false: 0}[tc.refund]; got != want {
			t.Errorf("%s: tokens %v after the answer, want %v", tc.outcome, got, want)
		}
	}
}
