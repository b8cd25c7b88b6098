package report

import (
	"cmp"
	"container/heap"
	"container/list"
	"encoding/json"
	"net/http"
	"slices"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/record"
)

// Report is something records are added to, one at a time: the
// Accumulator and the HARWriter.
type Report interface {
	// Add takes one record. It must not keep the record itself after
	// returning (it may keep strings from it).
	Add(r *record.Record)
}

// Defaults of Options.
const (
	DefaultTop          = 10
	DefaultExamples     = 3
	DefaultExactSamples = 1000
	DefaultMaxTools     = 1000
	DefaultMaxOutcomes  = 64
	DefaultMaxOpenCalls = 1 << 16
)

// Labels used where a record lacks a value or a bound was reached.
const (
	// None labels a record without an outcome or layer.
	None = "(none)"
	// Other gathers the keys past a bound (Options.MaxTools,
	// Options.MaxOutcomes).
	Other = "(other)"
)

// Options bound what an Accumulator keeps. Every bound is per section
// (calls, exchanges, server), so memory does not grow with the number of
// records. Zero values take the defaults.
type Options struct {
	// Top is how many worst offenders and slowest records are kept
	// (DefaultTop).
	Top int
	// Examples is how many record ids are kept per outcome and per
	// offender (DefaultExamples).
	Examples int
	// ExactSamples is how many latencies are kept exactly per key (the
	// section, and each tool). Past it the percentiles of that key come
	// from a sketch with SketchRelativeError (DefaultExactSamples).
	ExactSamples int
	// MaxTools bounds the distinct (method, tool) keys; records of further
	// keys are counted under the tool Other (DefaultMaxTools).
	MaxTools int
	// MaxOutcomes bounds the distinct outcome and layer names; further
	// names (not produced by this version's classifier) are counted as
	// Other (DefaultMaxOutcomes).
	MaxOutcomes int
	// MaxOpenCalls bounds the calls whose exchanges were seen but whose
	// call line was not yet; past it the oldest is counted as an orphan at
	// once (DefaultMaxOpenCalls).
	MaxOpenCalls int
	// KeepLinks keeps the IDs of the exchanges counted by linking (era
	// fallbacks and answered challenges) for TakeEraFallbacks and
	// TakeChallengeLinks. Without it none is kept: those lists grow with
	// the input, and a caller that only reads the Summary (mcpdiag report)
	// would hold them all in what is otherwise bounded memory. The page
	// and the live view set it.
	KeepLinks bool
}

func (o Options) withDefaults() Options {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&o.Top, DefaultTop)
	def(&o.Examples, DefaultExamples)
	def(&o.ExactSamples, DefaultExactSamples)
	def(&o.MaxTools, DefaultMaxTools)
	def(&o.MaxOutcomes, DefaultMaxOutcomes)
	def(&o.MaxOpenCalls, DefaultMaxOpenCalls)
	return o
}

// Failure reports whether outcome o counts as a failure on a record of kind
// k. Successes (TOOL_SUCCESS, RESULT_SUCCESS, NOTIFICATION_ACCEPTED) and
// TASK_CREATED (the work goes on as a task) are not failures. INPUT_REQUIRED
// is a failure on a call (it ended waiting for input nobody gave) but not
// on an exchange (one round of a multi-round call). NOT_CLASSIFIED is no
// verdict (a limit of the classifier), so not a failure either; it is
// counted under its own name and layer "none". A record without an
// outcome (a server line) is not a failure; an outcome this version does
// not know is.
func Failure(k record.Kind, o classify.Outcome) bool {
	switch {
	case o == "", o.Success(), o == classify.TaskCreated, o == classify.NotClassified:
		return false
	case o == classify.InputRequired:
		return k == record.KindCall
	}
	return true
}

