package report

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mcpdiag/mcpdiag/internal/visible"
	"github.com/mcpdiag/mcpdiag/record"
)

// Reporter renders a summary to w.
type Reporter func(w io.Writer) error

// Report calls r.
func (r Reporter) Report(w io.Writer) error { return r(w) }

// NewJSONReporter renders s as one indented JSON document (the Format
// schema), which can serve as a later run's baseline.
func NewJSONReporter(s *Summary) Reporter {
	return func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(s)
	}
}

// NewTextReporter renders s for people: one block per kind of record that
// is present, each with its counts by layer and outcome, latency
// percentiles, the tools, the worst offenders and the slowest records with
// their ids, then the gates' verdict.
func NewTextReporter(s *Summary) Reporter {
	return func(w io.Writer) error {
		ew := &errWriter{w: w}
		writeText(ew, s)
		return ew.err
	}
}

// errWriter remembers the first write error and skips the rest.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return len(p), nil
	}
	_, e.err = e.w.Write(p)
	return len(p), nil
}

// printf writes the format with its arguments; an argument of a string
// kind, which may come from a record file (a tool name, an outcome, a
// scenario, a gate's message quoting them), is rendered with
// visible.String: a record file is input, and a control or bidi character
// in it is shown, never sent to the terminal. The format is mcpdiag's own.
func (e *errWriter) printf(format string, args ...any) {
	for i, a := range args {
		if v := reflect.ValueOf(a); v.Kind() == reflect.String {
			args[i] = visible.String(v.String())
		}
	}
	fmt.Fprintf(e, format, args...)
}

// layerOrder lists the layers from the wire up, then "none" (NOT_CLASSIFIED:
// no layer judged), then the others.
var layerOrder = []string{"transport", "protocol", "interaction", "application", "none", None, Other}

func writeText(w *errWriter, s *Summary) {
	files := "stdin"
	switch len(s.Files) {
	case 0:
	case 1:
		if s.Files[0] != "-" {
			files = s.Files[0]
		}
	default:
		files = fmt.Sprintf("%d files", len(s.Files))
	}
	w.printf("mcpdiag report: %s, %d records", files, s.Records)
	if s.Malformed.Lines > 0 {
		w.printf(", %d malformed %s skipped", s.Malformed.Lines, plural(s.Malformed.Lines, "line", "lines"))
	}
	w.printf("\n")
	if s.NoOutcome > 0 {
		w.printf("  incomplete: %d call or exchange %s without an outcome (a producer's bug, or a record cut or written by hand): counted apart, in no section\n",
			s.NoOutcome, plural(s.NoOutcome, "record", "records"))
	}
	if s.Dropped > 0 {
		w.printf("  warning: the producer dropped %d records (full queue): every count is short\n", s.Dropped)
	}
	if s.Interrupted > 0 {
		w.printf("  incomplete: %d %s of runs an interrupt cut short (%s): not judged, counted apart as interrupted, not as failures nor latency samples\n",
			s.Interrupted, plural(s.Interrupted, "record is", "records are"), InterruptedWords(s.InterruptedWarnings))
	}
	if s.CutByShutdown > 0 {
		w.printf("  incomplete: %d %s of exchanges the recording proxy's or server's own shutdown cut (flag SD): not judged, counted apart as cut by shutdown, not as failures nor latency samples\n",
			s.CutByShutdown, plural(s.CutByShutdown, "record is", "records are"))
	}
	if s.Rejudged > 0 {
		w.printf("  %d exchange %s of an older mcpdiag (before 2026-12-06) said RESULT_SUCCESS (application layer) for an exchange that is not a JSON-RPC request (a GET, a DELETE, a batch): counted as HTTP_SUCCESS (transport layer), as this version records them\n", s.Rejudged, plural(s.Rejudged, "record", "records"))
	}
	if s.OtherKinds > 0 {
		w.printf("  %d records of unknown kinds ignored\n", s.OtherKinds)
	}
	shown := false
	for _, sec := range []*Section{s.Calls, s.Exchanges, s.Server} {
		if sec == nil || sec.Total == 0 && sec.Open == 0 {
			continue
		}
		shown = true
		w.printf("\n")
		writeSection(w, sec)
	}
	if !shown {
		w.printf("\nno calls, exchanges or server lines\n")
	}
	if g := s.Gates; g != nil {
		w.printf("\ngates (%s): ", kindPlural(g.On))
		if g.Passed {
			w.printf("passed\n")
		}
		if len(g.Failures) > 0 {
			w.printf("FAILED\n")
		}
		for _, f := range g.Failures {
			w.printf("  %s: %s\n", f.Gate, f.Message)
		}
	}
}

