package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/mcpdiag/mcpdiag/record"
)

// Format identifies the JSON summary ("--json" output); a baseline must
// carry it. The number after the slash changes only if a field changes
// meaning; fields are only ever added.
const Format = "mcpdiag-report/1"

// The ways a Latency's percentiles were computed.
const (
	// MethodExact: every sample was kept; percentiles are exact
	// nearest-rank values.
	MethodExact = "exact"
	// MethodSketch: more samples than Options.ExactSamples; percentiles
	// come from a log-bucket sketch and are within RelativeError of the
	// exact value.
	MethodSketch = "sketch"
)

// Summary is what a report says: the JSON document of `mcpdiag report
// --json`, and the input of the text renderer and of the gates. A summary
// from an earlier run serves as the baseline of a later one.
type Summary struct {
	// Format is the value of the constant Format.
	Format string `json:"format"`
	// Files are the inputs, in order ("-" for stdin).
	Files []string `json:"files,omitempty"`
	// Records counts the lines that were records, of every kind.
	Records int64 `json:"records"`
	// Malformed counts the lines that were skipped, with the first few.
	Malformed Malformed `json:"malformed"`
	// NoOutcome counts the call and exchange records without an outcome
	// (a producer's bug, or a record cut or written by hand): counted
	// apart, in no section and not in Records; Malformed.Examples shows
	// the first few (BadLine.NoOutcome), and `mcpdiag report` exits 3 when
	// there are any (and no gate failed): the input is partial.
	NoOutcome int64 `json:"noOutcome,omitempty"`
	// Dropped sums the "dropped" lines: records the producer dropped
	// because its queue was full, so every count below is short by up to
	// this many.
	Dropped int64 `json:"dropped,omitempty"`
	// Interrupted counts the records, of every kind, of matrix runs that
	// the matrix's stop (an interrupt, a limit) cut short and of calls
	// `mcpdiag call` was stopped in: each carries one of
	// record.InterruptedWarnings. The run they came from was incomplete;
	// they are counted apart in their sections (Section.Interrupted),
	// never as failures, and `mcpdiag report` exits 3 when there are any
	// (and no gate failed).
	Interrupted int64 `json:"interrupted,omitempty"`
	// InterruptedWarnings names the codes of those warnings the records
	// carry, sorted.
	InterruptedWarnings []string `json:"interruptedWarnings,omitempty"`
	// CutByShutdown counts the exchange records that the recording proxy's
	// or server's own shutdown cut (the flag SD: mcpdiag proxy or mcpdiag
	// serve was stopped with the exchange in flight) and that no
	// interrupt's warning counts already: the user's stop, not a failure of
	// the server under diagnosis. They are counted apart in their sections
	// (Section.CutByShutdown), as Interrupted, and `mcpdiag report` exits 3
	// when there are any (and no gate failed): the capture was incomplete.
	CutByShutdown int64 `json:"cutByShutdown,omitempty"`
	// OtherKinds counts records of a kind this version does not know.
	OtherKinds int64 `json:"otherKinds,omitempty"`
	// Rejudged counts the exchange records of an mcpdiag before 15d740b
	// (2026-12-06) that recorded an exchange that is not a JSON-RPC request
	// (a GET stream, a DELETE, a batch) RESULT_SUCCESS in the application
	// layer: they are counted as this version records them, HTTP_SUCCESS
	// in the transport layer.
	Rejudged int64 `json:"rejudged,omitempty"`
	// Calls summarises the logical calls: the call lines, plus the calls
	// whose exchanges were recorded but whose call line never was
	// (Section.Orphans).
	Calls *Section `json:"calls"`
	// Exchanges summarises the exchange lines (one HTTP exchange each).
	Exchanges *Section `json:"exchanges"`
	// Server summarises the server's own log lines (kind "server").
	Server *Section `json:"server"`
	// Gates is the verdict of the CI gates, when any were checked.
	Gates *GateReport `json:"gates,omitempty"`
}