// Accumulator adds records up into a Summary, in bounded memory: counts by
// layer, outcome and tool, latency percentiles, the worst offenders and the
// slowest records, each per kind of record. It is not safe for concurrent
// use.
type Accumulator struct {
	opts    Options
	records int64
	bad     int64
	// noOutcome counts the call and exchange records without an outcome
	// (Summary.NoOutcome).
	noOutcome int64
	badLines  []BadLine
	dropped   int64
	other     int64
	rejudged  int64
	// interruptedBy lists the codes of record.InterruptedWarnings seen,
	// sorted.
	interruptedBy []string
	// interrupted counts the records that carry one of them, of every
	// kind (Summary.Interrupted): a probe or an era fallback of a cut run
	// too, which its section counts as such.
	interrupted int64
	// cutByShutdown counts the records flagged SD that no interrupt's
	// warning already counts (Summary.CutByShutdown).
	cutByShutdown int64
	calls         *section
	exchanges     *section
	server        *section

	// Exchanges whose call line has not been seen, by callId, oldest
	// first in order.
	open  map[string]*openCall
	order list.List

	// Refused 2026-07-28 requests awaiting their client's next request,
	// oldest first (see settle).
	pending []pendingProbe
	// The latest exchange requests counted (see recall): a refused probe's
	// next request may be recorded before it; a ring once full, its
	// oldest at recentOldest.
	recent       []recentRequest
	recentOldest int
	// linked holds the IDs of the exchanges counted as era fallbacks by
	// linking, until TakeEraFallbacks hands them out.
	linked []string

	// POST initializes answered 404 or 405 awaiting their client's legacy
	// GET, oldest first (see settleLegacy).
	inits []heldInitialize

	// Authorization challenges a proxy or server recorded, awaiting their
	// client's answer, oldest first (see linkChallenges).
	held []heldChallenge
	// The latest requests counted (see recallAnswer): a challenge's answer
	// may be recorded before it; a ring once full, its oldest at
	// answersOldest.
	answers       []recentAnswer
	answersOldest int
	// tokensSeen is when each Bearer token was first sent (see
	// tokenBefore), at most maxTokensSeen of them.
	tokensSeen map[tokenKey]time.Time
	// challengeLinks holds the challenges counted as answered by linking,
	// until TakeChallengeLinks hands them out.
	challengeLinks []ChallengeLink

	// Resumable requests awaiting the GET that resumes their stream,
	// oldest first, and the GET streams' responses that answered none
	// held yet (see linkResumes).
	resumes []heldResume
	loose   []looseResponse
	// resumeLinks holds the requests counted by their response on a GET,
	// until TakeResumeLinks hands them out.
	resumeLinks []ResumeLink
}

// openCall is a call known from its exchanges only, so far.
type openCall struct {
	id          string
	method      string
	tool        string
	outcome     classify.Outcome
	layer       classify.Layer
	seq         int
	start, end  time.Time
	sumMs       float64
	timed, span bool
	interrupted bool // an exchange of it is of an interrupted matrix run
	shutdown    bool // an exchange of it was cut by the proxy's or server's shutdown (record.Record.CutByShutdown)
	elem        *list.Element
}

// New returns an empty accumulator.
func New(opts Options) *Accumulator {
	opts = opts.withDefaults()
	return &Accumulator{
		opts:      opts,
		calls:     newSection(record.KindCall, opts),
		exchanges: newSection(record.KindExchange, opts),
		server:    newSection(record.KindServer, opts),
		open:      map[string]*openCall{},
	}
}

// Add counts one record. Call lines count in the calls, exchange lines in
// the exchanges, server lines in the server section; a "dropped" line adds
// to Summary.Dropped. An exchange with a callId opens that call until its
// call line arrives (a producer writes it after the call's last exchange);
// Close turns the calls still open into orphans.
func (a *Accumulator) Add(r *record.Record) {
	if r == nil {
		return
	}
	a.records++
	switch r.Kind {
	case record.KindCall:
		a.noteInterrupted(r)
		a.calls.add(observe(r))
		if oc, ok := a.open[r.ID]; ok && r.ID != "" {
			a.order.Remove(oc.elem)
			delete(a.open, r.ID)
		}
	case record.KindExchange:
		a.noteInterrupted(r)
		o := observe(r)
		if olderHTTPSuccess(r) {
			// Judged as this version records it (see olderHTTPSuccess).
			o.outcome, o.layer = classify.HTTPSuccess, classify.HTTPSuccess.Layer()
			a.rejudged++
		}
		a.settle(r)
		a.settleLegacy(r)
		// A resumable request waits for the GET that resumes its
		// stream, whose response is its verdict (resumelink.go).
		a.expireResumes(r.Time)
		if resumingGET(r) {
			a.linkResumes(r)
		}
		// A challenge a proxy or server recorded waits for its client's
		// answer (never a refused probe: that is no 401 or 403).
		held := a.linkChallenges(r, o)
		if refusedInitialize(r) {
			a.holdInitialize(r, o)
		} else if refusedProbe(r) {
			if a.recall(r) {
				o.fallback = true
				a.link(o)
				a.exchanges.add(o)
			} else {
				a.hold(r, o)
			}
		} else {
			a.remember(r)
			switch {
			case held:
			case resumable(r, o):
				a.holdResume(r, o)
			default:
				a.exchanges.add(o)
			}
		}
		if r.CallID != "" {
			a.track(r)
		}
		if r.Fault != nil {
			// The fault layer's decision (mcpdiag serve's lines, the
			// proxy's with --scenario): what fired, as for server lines.
			a.exchanges.faults(r.ID, decisions(r.Fault))
		}
	case record.KindServer:
		a.noteInterrupted(r)
		a.server.add(observe(r))
	case record.KindDropped:
		a.dropped += max(r.Dropped, 0)
	default:
		a.other++
	}
}

