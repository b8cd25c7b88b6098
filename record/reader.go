package record

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"regexp"
	"strings"
)

// ErrLineTooLong is the error of a LineError for a line longer than the
// reader's MaxLineSize.
var ErrLineTooLong = errors.New("record: line too long")

// LineError reports a line of a record file that is not a record: malformed
// JSON, a JSON value that is not an object, or a line that is too long. It
// is not fatal: the reader has already moved past the line, and the caller
// counts it and goes on.
type LineError struct {
	// Line is the 1-based line number.
	Line int64
	// Err says what is wrong (ErrLineTooLong, or a JSON error).
	Err error
}

// Error returns "line N: …".
func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }

// Unwrap returns the cause.
func (e *LineError) Unwrap() error { return e.Err }

// Reader reads records from JSON lines, streaming: memory is bounded by
// MaxLineSize whatever the size of the input. Blank lines are skipped; a
// trailing "\r" and a leading UTF-8 byte-order mark are ignored; unknown
// fields are ignored.
type Reader struct {
	// MaxLineSize bounds a line; DefaultMaxLineSize when 0. Set it before
	// the first call to Next.
	MaxLineSize int

	br   *bufio.Reader
	line int64
	err  error // fatal error, returned from now on
	buf  []byte
	raw  []byte // the line of the record Next returned last
}

// NewReader returns a reader of the records in r.
func NewReader(r io.Reader) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, 64<<10)}
}

// Raw returns the line (without surrounding white space) of the record Next
// returned last, for the members a Record does not hold (a server line's
// "serve"). It is valid until the next call to Next. It is the line as
// written, not redacted: a caller that prints from it redacts it first
// (Redactor.RedactJSON).
func (r *Reader) Raw() []byte { return r.raw }

// Line returns the number of the line read last.
func (r *Reader) Line() int64 { return r.line }

// Next returns the next record. At the end of the input it returns io.EOF.
// For a line that is not a record it returns a *LineError and the next call
// goes on with the following line. Any other error is an error of the
// underlying reader and is returned again by every later call.
func (r *Reader) Next() (*Record, error) {
	for {
		if r.err != nil {
			return nil, r.err
		}
		line, tooLong, err := r.readLine()
		if err != nil && (err != io.EOF || len(line) == 0 && !tooLong) {
			r.err = err
			return nil, err
		}
		r.line++
		if tooLong {
			return nil, &LineError{Line: r.line, Err: fmt.Errorf("%w: more than %d bytes", ErrLineTooLong, r.maxLine())}
		}
		if r.line == 1 {
			line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf"))
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		rec, derr := Decode(line)
		if derr != nil && err == io.EOF {
			// A producer writes a line and its "\n" together: a last
			// line without one is most likely being written now.
			derr = fmt.Errorf("%w (the last line, with no newline at its end: is the file still being written?)", derr)
		}
		if derr != nil {
			return nil, &LineError{Line: r.line, Err: derr}
		}
		r.raw = line
		return rec, nil
	}
}

func (r *Reader) maxLine() int {
	if r.MaxLineSize <= 0 {
		return DefaultMaxLineSize
	}
	return r.MaxLineSize
}

// readLine returns the next line without its "\n". A line longer than the
// limit is consumed to its end and reported as tooLong without being held
// in memory. err is io.EOF only for the last line when it has no "\n" (line
// may then be empty: the end of the input).
func (r *Reader) readLine() (line []byte, tooLong bool, err error) {
	r.buf = r.buf[:0]
	max := r.maxLine()
	for {
		chunk, err := r.br.ReadSlice('\n')
		if !tooLong {
			if len(r.buf)+len(chunk) > max+1 { // +1: the "\n"
				tooLong = true
				r.buf = r.buf[:0]
			} else {
				r.buf = append(r.buf, chunk...)
			}
		}
		switch err {
		case nil:
			return bytes.TrimSuffix(r.buf, []byte("\n")), tooLong, nil
		case bufio.ErrBufferFull:
			continue
		default:
			return r.buf, tooLong, err
		}
	}
}

// All returns the records as an iterator of (record, nil) and
// (nil, *LineError) pairs; it ends at the end of the input, or after
// yielding (nil, err) for a fatal error.
func (r *Reader) All() iter.Seq2[*Record, error] {
	return func(yield func(*Record, error) bool) {
		for {
			rec, err := r.Next()
			if err == io.EOF {
				return
			}
			if !yield(rec, err) {
				return
			}
			var le *LineError
			if err != nil && !errors.As(err, &le) {
				return
			}
		}
	}
}

// Decode reads one record from one line of JSON. The line must hold a
// JSON object; unknown fields are ignored. A line of an older schema version
// is upgraded (see Upgrade). The record is then redacted with Default as
// the encoder redacts a record it writes (Redactor.Record), so that a file
// written before a redaction fix, or by another producer, cannot carry a
// credential into what a reader prints (report, its HTML and HAR, matrix
// --from-records, ui). A line mcpdiag wrote is already redacted and reads
// unchanged: redaction of a redacted value leaves it as it is.
func Decode(line []byte) (*Record, error) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' {
		return nil, errors.New("not a JSON object")
	}
	rec := new(Record)
	if err := json.Unmarshal(line, rec); err != nil {
		return nil, valueFree(err)
	}
	Upgrade(rec, line)
	return Default.Record(rec), nil
}

// quotedRE is a Go-quoted string (%q) in an error's text.
var quotedRE = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)

// valueFree returns a decoding error without the values it quotes:
// strconv's, time's and json.Number's errors quote the text they could not
// read ("parsing \"…\": invalid syntax"), which in a line from another
// producer, or a damaged one, may be a credential, and readers print the
// error (report's "skipped malformed line"). A JSON type error names the
// field and the types, and the value of a number ("number 8675309.5" into
// an int field: a PIN, say), which is left out: only its JSON type stays.
func valueFree(err error) error {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	if errors.As(err, &typeErr) {
		c := *typeErr
		c.Value, _, _ = strings.Cut(c.Value, " ")
		return &c
	}
	if errors.As(err, &syntaxErr) {
		return err
	}
	msg := err.Error()
	if !strings.Contains(msg, `"`) {
		return err
	}
	return errors.New(quotedRE.ReplaceAllLiteralString(msg, `"…"`))
}

// readLimit is the body limit of Redactor.Record: a record as read is
// redacted, never cut (the reader's line limit bounds it already).
const readLimit = 1 << 40

// Record returns rec redacted as Encoder.Encode redacts a record it writes
// (every string scrubbed, URLs and headers redacted, bodies and ErrorData
// redacted as JSON or text, the session hashed, the credentials of its
// headers masked wherever they appear), without the encoder's limits: no
// body is cut. Unlike Encode it fills in nothing (no ID, time or version).
// rec is not modified; the result may share with it what needed no change.
func (r *Redactor) Record(rec *Record) *Record {
	if rec == nil {
		return nil
	}
	red := r.withHeaderSecrets(rec.RequestHeaders, rec.ResponseHeaders)
	e := Encoder{Redactor: red, BodyLimit: readLimit}
	c := new(Record)
	e.sanitizeInto(c, red, rec, true)
	return c
}