// Malformed describes the lines that were not records.
type Malformed struct {
	// Lines counts them.
	Lines int64 `json:"lines"`
	// Examples are the first few (Options.Examples × 4).
	Examples []BadLine `json:"examples,omitempty"`
}

// Section summarises the records of one kind. Calls, exchanges and server
// lines are never mixed: a call that took three exchanges counts once in
// Calls and three times in Exchanges.
type Section struct {
	// Kind is "call", "exchange" or "server".
	Kind string `json:"kind"`
	// Total counts the records (for calls, orphans included).
	Total int64 `json:"total"`
	// Failures counts the records whose outcome is a failure (see
	// Failure), probes not counted.
	Failures int64 `json:"failures"`
	// FailureRate is Failures / (Total − Probes − EraFallbacks −
	// Interrupted − CutByShutdown − AuthChallenges − DesignedAnswers).
	FailureRate float64 `json:"failureRate"`
	// Probes counts, in Exchanges, the probes mcpdiag probe sent on
	// purpose (records with a probe member): their answers, errors to
	// deliberate bad calls most of them, are what the probe asked for and
	// mcpdiag probe's rules judge them, so they are in Total, ByOutcome and
	// ByTool but never in Failures or WorstOffenders.
	Probes int64 `json:"probes,omitempty"`
	// EraFallbacks counts, in Exchanges, the client's 2026-07-28 era
	// probes that a 2025-11-25 server refused, after which the client fell
	// back to initialize (records with eraFallback and the decision
	// renegotiate): a negotiation step the spec's backward-compatibility
	// rule designs, so, as Probes, in Total, ByOutcome and ByTool (the
	// outcome is the server's answer, HTTP_ERROR say) but never in
	// Failures, WorstOffenders or the gates.
	EraFallbacks int64 `json:"eraFallbacks,omitempty"`
	// LegacyFallbacks counts, of EraFallbacks, the POST initializes a
	// server of the 2024-11-05 HTTP+SSE transport answered 404 or 405,
	// after which the same client opened the legacy GET stream, as the
	// spec's backward-compatibility rule says (report links them at read
	// time: the same recording process and User-Agent, the next request a
	// GET of text/event-stream to the same URL within
	// LegacyFallbackWindow): counted as EraFallbacks are, never as
	// failures.
	LegacyFallbacks int64 `json:"legacyFallbacks,omitempty"`
	// Interrupted counts the records of matrix runs the matrix's stop cut
	// short and of calls `mcpdiag call` was stopped in (one of the
	// warnings record.InterruptedWarnings; a call rebuilt from exchanges
	// of which one carries it): what went over the wire, but not judged,
	// and a failure in it may be the stop's doing (a killed client, a cut
	// connection). As Probes, in Total, ByOutcome and ByTool but never in
	// Failures, WorstOffenders or the gates; nor, unlike Probes, in Latency
	// or Slowest (a cut exchange's time is the stop's, not a latency).
	Interrupted int64 `json:"interrupted,omitempty"`
	// CutByShutdown counts the exchanges the recording proxy's or server's
	// own shutdown cut (flag SD; record.Record.CutByShutdown), and, in
	// Calls, the calls rebuilt from exchanges of which one was, unless an
	// interrupt's warning counts them as Interrupted. Like Interrupted,
	// in Total, ByOutcome and ByTool but never in Failures,
	// WorstOffenders, the gates, Latency or Slowest.
	CutByShutdown int64 `json:"cutByShutdown,omitempty"`
	// Unanswered counts, in Exchanges, the requests POSTed over the
	// 2024-11-05 HTTP+SSE transport and accepted 202 (REQUEST_ACCEPTED)
	// whose answer was awaited on the GET stream and never came
	// (record.Record.UnansweredOnStream: the stream ended, the proxy's wait
	// ran out, it stopped waiting to keep its bound, or another request of
	// the same id waited at once): each is in Failures, WorstOffenders and
	// the gates, as a streamable HTTP request's STREAM_INCOMPLETE is. One
	// the proxy's shutdown cut is in CutByShutdown instead.
	Unanswered int64 `json:"unanswered,omitempty"`
	// Resumed counts, in Exchanges, the requests whose event stream the
	// server closed before their response, after an event with an id
	// (record.Resume.Resumable: a 2025-11-25 resumable stream, SEP-1699's
	// polling), and whose response came on the GET that resumed the
	// stream: report links them (the same recording process and session,
	// the response of the request's id with its JSON type and method, the
	// GET's Last-Event-ID the stream's last event id when two requests
	// share the id, within ResumeWindow; ResumeLinks) and counts the
	// request by that response's outcome and layer, as mcpdiag call
	// judges the call it resumes itself: TOOL_SUCCESS, or a failure when
	// the response is one. The GET keeps its own verdict (HTTP_SUCCESS).
	Resumed int64 `json:"resumed,omitempty"`
	// ResumeLinks names the first of them (Options.Top), each with the GET
	// whose stream carried its response.
	ResumeLinks []ResumeLink `json:"resumeLinks,omitempty"`
	// NotResumed counts, of Failures, the resumable requests no GET of the
	// input resumed with their response: their STREAM_INCOMPLETE stands.
	NotResumed int64 `json:"notResumed,omitempty"`
	// ResumeAmbiguous counts, of NotResumed, those a GET's response of
	// their id could not be told from another request's of the same id
	// (AmbiguousResponses).
	ResumeAmbiguous int64 `json:"resumeAmbiguous,omitempty"`
	// UnlinkedResponses counts the JSON-RPC responses on GET streams
	// (record.Resume.Responses) that answered no resumable request of the
	// input: a stream resumed in another session or recording, a
	// response of an id of another JSON type, a request recorded
	// elsewhere.
	UnlinkedResponses int64 `json:"unlinkedResponses,omitempty"`
	// AmbiguousResponses counts the responses on GET streams that two or
	// more resumable requests of the same id could have been answered by,
	// none of which the GET resumed: they answer none.
	AmbiguousResponses int64 `json:"ambiguousResponses,omitempty"`
	// AuthChallenges counts, in Exchanges, the authorization challenges
	// (an MCP request answered 401 or 403 with WWW-Authenticate) that the
	// client answered: its authorization chain got a token and it sent
	// the request again (record.Record.ChallengeAnswered: auth step
	// challenge, decision reauthorize). A step of the authorization flow
	// the spec designs, so, as EraFallbacks, in Total, ByOutcome, ByTool
	// and Latency but never in Failures, WorstOffenders or the gates. A
	// challenge the client did not answer (no token, the retry policy's
	// limit) stays a failure. A proxy's or server's record says nothing
	// of the client's chain: its challenge (record.Record.BearerChallenge)
	// counts here when report links it to the client's answer, the same
	// client's next request of the same method, tool and arguments (and session, when both have one) in the same input
	// that carried a new Bearer token and was not refused (within
	// ChallengeAnswerWindow; ChallengesLinked, ChallengeLinks); one never
	// answered stays a failure.
	AuthChallenges int64 `json:"authChallenges,omitempty"`
	// ChallengesLinked counts, of AuthChallenges, the challenges of a
	// proxy's or server's records linked to their client's answer.
	ChallengesLinked int64 `json:"challengesLinked,omitempty"`
	// ChallengeLinks names the first of them (Options.Top) and the
	// exchange that answered each.
	ChallengeLinks []ChallengeLink `json:"challengeLinks,omitempty"`
	// DesignedAnswers counts, in Exchanges, the answers the spec designs
	// to a request that is no JSON-RPC message
	// (record.Record.DesignedAnswer): a GET answered 405 (the server
	// offers no SSE stream), a DELETE answered 405 (the client may not end
	// the session), a GET answered 3xx (a redirect of the OAuth flow:
	// authorize, metadata). The record's outcome stays HTTP_ERROR (what
	// happened); as EraFallbacks, they are in Total, ByOutcome, ByTool
	// and Latency but never in Failures, WorstOffenders or the gates. A
	// JSON-RPC message's exchange (a POST) is never one.
	DesignedAnswers int64 `json:"designedAnswers,omitempty"`
	// ErrorAnswers counts, in Exchanges, the clients' answers to server
	// requests that were a JSON-RPC error the client sent (clientAnswer,
	// JSONRPC_ERROR, no answerRefused): counted in Failures under their
	// outcome, as an error answer over stdio is.
	ErrorAnswers int64 `json:"errorAnswers,omitempty"`
	// RefusedAnswers counts, in Exchanges, the clients' answers the server
	// refused with a JSON-RPC error in a 2xx's body (answerRefused): the
	// server's failures, counted in Failures under their outcome
	// (JSONRPC_ERROR) like ErrorAnswers, which they are not.
	RefusedAnswers int64 `json:"refusedAnswers,omitempty"`
	// Orphans counts, in Calls, the calls rebuilt from exchange lines
	// whose call line is missing (a producer killed mid-call): their
	// verdict is their last exchange's.
	Orphans int64 `json:"orphans,omitempty"`
	// Open counts, in Calls, exchange groups still waiting for their call
	// line (only before Accumulator.Close; they are not in Total).
	Open int64 `json:"open,omitempty"`
	// ByLayer counts the records by layer ("transport", "protocol",
	// "interaction", "application"; "(none)" without an outcome).
	ByLayer map[string]int64 `json:"byLayer"`
	// ByOutcome counts the records by outcome, most frequent first.
	ByOutcome []OutcomeCount `json:"byOutcome"`
	// ByTool counts the records by method and tool, most frequent first.
	ByTool []ToolStats `json:"byTool"`
	// Latency summarises timings.totalMs.
	Latency Latency `json:"latency"`
	// WorstOffenders are the (method, tool, outcome) groups with the most
	// failures, most first, at most Options.Top.
	WorstOffenders []Offender `json:"worstOffenders"`
	// Slowest are the records with the largest timings.totalMs, slowest
	// first, at most Options.Top.
	Slowest []Slow `json:"slowest"`
	// FaultLines counts, in Server and Exchanges, the lines on which a
	// fault scenario fired (the "fault" member's decisions; mcpdiag serve's
	// exchange lines and the proxy's with --scenario carry one). A
	// version-1 server line has no outcome, so Failures says nothing of
	// what the server did: this does.
	FaultLines int64 `json:"faultLines,omitempty"`
	// Faults counts, in Server and Exchanges, each scenario's decisions: on how many
	// lines it was consulted and on how many it fired, most firings
	// first.
	Faults []FaultCount `json:"faults,omitempty"`
}