// noteInterrupted counts r when it carries one of
// record.InterruptedWarnings, and remembers which (Summary.Interrupted,
// InterruptedWarnings); else when the shutdown of the proxy or server that
// recorded it cut it (Summary.CutByShutdown).
func (a *Accumulator) noteInterrupted(r *record.Record) {
	cut := false
	for _, c := range record.InterruptedWarnings {
		if !r.HasWarning(c) {
			continue
		}
		cut = true
		if !slices.Contains(a.interruptedBy, c) {
			a.interruptedBy = append(a.interruptedBy, c)
			slices.Sort(a.interruptedBy)
		}
	}
	switch {
	case cut:
		a.interrupted++
	case r.CutByShutdown():
		a.cutByShutdown++
	}
}

// AddServe counts a server log line like Add, and reads its "serve" member:
// for each scenario it names in faults, that the scenario was consulted and
// whether it fired (Section.Faults, Section.FaultLines). A member that is
// absent or not the fault server's shape counts no fault.
func (a *Accumulator) AddServe(r *record.Record, serve []byte) {
	a.Add(r)
	if r == nil || r.Kind != record.KindServer {
		return
	}
	if r.Fault != nil {
		// The typed member (record.Decode upgrades a version-1 "serve").
		a.server.faults(r.ID, decisions(r.Fault))
		return
	}
	if len(serve) == 0 {
		return
	}
	var d struct {
		Faults []struct {
			Scenario string `json:"scenario"`
			Fired    bool   `json:"fired"`
		} `json:"faults"`
	}
	if json.Unmarshal(serve, &d) != nil {
		return
	}
	a.server.faults(r.ID, d.Faults)
}

// AddBadLine counts a line that was not a record, or (b.NoOutcome) a call
// or exchange record without an outcome, apart (Summary.NoOutcome).
func (a *Accumulator) AddBadLine(b BadLine) {
	if b.NoOutcome {
		a.noOutcome++
	} else {
		a.bad++
	}
	if len(a.badLines) < 4*a.opts.Examples {
		a.badLines = append(a.badLines, b)
	}
}

// track notes an exchange of a call whose call line has not been seen.
func (a *Accumulator) track(r *record.Record) {
	oc, ok := a.open[r.CallID]
	if !ok {
		if len(a.open) >= a.opts.MaxOpenCalls {
			a.orphan(a.order.Front().Value.(*openCall))
		}
		oc = &openCall{id: r.CallID}
		oc.elem = a.order.PushBack(oc)
		a.open[r.CallID] = oc
	}
	if oc.method == "" {
		oc.method = r.Method
	}
	if oc.tool == "" {
		oc.tool = r.Tool
	}
	if r.Interrupted() {
		oc.interrupted = true
	}
	if r.CutByShutdown() {
		oc.shutdown = true
	}
	if r.Seq >= oc.seq {
		oc.seq, oc.outcome, oc.layer = r.Seq, r.Outcome, r.Layer
	}
	ms := durationMs(r.Timings.Total)
	if ms > 0 {
		oc.timed = true
		oc.sumMs += ms
	}
	if !r.Time.IsZero() {
		end := r.Time.Add(time.Duration(r.Timings.Total))
		if !oc.span || r.Time.Before(oc.start) {
			oc.start = r.Time
		}
		if !oc.span || end.After(oc.end) {
			oc.end = end
		}
		oc.span = true
	}
}

// orphan counts an open call as a call and forgets it.
func (a *Accumulator) orphan(oc *openCall) {
	a.order.Remove(oc.elem)
	delete(a.open, oc.id)
	o := obs{id: oc.id, method: oc.method, tool: oc.tool, outcome: oc.outcome, layer: oc.layer, interrupted: oc.interrupted, shutdown: oc.shutdown}
	switch {
	case oc.span && oc.end.After(oc.start):
		o.ms = durationMs(record.Duration(oc.end.Sub(oc.start)))
	case oc.timed:
		o.ms = oc.sumMs
	}
	a.calls.orphans++
	a.calls.add(o)
}

// Close counts the calls still open (exchanges seen, call line missing) as
// orphan calls, with the verdict of their last exchange and the time from
// their first exchange's start to their last one's end, and counts the
// refused 2026-07-28 requests still awaiting their client's next request
// and the authorization challenges still awaiting their client's answer
// as failures (see settle and linkChallenges; until then Summary leaves
// them out). Add may be called again afterwards.
func (a *Accumulator) Close() {
	a.flushProbes()
	a.flushInits()
	a.flushChallenges()
	a.flushResumes()
	for a.order.Len() > 0 {
		a.orphan(a.order.Front().Value.(*openCall))
	}
}

