package wire

import "testing"

// TestBudgetTryReserve: TryReserve takes what fits as Reserve does, and a
// refusal of it is not counted (the caller reads another way, whose own
// Reserve counts); Reserve's refusals are.
func TestBudgetTryReserve(t *testing.T) {
	b := NewBudget(100)
	if !b.TryReserve(60) || b.InUse() != 60 || b.Peak() != 60 {
		t.Fatalf("TryReserve(60): in use %d, peak %d", b.InUse(), b.Peak())
	}
	if b.TryReserve(41) || b.Refused() != 0 || b.InUse() != 60 {
		t.Fatalf("TryReserve(41) over the limit: in use %d, refused %d", b.InUse(), b.Refused())
	}
	if b.Reserve(41) || b.Refused() != 1 {
		t.Fatalf("Reserve(41) over the limit: refused %d", b.Refused())
	}
	b.Release(60)
	if !b.TryReserve(100) || b.InUse() != 100 {
		t.Fatalf("TryReserve(100) of an empty budget: in use %d", b.InUse())
	}
	var nilBudget *Budget
	if !nilBudget.TryReserve(1 << 40) {
		t.Fatal("a nil budget refused")
	}
}