// FaultCount is one fault scenario's share of the server lines.
type FaultCount struct {
	// Scenario is the scenario id ("(other)" past Options.MaxTools).
	Scenario string `json:"scenario"`
	// Lines counts the server lines whose request it was consulted on.
	Lines int64 `json:"lines"`
	// Fired counts those on which it fired.
	Fired int64 `json:"fired"`
	// Examples are the ids of the first few lines it fired on.
	Examples []string `json:"examples,omitempty"`
}

// OutcomeCount is one outcome's share of a section.
type OutcomeCount struct {
	// Outcome is the classifier's outcome ("(none)" when the record had
	// none; "(other)" gathers outcomes past Options.MaxOutcomes).
	Outcome string `json:"outcome"`
	// Layer is the outcome's layer.
	Layer string `json:"layer"`
	// Failure reports whether the outcome counts as a failure here.
	Failure bool `json:"failure"`
	// Count counts the records.
	Count int64 `json:"count"`
	// Probes counts, of Count, the probes mcpdiag probe sent on purpose
	// (see Section.Probes): the gates leave them out.
	Probes int64 `json:"probes,omitempty"`
	// EraFallbacks counts, of Count, the era probes the client fell back
	// from (see Section.EraFallbacks): the gates leave them out.
	EraFallbacks int64 `json:"eraFallbacks,omitempty"`
	// Interrupted counts, of Count, the records of interrupted runs and
	// calls (see Section.Interrupted): the gates leave them out.
	Interrupted int64 `json:"interrupted,omitempty"`
	// CutByShutdown counts, of Count, the records the proxy's or server's
	// shutdown cut (see Section.CutByShutdown): the gates leave them out.
	CutByShutdown int64 `json:"cutByShutdown,omitempty"`
	// AuthChallenges counts, of Count, the authorization challenges the
	// client answered (see Section.AuthChallenges): the gates leave them
	// out.
	AuthChallenges int64 `json:"authChallenges,omitempty"`
	// DesignedAnswers counts, of Count, the designed answers to requests
	// that are no JSON-RPC message (see Section.DesignedAnswers): the
	// gates leave them out.
	DesignedAnswers int64 `json:"designedAnswers,omitempty"`
	// Unanswered counts, of Count, the 2024-11-05 HTTP+SSE requests whose
	// answer never came on the stream (see Section.Unanswered): failures,
	// though the outcome (REQUEST_ACCEPTED) is not one.
	Unanswered int64 `json:"unanswered,omitempty"`
	// Rate is Count / Section.Total.
	Rate float64 `json:"rate"`
	// Examples are the ids of the first few records, probes not among
	// them.
	Examples []string `json:"examples,omitempty"`
}

