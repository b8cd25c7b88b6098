package report

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/wire"
)

// BadLine is a line of a record file that is not a record: malformed JSON,
// a value that is not an object, a field of the wrong type, or a line
// longer than the reader's limit; or (NoOutcome) a call or exchange record
// without an outcome.
type BadLine struct {
	// File names the input ("-" for stdin).
	File string `json:"file"`
	// Line is the 1-based line number.
	Line int64 `json:"line"`
	// Error says what is wrong with it.
	Error string `json:"error"`
	// NoOutcome marks a call or exchange record without an outcome: every
	// producer classifies what it records, so it is a producer's bug or a
	// record cut or written by hand. It is counted apart
	// (Summary.NoOutcome), in no section, and `mcpdiag report` exits 3.
	NoOutcome bool `json:"noOutcome,omitempty"`
	// Kind is the kind of a record without an outcome (NoOutcome): call
	// or exchange; empty for a line that is no record.
	Kind record.Kind `json:"kind,omitempty"`
}

// MaxLeftOutNamed is how many records without an outcome a HAR archive or
// a page names by file and line; past it they are counted.
const MaxLeftOutNamed = 20

// LeftOut is what an output that shows records (a HAR archive, a page)
// says of the records it left out because they have no outcome
// (BadLine.NoOutcome), as mcpdiag report names them on stderr: how many,
// and the first MaxLeftOutNamed by file and line.
type LeftOut struct {
	// Records counts them.
	Records int64 `json:"records"`
	// Named are the first MaxLeftOutNamed, in the order read.
	Named []BadLine `json:"named"`
}

// Add counts b and names it while fewer than MaxLeftOutNamed are named.
func (l *LeftOut) Add(b BadLine) {
	l.Records++
	if len(l.Named) < MaxLeftOutNamed {
		l.Named = append(l.Named, b)
	}
}

// Comment is the one line that names them: "N record(s) without an
// outcome left out (…): FILE:LINE (KIND), …", "" when there are none.
func (l *LeftOut) Comment() string {
	if l == nil || l.Records == 0 {
		return ""
	}
	at := make([]string, len(l.Named))
	for i, b := range l.Named {
		at[i] = fmt.Sprintf("%s:%d (%s)", b.File, b.Line, b.Kind)
	}
	more := ""
	if n := l.Records - int64(len(l.Named)); n > 0 {
		more = fmt.Sprintf(" and %d more", n)
	}
	return fmt.Sprintf("%d call or exchange record(s) without an outcome left out (a producer's bug, or a record cut or written by hand; mcpdiag report counts them apart, in no section): %s%s",
		l.Records, strings.Join(at, ", "), more)
}

// String returns "FILE:LINE: ERROR".
func (b BadLine) String() string { return fmt.Sprintf("%s:%d: %s", b.File, b.Line, b.Error) }

// BadLineAdder is a Report that also counts malformed lines (the
// Accumulator).
type BadLineAdder interface {
	AddBadLine(BadLine)
}

// ServeAdder is a Report that also reads the "serve" member of a server log
// line (faults.ServerDetails: the fault decisions), which a record.Record
// does not hold. Read calls AddServe instead of Add for a server line; serve
// is nil when the line has no such member, and is valid only during the
// call.
type ServeAdder interface {
	AddServe(r *record.Record, serve []byte)
}

// InputEnder is a Report told where each input ends: Read calls EndInput
// at the end of its input. The Accumulator links no authorization
// challenge and no era fallback to a request of another input.
type InputEnder interface {
	EndInput()
}

// Read streams the records of r, named name in BadLines, into every report:
// memory is bounded by the longest line, not by the input. A malformed line
// is skipped: it goes to onBad (when not nil) and to every report that is a
// BadLineAdder, and reading goes on with the next line. So does a call or
// exchange record without an outcome (BadLine.NoOutcome), which no report
// counts as a record. At the end of r every report that is an InputEnder
// is told so. Read returns the number of records read and an error only
// when r itself fails.
func Read(r io.Reader, name string, onBad func(BadLine), reports ...Report) (int64, error) {
	var n int64
	rd := record.NewReader(r)
	for {
		rec, err := rd.Next()
		if err == io.EOF {
			for _, rep := range reports {
				if e, ok := rep.(InputEnder); ok {
					e.EndInput()
				}
			}
			return n, nil
		}
		var le *record.LineError
		switch {
		case errors.As(err, &le):
			badLine(BadLine{File: name, Line: le.Line, Error: le.Err.Error()}, onBad, reports)
			continue
		case err != nil:
			return n, err
		case (rec.Kind == record.KindExchange || rec.Kind == record.KindCall) && rec.Outcome == "":
			badLine(BadLine{File: name, Line: rd.Line(), NoOutcome: true, Kind: rec.Kind,
				Error: fmt.Sprintf("%s record without an outcome (a producer's bug, or a record cut or written by hand): counted apart, in no section", article(string(rec.Kind)))}, onBad, reports)
			continue
		}
		n++
		var serve []byte
		if rec.Kind == record.KindServer {
			// Raw is the line as written: redacted here, as Decode
			// redacts the record, for a file of an older producer.
			if serve, _ = wire.Field(rd.Raw(), "serve"); len(serve) > 0 {
				serve = record.Default.RedactJSON(serve)
			}
		}
		for _, rep := range reports {
			if sa, ok := rep.(ServeAdder); ok && rec.Kind == record.KindServer {
				sa.AddServe(rec, serve)
				continue
			}
			rep.Add(rec)
		}
	}
}

// badLine gives b to onBad (when not nil) and to every report that is a
// BadLineAdder.
func badLine(b BadLine, onBad func(BadLine), reports []Report) {
	if onBad != nil {
		onBad(b)
	}
	for _, rep := range reports {
		if ba, ok := rep.(BadLineAdder); ok {
			ba.AddBadLine(b)
		}
	}
}

// article returns word with its indefinite article ("an exchange", "a
// call").
func article(word string) string {
	if word != "" && strings.ContainsRune("aeiou", rune(word[0])) {
		return "an " + word
	}
	return "a " + word
}
