package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/mcpdiag/mcpdiag/record"
)

// MaxHeldBadLines is how many malformed lines ReadFile holds back, before
// the input's first record, to give to onBad later; past it they are only
// counted (FileStats.Undelivered).
const MaxHeldBadLines = 20

// FileStats count the lines of one input read by ReadFile.
type FileStats struct {
	// Records counts the records with a kind (what a producer writes).
	Records int64
	// Kindless counts JSON objects without a "kind": not records.
	Kindless int64
	// Bad counts malformed lines.
	Bad int64
	// Undelivered counts the malformed lines not given to onBad: held back
	// past MaxHeldBadLines before the first record.
	Undelivered int64
}

// NotRecordsError is ReadFile's refusal of an input that holds no record
// at all (an empty file, /etc/passwd, JSON objects without "kind"): one
// line, naming the input.
type NotRecordsError struct {
	// Name names the input.
	Name string
	// Lines counts its lines that are not records (malformed or without a
	// kind); 0 for an empty input.
	Lines int64
	// First is its first malformed line, when it has one.
	First *BadLine
}

func (e *NotRecordsError) Error() string {
	word := "lines"
	if e.Lines == 1 {
		word = "line"
	}
	switch {
	case e.Lines == 0:
		return e.Name + ": no records (empty input)"
	case e.First != nil:
		why, _, _ := strings.Cut(e.First.Error, "\n")
		return fmt.Sprintf("%s: not a record file: none of its %d %s is a record (line %d: %s)", e.Name, e.Lines, word, e.First.Line, why)
	}
	return fmt.Sprintf("%s: not a record file: none of its %d %s is a record (JSON objects without \"kind\")", e.Name, e.Lines, word)
}

// ReadFile is Read for an input that must be a record file: it refuses one
// that holds no record (a *NotRecordsError), and it holds back the
// malformed lines met before the first record (up to MaxHeldBadLines) so
// that such an input is refused in one line, not reported as many skipped
// lines and "0 records"; once the first record is read they go to onBad in
// order, and later ones at once. The reports get every line as Read gives
// them. The error is a *NotRecordsError, or the reader's own.
func ReadFile(r io.Reader, name string, onBad func(BadLine), reports ...Report) (FileStats, error) {
	k := &kindCount{}
	var held []BadLine
	var first *BadLine
	give := func(b BadLine) {
		if onBad != nil {
			onBad(b)
		}
	}
	k.onFirst = func() {
		for _, b := range held {
			give(b)
		}
		held = nil
	}
	bad := func(b BadLine) {
		k.st.Bad++
		if first == nil {
			first = &b
		}
		switch {
		case k.st.Records > 0:
			give(b)
		case len(held) < MaxHeldBadLines:
			held = append(held, b)
		default:
			k.st.Undelivered++
		}
	}
	if _, err := Read(r, name, bad, append([]Report{k}, reports...)...); err != nil {
		return k.st, err
	}
	if k.st.Records == 0 {
		k.st.Undelivered += int64(len(held))
		return k.st, &NotRecordsError{Name: name, Lines: k.st.Bad + k.st.Kindless, First: first}
	}
	return k.st, nil
}

// kindCount counts the records of one input by whether they have a kind,
// and calls onFirst at the first that has.
type kindCount struct {
	st      FileStats
	onFirst func()
}

func (k *kindCount) Add(r *record.Record) {
	if r.Kind == "" {
		k.st.Kindless++
		return
	}
	k.st.Records++
	if k.st.Records == 1 && k.onFirst != nil {
		k.onFirst()
	}
}
