package retry_test

import (
	"math"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/retry"
)

// recordingRand returns n-1 (the top of the range) and records each n, so a
// test sees exactly which range Backoff drew from.
type recordingRand struct{ asked []int64 }

func (r *recordingRand) Int64N(n int64) int64 {
	r.asked = append(r.asked, n)
	return n - 1
}

func TestBackoffRange(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		base, max time.Duration
		n         int
		want      time.Duration // the top of the range: min(max, base·2^n)
	}{
		{200 * ms, 5 * time.Second, 0, 200 * ms},
		{200 * ms, 5 * time.Second, 1, 400 * ms},
		{200 * ms, 5 * time.Second, 2, 800 * ms},
		{200 * ms, 5 * time.Second, 4, 3200 * ms},
		{200 * ms, 5 * time.Second, 5, 5 * time.Second}, // 6.4 s capped
		{200 * ms, 5 * time.Second, 62, 5 * time.Second},
		{200 * ms, 5 * time.Second, 1 << 30, 5 * time.Second},
		{time.Hour, math.MaxInt64, 200, math.MaxInt64 - 1}, // no overflow; the top is excluded only at MaxInt64
		{5 * time.Second, 200 * ms, 0, 200 * ms},           // base above the cap
	} {
		r := &recordingRand{}
		got := retry.Backoff(tc.base, tc.max, tc.n, r)
		if got != tc.want {
			t.Errorf("Backoff(%s, %s, %d) = %s, want %s", tc.base, tc.max, tc.n, got, tc.want)
		}
		if len(r.asked) != 1 {
			t.Errorf("Backoff(%s, %s, %d) drew %d times, want once", tc.base, tc.max, tc.n, len(r.asked))
		}
	}
}

func TestBackoffZero(t *testing.T) {
	r := &recordingRand{}
	for _, tc := range [][2]time.Duration{{0, time.Second}, {time.Second, 0}, {-1, time.Second}, {time.Second, -1}} {
		if got := retry.Backoff(tc[0], tc[1], 3, r); got != 0 {
			t.Errorf("Backoff(%s, %s) = %s, want 0", tc[0], tc[1], got)
		}
	}
	if len(r.asked) != 0 {
		t.Errorf("drew %d times for a zero backoff", len(r.asked))
	}
}

// TestBackoffSeeded pins the exact delays of a seeded source: the same seed
// gives the same delays on every run and every machine.
func TestBackoffSeeded(t *testing.T) {
	r := seeded()
	want := []time.Duration{153874654, 246574490, 627542402, 1274554526, 749684066, 206026285, 2499558777, 2246919389}
	for n, w := range want {
		if got := retry.Backoff(retry.DefaultBackoff, retry.DefaultMaxBackoff, n, r); got != w {
			t.Errorf("retry %d: %d ns, want %d ns", n+1, got, w)
		}
	}
}

func TestBackoffGlobalSource(t *testing.T) {
	for n := range 10 {
		top := min(retry.DefaultMaxBackoff, retry.DefaultBackoff<<n)
		if got := retry.Backoff(retry.DefaultBackoff, retry.DefaultMaxBackoff, n, nil); got < 0 || got > top {
			t.Errorf("retry %d: %s is outside [0, %s]", n+1, got, top)
		}
	}
}