// Summary computes the summary of the records added so far. It may be
// called again after more records are added.
func (a *Accumulator) Summary() *Summary {
	s := &Summary{
		Format:     Format,
		Records:    a.records,
		Malformed:  Malformed{Lines: a.bad, Examples: slices.Clone(a.badLines)},
		NoOutcome:  a.noOutcome,
		Dropped:    a.dropped,
		OtherKinds: a.other,
		Rejudged:   a.rejudged,
		Calls:      a.calls.summary(),
		Exchanges:  a.exchanges.summary(),
		Server:     a.server.summary(),
	}
	s.Calls.Open = int64(len(a.open))
	s.Interrupted = a.interrupted
	s.InterruptedWarnings = slices.Clone(a.interruptedBy)
	s.CutByShutdown = a.cutByShutdown
	return s
}

// obs is what a section needs of a record.
type obs struct {
	id, callID   string
	method, tool string
	outcome      classify.Outcome
	layer        classify.Layer
	ms           float64
	probe        bool // a probe mcpdiag probe sent on purpose (record.Probe)
	fallback     bool // the era probe a 2025-11-25 server refused, and the client fell back (record.EraFallback), or the 2024-11-05 fallback (legacy)
	legacy       bool // of fallback: a POST initialize answered 404 or 405, then the client's legacy GET (settleLegacy)
	errorAnswer  bool // a client's answer that was its JSON-RPC error (record.ClientAnswer)
	refused      bool // a client's answer the server refused in a 2xx's body (record.AnswerRefused)
	interrupted  bool // a record of a matrix run or a call an interrupt cut short (record.Record.Interrupted)
	shutdown     bool // an exchange the recording proxy's or server's own shutdown cut (record.Record.CutByShutdown)
	challenge    bool // an authorization challenge the client answered with a token (record.Record.ChallengeAnswered)
	designed     bool // an answer the spec designs to a request that is no JSON-RPC message (record.Record.DesignedAnswer)
	// resumed: a request whose stream the server closed before its
	// response, counted by the response the GET that resumed the stream
	// carried (its outcome and layer are the response's; resumelink.go).
	// notResumed: one no GET resumed (a failure, its STREAM_INCOMPLETE);
	// resumeAmbiguous of those, one a GET's response could not be told
	// from another request's of the same id.
	resumed, notResumed, resumeAmbiguous bool
	// unanswered: a 2024-11-05 HTTP+SSE request accepted 202 whose answer
	// never came on the GET stream (record.Record.UnansweredOnStream, other
	// than the shutdown's cut): a failure whatever its outcome says.
	unanswered bool
}

// apart says why a record is counted apart from the records that can fail,
// if it is: the one place the report decides it (Section.judged and
// OutcomeCount.judged subtract the same counts; ui/assets/app.js's
// apartOf is its copy for the page). The reasons are exclusive, in this
// order, so that each record is counted once.
type apart int

const (
	// notApart: the record can fail (Failure decides).
	notApart apart = iota
	// apartProbe: a probe mcpdiag probe sent on purpose.
	apartProbe
	// apartFallback: the era probe a 2025-11-25 server refused, after
	// which the client fell back to initialize.
	apartFallback
	// apartInterrupted: a record of a matrix run or a call an interrupt
	// cut short: not judged, and what failed in it may be the stop's
	// doing.
	apartInterrupted
	// apartShutdown: an exchange the recording proxy's or server's own
	// shutdown cut (flag SD), or a call rebuilt from exchanges of which
	// one was: the user's stop, as an interrupt is, not the server's
	// failure.
	apartShutdown
	// apartChallenge: an authorization challenge (401 or 403 with
	// WWW-Authenticate) the client answered: its chain got a token and it
	// re-sent the request, a step of the flow the spec designs.
	apartChallenge
	// apartDesigned: an answer the spec designs to a request that is no
	// JSON-RPC message (a GET or DELETE answered 405, a GET answered
	// 3xx: record.Record.DesignedAnswer), what the server is meant to say.
	apartDesigned
)

func (o obs) apart() apart {
	switch {
	case o.probe:
		return apartProbe
	case o.fallback:
		return apartFallback
	case o.interrupted:
		return apartInterrupted
	case o.shutdown:
		return apartShutdown
	case o.challenge:
		return apartChallenge
	case o.designed:
		return apartDesigned
	}
	return notApart
}

