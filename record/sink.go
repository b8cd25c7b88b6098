package record

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"

	"github.com/mcpdiag/mcpdiag/internal/visible"
)

// SinkOptions configure OpenSink.
type SinkOptions struct {
	// Stdout is where the name "-" writes; os.Stdout when nil.
	Stdout io.Writer
	// Sync is a file's fsync policy; SyncClose when empty.
	Sync SyncPolicy
	// Perm is the mode of a new file; 0600 when 0 (records can hold tool
	// arguments and results).
	Perm fs.FileMode
	// Encoder redacts and encodes the records given to Write.
	Encoder Encoder
	// Async puts a bounded queue and one writer goroutine in front of the
	// destination (see [Async]): for a producer that must not wait for the
	// disk, such as a proxy forwarding live traffic. QueueSize and Policy
	// configure the queue.
	Async     bool
	QueueSize int
	Policy    QueuePolicy
	// OnLoss, when set, is told every lost record (see [PrintLosses]). With
	// Async, the records Write itself refuses (unencodable, or given after
	// Close) are returned to the caller of Write instead, as [Async] does.
	OnLoss func(Loss)
	// Tee, when set, is given every line after it was written to the
	// destination (with Async: on the writer goroutine, off the producer's
	// path), so a second reader (mcpdiag's live page) gets the same bytes
	// without encoding the record again. It must not keep or change line.
	Tee func(line []byte)
}

// teeLines hands each line it wrote to tee.
type teeLines struct {
	LineWriter
	tee func([]byte)
}

func (t teeLines) WriteLine(line []byte) error {
	if err := t.LineWriter.WriteLine(line); err != nil {
		return err
	}
	t.tee(line)
	return nil
}

// Sink is a record destination opened by name: "-" for standard output,
// anything else a file appended to. It counts every record it writes or
// loses (Stats), names each loss to SinkOptions.OnLoss, and never stops
// at a failed write: the next record is tried in turn. A Sink is safe for
// concurrent use; it is a [Writer] and a [LineWriter].
type Sink struct {
	name  string
	lines LineWriter
	enc   Encoder
	async *Async // nil: lines are written in the caller's goroutine
	tally *Tally // without Async
}

// StdoutName is the Name of a Sink opened as "-".
const StdoutName = "stdout"

// OpenSink opens the record destination name (a --record flag's value):
// "-" writes to opts.Stdout, one line per write; any other name is a file,
// created with opts.Perm (0600) when missing and opened O_APPEND, so that
// lines from several writers do not interleave and a file cut by a crash
// gets its next record on a new line (see OpenFile). The error of a file
// that cannot be opened names it.
//
// OpenSink also makes a failed write an error rather than the death of the
// process (CatchSinkSignals): a reader that left a pipe, a file size limit.
func OpenSink(name string, opts SinkOptions) (*Sink, error) {
	if name == "" {
		return nil, errors.New("record: no sink name (a file, or - for stdout)")
	}
	CatchSinkSignals()
	s := &Sink{name: name, enc: opts.Encoder}
	if name == "-" {
		out := opts.Stdout
		if out == nil {
			out = os.Stdout
		}
		s.name = StdoutName
		s.lines = NewStreamWriter(out, opts.Encoder)
	} else {
		f, err := OpenFile(name, FileOptions{Sync: opts.Sync, Perm: opts.Perm, Encoder: opts.Encoder})
		if err != nil {
			return nil, err
		}
		s.lines = f
	}
	if opts.Tee != nil {
		s.lines = teeLines{LineWriter: s.lines, tee: opts.Tee}
	}
	if opts.Async {
		s.async = NewAsync(s.lines, AsyncOptions{QueueSize: opts.QueueSize, Policy: opts.Policy, Encoder: opts.Encoder, OnLoss: opts.OnLoss})
	} else {
		s.tally = &Tally{onLoss: opts.OnLoss, red: opts.Encoder.Redactor}
	}
	return s, nil
}

// Name returns the file's path, or StdoutName.
func (s *Sink) Name() string { return s.name }

// KeepsNoRecord says that Write keeps nothing of the record it is given
// once it returns (see Async.KeepsNoRecord; a Tee gets the line).
func (s *Sink) KeepsNoRecord() {}

// Write encodes rec and writes it (with Async: queues it). Without Async,
// every loss is counted, told to OnLoss and returned.
func (s *Sink) Write(rec *Record) error {
	if s.async != nil {
		return s.async.Write(rec)
	}
	line, err := s.enc.Encode(rec)
	if err != nil {
		s.tally.Lose(Loss{Ref: RefOf(rec), Reason: LostUnencodable, Err: err})
		return err
	}
	return s.writeLine(line, RefOf(rec))
}

// WriteLine writes one line already encoded (with Async: queues it), and
// counts it as Write does.
func (s *Sink) WriteLine(line []byte) error {
	if s.async != nil {
		return s.async.WriteLine(line)
	}
	return s.writeLine(line, Ref{})
}

func (s *Sink) writeLine(line []byte, ref Ref) error {
	if err := s.lines.WriteLine(line); err != nil {
		if ref.ID == "" {
			ref = RefOfLine(line)
		}
		s.tally.Lose(Loss{Ref: ref, Reason: reasonOf(err, false), Err: err})
		return err
	}
	s.tally.Wrote()
	return nil
}

// Stats returns the counts so far.
func (s *Sink) Stats() SinkStats {
	if s.async != nil {
		return s.async.Stats()
	}
	return s.tally.Stats()
}

// Dropped returns how many records a full queue dropped (QueueDrop).
func (s *Sink) Dropped() int64 { return s.Stats().Dropped }

// Close writes what is queued, closes the destination (a file is fsynced
// per its policy; standard output is flushed, not closed) and returns a
// *LostError when any record was lost, otherwise the close error. Calling
// it again returns ErrClosed (or, with Async, the same result).
func (s *Sink) Close() error {
	if s.async != nil {
		return s.async.Close()
	}
	cerr := s.lines.Close()
	if err := s.tally.Err(); err != nil {
		return err
	}
	return cerr
}

// MaxNamedLosses is how many lost records PrintLosses names one by one.
const MaxNamedLosses = 20

// PrintLosses returns an OnLoss that names each lost record on w, in one
// line after prefix ("mcpdiag proxy: "): the first MaxNamedLosses, then one
// line saying that later ones are counted, not named (the sink's Stats
// count them all). The line is rendered with visible.String: a record's
// method and tool are a peer's text. It is safe for concurrent use.
func PrintLosses(w io.Writer, prefix string) func(Loss) {
	var mu sync.Mutex
	n := 0
	return func(l Loss) {
		mu.Lock()
		defer mu.Unlock()
		n++
		switch {
		case n <= MaxNamedLosses:
			fmt.Fprintf(w, "%s%s\n", prefix, visible.String(l.String()))
		case n == MaxNamedLosses+1:
			fmt.Fprintf(w, "%smore than %d records lost; later losses are counted, not named\n", prefix, MaxNamedLosses)
		}
	}
}

var (
	_ Writer     = (*Sink)(nil)
	_ LineWriter = (*Sink)(nil)
)
