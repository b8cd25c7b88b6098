package record

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// LossReason says why a record did not reach its sink.
type LossReason string

// The reasons a record is lost. Each is counted on its own in [SinkStats].
const (
	// LostUnencodable: the encoder refused the record (it could not be
	// marshalled, it is too large even without its bodies, or a secret
	// survived redaction).
	LostUnencodable LossReason = "unencodable"
	// LostWrite: the sink's write failed (a full disk, a closed pipe, an
	// I/O error).
	LostWrite LossReason = "write"
	// LostDropped: the record was dropped because the queue was full
	// ([QueueDrop]).
	LostDropped LossReason = "dropped"
	// LostClosed: the record arrived after the writer was closed.
	LostClosed LossReason = "closed"
)

// Ref names a record in a loss report: enough to find the exchange in the
// other outputs (the client's report, the server's log, a trace) without
// any of its content.
type Ref struct {
	// ID is the record's id; empty when the producer left it to the
	// encoder and the encoder never ran.
	ID string
	// Kind, HTTPMethod, Method and Tool are the record's.
	Kind       Kind
	HTTPMethod string
	Method     string
	Tool       string
	// Time is the record's time.
	Time time.Time
}

// RefOf returns the name of rec, with its method, tool and id as the
// producer gave them: Redacted scrubs them before the name is printed.
func RefOf(rec *Record) Ref {
	if rec == nil {
		return Ref{}
	}
	return Ref{ID: rec.ID, Kind: rec.Kind, HTTPMethod: rec.HTTPMethod, Method: rec.Method, Tool: rec.Tool, Time: rec.Time}
}

// Redacted returns r with the names a caller chose (the record's method and
// tool, and its id when the producer set one) scrubbed by red, Default when
// nil: a loss report goes to a log or a terminal, where a credential must
// not go either. Ref keeps them raw until a loss is reported, so that naming
// every record costs nothing on the path where none is lost.
func (r Ref) Redacted(red *Redactor) Ref {
	if red == nil {
		red = Default
	}
	r.ID, r.Method, r.Tool = red.Scrub(r.ID), red.Scrub(r.Method), red.Scrub(r.Tool)
	return r
}

// String is the name as a loss report prints it, for example
// `exchange 01JD… (POST tools/call echo, 2026-12-02T20:35:18.012Z)`.
func (r Ref) String() string {
	var b strings.Builder
	kind := string(r.Kind)
	if kind == "" {
		kind = "record"
	}
	b.WriteString(kind)
	if r.ID != "" {
		b.WriteByte(' ')
		b.WriteString(r.ID)
	}
	var what []string
	for _, s := range []string{r.HTTPMethod, r.Method, r.Tool} {
		if s != "" {
			what = append(what, s)
		}
	}
	if !r.Time.IsZero() {
		if len(what) > 0 {
			what[len(what)-1] += ","
		}
		what = append(what, r.Time.UTC().Format("2006-01-02T15:04:05.000Z"))
	}
	if len(what) > 0 {
		b.WriteString(" (")
		b.WriteString(strings.Join(what, " "))
		b.WriteByte(')')
	}
	return b.String()
}

// Loss is one record that was not written, and why.
type Loss struct {
	Ref    Ref
	Reason LossReason
	Err    error
}

// String reports the loss in one line.
func (l Loss) String() string {
	why := string(l.Reason)
	switch l.Reason {
	case LostUnencodable:
		why = "could not be encoded"
	case LostWrite:
		why = "could not be written"
	case LostDropped:
		why = "dropped: the record queue was full"
	case LostClosed:
		why = "arrived after the record writer was closed"
	}
	if l.Err != nil && l.Reason != LostDropped {
		why += ": " + l.Err.Error()
	}
	return "record lost: " + l.Ref.String() + " " + why
}

// SinkStats count what became of the records given to a sink: each one is
// either written or lost for exactly one reason.
type SinkStats struct {
	// Written counts records the sink accepted (one line each).
	Written int64 `json:"written"`
	// Dropped counts records dropped because the queue was full.
	Dropped int64 `json:"dropped"`
	// Failed counts records the sink refused (a failed write).
	Failed int64 `json:"failed"`
	// Unencodable counts records the encoder refused.
	Unencodable int64 `json:"unencodable"`
	// Closed counts records given after Close.
	Closed int64 `json:"closed"`
}

// Lost returns how many records were lost, for any reason.
func (s SinkStats) Lost() int64 { return s.Dropped + s.Failed + s.Unencodable + s.Closed }