// olderHTTPSuccess reports an exchange record of an mcpdiag before
// 15d740b (2026-12-06), which recorded an exchange that is not a JSON-RPC
// request and got a 2xx (a standalone GET event stream, a session DELETE, a
// metadata GET, a batch or a body that is not JSON-RPC, judged at the HTTP
// layer only) RESULT_SUCCESS in the application layer; it is HTTP_SUCCESS
// in the transport layer since. Such records are version 2, as this
// version's are, so they are known by what cannot hold of a
// RESULT_SUCCESS: a result no method returned, to an HTTP method other than
// POST, or to a POST without a JSON-RPC method that is not a client's
// answer (clientAnswer, written since 2026-12-06, is RESULT_SUCCESS when
// the server accepted an answer that returned a result; its method is
// empty when the recorder did not see the server request it answers). An
// OAuth chain's step (auth: a metadata GET, a registration or token POST)
// is none of them: the client records a step that succeeded RESULT_SUCCESS,
// this version as the ones before it.
func olderHTTPSuccess(r *record.Record) bool {
	if r.Kind != record.KindExchange || r.Outcome != classify.ResultSuccess || r.Auth != nil {
		return false
	}
	switch r.HTTPMethod {
	case "":
		return false // stdio: no HTTP method, and a method's result
	case http.MethodPost:
		return r.Method == "" && !r.ClientAnswer
	}
	return true
}

func observe(r *record.Record) obs {
	return obs{id: r.ID, callID: r.CallID, method: r.Method, tool: r.Tool, outcome: r.Outcome, layer: r.Layer, ms: durationMs(r.Timings.Total), probe: r.Probe != nil,
		fallback:    r.EraFallback && r.Kind == record.KindExchange && r.Decision != nil && r.Decision.Action == "renegotiate",
		errorAnswer: r.ClientAnswer && !r.AnswerRefused && r.Outcome == classify.JSONRPCError,
		refused:     r.ClientAnswer && r.AnswerRefused,
		interrupted: r.Interrupted(),
		shutdown:    r.CutByShutdown(),
		challenge:   r.ChallengeAnswered(),
		designed:    r.DesignedAnswer() != "",
		unanswered:  unanswered(r)}
}

// unanswered reports a 2024-11-05 HTTP+SSE request whose answer was
// awaited on the GET stream and never came, for a reason other than the
// recording proxy's shutdown (record.Record.UnansweredOnStream: the stream
// ended, the proxy's wait ran out, it stopped waiting to keep its bound, or
// another request of the same id waited at once): the request went
// unanswered, a failure as a streamable HTTP request's STREAM_INCOMPLETE
// is, though its outcome (REQUEST_ACCEPTED) is the POST's 202. One the
// shutdown cut is counted as cut by shutdown (record.Record.CutByShutdown).
func unanswered(r *record.Record) bool {
	why := r.UnansweredOnStream()
	return why != "" && why != record.AnswerShutdown
}

func durationMs(d record.Duration) float64 {
	return float64(d) / float64(time.Millisecond)
}

type toolKey struct{ method, tool string }

type offKey struct {
	tool    toolKey
	outcome string
}

// counted is a count with the ids of its first records.
type counted struct {
	n           int64
	probes      int64 // of n, probe records (outcomes only)
	fallback    int64 // of n, era fallbacks (outcomes only)
	interrupted int64 // of n, records of interrupted matrix runs (outcomes only)
	shutdown    int64 // of n, records cut by the proxy's or server's shutdown (outcomes only)
	challenges  int64 // of n, authorization challenges the client answered (outcomes only)
	designed    int64 // of n, designed answers to requests that are no JSON-RPC message (outcomes only)
	unanswered  int64 // of n, 2024-11-05 HTTP+SSE requests whose answer never came on the stream, failures (outcomes only)
	examples    []string
}

func (c *counted) add(id string, keep int) {
	c.n++
	if id != "" && len(c.examples) < keep {
		c.examples = append(c.examples, id)
	}
}

type toolStat struct {
	total, failures int64
	outcomes        map[string]int64
	lat             latency
}

