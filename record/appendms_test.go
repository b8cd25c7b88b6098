package record

import (
	"math"
	"strconv"
	"testing"
	"time"
)

// floatMs is appendMs as it was written before perf14, and as
// Duration.MarshalJSON writes it: AppendFloat's shortest form.
func floatMs(d time.Duration) string {
	us := d.Round(time.Microsecond)
	return string(strconv.AppendFloat(nil, float64(us)/float64(time.Millisecond), 'f', -1, 64))
}

// TestAppendMsMatchesFloat holds appendMs's decimal path to the bytes of
// strconv.AppendFloat for every shape of the fraction, the rounding to the
// microsecond, signs, and both sides of the bound where it hands over to
// AppendFloat.
func TestAppendMsMatchesFloat(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{0, "0"},
		{1, "0"},
		{499 * time.Nanosecond, "0"},
		{500 * time.Nanosecond, "0.001"},
		{-500 * time.Nanosecond, "-0.001"},
		{-499 * time.Nanosecond, "0"},
		{time.Microsecond, "0.001"},
		{10 * time.Microsecond, "0.01"},
		{100 * time.Microsecond, "0.1"},
		{120 * time.Microsecond, "0.12"},
		{999 * time.Microsecond, "0.999"},
		{time.Millisecond, "1"},
		{1500 * time.Microsecond, "1.5"},
		{1050 * time.Microsecond, "1.05"},
		{1005 * time.Microsecond, "1.005"},
		{1234567 * time.Nanosecond, "1.235"},
		{-1234567 * time.Nanosecond, "-1.235"},
		{time.Second, "1000"},
		{3*time.Hour + 7*time.Microsecond, "10800000.007"},
		{(maxDecimalMs - 1) * time.Microsecond, "8796093022.207"},
		{-(maxDecimalMs - 1) * time.Microsecond, "-8796093022.207"},
		{maxDecimalMs * time.Microsecond, "8796093022.208"},
		{(maxDecimalMs+1)*time.Microsecond + 400, "8796093022.209"},
		{math.MaxInt64, floatMs(math.MaxInt64)},
		{math.MinInt64, floatMs(math.MinInt64)},
	}
	for _, tt := range tests {
		got := string(appendMs([]byte("x"), tt.d))
		if got != "x"+tt.want {
			t.Errorf("appendMs(%d ns) = %q, want %q", int64(tt.d), got[1:], tt.want)
		}
		if f := floatMs(tt.d); f != tt.want {
			t.Errorf("AppendFloat's form of %d ns = %q, the table says %q", int64(tt.d), f, tt.want)
		}
	}
}

// FuzzAppendMs asserts that appendMs writes AppendFloat's bytes for any
// duration, and that below the bound what it writes reads back, through
// Duration.UnmarshalJSON, as the duration rounded to the microsecond.
func FuzzAppendMs(f *testing.F) {
	for _, d := range []int64{0, 1, 500, 1234567, -1234567, maxDecimalMs * 1000, maxDecimalMs*1000 - 1, math.MaxInt64, math.MinInt64} {
		f.Add(d)
	}
	f.Fuzz(func(t *testing.T, n int64) {
		d := time.Duration(n)
		got := string(appendMs(nil, d))
		if want := floatMs(d); got != want {
			t.Fatalf("appendMs(%d ns) = %q, AppendFloat writes %q", n, got, want)
		}
		var back Duration
		if err := back.UnmarshalJSON([]byte(got)); err != nil {
			t.Fatalf("%q does not read back: %v", got, err)
		}
		if us := d.Round(time.Microsecond); us > -maxDecimalMs*time.Microsecond && us < maxDecimalMs*time.Microsecond &&
			time.Duration(back).Round(time.Microsecond) != us {
			t.Fatalf("%q reads back as %d ns, want %d to the microsecond", got, int64(back), int64(us))
		}
	})
}

// BenchmarkAppendMs writes the two timings of a JSON exchange's record
// (headersMs, totalMs), with appendMs (decimal) and with AppendFloat's
// shortest form, as appendMs wrote them before perf14 (float).
func BenchmarkAppendMs(b *testing.B) {
	for _, bm := range []struct {
		name string
		fn   func([]byte, time.Duration) []byte
	}{
		{"decimal", appendMs},
		{"float", func(b []byte, d time.Duration) []byte {
			us := d.Round(time.Microsecond)
			return strconv.AppendFloat(b, float64(us)/float64(time.Millisecond), 'f', -1, 64)
		}},
	} {
		b.Run(bm.name, func(b *testing.B) {
			buf := make([]byte, 0, 64)
			for b.Loop() {
				buf = bm.fn(buf[:0], 1234567*time.Nanosecond)
				buf = bm.fn(buf, 2345678*time.Nanosecond)
			}
		})
	}
}