func writeSection(w *errWriter, sec *Section) {
	w.printf("%s: %d", sec.plural(), sec.Total)
	// A server line has no outcome: "0 failed" would say nothing of what
	// the server did, so its block counts the faults that fired instead
	// (and failures only if a line carries an outcome that is one).
	if sec.Kind != "server" || sec.Failures > 0 {
		w.printf(", %d failed (%s)", sec.Failures, pct(sec.FailureRate))
	}
	if sec.Probes > 0 {
		w.printf(", %d %s sent on purpose by mcpdiag probe (not failures: its rules judge the answers; the rate is of the others)", sec.Probes, plural(sec.Probes, "probe", "probes"))
	}
	if n := sec.EraFallbacks - sec.LegacyFallbacks; n > 0 {
		w.printf(", %d %s of 2026-07-28 that a 2025-11-25 server refused, the client falling back to initialize (not failures: the spec's backward-compatibility rule; the rate is of the others)", n, plural(n, "era probe", "era probes"))
	}
	if n := sec.LegacyFallbacks; n > 0 {
		w.printf(", %d POST %s answered 404/405, the client falling back to the 2024-11-05 HTTP+SSE GET stream (not failures: the spec's backward-compatibility rule; the rate is of the others)", n, plural(n, "initialize", "initializes"))
	}
	if sec.Interrupted > 0 {
		w.printf(", %d interrupted (cut short by an interrupt: not failures; the rate is of the others)", sec.Interrupted)
	}
	if sec.CutByShutdown > 0 {
		w.printf(", %d cut by shutdown (the recording proxy's or server's own, flag SD: not failures; the rate is of the others)", sec.CutByShutdown)
	}
	if sec.Unanswered > 0 {
		w.printf(", %d unanswered on the stream (2024-11-05 HTTP+SSE requests accepted 202 whose answer never came on the GET stream: failures, as a STREAM_INCOMPLETE)", sec.Unanswered)
	}
	if sec.Resumed > 0 {
		w.printf(", %d %s whose stream the server closed before the response, resumed by the client's GET (counted by the response that came there)", sec.Resumed, plural(sec.Resumed, "request", "requests"))
	}
	if sec.NotResumed > 0 {
		w.printf(", %d resumable %s never resumed (the server closed the stream after an event id and no GET of the session brought the response: failures", sec.NotResumed, plural(sec.NotResumed, "stream", "streams"))
		if sec.ResumeAmbiguous > 0 {
			w.printf("; %d of them because a response of their id could not be told from another request's", sec.ResumeAmbiguous)
		}
		w.printf(")")
	}
	if n := sec.UnlinkedResponses + sec.AmbiguousResponses; n > 0 {
		w.printf(", %d %s on GET streams that answered no request of the input", n, plural(n, "response", "responses"))
		if sec.AmbiguousResponses > 0 {
			w.printf(" (%d ambiguous: two requests of the session shared the id)", sec.AmbiguousResponses)
		}
	}
	if sec.AuthChallenges > 0 {
		w.printf(", %d %s answered (401/403 with WWW-Authenticate; the client got a token and sent the request again: not failures, the spec's authorization flow; the rate is of the others)", sec.AuthChallenges, plural(sec.AuthChallenges, "auth challenge", "auth challenges"))
	}
	if sec.DesignedAnswers > 0 {
		w.printf(", %d designed %s (a GET or DELETE answered 405: no SSE stream, no client session end; a GET answered 3xx: a redirect of the OAuth flow; no JSON-RPC message: not failures, the spec designs them; the rate is of the others)", sec.DesignedAnswers, plural(sec.DesignedAnswers, "answer", "answers"))
	}
	if sec.ErrorAnswers > 0 {
		w.printf(", %d %s to server requests (the client's JSON-RPC error)", sec.ErrorAnswers, plural(sec.ErrorAnswers, "error answer", "error answers"))
	}
	if sec.RefusedAnswers > 0 {
		w.printf(", %d %s to server requests the server refused (its JSON-RPC error in a 2xx)", sec.RefusedAnswers, plural(sec.RefusedAnswers, "client answer", "client answers"))
	}
	if sec.Kind == "server" || len(sec.Faults) > 0 {
		w.printf(", a fault fired on %d (%s)", sec.FaultLines, pct(rate(sec.FaultLines, sec.Total)))
	}
	if sec.Orphans > 0 {
		w.printf(", %d rebuilt from exchanges without a call line", sec.Orphans)
	}
	if sec.Open > 0 {
		w.printf(", %d still open", sec.Open)
	}
	w.printf("\n")

	var layers []string
	for _, l := range layerOrder {
		if n, ok := sec.ByLayer[l]; ok {
			layers = append(layers, fmt.Sprintf("%s %d", l, n))
		}
	}
	var extra []string
	for l := range sec.ByLayer {
		if !slices.Contains(layerOrder, l) {
			extra = append(extra, l)
		}
	}
	slices.Sort(extra)
	for _, l := range extra {
		layers = append(layers, fmt.Sprintf("%s %d", l, sec.ByLayer[l]))
	}
	w.printf("  by layer:    %s\n", strings.Join(layers, ", "))
	var outcomes []string
	for _, c := range sec.ByOutcome {
		o := fmt.Sprintf("%s %d", c.Outcome, c.Count)
		if c.Interrupted > 0 {
			o += fmt.Sprintf(" (%d interrupted)", c.Interrupted)
		}
		if c.CutByShutdown > 0 {
			o += fmt.Sprintf(" (%d cut by shutdown)", c.CutByShutdown)
		}
		if c.Unanswered > 0 {
			o += fmt.Sprintf(" (%d unanswered on the stream)", c.Unanswered)
		}
		if c.AuthChallenges > 0 {
			o += fmt.Sprintf(" (%d %s answered)", c.AuthChallenges, plural(c.AuthChallenges, "auth challenge", "auth challenges"))
		}
		if c.DesignedAnswers > 0 {
			o += fmt.Sprintf(" (%d designed %s)", c.DesignedAnswers, plural(c.DesignedAnswers, "answer", "answers"))
		}
		outcomes = append(outcomes, o)
	}
	w.printf("  by outcome:  %s\n", strings.Join(outcomes, ", "))
	if len(sec.ChallengeLinks) > 0 {
		// The challenges of a proxy's or server's records report linked
		// to the client's answer, each with the exchange that answered it.
		var links []string
		for _, l := range sec.ChallengeLinks {
			links = append(links, fmt.Sprintf("%s %d %s answered by %s", target(l.Method, l.Tool), l.Status, l.ID, l.AnsweredBy))
		}
		if more := sec.ChallengesLinked - int64(len(sec.ChallengeLinks)); more > 0 {
			links = append(links, fmt.Sprintf("%d more", more))
		}
		w.printf("  answered challenges (the client's next such request carried a new token and was not refused): %s\n", strings.Join(links, "; "))
	}
	if len(sec.ResumeLinks) > 0 {
		var links []string
		for _, l := range sec.ResumeLinks {
			links = append(links, fmt.Sprintf("%s %s resumed by %s: %s", target(l.Method, l.Tool), l.ID, l.ResumedBy, l.Outcome))
		}
		if more := sec.Resumed - int64(len(sec.ResumeLinks)); more > 0 {
			links = append(links, fmt.Sprintf("%d more", more))
		}
		w.printf("  resumed streams (the response came on the GET that resumed the request's stream): %s\n", strings.Join(links, "; "))
	}
	w.printf("  latency:     %s\n", latencyText(sec.Latency))
	if len(sec.Faults) > 0 {
		w.printf("  faults fired:\n")
		rows := [][]string{{"SCENARIO", "LINES", "FIRED", "E.G."}}
		for _, f := range sec.Faults {
			eg := "-"
			if len(f.Examples) > 0 {
				eg = idList(f.Examples)
			}
			rows = append(rows, []string{f.Scenario, strconv.FormatInt(f.Lines, 10), strconv.FormatInt(f.Fired, 10), eg})
		}
		table(w, rows, "lrrl")
	}

	if len(sec.ByTool) > 0 {
		w.printf("  by tool:\n")
		rows := [][]string{{"TOOL", strings.ToUpper(sec.plural()), "FAILED", "P50", "P95", "P99"}}
		for _, t := range sec.ByTool {
			l := t.Latency
			rows = append(rows, []string{t.Name(), strconv.FormatInt(t.Total, 10), strconv.FormatInt(t.Failures, 10),
				msOrDash(l, l.P50Ms), msOrDash(l, l.P95Ms), msOrDash(l, l.P99Ms)})
		}
		table(w, rows, "lrrrrr")
	}
	if len(sec.WorstOffenders) > 0 {
		w.printf("  worst offenders:\n")
		var rows [][]string
		for _, o := range sec.WorstOffenders {
			rows = append(rows, []string{o.Name(), o.Outcome, strconv.FormatInt(o.Count, 10), "e.g. " + idList(o.Examples)})
		}
		table(w, rows, "llrl")
	}
	if len(sec.Slowest) > 0 {
		w.printf("  slowest:\n")
		var rows [][]string
		for _, s := range sec.Slowest {
			id := cmp.Or(s.ID, "(no id)")
			if s.CallID != "" {
				id += " (call " + s.CallID + ")"
			}
			rows = append(rows, []string{FormatMs(s.TotalMs), s.Name(), orNone(s.Outcome), id})
		}
		table(w, rows, "rlll")
	}
}