// ToolStats summarises the records of one method and tool.
type ToolStats struct {
	// Method is the JSON-RPC method.
	Method string `json:"method"`
	// Tool is the tool (or prompt) name; empty for methods without one.
	// "(other)" gathers the keys past Options.MaxTools.
	Tool string `json:"tool,omitempty"`
	// Total counts the records.
	Total int64 `json:"total"`
	// Failures counts the failed ones.
	Failures int64 `json:"failures"`
	// ByOutcome counts them by outcome.
	ByOutcome map[string]int64 `json:"byOutcome"`
	// Latency summarises their timings.totalMs.
	Latency Latency `json:"latency"`
}

// Name returns the tool, or the method in brackets when there is no tool.
func (t *ToolStats) Name() string { return target(t.Method, t.Tool) }

// Latency summarises durations, in milliseconds. Records without
// timings.totalMs (not measured) are not samples, nor are the records of
// runs an interrupt cut short (Section.Interrupted) and of exchanges the
// proxy's or server's shutdown cut (Section.CutByShutdown).
type Latency struct {
	// Samples counts the measured records.
	Samples int64 `json:"samples"`
	// Method is MethodExact or MethodSketch (empty without samples).
	Method string `json:"method,omitempty"`
	// RelativeError bounds the error of the percentiles with MethodSketch.
	RelativeError float64 `json:"relativeError,omitempty"`
	// The figures, in milliseconds rounded to the microsecond: min, mean
	// and max are exact; the percentiles are nearest-rank.
	MinMs  float64 `json:"minMs"`
	MeanMs float64 `json:"meanMs"`
	P50Ms  float64 `json:"p50Ms"`
	P95Ms  float64 `json:"p95Ms"`
	P99Ms  float64 `json:"p99Ms"`
	MaxMs  float64 `json:"maxMs"`
}

