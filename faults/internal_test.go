package faults

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

func TestScheduleFires(t *testing.T) {
	p := func(v float64) *float64 { return &v }
	tests := []struct {
		name  string
		s     Schedule
		fires []int // the n in 1..12 that fire (draws: n/12 - 0.01)
	}{
		{"always", Schedule{}, []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}},
		{"nth", Schedule{Nth: 3}, []int{3}},
		{"every", Schedule{Every: 4}, []int{4, 8, 12}},
		{"first", Schedule{First: 2}, []int{1, 2}},
		{"window", Schedule{From: 5, To: 7}, []int{5, 6, 7}},
		{"from on", Schedule{From: 11}, []int{11, 12}},
		{"every in a window", Schedule{Every: 2, From: 3, To: 8}, []int{4, 6, 8}},
		{"probability", Schedule{P: p(0.5)}, []int{1, 2, 3, 4, 5, 6}},
		{"probability in a window", Schedule{P: p(0.5), From: 4}, []int{4, 5, 6}},
	}
	for _, tt := range tests {
		var got []int
		for n := 1; n <= 12; n++ {
			d := float64(n)/12 - 0.01
			var draw *float64
			if tt.s.P != nil {
				draw = &d
			}
			if ok, why := tt.s.fires(n, draw); ok {
				got = append(got, n)
				if why == "" {
					t.Errorf("%s: no reason", tt.name)
				}
			}
		}
		if len(got) != len(tt.fires) {
			t.Errorf("%s: fires on %v, want %v", tt.name, got, tt.fires)
			continue
		}
		for i := range got {
			if got[i] != tt.fires[i] {
				t.Errorf("%s: fires on %v, want %v", tt.name, got, tt.fires)
				break
			}
		}
	}
}

func TestDelayDraws(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 4000
	check := func(name string, d Delay, lo, hi time.Duration, median time.Duration) {
		t.Helper()
		var below int
		for range n {
			v := d.draw(rng)
			if v < lo || v > hi {
				t.Fatalf("%s: draw %s outside [%s, %s]", name, v, lo, hi)
			}
			if v < median {
				below++
			}
		}
		if frac := float64(below) / n; math.Abs(frac-0.5) > 0.05 {
			t.Errorf("%s: %.2f of the draws below %s, want about half", name, frac, median)
		}
	}
	check("uniform", Delay{Dist: DistUniform, MinMs: 100, MaxMs: 300}, 100*time.Millisecond, 300*time.Millisecond, 200*time.Millisecond)
	check("normal", Delay{Dist: DistNormal, MeanMs: 500, StddevMs: 50}, 0, time.Second, 500*time.Millisecond)
	check("lognormal", Delay{Dist: DistLognormal, MedianMs: 200, Sigma: 0.8}, 0, DefaultMaxDelayMs*time.Millisecond, 200*time.Millisecond)
	if v := (Delay{Ms: 250}).draw(rng); v != 250*time.Millisecond {
		t.Errorf("fixed: %s", v)
	}
	if v := (Delay{Dist: DistNormal, MeanMs: -1000, StddevMs: 1}).draw(rng); v != 0 {
		t.Errorf("negative draws are 0: %s", v)
	}
	if v := (Delay{Dist: DistFixed, Ms: 90000, CapMs: 1000}).draw(rng); v != time.Second {
		t.Errorf("cap: %s", v)
	}
	// Same seed, same draws.
	a, b := rand.New(rand.NewPCG(9, 9)), rand.New(rand.NewPCG(9, 9))
	d := Delay{Dist: DistLognormal, MedianMs: 50, Sigma: 1}
	for range 100 {
		if d.draw(a) != d.draw(b) {
			t.Fatal("the same seed drew different delays")
		}
	}
}

// TestEventEnds: the delay between events splits what the handler writes
// at the end of each block (WHATWG line ends, a CRLF split across writes,
// a BOM), however the writes cut it.
func TestEventEnds(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want []string
	}{
		{"data: x\n\n", []string{"data: x\n\n"}},
		{"data: x\r\n\r\n", []string{"data: x\r\n\r\n"}},
		{"data: x\r\rdata: y\r\r", []string{"data: x\r\r", "data: y\r\r"}},
		{"data: x\n", nil},
		{"data: x\r", nil},
		{"\ndata: x\n\nrest", []string{"\ndata: x\n\n"}},
		{": c\n\ndata: y\n\n", []string{": c\n\n", "data: y\n\n"}},
		{"\xef\xbb\xbfdata: x\n\n\n\ndata: y\n\n", []string{"\xef\xbb\xbfdata: x\n\n", "\n\ndata: y\n\n"}},
	} {
		for _, size := range []int{1, 2, 3, len(tt.in)} {
			d := &delayWriter{}
			var got []string
			for i := 0; i < len(tt.in); i += size {
				p := []byte(tt.in[i:min(i+size, len(tt.in))])
				d.pending = append(d.pending, p...)
				for _, end := range d.eventEnds(p) {
					got = append(got, string(d.pending[:end]))
					d.pending = d.pending[end:]
				}
			}
			// A CRLF's LF that arrives after its CR goes out with the
			// next block: compare the bytes with that LF moved back.
			if strings.Join(got, "") != tt.in[:len(strings.Join(got, ""))] || len(got) != len(tt.want) {
				t.Errorf("%q in writes of %d: blocks %q, want %q", tt.in, size, got, tt.want)
				continue
			}
			if size == len(tt.in) && fmt.Sprintf("%q", got) != fmt.Sprintf("%q", tt.want) {
				t.Errorf("%q whole: blocks %q, want %q", tt.in, got, tt.want)
			}
		}
	}
}

func TestSplitJSONLines(t *testing.T) {
	got := splitJSONLines([]byte(`{"a":"x,y\",z","b":[1,2]}`))
	want := []string{`{"a":"x,y\",z",`, `"b":[1,`, `2]}`}
	if len(got) != len(want) {
		t.Fatalf("%q", got)
	}
	for i := range got {
		if string(got[i]) != want[i] {
			t.Errorf("line %d: %q, want %q", i, got[i], want[i])
		}
	}
}
