package report

import (
	"net/http"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/internal/recordtest"
	"github.com/mcpdiag/mcpdiag/record"
)

// TestLegacyFallbackRule: over the real records of the TS SDK's
// streamableHttpWithSseFallbackClient against server-everything's sse
// transport through the proxy (legacyFile: POST initialize answered 404,
// then the legacy GET stream), the 404 is counted as a fallback (apart,
// as era fallbacks are, and linked for the page), not a failure; each
// negative (no GET, a GET out of the window, of another URL, another run or
// another User-Agent, another request of the client before the GET, a
// status other than 404/405) leaves it a failure. Before, the 404 was
// counted failed ("3 failed").
func TestLegacyFallbackRule(t *testing.T) {
	recs := recordtest.ReadFile(t, legacyFile)
	var refused, get *record.Record
	for _, r := range recs {
		switch {
		case r.HTTPMethod == http.MethodPost && r.Method == "initialize" && r.Status == http.StatusNotFound:
			refused = r
		case r.HTTPMethod == http.MethodGet && get == nil:
			get = r // the fallback client's: the first GET written
		}
	}
	if refused == nil || get == nil || get.Time.Before(refused.Time) || record.ConnRun(get.Conn) != record.ConnRun(refused.Conn) {
		t.Fatalf("no 404 initialize and GET after it: not the file this test is about")
	}
	for _, c := range []struct {
		name     string
		change   func(recs []*record.Record) []*record.Record
		fallback bool
	}{
		{"the real records", nil, true},
		{"405", func(rs []*record.Record) []*record.Record { refused.Status = http.StatusMethodNotAllowed; return rs }, true},
		{"no GET after it", func(rs []*record.Record) []*record.Record {
			var out []*record.Record
			for _, r := range rs {
				if r.ID != get.ID {
					out = append(out, r)
				}
			}
			return out
		}, false},
		{"GET out of the window", func(rs []*record.Record) []*record.Record {
			get.Time = refused.Time.Add(LegacyFallbackWindow + time.Millisecond)
			return rs
		}, false},
		{"GET of another URL", func(rs []*record.Record) []*record.Record { get.URL = "http://127.0.0.1:39121/other"; return rs }, false},
		{"GET of another run", func(rs []*record.Record) []*record.Record { get.Conn = "0badc0de-2"; return rs }, false},
		{"GET of another User-Agent", func(rs []*record.Record) []*record.Record {
			get.RequestHeaders = get.RequestHeaders.Clone()
			get.RequestHeaders.Set("User-Agent", "curl/8")
			return rs
		}, false},
		{"GET without text/event-stream", func(rs []*record.Record) []*record.Record {
			get.RequestHeaders = get.RequestHeaders.Clone()
			get.RequestHeaders.Set("Accept", "application/json")
			return rs
		}, false},
		{"another request of the client first", func(rs []*record.Record) []*record.Record {
			x := *refused
			x.ID, x.Status, x.Outcome = "BETWEEN", http.StatusOK, "RESULT_SUCCESS"
			x.Method = "tools/list"
			x.Time = refused.Time.Add(get.Time.Sub(refused.Time) / 2)
			// Written before the GET, as the proxy writes a POST that
			// ended before the GET's stream.
			return append([]*record.Record{rs[0], &x}, rs[1:]...)
		}, false},
		{"500", func(rs []*record.Record) []*record.Record { refused.Status = http.StatusInternalServerError; return rs }, false},
		// The order of the file is not the client's: the 404 read after
		// its GET (files given in another order, a sink that wrote them
		// so) is the same fallback; a request between them by start
		// time still makes it a failure, wherever it is in the file.
		{"the GET recorded first", func(rs []*record.Record) []*record.Record { return lastIs(rs, refused.ID) }, true},
		{"the GET and another request recorded first", func(rs []*record.Record) []*record.Record {
			x := *refused
			x.ID, x.Status, x.Outcome = "BETWEEN", http.StatusOK, "RESULT_SUCCESS"
			x.Method = "tools/list"
			x.Time = refused.Time.Add(get.Time.Sub(refused.Time) / 2)
			return lastIs(append([]*record.Record{&x}, rs...), refused.ID)
		}, false},
		{"the GET recorded first, out of the window", func(rs []*record.Record) []*record.Record {
			get.Time = refused.Time.Add(LegacyFallbackWindow + time.Millisecond)
			return lastIs(rs, refused.ID)
		}, false},
		{"the GET of another User-Agent recorded first", func(rs []*record.Record) []*record.Record {
			get.RequestHeaders = get.RequestHeaders.Clone()
			get.RequestHeaders.Set("User-Agent", "curl/8")
			return lastIs(rs, refused.ID)
		}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			recs := recordtest.ReadFile(t, legacyFile)
			for _, r := range recs {
				if r.ID == refused.ID {
					refused = r
				}
				if r.ID == get.ID {
					get = r
				}
			}
			if c.change != nil {
				recs = c.change(recs)
			}
			acc := New(Options{KeepLinks: true})
			for _, r := range recs {
				acc.Add(r)
			}
			acc.Close()
			s := acc.Summary()
			links := acc.TakeEraFallbacks()
			ex := s.Exchanges
			// The file's other failures: the TOOL_ERROR and the unanswered
			// trigger-long-running-operation.
			want := int64(3)
			var wantLinks []string
			var n int64
			if c.fallback {
				want, wantLinks, n = 2, []string{refused.ID}, 1
			}
			if ex.Failures != want || ex.LegacyFallbacks != n || ex.EraFallbacks != n || len(links) != len(wantLinks) || n == 1 && links[0] != refused.ID {
				t.Errorf("failures %d, legacy fallbacks %d, era fallbacks %d, linked %v; want %d, %d, %d, %v",
					ex.Failures, ex.LegacyFallbacks, ex.EraFallbacks, links, want, n, n, wantLinks)
			}
			for _, o := range ex.WorstOffenders {
				if c.fallback && o.Method == "initialize" {
					t.Errorf("the fallback's 404 is a worst offender: %+v", o)
				}
			}
		})
	}
}

// TestLegacyFallbackHeldUntilClose: a refused initialize waits for its
// client's GET, whose record comes when its stream ends: Summary before
// Close leaves it out, Close counts it a failure when no GET came.
func TestLegacyFallbackHeldUntilClose(t *testing.T) {
	recs := recordtest.ReadFile(t, legacyFile)
	acc := New(Options{})
	acc.Add(recs[0])
	if recs[0].Status != http.StatusNotFound {
		t.Fatalf("line 1 is %d, not the 404", recs[0].Status)
	}
	if s := acc.Summary(); s.Exchanges.Total != 0 || s.Records != 1 {
		t.Fatalf("held: %d exchanges counted of %d records", s.Exchanges.Total, s.Records)
	}
	acc.Close()
	if s := acc.Summary(); s.Exchanges.Total != 1 || s.Exchanges.Failures != 1 || s.Exchanges.LegacyFallbacks != 0 {
		t.Fatalf("closed: %d exchanges, %d failures, %d legacy fallbacks; want 1, 1, 0", s.Exchanges.Total, s.Exchanges.Failures, s.Exchanges.LegacyFallbacks)
	}
}

// lastIs moves the record of id to the end of rs.
func lastIs(rs []*record.Record, id string) []*record.Record {
	var out []*record.Record
	var last *record.Record
	for _, r := range rs {
		if r.ID == id {
			last = r
			continue
		}
		out = append(out, r)
	}
	return append(out, last)
}
