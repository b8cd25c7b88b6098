package wire

import (
	"errors"
	"sync/atomic"
)

// ErrBudgetExhausted is the cause of a SkippedEventError when the reader's
// memory budget refused the bytes an event needed.
var ErrBudgetExhausted = errors.New("the classification memory budget is exhausted")

// Budget is an amount of memory shared by the readers that classify
// responses at the same time (a proxy's in-flight exchanges): each reader
// reserves the bytes it holds for an event or a body before it allocates
// them and gives them back when it no longer holds them. A reader whose
// reservation is refused reads the event through without keeping it. The
// forwarded bytes are never counted: only what classification holds.
//
// A nil *Budget is unlimited. A Budget is safe for concurrent use.
type Budget struct {
	limit   int64
	used    atomic.Int64
	peak    atomic.Int64
	refused atomic.Int64
	total   atomic.Int64 // every byte ever reserved (tests bound allocations by it)
}

// NewBudget returns a budget of limit bytes.
func NewBudget(limit int64) *Budget { return &Budget{limit: limit} }

// Reserve takes n bytes from the budget and reports whether it could.
func (b *Budget) Reserve(n int64) bool { return b.reserve(n, true) }

// TryReserve is Reserve for a reader that has another way to read the
// bytes when the budget is short (one that reserves with Reserve): a
// refusal is not counted (Refused), since the other way is tried and
// counts its own.
func (b *Budget) TryReserve(n int64) bool { return b.reserve(n, false) }

func (b *Budget) reserve(n int64, count bool) bool {
	if b == nil || n <= 0 {
		return true
	}
	for {
		u := b.used.Load()
		if u+n > b.limit {
			if count {
				b.refused.Add(1)
			}
			return false
		}
		if b.used.CompareAndSwap(u, u+n) {
			b.total.Add(n)
			for {
				p := b.peak.Load()
				if u+n <= p || b.peak.CompareAndSwap(p, u+n) {
					return true
				}
			}
		}
	}
}

// Release gives back n bytes reserved earlier.
func (b *Budget) Release(n int64) {
	if b == nil || n <= 0 {
		return
	}
	b.used.Add(-n)
}

// Limit returns the budget's size in bytes (0 for a nil budget).
func (b *Budget) Limit() int64 {
	if b == nil {
		return 0
	}
	return b.limit
}

// InUse returns the bytes reserved now.
func (b *Budget) InUse() int64 {
	if b == nil {
		return 0
	}
	return b.used.Load()
}

// Peak returns the most bytes ever reserved at once.
func (b *Budget) Peak() int64 {
	if b == nil {
		return 0
	}
	return b.peak.Load()
}

// Refused counts the reservations the budget refused.
func (b *Budget) Refused() int64 {
	if b == nil {
		return 0
	}
	return b.refused.Load()
}
