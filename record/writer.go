package record

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"
)

// Writer writes records. Implementations in this package are safe for
// concurrent use.
type Writer interface {
	// Write encodes rec and writes it as one line. It does not modify rec
	// and does not keep it after returning.
	Write(rec *Record) error
	// Close flushes what was written (per the writer's policy) and
	// releases the writer; later Writes return ErrClosed.
	Close() error
}

// LineWriter is a sink for lines already encoded by an Encoder; [Async]
// writes through one. FileWriter and StreamWriter implement it.
type LineWriter interface {
	// WriteLine writes one encoded record: a line ending in its only "\n".
	// It must not keep line (or change it) after it returns: an [Async]
	// reuses the buffer for a later record.
	WriteLine(line []byte) error
	// Close flushes and releases the sink.
	Close() error
}

// Errors of the writers.
var (
	// ErrClosed is returned by writes after Close.
	ErrClosed = errors.New("record: writer closed")
	// ErrNotOneLine is returned by WriteLine for data that is not exactly
	// one line ending in "\n".
	ErrNotOneLine = errors.New("record: not exactly one line")
)

// SyncPolicy says when a FileWriter calls fsync. A file that is not a
// regular file (a pipe, a terminal, a device) is never fsynced.
type SyncPolicy string

// The fsync policies.
const (
	// SyncClose fsyncs once, on Close (the default): a crash of the
	// process loses nothing (every line is already in the kernel), a crash
	// of the machine may lose the tail.
	SyncClose SyncPolicy = "close"
	// SyncAlways fsyncs after every record: slow, but a record that Write
	// returned for survives a power loss.
	SyncAlways SyncPolicy = "always"
	// SyncNever leaves flushing to the kernel.
	SyncNever SyncPolicy = "never"
)

// ParseSyncPolicy reads the value of an --fsync flag: "close" (or ""),
// "always" or "never".
func ParseSyncPolicy(s string) (SyncPolicy, error) {
	switch SyncPolicy(s) {
	case "", SyncClose:
		return SyncClose, nil
	case SyncAlways, SyncNever:
		return SyncPolicy(s), nil
	}
	return "", fmt.Errorf("record: fsync policy %q: want close, always or never", s)
}

// FileOptions configure OpenFile.
type FileOptions struct {
	// Sync is the fsync policy; SyncClose when empty.
	Sync SyncPolicy
	// Perm is the mode of a new file; 0600 when 0 (recordings can hold
	// tool arguments and results).
	Perm fs.FileMode
	// Encoder redacts and encodes the records.
	Encoder Encoder
}

// FileWriter appends records to a file, one line per record, each written
// with a single write(2) (an Async's batch of lines with a single writev(2)
// on Linux) on a file opened O_APPEND: lines from several
// writers, even in other processes, do not interleave (on local file
// systems), and a crash leaves at most one incomplete last line, which the
// Reader reports and skips. There is no user-space buffer, so nothing is
// left to flush at exit but the fsync of the chosen policy.
type FileWriter struct {
	enc    Encoder
	sync   SyncPolicy
	name   string
	mu     sync.Mutex
	f      *os.File
	broken bool // a write failed part-way: the next line starts with "\n"
	closed bool
	lines  batchWriter // writeLines' means: a writev(2) of the lines (Linux), or a buffer
}

// OpenFile opens (creating it if needed) the record file at path for
// appending. If the file does not end in a newline (a line cut by a crash),
// the first record starts on a new line.
func OpenFile(path string, opts FileOptions) (*FileWriter, error) {
	policy, err := ParseSyncPolicy(string(opts.Sync))
	if err != nil {
		return nil, err
	}
	perm := opts.Perm
	if perm == 0 {
		perm = 0o600
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, perm)
	if err != nil {
		return nil, fmt.Errorf("record: %w", err)
	}
	w := &FileWriter{enc: opts.Encoder, sync: policy, name: path, f: f}
	if st, err := f.Stat(); err == nil && !st.Mode().IsRegular() {
		// A pipe, a terminal, /dev/stdout: nothing to fsync (and fsync
		// fails with EINVAL on most of them).
		w.sync = SyncNever
	}
	w.broken = !endsInNewline(path)
	return w, nil
}

// endsInNewline reports whether the file is empty or ends in "\n".
func endsInNewline(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return true
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.Size() == 0 || !st.Mode().IsRegular() {
		return true
	}
	var b [1]byte
	if _, err := f.ReadAt(b[:], st.Size()-1); err != nil {
		return true
	}
	return b[0] == '\n'
}

// Name returns the file's path.
func (w *FileWriter) Name() string { return w.name }

