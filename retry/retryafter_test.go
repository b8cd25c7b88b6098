package retry_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/retry"
)

// classified runs the real classifier over a bare HTTP error with the given
// headers, so the Retry-After parsing is the one the client will use.
func classified(t *testing.T, status int, header http.Header, now time.Time) *classify.Result {
	t.Helper()
	c := classify.Classifier{Now: func() time.Time { return now }}
	r, err := c.Classify(&classify.Exchange{Status: status, Header: header})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 10, 21, 7, 28, 0, 0, time.UTC)
	date := now.Format(http.TimeFormat)
	at := func(d time.Duration) string { return now.Add(d).Format(http.TimeFormat) }
	for _, tc := range []struct {
		name   string
		status int
		header http.Header
		safety retry.Safety
		want   want
	}{
		{"429 seconds", 429, http.Header{"Retry-After": {"3"}}, retry.Unknown,
			want{action: retry.Retry, delay: 3 * time.Second, reason: "as Retry-After: 3 asks"}},
		{"429 zero", 429, http.Header{"Retry-After": {"0"}}, retry.Unknown,
			want{action: retry.Retry, delay: 0, reason: "as Retry-After: 0 asks"}},
		{"429 HTTP-date against the Date header", 429, http.Header{"Retry-After": {at(10 * time.Second)}, "Date": {date}}, retry.Unknown,
			want{action: retry.Retry, delay: 10 * time.Second, reason: "Retry-After: " + at(10*time.Second)}},
		{"429 HTTP-date against now (no Date header)", 429, http.Header{"Retry-After": {at(42 * time.Second)}}, retry.Unknown,
			want{action: retry.Retry, delay: 42 * time.Second}},
		{"429 HTTP-date in the past", 429, http.Header{"Retry-After": {at(-time.Hour)}, "Date": {date}}, retry.Unknown,
			want{action: retry.Retry, delay: 0}},
		{"503 seconds, read-only", 503, http.Header{"Retry-After": {"7"}}, retry.ReadOnly,
			want{action: retry.Retry, delay: 7 * time.Second}},
		{"503 HTTP-date, idempotent", 503, http.Header{"Retry-After": {at(30 * time.Second)}, "Date": {date}}, retry.Idempotent,
			want{action: retry.Retry, delay: 30 * time.Second}},
		{"503 seconds, unknown safety", 503, http.Header{"Retry-After": {"7"}}, retry.Unknown,
			want{action: retry.Fail, reason: "unknown whether the tool ran"}},
		{"at the cap", 429, http.Header{"Retry-After": {"60"}}, retry.Unknown,
			want{action: retry.Retry, delay: time.Minute}},
		{"over the cap, seconds", 429, http.Header{"Retry-After": {"61"}}, retry.Unknown,
			want{action: retry.Fail, reason: "the server asked to wait 1m1s (Retry-After: 61), longer than the 1m0s limit on Retry-After"}},
		{"over the cap, HTTP-date", 503, http.Header{"Retry-After": {at(2 * time.Hour)}, "Date": {date}}, retry.ReadOnly,
			want{action: retry.Fail, reason: "the server asked to wait 2h0m0s"}},
		{"invalid value falls back to backoff", 429, http.Header{"Retry-After": {"soon"}}, retry.Unknown,
			want{action: retry.Retry, delay: firstDelay, reason: `Retry-After "soon" is not seconds or an HTTP-date and was ignored`}},
		{"negative value falls back to backoff", 429, http.Header{"Retry-After": {"-5"}}, retry.Unknown,
			want{action: retry.Retry, delay: firstDelay, reason: "was ignored"}},
		{"ignored on 502", 502, http.Header{"Retry-After": {"30"}}, retry.ReadOnly,
			want{action: retry.Retry, delay: firstDelay, reason: "backoff with full jitter, up to 200ms"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := classified(t, tc.status, tc.header, now)
			if r.Outcome != classify.HTTPError {
				t.Fatalf("classified as %s", r.Outcome)
			}
			d := retry.DefaultPolicy().Decide(r, retry.Facts{Safety: tc.safety, Rand: seeded()})
			check(t, d, tc.want)
		})
	}
}

func TestRetryAfterLimits(t *testing.T) {
	r := withRetryAfter(httpErr(429), classify.RetryAfter{Raw: "5", Delay: 5 * time.Second, Valid: true})
	p := retry.DefaultPolicy()
	p.MaxRetryAfter = 0
	check(t, p.Decide(r, retry.Facts{Rand: seeded()}), want{action: retry.Fail, reason: "longer than the 0s limit"})
	p.MaxRetryAfter = 5 * time.Second
	check(t, p.Decide(r, retry.Facts{Rand: seeded()}), want{action: retry.Retry, delay: 5 * time.Second})
	// MaxRetries still wins over the server's hint (as in gRPC pushback).
	d := p.Decide(r, retry.Facts{Retries: 2, Rand: seeded()})
	check(t, d, want{action: retry.Fail, reason: "gave up after 2 retries"})
	if strings.Contains(d.Reason, "Retry-After") {
		t.Errorf("a spent retry limit should not talk about Retry-After: %s", d.Reason)
	}
}
