package record

import (
	"sync/atomic"
	"time"
)

// formattedSecond is a second as time.RFC3339Nano formats it in UTC,
// without its fraction and zone: "2006-01-02T15:04:05".
type formattedSecond struct {
	unix int64
	text [19]byte
}

// lastSecond is the second of the last record's time that appendTime
// formatted: records come many to a second, so most take it from here.
var lastSecond atomic.Pointer[formattedSecond]

// appendTime appends t, which must be in UTC and of a year from 0 to 9999,
// as t.AppendFormat(b, time.RFC3339Nano) does: its second formatted once
// per second (lastSecond), the fraction's digits without their trailing
// zeros, and "Z". time.Time.AppendFormat parses its layout on every call
// (~5% of the proxy's JSON record's encoding, docs/benchmarks.md record2).
func appendTime(b []byte, t time.Time) []byte {
	sec := t.Unix()
	s := lastSecond.Load()
	if s == nil || s.unix != sec {
		s = &formattedSecond{unix: sec}
		t.Truncate(time.Second).AppendFormat(s.text[:0], "2006-01-02T15:04:05")
		lastSecond.Store(s)
	}
	b = append(b, s.text[:]...)
	if ns := uint32(t.Nanosecond()); ns != 0 {
		n := len(b)
		b = append(b, ".000000000"...)
		d := b[n+1 : n+10]
		for i := len(d) - 1; i >= 0; i-- {
			q := ns / 10
			d[i] = byte('0' + ns - q*10)
			ns = q
		}
		for b[len(b)-1] == '0' {
			b = b[:len(b)-1]
		}
	}
	return append(b, 'Z')
}
