package record

// Warning codes that a producer other than the classifier adds to a
// record, defined here so that every reader (report, the page, judge) tests
// the same typed fact, never a message's prose.
const (
	// WarnRunInterrupted marks each record of a matrix run that the
	// matrix's stop (an interrupt, a context that ended) cut short: the
	// record is what went over the wire, but the run was not judged, and a
	// failure in it may be the stop's doing (a killed client, a cut
	// connection), not the client's or the server's.
	WarnRunInterrupted = "matrix-run-interrupted"
	// WarnLineLate marks a matrix server log line logged after its run was
	// judged (the request reached the server after the run's wait): in no
	// verdict.
	WarnLineLate = "matrix-line-late"
)

// HasWarning reports whether r carries a warning with the code.
func (r *Record) HasWarning(code string) bool {
	for i := range r.Warnings {
		if r.Warnings[i].Code == code {
			return true
		}
	}
	return false
}

// RunInterrupted reports whether r is a record of a matrix run that the
// matrix's stop cut short (it carries WarnRunInterrupted).
func (r *Record) RunInterrupted() bool { return r.HasWarning(WarnRunInterrupted) }