// InterruptedWords names the interrupted warnings' codes: "warning
// matrix-run-interrupted", "warnings call-interrupted, matrix-run-interrupted".
func InterruptedWords(codes []string) string {
	if len(codes) == 0 {
		codes = record.InterruptedWarnings // a summary read from an older --json
	}
	return plural(int64(len(codes)), "warning ", "warnings ") + strings.Join(codes, ", ")
}

// table writes rows indented by four spaces, columns two spaces apart,
// aligned left or right as align says ("l" or "r" per column). The last
// column is not padded when it is aligned left. Each cell is rendered with
// visible.String (and measured so).
func table(w *errWriter, rows [][]string, align string) {
	width := make([]int, len(align))
	for _, r := range rows {
		for i, c := range r {
			r[i] = visible.String(c)
			width[i] = max(width[i], utf8.RuneCountInString(r[i]))
		}
	}
	var b strings.Builder
	for _, r := range rows {
		b.Reset()
		b.WriteString("    ")
		for i, c := range r {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if i > 0 {
				b.WriteString("  ")
			}
			switch {
			case align[i] == 'r':
				b.WriteString(pad + c)
			case i == len(r)-1:
				b.WriteString(c)
			default:
				b.WriteString(c + pad)
			}
		}
		b.WriteString("\n")
		_, _ = io.WriteString(w, b.String())
	}
}

