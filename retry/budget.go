package retry

import (
	"fmt"
	"math"
	"sync"
)

// milli is the budget's unit: tokens are counted in thousandths so that
// refunds such as 0.1 add up exactly (ten of them make one whole token).
const milli = 1000

// Budget is a retry budget: a token bucket shared by a loop of calls (a run,
// a client, a server) that keeps retries to a set share of the requests,
// like gRPC retry throttling and the AWS SDK retry quota (reliability notes
// §1.1, §1.2). The bucket starts full; each retry takes one token, and each
// healthy answer puts back a fraction of one, up to the capacity. When less
// than one token is left, retries stop until enough answers have refilled
// it: with capacity 10 and refund 0.1, a failing server sees at most 10
// retries in a burst and then about one retry per 10 healthy answers.
//
// A Budget is safe for concurrent use. A nil *Budget allows every retry.
type Budget struct {
	mu       sync.Mutex
	capacity int64 // in milli-tokens
	refund   int64 // in milli-tokens
	tokens   int64 // in milli-tokens
}

// NewBudget returns a full bucket of capacity tokens in which each healthy
// answer refunds refund tokens (rounded to thousandths). It panics if
// capacity < 1 or refund < 0.
func NewBudget(capacity int, refund float64) *Budget {
	if capacity < 1 {
		panic(fmt.Sprintf("retry: budget capacity %d is less than 1", capacity))
	}
	if refund < 0 || math.IsNaN(refund) {
		panic(fmt.Sprintf("retry: budget refund %v is negative", refund))
	}
	c := int64(capacity) * milli
	r := int64(math.Round(refund * milli))
	if r > c {
		r = c
	}
	return &Budget{capacity: c, refund: r, tokens: c}
}

// Take takes one token for a retry and reports whether there was one. When
// the bucket holds less than one token it takes nothing and returns false.
func (b *Budget) Take() bool {
	if b == nil {
		return true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.tokens < milli {
		return false
	}
	b.tokens -= milli
	return true
}

// Deposit records a healthy answer: it adds the refund, up to the capacity.
func (b *Budget) Deposit() {
	if b == nil {
		return
	}
	b.mu.Lock()
	b.tokens = min(b.tokens+b.refund, b.capacity)
	b.mu.Unlock()
}

// Tokens returns the tokens left, to a thousandth. A nil Budget reports
// +Inf.
func (b *Budget) Tokens() float64 {
	if b == nil {
		return math.Inf(1)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return float64(b.tokens) / milli
}
