package proxy

import (
	"encoding/json"
	"testing"
	"time"
)

func TestSpliceArrivals(t *testing.T) {
	arr := arrivalsNote([]arrival{{off: 120, at: 1500 * time.Microsecond}, {off: 250, at: 3 * time.Millisecond}})
	for _, tc := range []struct{ in, want string }{
		{`{"v":1,"note":"` + arr + `"}` + "\n", `{"v":1,"sseArrivals":[[120,1.5],[250,3]]}` + "\n"},
		{`{"v":1,"note":"client left; ` + arr + `"}` + "\n", `{"v":1,"note":"client left","sseArrivals":[[120,1.5],[250,3]]}` + "\n"},
		{`{"v":1,"note":"no arrivals]]"}` + "\n", `{"v":1,"note":"no arrivals]]"}` + "\n"},
		{`{"v":1}` + "\n", `{"v":1}` + "\n"},
	} {
		got := string(spliceArrivals([]byte(tc.in)))
		if got != tc.want {
			t.Errorf("splice(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if !json.Valid([]byte(got)) {
			t.Errorf("not JSON: %q", got)
		}
	}
}

func TestEventScanner(t *testing.T) {
	stream := ": comment\n\nid: 1\n\ndata: a\n\nevent: x\r\ndata: b\r\n\r\ndata: c\rdata: d\r\r"
	var ends []int64
	for _, split := range []int{1, 3, 7, len(stream)} {
		ends = ends[:0]
		var s eventScanner
		for i := 0; i < len(stream); i += split {
			s.scan([]byte(stream[i:min(len(stream), i+split)]), func(off int64) { ends = append(ends, off) })
		}
		want := []int64{27, 48, 65}
		if len(ends) != len(want) {
			t.Fatalf("split %d: ends %v, want %v", split, ends, want)
		}
		for i := range want {
			// A CRLF split across writes may end the event at its CR.
			if ends[i] != want[i] && !(ends[i] == want[i]-1 && stream[want[i]-1] == '\n') {
				t.Errorf("split %d: ends %v, want %v", split, ends, want)
			}
		}
	}
}
