package report

import (
	"math"
	"slices"
)

// The latency sketch: relative-error buckets in the manner of DDSketch
// (Masson, Rim, Lee, VLDB 2019). A value v > 0 falls in bucket
// i = ceil(log_γ v), which covers (γ^(i-1), γ^i], and a bucket is reported as
// 2γ^i/(γ+1): within SketchRelativeError of every value in the bucket. The
// buckets between the smallest and the largest trackable value are at most
// a few thousand, so a sketch never holds more than that many counters,
// whatever the number of samples.
const (
	// SketchRelativeError bounds the error of a percentile computed from
	// the sketch: the value reported is within this fraction of the exact
	// nearest-rank sample.
	SketchRelativeError = 0.01
	// sketchMinMs is the smallest value the sketch resolves (1 µs); smaller
	// values are counted in one bucket reported as the smallest value seen.
	sketchMinMs = 1e-3
	// sketchMaxMs caps tracked values (about 11.6 days); larger ones are
	// counted as this.
	sketchMaxMs = 1e9
)

var (
	sketchGamma   = (1 + SketchRelativeError) / (1 - SketchRelativeError)
	sketchLnGamma = math.Log(sketchGamma)
)

// sketch counts values in logarithmic buckets, dense between the lowest and
// highest bucket seen.
type sketch struct {
	offset int      // bucket index of counts[0]
	counts []uint64 // counts[i] is bucket offset+i
	low    uint64   // values below sketchMinMs
}

func sketchIndex(v float64) int {
	return int(math.Ceil(math.Log(v) / sketchLnGamma))
}

func (s *sketch) add(v float64) {
	if v < sketchMinMs {
		s.low++
		return
	}
	i := sketchIndex(min(v, sketchMaxMs))
	switch {
	case len(s.counts) == 0:
		s.offset = i
		s.counts = append(s.counts, 0)
	case i < s.offset:
		grow := s.offset - i
		s.counts = append(make([]uint64, grow, grow+len(s.counts)), s.counts...)
		s.offset = i
	case i >= s.offset+len(s.counts):
		s.counts = append(s.counts, make([]uint64, i-s.offset-len(s.counts)+1)...)
	}
	s.counts[i-s.offset]++
}

// rank returns the approximate value of the k-th smallest sample (1-based),
// and false for the values below sketchMinMs.
func (s *sketch) rank(k uint64) (float64, bool) {
	if k <= s.low {
		return 0, false
	}
	seen := s.low
	for j, c := range s.counts {
		seen += c
		if seen >= k {
			return 2 * math.Pow(sketchGamma, float64(s.offset+j)) / (sketchGamma + 1), true
		}
	}
	return 0, false
}

// latency accumulates durations in milliseconds. Up to limit samples are
// kept exactly; past that the exact samples are dropped and percentiles come
// from the sketch, which sees every sample from the first.
type latency struct {
	n        int64
	sum      float64
	min, max float64
	limit    int
	exact    []float64 // nil and unused once n > limit
	overflow bool
	sk       sketch
}

func (l *latency) add(ms float64) {
	if math.IsNaN(ms) || ms <= 0 {
		return
	}
	if l.n == 0 || ms < l.min {
		l.min = ms
	}
	if ms > l.max {
		l.max = ms
	}
	l.n++
	l.sum += ms
	l.sk.add(ms)
	if !l.overflow {
		if len(l.exact) < l.limit {
			l.exact = append(l.exact, ms)
		} else {
			l.overflow, l.exact = true, nil
		}
	}
}

// Percentiles reported for every latency.
var percentiles = [...]float64{0.50, 0.95, 0.99}

// nearestRank returns the 1-based rank of the p-quantile of n samples: the
// smallest k with k/n >= p.
func nearestRank(p float64, n int64) int64 {
	k := int64(math.Ceil(p*float64(n) - 1e-9))
	return min(max(k, 1), n)
}

// summary computes the reported figures. It sorts the exact samples in
// place, which leaves the accumulator valid.
func (l *latency) summary() Latency {
	out := Latency{Samples: l.n}
	if l.n == 0 {
		return out
	}
	out.MinMs, out.MaxMs, out.MeanMs = roundMs(l.min), roundMs(l.max), roundMs(l.sum/float64(l.n))
	var q [len(percentiles)]float64
	if !l.overflow {
		out.Method = MethodExact
		slices.Sort(l.exact)
		for i, p := range percentiles {
			q[i] = l.exact[nearestRank(p, l.n)-1]
		}
	} else {
		out.Method, out.RelativeError = MethodSketch, SketchRelativeError
		for i, p := range percentiles {
			v, ok := l.sk.rank(uint64(nearestRank(p, l.n)))
			if !ok {
				v = l.min
			}
			// The bucket's value may lie outside the samples seen.
			q[i] = min(max(v, l.min), l.max)
		}
	}
	out.P50Ms, out.P95Ms, out.P99Ms = roundMs(q[0]), roundMs(q[1]), roundMs(q[2])
	return out
}

// roundMs rounds milliseconds to the microsecond, the records' precision.
func roundMs(ms float64) float64 {
	return math.Round(ms*1000) / 1000
}
