package retry

import (
	"math"
	"math/rand/v2"
	"time"
)

// Rand is the source of jitter. A *rand.Rand from math/rand/v2 satisfies it;
// seed one, for example rand.New(rand.NewPCG(1, 2)), and the delays are
// exactly reproducible. A *rand.Rand is not safe for concurrent use: give each
// call its own, in Facts.Rand.
type Rand interface {
	// Int64N returns a uniform value in [0, n). n > 0.
	Int64N(n int64) int64
}

// globalRand draws from math/rand/v2's top-level source, which is safe for
// concurrent use. It is used when Facts.Rand is nil.
type globalRand struct{}

// Int64N draws from math/rand/v2's global source.
func (globalRand) Int64N(n int64) int64 { return rand.Int64N(n) }

// Backoff returns the wait before retry n+1 (n is the number of retries
// already made, so 0 for the first retry) with full jitter: a uniform random
// duration in [0, min(max, base·2^n)], in whole nanoseconds (AWS Builders'
// Library "Full Jitter"; gRPC A6 uses the same shape). A base or max of zero
// or less gives 0. r == nil draws from math/rand/v2's global source.
//
// The draw is one call r.Int64N(min(max, base·2^n)+1), so a seeded source
// gives the same delays on every run.
func Backoff(base, max time.Duration, n int, r Rand) time.Duration {
	t := ceiling(base, max, n)
	if t <= 0 {
		return 0
	}
	if r == nil {
		r = globalRand{}
	}
	if int64(t) == math.MaxInt64 {
		return time.Duration(r.Int64N(int64(t)))
	}
	return time.Duration(r.Int64N(int64(t) + 1))
}