func latencyText(l Latency) string {
	if l.Samples == 0 {
		return "not measured"
	}
	method := "exact"
	if l.Method == MethodSketch {
		method = fmt.Sprintf("sketch, ±%g%%", 100*l.RelativeError)
	}
	return fmt.Sprintf("p50 %s  p95 %s  p99 %s  (min %s, mean %s, max %s; %d samples, %s)",
		FormatMs(l.P50Ms), FormatMs(l.P95Ms), FormatMs(l.P99Ms), FormatMs(l.MinMs), FormatMs(l.MeanMs), FormatMs(l.MaxMs), l.Samples, method)
}

func msOrDash(l Latency, ms float64) string {
	if l.Samples == 0 {
		return "-"
	}
	return FormatMs(ms)
}

// FormatMs formats milliseconds for people: "0.41ms", "12.3ms", "812ms",
// "1.24s".
func FormatMs(ms float64) string {
	switch {
	case ms >= 1000:
		return strconv.FormatFloat(ms/1000, 'f', 2, 64) + "s"
	case ms >= 100:
		return strconv.FormatFloat(ms, 'f', 0, 64) + "ms"
	case ms >= 10:
		return strconv.FormatFloat(ms, 'f', 1, 64) + "ms"
	}
	return strconv.FormatFloat(ms, 'f', 2, 64) + "ms"
}

func idList(ids []string) string {
	if len(ids) == 0 {
		return "(no ids)"
	}
	return strings.Join(ids, ", ")
}

func orNone(s string) string {
	if s == "" {
		return None
	}
	return s
}

func plural(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