// String says what was written and, when records were lost, how many for
// each reason, e.g. "191 records written, 409 lost (409 failed to write)".
func (s SinkStats) String() string {
	out := fmt.Sprintf("%d records written", s.Written)
	if s.Lost() == 0 {
		return out
	}
	var why []string
	for _, c := range []struct {
		n    int64
		what string
	}{
		{s.Failed, "failed to write"},
		{s.Unencodable, "could not be encoded"},
		{s.Dropped, "dropped from a full queue"},
		{s.Closed, "came after close"},
	} {
		if c.n > 0 {
			why = append(why, fmt.Sprintf("%d %s", c.n, c.what))
		}
	}
	return fmt.Sprintf("%s, %d LOST (%s)", out, s.Lost(), strings.Join(why, ", "))
}

// LostError is the error a sink returns when it lost records: how many,
// and the first loss.
type LostError struct {
	Stats SinkStats
	First Loss
}

func (e *LostError) Error() string {
	return fmt.Sprintf("%d of %d records lost; first %s", e.Stats.Lost(), e.Stats.Lost()+e.Stats.Written, e.First.String())
}

// Unwrap returns the first loss's error.
func (e *LostError) Unwrap() error { return e.First.Err }

// Tally counts the records a sink wrote and the ones it lost, and tells its
// owner about each loss. It is safe for concurrent use. [Async] keeps one;
// a producer that writes through a plain [Writer] can keep its own.
type Tally struct {
	onLoss func(Loss)
	// red scrubs the names of the records lost (Ref.Redacted) before they
	// are counted or reported; Default when nil.
	red *Redactor

	written, dropped, failed, unencodable, closed atomic.Int64

	mu    sync.Mutex
	first *Loss
}

// NewTally returns a tally that calls onLoss (when not nil) for every loss
// it is told about, from the goroutine that tells it.
func NewTally(onLoss func(Loss)) *Tally { return &Tally{onLoss: onLoss} }

// Wrote counts a record written.
func (t *Tally) Wrote() { t.written.Add(1) }

// Lose counts a lost record and reports it.
func (t *Tally) Lose(l Loss) {
	t.count(l)
	if t.onLoss != nil {
		l.Ref = l.Ref.Redacted(t.red)
		t.onLoss(l)
	}
}

// count counts a lost record without reporting it: its producer has the
// error in hand.
func (t *Tally) count(l Loss) {
	switch l.Reason {
	case LostDropped:
		t.dropped.Add(1)
	case LostUnencodable:
		t.unencodable.Add(1)
	case LostClosed:
		t.closed.Add(1)
	default:
		t.failed.Add(1)
	}
	t.mu.Lock()
	if t.first == nil {
		// Only the first loss is kept: only it is scrubbed here (a drop
		// storm does not scrub every record's name).
		l.Ref = l.Ref.Redacted(t.red)
		t.first = &l
	}
	t.mu.Unlock()
}

// Stats returns the counts so far.
func (t *Tally) Stats() SinkStats {
	return SinkStats{
		Written: t.written.Load(), Dropped: t.dropped.Load(), Failed: t.failed.Load(),
		Unencodable: t.unencodable.Load(), Closed: t.closed.Load(),
	}
}

// Err returns a *LostError when any record was lost, nil otherwise.
func (t *Tally) Err() error {
	t.mu.Lock()
	first := t.first
	t.mu.Unlock()
	if first == nil {
		return nil
	}
	return &LostError{Stats: t.Stats(), First: *first}
}

// reasonOf classifies an error returned by Encoder.Encode or a writer.
func reasonOf(err error, encoding bool) LossReason {
	switch {
	case errors.Is(err, ErrClosed):
		return LostClosed
	case encoding:
		return LostUnencodable
	}
	return LostWrite
}

// RefOfLine returns the name of an encoded record line, as far as it can
// be read back (a line cut by a failed write may give little).
func RefOfLine(line []byte) Ref {
	var v struct {
		ID         string    `json:"id"`
		Kind       Kind      `json:"kind"`
		HTTPMethod string    `json:"httpMethod"`
		Method     string    `json:"method"`
		Tool       string    `json:"tool"`
		Time       time.Time `json:"time"`
	}
	if json.Unmarshal(line, &v) != nil {
		return Ref{ID: lineID(line)}
	}
	return Ref{ID: v.ID, Kind: v.Kind, HTTPMethod: v.HTTPMethod, Method: v.Method, Tool: v.Tool, Time: v.Time}
}
