package record

import (
	"math/rand/v2"
	"sync"
	"testing"
	"time"
)

// TestAppendTime: appendTime writes what time.Time.AppendFormat writes
// with time.RFC3339Nano, for fractions with and without trailing zeros,
// none, the years 0 and 9999, before 1970, the same second again and
// seconds that alternate (the cached second replaced), also from
// goroutines that format different seconds at once.
func TestAppendTime(t *testing.T) {
	base := time.Date(2026, 12, 6, 8, 43, 12, 0, time.UTC)
	times := []time.Time{
		base, base.Add(1), base.Add(10), base.Add(123456789), base.Add(999999999), base.Add(100 * time.Millisecond),
		base.Add(time.Second), base, base.Add(time.Second + 5000),
		time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(0, 1, 1, 0, 0, 0, 500, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC), time.Date(1969, 12, 31, 23, 59, 59, 900000000, time.UTC),
		time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(1000, 2, 28, 1, 2, 3, 40, time.UTC),
		time.Now().UTC(), time.Now().UTC().Round(0),
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		times = append(times, time.Unix(rng.Int64N(253402300799+62135596800)-62135596800, rng.Int64N(1e9)).UTC())
		times = append(times, base.Add(time.Duration(rng.Int64N(int64(3*time.Second)))))
	}
	for _, tm := range times {
		got, want := string(appendTime([]byte("x"), tm)), string(tm.AppendFormat([]byte("x"), time.RFC3339Nano))
		if got != want {
			t.Fatalf("appendTime(%v) = %q, want %q", tm, got, want)
		}
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 2000 {
				tm := base.Add(time.Duration(g)*time.Second + time.Duration(i)*time.Microsecond)
				if got, want := string(appendTime(nil, tm)), tm.Format(time.RFC3339Nano); got != want {
					t.Errorf("appendTime(%v) = %q, want %q", tm, got, want)
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestAppendTimeAllocs: a record's time in the second of the record
// before it is appended without an allocation.
func TestAppendTimeAllocs(t *testing.T) {
	tm := time.Date(2026, 12, 6, 8, 43, 12, 123456000, time.UTC)
	buf := make([]byte, 0, 64)
	appendTime(buf, tm)
	if n := testing.AllocsPerRun(100, func() { buf = appendTime(buf[:0], tm) }); n != 0 {
		t.Errorf("%v allocations per time, want 0", n)
	}
}

// BenchmarkAppendTime: appendTime against time.Time.AppendFormat with
// time.RFC3339Nano (what the encoder called before), each record's time
// 1 µs after the one before, and both in one loop ("ab", for a CPU
// profile's shares).
func BenchmarkAppendTime(b *testing.B) {
	base := time.Date(2026, 12, 6, 8, 43, 12, 0, time.UTC)
	buf := make([]byte, 0, 64)
	b.Run("appendTime", func(b *testing.B) {
		i := 0
		for b.Loop() {
			i++
			buf = appendTime(buf[:0], base.Add(time.Duration(i)*time.Microsecond))
		}
	})
	b.Run("AppendFormat", func(b *testing.B) {
		i := 0
		for b.Loop() {
			i++
			buf = base.Add(time.Duration(i)*time.Microsecond).AppendFormat(buf[:0], time.RFC3339Nano)
		}
	})
	b.Run("ab", func(b *testing.B) {
		i := 0
		for b.Loop() {
			i++
			tm := base.Add(time.Duration(i) * time.Microsecond)
			buf = appendTime(buf[:0], tm)
			buf = tm.AppendFormat(buf[:0], time.RFC3339Nano)
		}
	})
}
