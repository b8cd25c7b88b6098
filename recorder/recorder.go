package recorder

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/wire"
)

// BodyMode says which bodies the recorder puts into records. The bodies the
// client receives are never affected: only what is recorded.
type BodyMode string

// The body modes.
const (
	// BodiesNone records no body text (sizes, hashes and the verdict only).
	BodiesNone BodyMode = "none"
	// BodiesErrors records the response body of every exchange that did not
	// succeed (the default): what a failure looked like, without keeping
	// tool results or arguments of calls that worked.
	BodiesErrors BodyMode = "errors"
	// BodiesAll records the request and response bodies of every exchange,
	// each capped at the body limit.
	BodiesAll BodyMode = "all"
	// BodiesFull records the complete request and response bytes (raw SSE
	// framing included) with each event's arrival time, so that an exchange
	// can be replayed exactly. Credentials are still redacted.
	BodiesFull BodyMode = "full"
)

// ParseBodyMode reads the value of a --record-bodies flag ("" is
// BodiesErrors).
func ParseBodyMode(s string) (BodyMode, error) {
	switch m := BodyMode(s); m {
	case "":
		return BodiesErrors, nil
	case BodiesNone, BodiesErrors, BodiesAll, BodiesFull:
		return m, nil
	}
	return "", fmt.Errorf("recorder: body mode %q: want none, errors, all or full", s)
}

// Limit returns limit, or when it is 0 the default cap of a recorded body
// in mode m: DefaultFullBodyLimit in BodiesFull, else DefaultBodyLimit.
func (m BodyMode) Limit(limit int) int {
	switch {
	case limit != 0:
		return limit
	case m == BodiesFull:
		return DefaultFullBodyLimit
	}
	return DefaultBodyLimit
}

// Limits.
const (
	// DefaultBodyLimit caps each recorded body in the excerpt modes.
	DefaultBodyLimit = record.DefaultBodyLimit
	// DefaultFullBodyLimit caps each recorded body in BodiesFull: request and
	// response together stay below the record line limit
	// (record.DefaultMaxLineSize), so a full record is still one readable
	// line. A body beyond it is kept up to the limit and marked truncated.
	DefaultFullBodyLimit = 3 << 20
	// DefaultMaxRequestParse is how much of a request body the recorder
	// reads before passing the request on, to learn the JSON-RPC id, method
	// and protocol version the classifier needs. A larger body is passed on
	// whole all the same (the read part first, then the rest as it
	// arrives); its exchange is then classified without the request id.
	DefaultMaxRequestParse = 4 << 20
	// DefaultClassifyMemory is the default of Options.ClassifyMemory: eight
	// events of the default maximum size (wire.DefaultMaxEventSize) at
	// once.
	DefaultClassifyMemory = 128 << 20
	// maxArrivals bounds the event arrival times kept for one full record.
	maxArrivals = 100000
)

// Sink receives records; *record.Async, *record.FileWriter and
// *record.StreamWriter are sinks. Write may be called from many goroutines.
// A record Write refuses is counted (Stats.RecordErrors) and named in the
// log.
type Sink interface {
	Write(rec *record.Record) error
}

// recordFreeSink is a Sink that keeps nothing of a record past its Write
// (record.Async, record.Sink): with a Finish hook that sets
// Finished.ReleaseRecord, the recorder reuses the exchange's record.
type recordFreeSink interface {
	Sink
	KeepsNoRecord()
}

