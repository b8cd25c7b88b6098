package ui

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"strings"

	_ "embed"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/internal/visible"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/report"
)

// The page's module and style sheet, inlined into every page.
var (
	//go:embed assets/app.js
	appJS string
	//go:embed assets/app.css
	appCSS string
	//go:embed assets/body.html
	bodyHTML string
)

// RecordsElementID is the id of the <script type="application/x-ndjson">
// element that holds a static page's records, one JSON object a line.
const RecordsElementID = "mcpdiag-records"

// meta is what the page knows of mcpdiag beyond the records: the spec rule
// behind each warning code, what each flag means, and which outcomes are
// not failures.
type meta struct {
	WarningRules map[string]string `json:"warningRules"`
	FlagDocs     map[string]string `json:"flagDocs"`
	Outcomes     []outcomeMeta     `json:"outcomes"`
	Layers       []string          `json:"layers"`
	// Interrupted are the warning codes of a record of a matrix run or a
	// call an interrupt cut short (record.InterruptedWarnings): not a
	// failure, as in mcpdiag report.
	Interrupted []string `json:"interrupted"`
	// CutByShutdown is the flag of an exchange the recording proxy's or
	// server's own shutdown cut (record.FlagSD): not a failure, as in
	// mcpdiag report.
	CutByShutdown string `json:"cutByShutdown"`
	// CutOutcomes are the outcomes of an exchange the shutdown cut
	// (record.CutOutcomes): an SD record with another outcome holds the
	// server's own failure, judged, as in mcpdiag report.
	CutOutcomes []classify.Outcome `json:"cutOutcomes"`
	// Challenge is the auth step and decision action of an authorization
	// challenge the client answered (record.Record.ChallengeAnswered): not
	// a failure, as in mcpdiag report.
	Challenge challengeMeta `json:"challenge"`
	// Designed are the rules of an answer the spec designs to a request
	// that is no JSON-RPC message (record.Record.DesignedAnswer): not a
	// failure, as in mcpdiag report.
	Designed designedMeta `json:"designed"`
	// Unanswered names a 2024-11-05 HTTP+SSE request whose answer never
	// came on the stream (record.Record.UnansweredOnStream): a failure
	// though its outcome is not one, or cut by shutdown when the reason is
	// the proxy's stop, as in mcpdiag report.
	Unanswered unansweredMeta `json:"unanswered"`
}

// unansweredMeta is record.Record.UnansweredOnStream's typed facts: the
// outcome of such a record and the reason the shutdown cut it.
type unansweredMeta struct {
	Outcome  classify.Outcome `json:"outcome"`
	Shutdown string           `json:"shutdown"`
	Unknown  string           `json:"unknown"`
}

// designedMeta is record.Record.DesignedAnswer's rule: the outcome and
// the HTTP methods and statuses.
type designedMeta struct {
	Outcome classify.Outcome      `json:"outcome"`
	Rules   []record.DesignedRule `json:"rules"`
}

// challengeMeta names the typed facts of an answered challenge.
type challengeMeta struct {
	Step   string `json:"step"`
	Action string `json:"action"`
}

type outcomeMeta struct {
	Name  string `json:"name"`
	Layer string `json:"layer"`
	// NotFailure: a success, TASK_CREATED or NOT_CLASSIFIED
	// (report.Failure); INPUT_REQUIRED is a failure on a call only.
	NotFailure bool `json:"notFailure,omitempty"`
}

func newMeta() meta {
	m := meta{WarningRules: map[string]string{}, FlagDocs: map[string]string{},
		Layers:      []string{"transport", "protocol", "interaction", "application", "none"},
		Interrupted: record.InterruptedWarnings, CutByShutdown: string(record.FlagSD), CutOutcomes: record.CutOutcomes,
		Challenge:  challengeMeta{Step: record.AuthStepChallenge, Action: record.ActionReauthorize},
		Designed:   designedMeta{Outcome: record.DesignedOutcome, Rules: record.DesignedRules},
		Unanswered: unansweredMeta{Outcome: classify.RequestAccepted, Shutdown: record.AnswerShutdown, Unknown: record.AnswerUnknown}}
	for _, c := range classify.WarningCodes() {
		m.WarningRules[c] = classify.Rule(c)
	}
	for _, f := range record.AllFlags() {
		m.FlagDocs[string(f)] = record.FlagDoc(f)
	}
	all := []classify.Outcome{
		classify.NetworkError, classify.HTTPError, classify.EmptyResponse, classify.UnexpectedContentType,
		classify.StreamIncomplete, classify.NotificationAccepted, classify.MalformedJSON, classify.InvalidEnvelope,
		classify.JSONRPCError, classify.InvalidToolResult, classify.InvalidResult, classify.InputRequired,
		classify.TaskCreated, classify.ToolError, classify.ToolSuccess, classify.ResultSuccess, classify.NotClassified,
	}
	all = append(all, classify.CallOutcomes...)
	for _, o := range all {
		m.Outcomes = append(m.Outcomes, outcomeMeta{Name: string(o), Layer: string(o.Layer()),
			NotFailure: o.Success() || o == classify.TaskCreated || o == classify.NotClassified})
	}
	return m
}