// section accumulates the records of one kind.
type section struct {
	kind      record.Kind
	opts      Options
	total     int64
	failures  int64
	probes    int64
	fallbacks int64
	// legacyFallbacks counts, of fallbacks, the 2024-11-05 fallbacks (a
	// POST initialize answered 404 or 405, then the legacy GET).
	legacyFallbacks int64
	// interrupted counts the records of matrix runs the stop cut short.
	interrupted int64
	// cutByShutdown counts the records the recording proxy's or server's
	// own shutdown cut.
	cutByShutdown int64
	// challenges counts the authorization challenges the client answered.
	challenges int64
	// designed counts the designed answers to requests that are no
	// JSON-RPC message (record.Record.DesignedAnswer).
	designed int64
	// unanswered counts the 2024-11-05 HTTP+SSE requests whose answer
	// never came on the stream (obs.unanswered), each a failure.
	unanswered int64
	// linkedChallenges counts, of challenges, those linked to their
	// client's answer at read time; links keeps the first Options.Top.
	linkedChallenges int64
	links            []ChallengeLink
	// resumed counts the requests counted by the response on the GET that
	// resumed their stream (resumeLinks the first Options.Top);
	// notResumed the resumable ones no GET resumed (failures),
	// resumeAmbiguous of them those with an ambiguous response; unlinked
	// the GET streams' responses that answered no request of the input,
	// ambiguousResponses those that answered two or more alike.
	resumed, notResumed, resumeAmbiguous, unlinked, ambiguousResponses int64
	resumeLinks                                                        []ResumeLink
	orphans                                                            int64
	errAnswers,
	refused int64 // clients' answers: their JSON-RPC errors, and those the server refused
	layers    map[string]int64
	outcomes  map[string]*counted
	tools     map[toolKey]*toolStat
	offenders map[offKey]*counted
	lat       latency
	slow      slowHeap
	// Server lines: the fault decisions, by scenario, and the lines on
	// which any fired.
	scenarios  map[string]*faultStat
	faultLines int64
}

type faultStat struct {
	lines int64
	fired counted
}

// decisions returns a fault member's decisions in the shape faults counts.
func decisions(f *record.Fault) []struct {
	Scenario string `json:"scenario"`
	Fired    bool   `json:"fired"`
} {
	fs := make([]struct {
		Scenario string `json:"scenario"`
		Fired    bool   `json:"fired"`
	}, len(f.Decisions))
	for i, d := range f.Decisions {
		fs[i].Scenario, fs[i].Fired = d.Scenario, d.Fired
	}
	return fs
}

// faults counts one line's fault decisions.
func (s *section) faults(id string, fs []struct {
	Scenario string `json:"scenario"`
	Fired    bool   `json:"fired"`
}) {
	fired := false
	// A scenario listed twice on one line (nested) counts once.
	consulted, firedOn := map[string]bool{}, map[string]bool{}
	for _, f := range fs {
		if s.scenarios == nil {
			s.scenarios = map[string]*faultStat{}
		}
		name := label(s.scenarios, f.Scenario, s.opts.MaxTools)
		st := s.scenarios[name]
		if st == nil {
			st = &faultStat{}
			s.scenarios[name] = st
		}
		if !consulted[name] {
			consulted[name] = true
			st.lines++
		}
		if f.Fired && !firedOn[name] {
			firedOn[name] = true
			st.fired.add(id, s.opts.Examples)
			fired = true
		}
	}
	if fired {
		s.faultLines++
	}
}

func newSection(k record.Kind, opts Options) *section {
	return &section{
		kind: k, opts: opts,
		layers:    map[string]int64{},
		outcomes:  map[string]*counted{},
		tools:     map[toolKey]*toolStat{},
		offenders: map[offKey]*counted{},
		lat:       latency{limit: opts.ExactSamples},
	}
}

// label returns name, None when it is empty, or Other when m already holds
// max names and not this one.
func label[V any](m map[string]V, name string, max int) string {
	if name == "" {
		name = None
	}
	if _, ok := m[name]; !ok && len(m) >= max {
		return Other
	}
	return name
}