// Options configure a Recorder.
type Options struct {
	// Records receives one record per exchange; nil records nothing. Use a
	// *record.Async so that no handler waits for the disk.
	Records Sink
	// Bodies says which bodies go into records; BodiesErrors when empty.
	Bodies BodyMode
	// BodyLimit caps each recorded body; DefaultBodyLimit (or
	// DefaultFullBodyLimit with BodiesFull) when 0.
	BodyLimit int
	// MaxEventSize bounds one JSON body or SSE event the classifier holds
	// (wire.DefaultMaxEventSize when 0).
	MaxEventSize int
	// ClassifyMemory is the memory, in bytes, that classifying responses
	// may hold at once over all in-flight exchanges (DefaultClassifyMemory
	// when 0; negative for no overall bound, only MaxEventSize per
	// exchange). An exchange whose response needs more than is left is
	// passed to the client untouched and recorded NOT_CLASSIFIED with cause
	// "memory-budget".
	ClassifyMemory int64
	// MaxRequestParse bounds the request bytes read before the request is
	// passed on (DefaultMaxRequestParse when 0).
	MaxRequestParse int
	// MaxRequestParseOf, when set, bounds one request's read instead
	// (MaxRequestParse when it returns 0 or less): the proxy reads more
	// only of a request that a fault endpoint reads that far.
	MaxRequestParseOf func(*http.Request) int
	// Scenario is noted in every record (the fault scenario applied).
	Scenario string
	// ScenarioOf, when set, names the scenario applied to one request; ""
	// falls back to Scenario.
	ScenarioOf func(*http.Request) string
	// FaultScenario makes a record's scenario the scenarios that fired on
	// its request (the fault layer's decision, "" when none fired) instead
	// of Scenario: set it when a fault layer is behind the recorder.
	FaultScenario bool
	// ServerFacts puts the fault endpoint's own view of the request into
	// the record: the request's numbers and the counters (fault.count,
	// fault.counters), the requestState issued, and the params facts
	// (params). The fault server sets it; the proxy records the decision
	// only.
	ServerFacts bool
	// Sync makes Serve return only after the exchange's record was handed
	// to the sink: a server whose log must hold a request once its handler
	// returned sets it. Without it the record is finished on the exchange's
	// own goroutine (Wait waits for it).
	Sync bool
	// URL returns the URL a record names for a request; the request's own
	// path and query when nil.
	URL func(*http.Request) string
	// Name names the recorder's owner in notes ("proxy": "the proxy shut
	// down …"); "server" when empty.
	Name string
	// Upstream, when set, names what the recorder's owner passes requests
	// on to, in notes ("the upstream request was cancelled"); "" says "the
	// request was cancelled".
	Upstream string
	// Begin, when set, is called once the request was read (before the
	// handler runs), in the request's goroutine.
	Begin func(*Exchange)
	// Finish, when set, is called with every finished exchange before its
	// record is written, on the goroutine that finishes it: it may add to
	// the record (warnings, notes) and tell observers. The records it
	// returns are written after the exchange's own.
	Finish func(*Finished) []*record.Record
	// StreamEndpoint, when set, is called when the first event of a 2xx
	// event stream that answers a GET is an "endpoint" event: the 2024-11-05
	// HTTP+SSE transport, whose client POSTs its messages to the URL the
	// event's data names and reads their answers on this stream. It gets
	// the event's data as the stream's first bytes pass, before they are
	// written to the client (the stream itself is classified later), so
	// that no POST to the endpoint can finish first; on the goroutine that
	// writes the response, with
	// the response writer's lock held: it must be quick. What it sets in ex
	// (its Tag) is seen by the Finish hook.
	StreamEndpoint func(ex *Exchange, endpoint string)
	// StreamMessage, when set, is called with every JSON-RPC response (a
	// result or an error, with its id) that an event stream StreamEndpoint
	// was called for carries: data is the event's data, m its one parse
	// (both valid during the call only). Such a stream is read as it
	// passes, not lazily. It runs on the exchange's finishing goroutine,
	// before the stream's record is made.
	StreamMessage func(ex *Exchange, data []byte, m *wire.Message)
	// StreamSkipped, when set, is called, on the same streams and goroutine
	// as StreamMessage, with every event that was read through without
	// being kept (over MaxEventSize or the classification memory budget):
	// skipped says why and holds the first bytes of its data (Head); event
	// is its 1-based index on the stream.
	StreamSkipped func(ex *Exchange, skipped *wire.SkippedEventError, event int)
	// Refuse, when set, answers a request whose body was malformed (a broken
	// chunked framing); the default answers 400 "reading the request body:
	// …". The request is not passed on either way.
	Refuse func(w http.ResponseWriter, ex *Exchange)
	// Logger receives the recorder's own warnings (record write failures);
	// nil discards them.
	Logger *slog.Logger
}

// Recorder is the one recorder: an http.Handler middleware that passes every
// request to the handler behind it unchanged and writes one classified
// exchange record per HTTP exchange. Build it with New.
type Recorder struct {
	opts      Options
	bodyLimit int
	maxParse  int
	budget    *wire.Budget // nil: no overall bound
	log       *slog.Logger
	noun      string // who answers, in notes: "proxy", "server"
	shutErr   error  // ends a body cut by the shutdown, for the classifier

	sessions sessionStore
	srvReqs  serverRequests // server requests seen on streams, until answered
	resumes  resumeTable    // a session's requests whose event stream a GET may resume (resume.go)
	pieces   pieceWatch     // the pieces in flight of streams classified as they are forwarded
	fin      *finishers

	wg       sync.WaitGroup
	inFlight atomic.Int64
	closing  atomic.Bool
	stats    struct {
		exchanges, recordErrors, clientGone, cutByShutdown, closedByShutdown, upstreamErrors, upstreamResets, notClassified atomic.Int64
	}
}