// Offender is a group of failures: one outcome of one method and tool.
type Offender struct {
	// Method, Tool and Outcome identify the group; Layer is the outcome's.
	Method  string `json:"method"`
	Tool    string `json:"tool,omitempty"`
	Outcome string `json:"outcome"`
	Layer   string `json:"layer"`
	// Count counts the failures.
	Count int64 `json:"count"`
	// Examples are the ids of the first few.
	Examples []string `json:"examples,omitempty"`
}

// Name returns the tool, or the method in brackets when there is no tool.
func (o *Offender) Name() string { return target(o.Method, o.Tool) }

// Slow is one of the slowest records.
type Slow struct {
	// ID is the record's id; CallID, on an exchange, its call's.
	ID      string `json:"id"`
	CallID  string `json:"callId,omitempty"`
	Method  string `json:"method"`
	Tool    string `json:"tool,omitempty"`
	Outcome string `json:"outcome"`
	// TotalMs is the record's timings.totalMs.
	TotalMs float64 `json:"totalMs"`

	seq int64 // arrival order, for ties
}

// Name returns the tool, or the method in brackets when there is no tool.
func (s *Slow) Name() string { return target(s.Method, s.Tool) }

// target names a record's tool, or its JSON-RPC method in brackets, or
// NoMethod: a record without a method is an exchange that carried none
// (a standalone GET stream, a session DELETE, OAuth metadata, a batch, a
// body that is not JSON-RPC; a stdio line that answered no request), not
// one whose method mcpdiag failed to read.
func target(method, tool string) string {
	switch {
	case tool != "":
		return tool
	case method != "":
		return "[" + method + "]"
	}
	return NoMethod
}

