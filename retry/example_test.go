package retry_test

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/retry"
)

// A 502 after the request was sent: a read-only tool is retried with a
// jittered backoff, a tool of unknown safety is not, because the first call
// may have run.
func ExamplePolicy_Decide() {
	p := retry.DefaultPolicy()
	res := &classify.Result{Outcome: classify.HTTPError, Status: http.StatusBadGateway}
	res.SetMethod("tools/call")

	d := p.Decide(res, retry.Facts{Safety: retry.ReadOnly, Rand: rand.New(rand.NewPCG(1, 2))})
	fmt.Println(d.Action, d.Delay)

	d = p.Decide(res, retry.Facts{Safety: retry.Unknown})
	fmt.Println(d.Action)
	fmt.Println(d.Reason)
	// Output:
	// retry 153.874654ms
	// fail
	// not retried: HTTP 502 Bad Gateway; unknown whether the tool ran, because the request may have reached the server, and nothing says the call is safe to repeat (not known to be read-only or idempotent, and no idempotency key), so a retry could run it twice (mark the call safe or give it an idempotency key to allow retries)
}

// A 429 with Retry-After: the server's wait replaces the backoff, for any
// tool, since the server turned the request away. A wait over
// MaxRetryAfter fails instead.
func ExamplePolicy_Decide_retryAfter() {
	p := retry.DefaultPolicy()
	ask := func(seconds string) *classify.Result {
		ra := classify.ParseRetryAfter(seconds, "", time.Now())
		r := &classify.Result{Outcome: classify.HTTPError, Status: http.StatusTooManyRequests}
		r.SetHTTP(&classify.HTTPDetails{RetryAfter: &ra})
		return r
	}
	fmt.Println(p.Decide(ask("3"), retry.Facts{}))
	fmt.Println(p.Decide(ask("300"), retry.Facts{}))
	// Output:
	// retry in 3s: retry 1 of 2 after 3s (as Retry-After: 3 asks): HTTP 429 Too Many Requests (rate limited); the server did not act on the request, so any call may be retried
	// fail: not retried: the server asked to wait 5m0s (Retry-After: 300), longer than the 1m0s limit on Retry-After: HTTP 429 Too Many Requests (rate limited)
}

// A 403 with error="insufficient_scope" asks for step-up authorization; the
// request was refused unprocessed, so even an unsafe tool may be re-sent.
func ExamplePolicy_Decide_stepUp() {
	res := &classify.Result{Outcome: classify.HTTPError, Status: http.StatusForbidden}
	res.SetHTTP(&classify.HTTPDetails{WWWAuthenticate: classify.ParseWWWAuthenticate(`Bearer error="insufficient_scope", scope="files:write"`)})
	d := retry.DefaultPolicy().Decide(res, retry.Facts{Safety: retry.Unsafe})
	fmt.Println(d.Action, d.StepUp)
	// Output:
	// reauthorize true
}

// A client loop: keep one Facts per call and Count each decision acted on.
// Here the server first wants a token, then is briefly unavailable, then
// answers.
func ExampleFacts_Count() {
	p := retry.DefaultPolicy()
	f := retry.Facts{Safety: retry.Idempotent, Rand: rand.New(rand.NewPCG(1, 2))}
	responses := []*classify.Result{
		{Outcome: classify.HTTPError, Status: http.StatusUnauthorized},
		{Outcome: classify.HTTPError, Status: http.StatusServiceUnavailable},
		{Outcome: classify.ToolSuccess, Status: http.StatusOK},
	}
	for _, res := range responses {
		d := p.Decide(res, f)
		fmt.Println(d.Action, d.Delay)
		if d.Action.Final() {
			break
		}
		f.Count(d) // and: time.Sleep(d.Delay), reauthorize, re-send
	}
	fmt.Printf("retries %d, reauthorizations %d\n", f.Retries, f.Reauthorizations)
	// Output:
	// reauthorize 0s
	// retry 153.874654ms
	// done 0s
	// retries 1, reauthorizations 1
}

// Backoff with full jitter: retry n+1 waits a uniform time in
// [0, min(max, base·2^n)]. The same seed gives the same delays.
func ExampleBackoff() {
	r := rand.New(rand.NewPCG(1, 2))
	for n := range 5 {
		fmt.Println(retry.Backoff(200*time.Millisecond, 5*time.Second, n, r))
	}
	// Output:
	// 153.874654ms
	// 246.57449ms
	// 627.542402ms
	// 1.274554526s
	// 749.684066ms
}

// PickVersion chooses the newest revision both sides speak, for the
// data.supported list of an UnsupportedProtocolVersion error (-32022).
func ExamplePickVersion() {
	v, ok := retry.PickVersion([]string{"2025-11-25", "2024-11-05"}, retry.ClientVersions)
	fmt.Println(v, ok)
	_, ok = retry.PickVersion([]string{"2024-11-05"}, retry.ClientVersions)
	fmt.Println(ok)
	// Output:
	// 2025-11-25 true
	// false
}

// A budget of 2 tokens in which each healthy answer refunds half a token.
func ExampleBudget() {
	b := retry.NewBudget(2, 0.5)
	fmt.Println(b.Take(), b.Take(), b.Take()) // the third retry is refused
	b.Deposit()
	b.Deposit() // two healthy answers earn one retry back
	fmt.Println(b.Take(), b.Tokens())
	// Output:
	// true true false
	// true 0
}

// Tool annotations become a safety class, for a server you trust.
func ExampleSafetyFromHints() {
	yes, no := true, false
	fmt.Println(retry.SafetyFromHints(&yes, nil, nil))
	fmt.Println(retry.SafetyFromHints(&no, &no, &yes))
	fmt.Println(retry.SafetyFromHints(nil, &yes, nil))
	fmt.Println(retry.SafetyFromHints(nil, nil, nil))
	// Output:
	// read-only
	// idempotent
	// unsafe
	// unknown
}