func (s *section) add(o obs) {
	s.total++
	// A probe's answer is what the probe asked for (a deliberate bad call
	// answered with an error is the server doing right): mcpdiag probe's
	// rules judge it, and it is never a failure here. The era probe a
	// 2025-11-25 server refused, answered by falling back to initialize,
	// is a negotiation step the spec designs, not a failure: counted
	// apart, as a probe is. A record of a matrix run the stop cut short is
	// not judged (the matrix's own verdicts leave it out): a NETWORK_ERROR
	// there is the stop cutting the connection, not the server failing.
	ap := o.apart()
	fail := ap == notApart && (Failure(s.kind, o.outcome) || o.unanswered)
	switch ap {
	case apartProbe:
		s.probes++
	case apartFallback:
		s.fallbacks++
		if o.legacy {
			s.legacyFallbacks++
		}
	case apartInterrupted:
		s.interrupted++
	case apartShutdown:
		s.cutByShutdown++
	case apartChallenge:
		s.challenges++
	case apartDesigned:
		s.designed++
	}
	if fail {
		s.failures++
	}
	unanswered := fail && o.unanswered
	if unanswered {
		s.unanswered++
	}
	if fail && o.notResumed {
		s.notResumed++
		if o.resumeAmbiguous {
			s.resumeAmbiguous++
		}
	}
	if o.errorAnswer {
		s.errAnswers++
	}
	if o.refused {
		s.refused++
	}
	layer := o.layer
	if layer == "" {
		layer = o.outcome.Layer()
	}
	s.layers[label(s.layers, string(layer), s.opts.MaxOutcomes)]++

	out := label(s.outcomes, string(o.outcome), s.opts.MaxOutcomes)
	oc := s.outcomes[out]
	if oc == nil {
		oc = &counted{}
		s.outcomes[out] = oc
	}
	switch ap {
	case apartProbe:
		oc.probes++
		oc.n++ // no example: the examples are of records that can fail
	case apartFallback:
		oc.fallback++
		oc.n++
	case apartInterrupted:
		oc.interrupted++
		oc.n++
	case apartShutdown:
		oc.shutdown++
		oc.n++
	case apartChallenge:
		oc.challenges++
		oc.n++
	case apartDesigned:
		oc.designed++
		oc.n++
	default:
		oc.add(o.id, s.opts.Examples)
		if unanswered {
			oc.unanswered++
		}
	}

	key := toolKey{o.method, o.tool}
	ts := s.tools[key]
	if ts == nil {
		if len(s.tools) >= s.opts.MaxTools {
			key = toolKey{tool: Other}
			ts = s.tools[key]
		}
		if ts == nil {
			ts = &toolStat{outcomes: map[string]int64{}, lat: latency{limit: s.opts.ExactSamples}}
			s.tools[key] = ts
		}
	}
	ts.total++
	ts.outcomes[label(ts.outcomes, string(o.outcome), s.opts.MaxOutcomes)]++
	// A record of a run an interrupt cut short has the stop's time, not a
	// latency (the cut tools/call lasted until the user's Ctrl-C): not a
	// sample, nor among the slowest, so that no p95 gate fails on it; nor
	// is an exchange the proxy's or server's shutdown cut (its hang lasted
	// until the stop).
	ms := o.ms
	if ap == apartInterrupted || ap == apartShutdown {
		ms = 0
	}
	ts.lat.add(ms)
	if fail {
		ts.failures++
		k := offKey{key, out}
		c := s.offenders[k]
		if c == nil {
			c = &counted{}
			s.offenders[k] = c
		}
		c.add(o.id, s.opts.Examples)
	}

	s.lat.add(ms)
	if ms > 0 {
		s.slow.push(Slow{ID: o.id, CallID: o.callID, Method: o.method, Tool: o.tool, Outcome: string(o.outcome), TotalMs: ms, seq: s.total}, s.opts.Top)
	}
}

// challengeLink notes a challenge linked to its client's answer
// (Section.ChallengesLinked, Section.ChallengeLinks); add counts it.
func (s *section) challengeLink(l ChallengeLink) {
	s.linkedChallenges++
	if len(s.links) < s.opts.Top {
		s.links = append(s.links, l)
	}
}

func rate(n, total int64) float64 {
	if total == 0 {
		return 0
	}
	return float64(n) / float64(total)
}

// outcomeOrder ranks the classifier's outcomes in layer order, for ties.
var outcomeOrder = func() map[string]int {
	m := map[string]int{}
	for i, o := range classify.Outcomes {
		m[string(o)] = i
	}
	return m
}()

func compareOutcomes(a, b string) int {
	ia, oka := outcomeOrder[a]
	ib, okb := outcomeOrder[b]
	switch {
	case oka && okb:
		return cmp.Compare(ia, ib)
	case oka != okb: // known outcomes first
		if oka {
			return -1
		}
		return 1
	}
	return cmp.Compare(a, b)
}

func outcomeLayer(name string) string {
	if l := classify.Outcome(name).Layer(); l != "" {
		return string(l)
	}
	return None
}