// NoMethod is the text report's name of the records without a JSON-RPC
// method (it said "[unknown method]", as if the method had not been read).
const NoMethod = "[no JSON-RPC method]"

// Section returns the section of records of kind k ("call", "exchange",
// "server"; plurals are accepted), or nil.
func (s *Summary) Section(k string) *Section {
	switch strings.TrimSuffix(k, "s") {
	case "call":
		return s.Calls
	case "exchange":
		return s.Exchanges
	case "server":
		return s.Server
	}
	return nil
}

// Primary returns the section the gates look at by default: the calls
// when there are any (what the user or agent experienced, after retries),
// else the exchanges, else the server lines.
func (s *Summary) Primary() *Section {
	for _, sec := range []*Section{s.Calls, s.Exchanges, s.Server} {
		if sec != nil && sec.Total > 0 {
			return sec
		}
	}
	return s.Calls
}

// Outcome returns the count of outcome o, or a zero count.
func (s *Section) Outcome(o string) OutcomeCount {
	for _, c := range s.ByOutcome {
		if c.Outcome == o {
			return c
		}
	}
	return OutcomeCount{Outcome: o}
}

// plural returns the section's kind as a plural noun for messages.
func (s *Section) plural() string { return kindPlural(s.Kind) }

func kindPlural(kind string) string {
	switch kind {
	case "server":
		return "server lines"
	case "":
		return "records"
	}
	return kind + "s"
}

// ErrNotSummary reports a baseline that is not the JSON output of
// `mcpdiag report`.
var ErrNotSummary = errors.New("not the --json output of mcpdiag report")

// ReadSummary reads a summary written by the JSON reporter, such as a
// baseline. Unknown fields are ignored.
func ReadSummary(r io.Reader) (*Summary, error) {
	var s Summary
	dec := json.NewDecoder(r)
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotSummary, err)
	}
	// The format is quoted from a file that may be anything: scrubbed
	// before %q, whose \" would hide a quoted value from the patterns.
	if !strings.HasPrefix(s.Format, "mcpdiag-report/") {
		return nil, fmt.Errorf("%w: format %q", ErrNotSummary, record.Scrub(s.Format))
	}
	if s.Format != Format {
		return nil, fmt.Errorf("%w: format %q, this version reads %q", ErrNotSummary, record.Scrub(s.Format), Format)
	}
	for _, sec := range []**Section{&s.Calls, &s.Exchanges, &s.Server} {
		if *sec == nil {
			*sec = &Section{}
		}
	}
	return &s, nil
}

// judged is how many of the section's records can fail: all but the
// probes of mcpdiag probe, the era fallbacks, the records of interrupted
// runs and calls, those the proxy's or server's shutdown cut and the
// authorization challenges the client answered.
func (s *Section) judged() int64 {
	return s.Total - s.Probes - s.EraFallbacks - s.Interrupted - s.CutByShutdown - s.AuthChallenges - s.DesignedAnswers
}

// failures is how many of c's records count as failures: every judged
// one for a failure outcome, else the unanswered ones (Unanswered).
func (c *OutcomeCount) failures() int64 {
	if c.Failure {
		return c.judged()
	}
	return c.Unanswered
}

// judged is how many of the outcome's records can fail: all but the
// probes, the era fallbacks, the records of interrupted runs and calls,
// those the proxy's or server's shutdown cut and the authorization
// challenges the client answered.
func (c *OutcomeCount) judged() int64 {
	return c.Count - c.Probes - c.EraFallbacks - c.Interrupted - c.CutByShutdown - c.AuthChallenges - c.DesignedAnswers
}