// Write encodes rec and appends it.
func (w *FileWriter) Write(rec *Record) error {
	line, err := w.enc.Encode(rec)
	if err != nil {
		return err
	}
	return w.WriteLine(line)
}

// WriteLine appends one encoded line with a single write and, with
// SyncAlways, fsyncs.
func (w *FileWriter) WriteLine(line []byte) error {
	if err := checkOneLine(line); err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return ErrClosed
	}
	return w.writeLineLocked(line)
}

func (w *FileWriter) writeLineLocked(line []byte) error {
	if w.broken {
		line = append([]byte{'\n'}, line...)
	}
	n, err := w.f.Write(line)
	if err != nil {
		if n > 0 {
			w.broken = n < len(line)
		}
		return fmt.Errorf("record: %w", err) // an *os.PathError names the file
	}
	w.broken = false
	if w.sync == SyncAlways {
		if err := w.f.Sync(); err != nil {
			return fmt.Errorf("record: %w", err)
		}
	}
	return nil
}

// writeLines appends lines (each one checked, encoded line) with a single
// write (a writev(2) of the lines' own buffers on Linux; with SyncAlways,
// one write and fsync per line). It returns how many of them are in
// the file whole: on an error, lines[:n] were written, lines[n] is the one
// the error cut (or did not start), and the rest were not written; a line
// cut part-way makes the next write start on a new line, as WriteLine does.
func (w *FileWriter) writeLines(lines [][]byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return 0, ErrClosed
	}
	if w.sync == SyncAlways {
		// Every record is synced on its own, as WriteLine does.
		for i, l := range lines {
			if err := w.writeLineLocked(l); err != nil {
				return i, err
			}
		}
		return len(lines), nil
	}
	prefix := 0
	if w.broken {
		prefix = 1
	}
	n, err := w.lines.write(w.f, prefix == 1, lines)
	if err != nil {
		whole, end := 0, prefix
		for _, l := range lines {
			if end+len(l) > n {
				break
			}
			end += len(l)
			whole++
		}
		if n > 0 {
			w.broken = n != end
		}
		return whole, fmt.Errorf("record: %w", err)
	}
	w.broken = false
	return len(lines), nil
}

// Sync fsyncs the file now, whatever the policy.
func (w *FileWriter) Sync() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return ErrClosed
	}
	return w.f.Sync()
}

// Close fsyncs (unless the policy is SyncNever) and closes the file. A
// second Close returns ErrClosed.
func (w *FileWriter) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return ErrClosed
	}
	w.closed = true
	var err error
	if w.sync != SyncNever {
		err = w.f.Sync()
	}
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("record: close %s: %w", w.name, err)
	}
	return nil
}

func checkOneLine(line []byte) error {
	if len(line) == 0 || bytes.IndexByte(line, '\n') != len(line)-1 {
		return ErrNotOneLine
	}
	return nil
}

// StreamWriter writes records as JSON lines to an io.Writer such as
// os.Stdout: one Write call per line, serialised by a mutex. When the
// io.Writer has a Flush() error method (a bufio.Writer), it is flushed after
// every line so that a reader at the other end of a pipe sees each record at
// once. Close flushes but does not close the io.Writer.
type StreamWriter struct {
	enc    Encoder
	mu     sync.Mutex
	w      io.Writer
	closed bool
}

// NewStreamWriter returns a writer of JSON lines to w.
func NewStreamWriter(w io.Writer, enc Encoder) *StreamWriter {
	return &StreamWriter{enc: enc, w: w}
}

type flusher interface{ Flush() error }

// Write encodes rec and writes it.
func (s *StreamWriter) Write(rec *Record) error {
	line, err := s.enc.Encode(rec)
	if err != nil {
		return err
	}
	return s.WriteLine(line)
}

// WriteLine writes one encoded line.
func (s *StreamWriter) WriteLine(line []byte) error {
	if err := checkOneLine(line); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	if _, err := s.w.Write(line); err != nil {
		return fmt.Errorf("record: write: %w", err)
	}
	if f, ok := s.w.(flusher); ok {
		if err := f.Flush(); err != nil {
			return fmt.Errorf("record: flush: %w", err)
		}
	}
	return nil
}

// Close flushes the io.Writer when it can be flushed; later writes return
// ErrClosed.
func (s *StreamWriter) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	s.closed = true
	if f, ok := s.w.(flusher); ok {
		return f.Flush()
	}
	return nil
}

var (
	_ Writer     = (*FileWriter)(nil)
	_ LineWriter = (*FileWriter)(nil)
	_ Writer     = (*StreamWriter)(nil)
	_ LineWriter = (*StreamWriter)(nil)
	_ Writer     = (*Async)(nil)
)