func (s *section) summary() *Section {
	out := &Section{
		Kind:               string(s.kind),
		Total:              s.total,
		Failures:           s.failures,
		FailureRate:        rate(s.failures, s.total-s.probes-s.fallbacks-s.interrupted-s.cutByShutdown-s.challenges-s.designed),
		Probes:             s.probes,
		EraFallbacks:       s.fallbacks,
		LegacyFallbacks:    s.legacyFallbacks,
		Interrupted:        s.interrupted,
		CutByShutdown:      s.cutByShutdown,
		AuthChallenges:     s.challenges,
		ChallengesLinked:   s.linkedChallenges,
		ChallengeLinks:     slices.Clone(s.links),
		DesignedAnswers:    s.designed,
		Unanswered:         s.unanswered,
		Resumed:            s.resumed,
		ResumeLinks:        slices.Clone(s.resumeLinks),
		NotResumed:         s.notResumed,
		ResumeAmbiguous:    s.resumeAmbiguous,
		UnlinkedResponses:  s.unlinked,
		AmbiguousResponses: s.ambiguousResponses,
		Orphans:            s.orphans,
		ErrorAnswers:       s.errAnswers,
		RefusedAnswers:     s.refused,
		ByLayer:            make(map[string]int64, len(s.layers)),
		ByOutcome:          []OutcomeCount{},
		ByTool:             []ToolStats{},
		Latency:            s.lat.summary(),
		WorstOffenders:     []Offender{},
		Slowest:            s.slow.sorted(),
	}
	for l, n := range s.layers {
		out.ByLayer[l] = n
	}
	for name, c := range s.outcomes {
		out.ByOutcome = append(out.ByOutcome, OutcomeCount{
			Outcome: name, Layer: outcomeLayer(name), Failure: name != None && Failure(s.kind, classify.Outcome(name)),
			Count: c.n, Probes: c.probes, EraFallbacks: c.fallback, Interrupted: c.interrupted, CutByShutdown: c.shutdown, AuthChallenges: c.challenges, DesignedAnswers: c.designed, Unanswered: c.unanswered, Rate: rate(c.n, s.total), Examples: slices.Clone(c.examples),
		})
	}
	slices.SortFunc(out.ByOutcome, func(a, b OutcomeCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), compareOutcomes(a.Outcome, b.Outcome))
	})
	for k, ts := range s.tools {
		t := ToolStats{Method: k.method, Tool: k.tool, Total: ts.total, Failures: ts.failures, ByOutcome: make(map[string]int64, len(ts.outcomes)), Latency: ts.lat.summary()}
		for o, n := range ts.outcomes {
			t.ByOutcome[o] = n
		}
		out.ByTool = append(out.ByTool, t)
	}
	slices.SortFunc(out.ByTool, func(a, b ToolStats) int {
		return cmp.Or(cmp.Compare(b.Total, a.Total), cmp.Compare(a.Method, b.Method), cmp.Compare(a.Tool, b.Tool))
	})
	for k, c := range s.offenders {
		out.WorstOffenders = append(out.WorstOffenders, Offender{
			Method: k.tool.method, Tool: k.tool.tool, Outcome: k.outcome, Layer: outcomeLayer(k.outcome),
			Count: c.n, Examples: slices.Clone(c.examples),
		})
	}
	slices.SortFunc(out.WorstOffenders, func(a, b Offender) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Method, b.Method), cmp.Compare(a.Tool, b.Tool), compareOutcomes(a.Outcome, b.Outcome))
	})
	if len(out.WorstOffenders) > s.opts.Top {
		out.WorstOffenders = out.WorstOffenders[:s.opts.Top]
	}
	out.FaultLines = s.faultLines
	for name, st := range s.scenarios {
		out.Faults = append(out.Faults, FaultCount{Scenario: name, Lines: st.lines, Fired: st.fired.n, Examples: slices.Clone(st.fired.examples)})
	}
	slices.SortFunc(out.Faults, func(a, b FaultCount) int {
		return cmp.Or(cmp.Compare(b.Fired, a.Fired), cmp.Compare(b.Lines, a.Lines), cmp.Compare(a.Scenario, b.Scenario))
	})
	return out
}

// slowHeap keeps the slowest records seen: a min-heap on TotalMs, so the
// fastest of those kept is the one a slower record replaces.
type slowHeap []Slow

func (h slowHeap) Len() int { return len(h) }
func (h slowHeap) Less(i, j int) bool {
	// The root is the one to replace: the fastest, and of equal ones the
	// latest seen, so that the first seen stay.
	if h[i].TotalMs != h[j].TotalMs {
		return h[i].TotalMs < h[j].TotalMs
	}
	return h[i].seq > h[j].seq
}
func (h slowHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *slowHeap) Push(x any)   { *h = append(*h, x.(Slow)) }
func (h *slowHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// push keeps s if it is among the top slowest. On equal times the record
// seen first stays.
func (h *slowHeap) push(s Slow, top int) {
	if len(*h) < top {
		heap.Push(h, s)
		return
	}
	if s.TotalMs > (*h)[0].TotalMs {
		(*h)[0] = s
		heap.Fix(h, 0)
	}
}

func (h slowHeap) sorted() []Slow {
	out := slices.Clone([]Slow(h))
	if out == nil {
		out = []Slow{}
	}
	for i := range out {
		out[i].TotalMs = roundMs(out[i].TotalMs)
	}
	slices.SortFunc(out, func(a, b Slow) int {
		return cmp.Or(cmp.Compare(b.TotalMs, a.TotalMs), cmp.Compare(a.seq, b.seq))
	})
	return out
}