// New checks opts and returns a recorder.
func New(opts Options) (*Recorder, error) {
	if opts.Bodies == "" {
		opts.Bodies = BodiesErrors
	}
	if _, err := ParseBodyMode(string(opts.Bodies)); err != nil {
		return nil, err
	}
	rc := &Recorder{opts: opts, log: opts.Logger, noun: opts.Name}
	if rc.noun == "" {
		rc.noun = "server"
	}
	rc.shutErr = errors.New("the " + rc.noun + " shut down before the response ended")
	rc.fin = newFinishers(rc)
	if rc.log == nil {
		rc.log = slog.New(slog.DiscardHandler)
	}
	rc.bodyLimit = opts.Bodies.Limit(opts.BodyLimit)
	rc.maxParse = opts.MaxRequestParse
	if rc.maxParse <= 0 {
		rc.maxParse = DefaultMaxRequestParse
	}
	switch {
	case opts.ClassifyMemory == 0:
		rc.budget = wire.NewBudget(DefaultClassifyMemory)
	case opts.ClassifyMemory > 0:
		rc.budget = wire.NewBudget(opts.ClassifyMemory)
	}
	return rc, nil
}

// Bodies returns the body mode in force.
func (rc *Recorder) Bodies() BodyMode { return rc.opts.Bodies }

// MaxRequestParse returns the request bytes read before a request is
// passed on.
func (rc *Recorder) MaxRequestParse() int { return rc.maxParse }

// Handler returns next behind the recorder (a Front whose route is next).
func (rc *Recorder) Handler(next http.Handler) http.Handler {
	return rc.Front(func(http.ResponseWriter, *http.Request) http.Handler { return next })
}

// Stats are the recorder's counters.
type Stats struct {
	// Exchanges counts finished exchanges (each wrote one record, or
	// tried to).
	Exchanges int64 `json:"exchanges"`
	// InFlight counts exchanges not finished yet.
	InFlight int64 `json:"inFlight"`
	// RecordErrors counts records the sink refused.
	RecordErrors int64 `json:"recordErrors"`
	// ClientGone counts exchanges the client left before the end.
	ClientGone int64 `json:"clientGone"`
	// CutByShutdown counts the records of exchanges the owner's own
	// shutdown cut (see BeginShutdown) before their answer was whole: what
	// record.Record.CutByShutdown, and so mcpdiag report, counts as cut by
	// shutdown (flag SD with a cut outcome, or a held 2024-11-05 request
	// whose answer the stop left unseen). They are not in ClientGone.
	CutByShutdown int64 `json:"cutByShutdown"`
	// ClosedByShutdown counts the records flagged SD whose outcome the cut
	// did not make: an open-ended GET event stream the shutdown closed (its
	// record is HTTP_SUCCESS: no answer was awaited on it), or an answer
	// whose failure had shown before the cut (a 500's head). report judges
	// them by their outcome, not as cut.
	ClosedByShutdown int64 `json:"closedByShutdown"`
	// UpstreamErrors counts exchanges answered by the handler itself
	// because its upstream could not be reached or failed before
	// responding (Exchange.Up).
	UpstreamErrors int64 `json:"upstreamErrors"`
	// UpstreamResets counts responses the upstream cut after they started.
	UpstreamResets int64 `json:"upstreamResets"`
	// NotClassified counts exchanges recorded NOT_CLASSIFIED (over
	// MaxEventSize or the classification memory budget).
	NotClassified int64 `json:"notClassified"`
	// ClassifyMemory is the classification memory budget in bytes (0 when
	// there is none), ClassifyMemoryInUse what it holds now,
	// ClassifyMemoryPeak the most it held at once and
	// ClassifyMemoryRefused how many reservations it refused (each makes an
	// event or body be read through without being held).
	ClassifyMemory        int64 `json:"classifyMemory"`
	ClassifyMemoryInUse   int64 `json:"classifyMemoryInUse"`
	ClassifyMemoryPeak    int64 `json:"classifyMemoryPeak"`
	ClassifyMemoryRefused int64 `json:"classifyMemoryRefused"`
}

// Stats returns the counters so far.
func (rc *Recorder) Stats() Stats {
	return Stats{
		Exchanges: rc.stats.exchanges.Load(), InFlight: rc.inFlight.Load(),
		RecordErrors: rc.stats.recordErrors.Load(), ClientGone: rc.stats.clientGone.Load(), CutByShutdown: rc.stats.cutByShutdown.Load(), ClosedByShutdown: rc.stats.closedByShutdown.Load(),
		UpstreamErrors: rc.stats.upstreamErrors.Load(), UpstreamResets: rc.stats.upstreamResets.Load(),
		NotClassified:  rc.stats.notClassified.Load(),
		ClassifyMemory: rc.budget.Limit(), ClassifyMemoryInUse: rc.budget.InUse(), ClassifyMemoryPeak: rc.budget.Peak(),
		ClassifyMemoryRefused: rc.budget.Refused(),
	}
}