// pageConfig is the page's <script id="mcpdiag-config"> element.
type pageConfig struct {
	// Mode is "static" (records in the page) or "live" (server-sent events).
	Mode  string `json:"mode"`
	Title string `json:"title"`
	// Events is the URL of the event stream, relative to the page.
	Events string `json:"events,omitempty"`
	Meta   meta   `json:"meta"`
}

func hash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

// contentSecurityPolicy allows the page's own inline module and style
// sheet by their hashes and nothing else: no fetch at all for a static
// page, its own origin only for a live one (the event stream).
func contentSecurityPolicy(live bool) string {
	connect := "'none'"
	if live {
		connect = "'self'"
	}
	return "default-src 'none'; script-src " + hash(appJS) + "; style-src " + hash(appCSS) +
		"; img-src data:; connect-src " + connect + "; base-uri 'none'; form-action 'none'"
}

// scriptJSON marshals v for a <script> element of a JSON type: no "<" is
// left, so no "</script" or "<!--" can end or change the element early
// (inside JSON a "<" can only be in a string, where \u003c means the same),
// and no bidi or other control character is left raw in the page's source
// (visible.JSON: the same value, as \u escapes).
func scriptJSON(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return visible.JSON(bytes.ReplaceAll(b, []byte("<"), []byte(`\u003c`))), nil
}

// writeHead writes the page up to the opening tag of the records element.
func writeHead(w io.Writer, cfg pageConfig) error {
	cfgJSON, err := scriptJSON(cfg)
	if err != nil {
		return fmt.Errorf("ui: page config: %w", err)
	}
	title := html.EscapeString(cfg.Title)
	_, err = fmt.Fprintf(w, `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="%s">
<meta name="referrer" content="no-referrer">
<title>%s</title>
<style>%s</style>
</head>
<body>
%s
<script id="mcpdiag-config" type="application/json">%s</script>
<script id="%s" type="application/x-ndjson">
`, html.EscapeString(contentSecurityPolicy(cfg.Mode == "live")), title, appCSS,
		strings.ReplaceAll(bodyHTML, "{{title}}", title), cfgJSON, RecordsElementID)
	return err
}

// MatrixElementID is the id of the <script type="application/x-ndjson">
// element that holds a matrix page's verdicts: the lines of mcpdiag matrix
// --json, one case a line.
const MatrixElementID = "mcpdiag-matrix"

// EraFallbacksElementID is the id of the <script type="application/json">
// element that holds a static page's era fallbacks: a JSON array of the
// IDs of the exchange records mcpdiag report counted as era fallbacks by
// linking them to their client's initialize (report.Accumulator's
// TakeEraFallbacks). The page shows those rows as not failed, as the
// report counts them; a live page gets them as events named "fallback".
const EraFallbacksElementID = "mcpdiag-era-fallbacks"

// LeftOutElementID is the id of the <script type="application/json">
// element that holds what a static page left out: the call and exchange
// records without an outcome (report.LeftOut, null when none), which the
// page names by file and line beside its count of records.
const LeftOutElementID = "mcpdiag-left-out"

// ChallengesElementID is the id of the <script type="application/json">
// element that holds a static page's answered challenges: a JSON array of
// the report.ChallengeLink objects ({"id", "answeredBy", …}) of the
// authorization challenges in a proxy's or server's records that mcpdiag
// report counts as answered by linking them to their client's request
// with a new token (report.Accumulator's TakeChallengeLinks). The page
// shows those rows as not failed, as the report counts them; a live page
// gets them as events named "challenge".
const ChallengesElementID = "mcpdiag-answered-challenges"

// ResumesElementID is the id of the <script type="application/json">
// element that holds a static page's resumed streams: a JSON array of the
// report.ResumeLink objects ({"id", "resumedBy", "outcome", …}) of the
// requests whose stream the server closed before their response, which
// mcpdiag report counts by the response on the GET that resumed the
// stream (report.Accumulator's TakeResumeLinks). The page shows those rows
// with that response's verdict, as the report counts them; a live page
// gets them as events named "resume".
const ResumesElementID = "mcpdiag-resumed-streams"

// writeTail closes the records element, adds the matrix's element (empty
// when there is none), the era fallbacks' element, the left-out element,
// the answered challenges' element, the resumed streams' element and the
// module.
func writeTail(w io.Writer, matrix []byte, fallbacks []string, leftOut *report.LeftOut, challenges []report.ChallengeLink, resumes []report.ResumeLink) error {
	if fallbacks == nil {
		fallbacks = []string{}
	}
	fb, err := scriptJSON(fallbacks)
	if err != nil {
		return fmt.Errorf("ui: era fallbacks: %w", err)
	}
	lo, err := scriptJSON(leftOut)
	if err != nil {
		return fmt.Errorf("ui: records left out: %w", err)
	}
	if challenges == nil {
		challenges = []report.ChallengeLink{}
	}
	ch, err := scriptJSON(challenges)
	if err != nil {
		return fmt.Errorf("ui: answered challenges: %w", err)
	}
	if resumes == nil {
		resumes = []report.ResumeLink{}
	}
	rs, err := scriptJSON(resumes)
	if err != nil {
		return fmt.Errorf("ui: resumed streams: %w", err)
	}
	_, err = fmt.Fprintf(w, "</script>\n<script id=\"%s\" type=\"application/x-ndjson\">\n%s</script>\n<script id=\"%s\" type=\"application/json\">%s</script>\n<script id=\"%s\" type=\"application/json\">%s</script>\n<script id=\"%s\" type=\"application/json\">%s</script>\n<script id=\"%s\" type=\"application/json\">%s</script>\n<script type=\"module\">%s</script>\n</body>\n</html>\n",
		MatrixElementID, visible.JSON(bytes.ReplaceAll(matrix, []byte("<"), []byte(`\u003c`))), EraFallbacksElementID, fb, LeftOutElementID, lo, ChallengesElementID, ch, ResumesElementID, rs, appJS)
	return err
}

