// Package report summarises record files (docs/records.md): counts by layer,
// outcome and tool, latency percentiles, the worst offenders and the slowest
// records with their ids; CI gates on outcomes and against a baseline; and a
// HAR 1.2 export of the exchanges. It is the library behind `mcpdiag
// report` (docs/report.md).
//
// Records stream through; nothing grows with the number of records. Adding
// is separate from rendering:
//
//	acc := report.New(report.Options{})
//	har := report.NewHARWriter(f, report.HAROptions{})
//	if _, err := report.Read(in, "calls.jsonl", nil, acc, har); err != nil { … }
//	acc.Close()                 // calls whose call line is missing become orphans
//	if err := har.Close(); err != nil { … }
//	s := acc.Summary()
//	g := report.Gates{FailOn: []classify.Outcome{classify.ToolError}}
//	s.Gates, _ = g.Check(s)
//	report.NewTextReporter(s).Report(os.Stdout)
//
// # Counting
//
// Call lines, exchange lines and server lines are counted in three separate
// sections and never mixed: a call that took a 503 and a retry is one call
// (its final outcome) and two exchanges. A call whose exchanges were
// recorded but whose call line never was (the producer was killed) is
// rebuilt from its exchanges at Close and counted as an orphan call.
//
// # Percentiles
//
// Latency is timings.totalMs. Up to Options.ExactSamples values per key are
// kept and the percentiles are exact (nearest rank); past that they come
// from a log-bucket sketch whose values are within SketchRelativeError (1%)
// of the exact ones, in a few kilobytes per key.
package report