// Wait blocks until every exchange that has started is finished and its
// record handed to the sink, or ctx is done. Call it after the HTTP server
// stopped accepting requests and before closing the sink. It also ends the
// recorder's idle finishing goroutines (an exchange that still comes gets
// a goroutine of its own, as the finishing of every exchange is then).
func (rc *Recorder) Wait(ctx context.Context) error {
	rc.fin.close()
	done := make(chan struct{})
	go func() {
		rc.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		// select picks at random among ready cases: a Wait that finished
		// as ctx ended (or one called with ctx already done and nothing in
		// flight) is not a loss. inFlight drops when an exchange's record
		// has been handed on, just before its wg.Done.
		n := rc.inFlight.Load()
		if n == 0 {
			return nil
		}
		return fmt.Errorf("recorder: %d exchanges still in flight: %w", n, ctx.Err())
	}
}

// BeginShutdown tells the recorder that its server is about to cut the
// connections still open: an exchange cut from now on is recorded as cut by
// the shutdown (SD), not as left by its client (DC).
func (rc *Recorder) BeginShutdown() { rc.closing.Store(true) }

// Write hands a record to the sink, with an id when it has none; a record
// the sink refuses is counted and named in the log. The Finish hook's
// records go through it. A record of an exchange the shutdown cut or
// closed is counted here (Stats.CutByShutdown, Stats.ClosedByShutdown),
// once its outcome is final.
func (rc *Recorder) Write(rec *record.Record) {
	if rec.Flags.Has(record.FlagSD) || rec.Outcome == classify.RequestAccepted && rec.StreamAnswer != nil {
		// The stop's count agrees with report's (Stats.CutByShutdown).
		switch {
		case rec.CutByShutdown():
			rc.stats.cutByShutdown.Add(1)
		case rec.Flags.Has(record.FlagSD):
			rc.stats.closedByShutdown.Add(1)
		}
	}
	if rc.opts.Records == nil {
		return
	}
	if rec.ID == "" {
		rec.ID = record.NewID()
	}
	if err := rc.opts.Records.Write(rec); err != nil {
		rc.reportLoss(rc.stats.recordErrors.Add(1), rec, err)
	}
}

// maxLoggedLosses is how many refused records the recorder names one by one
// in its log; past it they are counted (Stats.RecordErrors), not logged.
const maxLoggedLosses = 20

// reportLoss logs the n-th record the sink refused, by name.
func (rc *Recorder) reportLoss(n int64, rec *record.Record, err error) {
	switch {
	case n <= maxLoggedLosses:
		rc.log.Error("record lost: "+record.RefOf(rec).Redacted(nil).String(), slog.Any("error", err))
	case n == maxLoggedLosses+1:
		rc.log.Error(fmt.Sprintf("more than %d records lost; later losses are counted, not logged", maxLoggedLosses))
	}
}

// Finished is one finished exchange as the Finish hook sees it.
type Finished struct {
	// Exchange is the exchange; its handler has returned.
	Exchange *Exchange
	// Record is the exchange record, complete but not yet redacted, and not
	// yet written.
	Record *record.Record
	// Result is the classifier's verdict (nil when there is none).
	Result *classify.Result
	// ClientGone reports that the client disconnected before the end of
	// the response (DC): not after it had the response, not cut by the
	// shutdown.
	ClientGone bool
	// UpstreamReset reports that the upstream cut the response after it
	// had started (UR).
	UpstreamReset bool
	// ReleaseRecord is set by a hook that keeps nothing of Record (nor of
	// Result) past its return and hands neither to code that may: the
	// recorder may then reuse the record's memory for a later exchange once
	// it was written, when its Sink keeps nothing of a record either (it
	// has a method KeepsNoRecord, as record.Async and record.Sink do).
	// Unset, the record is the hook's to keep.
	ReleaseRecord bool
	// Hold is set by a hook that takes Record to write it later itself
	// (Recorder.Write), once more is known than the exchange told (the
	// answer of a 2024-11-05 HTTP+SSE POST, which arrives on another
	// exchange's stream): the recorder then neither writes it nor reuses
	// its memory. The hook must write it, exactly once.
	Hold bool
}

// sessionStore remembers, per 2025-11-25 session, the client and the
// negotiated protocol version, which later requests of the session do not
// repeat. It is bounded: past maxSessions an arbitrary entry is forgotten.
type sessionStore struct {
	mu sync.Mutex
	m  map[string]sessionInfo
}

type sessionInfo struct {
	client, protocol string
}

const maxSessions = 10000

func (s *sessionStore) get(id string) sessionInfo {
	if id == "" {
		return sessionInfo{}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[id]
}

func (s *sessionStore) put(id string, info sessionInfo) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]sessionInfo{}
	}
	if _, ok := s.m[id]; !ok && len(s.m) >= maxSessions {
		for k := range s.m {
			delete(s.m, k)
			break
		}
	}
	s.m[id] = info
}

func (s *sessionStore) del(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, id)
}
