package record

import (
	"math"
	"strings"
	"testing"
)

// TestProbeFromHeader: the proxy reads the probe a request names by
// ProbeHeader as ProbeHeaderValue wrote it (kind, seed and index, so the
// record makes the probe again), a kind alone as mcpdiag sent it before,
// and nothing from a value that names no probe.
func TestProbeFromHeader(t *testing.T) {
	for _, c := range []struct {
		name, value string
		want        *Probe // Detail not compared
	}{
		{"written by ProbeHeaderValue", ProbeHeaderValue("wrong-type", 42, 7), &Probe{Kind: "wrong-type", Seed: "42", Index: 7}},
		{"the largest seed", ProbeHeaderValue("id-string", math.MaxUint64, 0), &Probe{Kind: "id-string", Seed: "18446744073709551615", Index: 0}},
		{"a kind alone", "unknown-tool", &Probe{Kind: "unknown-tool"}},
		{"spaces and order", " too-long ;index=3 ; seed=9", &Probe{Kind: "too-long", Seed: "9", Index: 3}},
		{"a seed that is not a number", "too-long; seed=x; index=-1", &Probe{Kind: "too-long"}},
		{"empty", "", nil},
		{"no kind", "; seed=1", nil},
		{"too long", strings.Repeat("k", maxProbeHeader+1), nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := ProbeFromHeader(map[string][]string{ProbeHeader: {c.value}})
			if (got == nil) != (c.want == nil) {
				t.Fatalf("ProbeFromHeader(%q) = %+v, want %+v", c.value, got, c.want)
			}
			if got == nil {
				return
			}
			if got.Kind != c.want.Kind || got.Seed != c.want.Seed || got.Index != c.want.Index || got.Detail == "" {
				t.Errorf("ProbeFromHeader(%q) = %+v, want %+v with a detail", c.value, got, c.want)
			}
		})
	}
	if got := ProbeFromHeader(map[string][]string{"Other": {"x"}}); got != nil {
		t.Errorf("no header: %+v, want nil", got)
	}
}