// HTMLOptions configure a static page.
type HTMLOptions struct {
	// Title is the page's title ("mcpdiag report" when empty).
	Title string
}

// HTMLWriter writes one self-contained static page with the records added
// to it embedded as data. Records stream through: the page is written as
// they come, and nothing is kept. It is a report.Report; call Close once
// after the last record, then check its error.
type HTMLWriter struct {
	bw     *bufio.Writer
	err    error
	n      int64
	closed bool
	matrix []byte
	// leftOut are the records without an outcome, which no report gets
	// as a record (report.BadLine.NoOutcome): the page names them.
	leftOut report.LeftOut
	// links counts the records as mcpdiag report does, for the era
	// fallbacks and the answered challenges it links at read time
	// (EraFallbacksElementID, ChallengesElementID).
	links *report.Accumulator
}

// SetMatrix adds a matrix's verdicts to the page (the JSON Lines of
// matrix.Report.WriteJSON): the page then shows them as a grid of
// scenarios by era, coloured by verdict. Call it before Close.
func (h *HTMLWriter) SetMatrix(jsonLines []byte) { h.matrix = append([]byte(nil), jsonLines...) }

// NewHTMLWriter writes the head of the page to w and returns the writer
// that adds the records.
func NewHTMLWriter(w io.Writer, opts HTMLOptions) *HTMLWriter {
	if opts.Title == "" {
		opts.Title = "mcpdiag report"
	}
	h := &HTMLWriter{bw: bufio.NewWriterSize(w, 64<<10), links: report.New(report.Options{KeepLinks: true})}
	h.err = writeHead(h.bw, pageConfig{Mode: "static", Title: opts.Title, Meta: newMeta()})
	return h
}

// Add writes one record into the page (as the record package decoded it:
// a version-1 line is written upgraded).
func (h *HTMLWriter) Add(r *record.Record) {
	if h.err != nil || h.closed {
		return
	}
	b, err := scriptJSON(r)
	if err != nil {
		h.err = fmt.Errorf("ui: record %s: %w", r.ID, err)
		return
	}
	b = append(b, '\n')
	if _, err := h.bw.Write(b); err != nil {
		h.err = err
		return
	}
	h.n++
	h.links.Add(r)
}

// AddBadLine notes a call or exchange record without an outcome
// (b.NoOutcome), which report.Read gives to no report as a record: the
// page names it by file and line (LeftOutElementID), so that it does not
// drop it without saying. A line that is no record is not noted.
func (h *HTMLWriter) AddBadLine(b report.BadLine) {
	if b.NoOutcome {
		h.leftOut.Add(b)
	}
}

// LeftOut returns the records without an outcome the page left out.
func (h *HTMLWriter) LeftOut() int64 { return h.leftOut.Records }

// Records returns how many records were written.
func (h *HTMLWriter) Records() int64 { return h.n }

// Err returns the first error met so far.
func (h *HTMLWriter) Err() error { return h.err }

// eraFallbacks returns the IDs of the exchanges among the records added
// that mcpdiag report counts as era fallbacks by linking (see
// report.Accumulator.TakeEraFallbacks): the page shows them as it counts
// them.
func (h *HTMLWriter) eraFallbacks() []string {
	h.links.Close()
	return h.links.TakeEraFallbacks()
}

// EndInput tells the page that one input (a record file) ended, as
// report.Read tells the report (report.InputEnder): it links no
// authorization challenge to a request of another input, as mcpdiag report
// does not.
func (h *HTMLWriter) EndInput() { h.links.EndInput() }

// Close ends the page and flushes it. It does not close the underlying
// writer.
func (h *HTMLWriter) Close() error {
	if h.closed {
		return h.err
	}
	h.closed = true
	if h.err != nil {
		return h.err
	}
	var leftOut *report.LeftOut
	if h.leftOut.Records > 0 {
		leftOut = &h.leftOut
	}
	fallbacks := h.eraFallbacks()
	if err := writeTail(h.bw, h.matrix, fallbacks, leftOut, h.links.TakeChallengeLinks(), h.links.TakeResumeLinks()); err != nil {
		h.err = err
		return err
	}
	if err := h.bw.Flush(); err != nil {
		h.err = err
	}
	return h.err
}
