package proxy

import (
	"bytes"
	"container/list"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/recorder"
	"github.com/mcpdiag/mcpdiag/wire"
)

// legacyMemory bounds the 2024-11-05 HTTP+SSE streams the proxy keeps
// open endpoints of: past it, an arbitrary one is forgotten, so memory
// stays bounded whatever clients open.
const legacyMemory = 256

// legacyStreams knows the event streams of the 2024-11-05 HTTP+SSE
// transport that are open through the proxy: a GET whose stream's first
// event is "endpoint", naming the URL the client POSTs its messages to.
// Their answers travel on that stream; the POST is answered 202
// ("Accepted"). Without it, every such POST read as a request answered
// 202 whose caller never gets the answer (UNEXPECTED_CONTENT_TYPE with
// the warning request-answered-202), which is false in that transport.
// The answers on the stream are paired with the requests POSTed to its
// endpoint (begin, answered, hold): each request's record has its answer's
// outcome. The hot path pays nothing until such a stream was seen, and
// then a map lookup per POST (at its begin, and for one answered 202).
type legacyStreams struct {
	any  atomic.Bool // some legacy stream was seen: most proxies never see one
	mu   sync.Mutex
	open map[string]*legacyStream // by the endpoint's path and query

	// The pairing of the streams' answers with their POSTs (begin,
	// answered, hold, and the ends: ended, timeout, drop, shutdown).
	wait    time.Duration // Options.LegacyAnswerWait
	max     int           // legacyPendingMax (tests lower it)
	queue   list.List     // the pending requests of every stream, oldest first (*legacyPending)
	held    sync.WaitGroup
	heldN   atomic.Int64 // records held and not yet handed to write (held's count)
	closed  bool         // shutdown began: no record is held any more
	write   func(*record.Record)
	observe func(*Observation)
	// classifying, when set (tests), is called before an answer is
	// judged, outside the lock.
	classifying func()
	// bodies and bodyLimit are the proxy's body mode and cap: an answer's
	// text goes into its request's record as the recorder's bodies go.
	bodies    BodyMode
	bodyLimit int
}

// legacyStream is one legacy event stream: the key of its endpoint (see
// endpointKey), the path of the GET that opened it, and when its exchange
// ended (zero while it is open). Its pairing state is under
// legacyStreams.mu.
type legacyStream struct {
	key, path string
	end       time.Time

	tab     *legacyTable         // the requests POSTed to the endpoint, shared by the open streams naming the same one
	answers record.StreamAnswers // the responses the stream carried
	ended   bool                 // the stream's exchange finished: no answer comes any more
}

// legacyTable is the pairing state of an endpoint: the requests POSTed to
// it, which an answer on any open stream naming that endpoint pairs with.
// Streams that name the same endpoint URL (one without a session id in it)
// while open share one: the proxy cannot tell on which of them the server
// answers, and pairs by the id on either. Under legacyStreams.mu.
type legacyTable struct {
	pending map[string]*legacyPending // requests waiting for their answer, by idKey
	late    map[string]bool           // ids whose records were written without their answer (at most legacyLateMemory)
	// ambiguous holds the ids two requests waited under at once, each
	// with the answers still due under it, which pair with neither (at
	// most legacyLateMemory ids; past it, such an answer counts unpaired).
	ambiguous map[string]int
	streams   []*legacyStream // its streams still open: the requests wait for an answer while one is
}

// legacyPendingMax bounds the requests, over every legacy stream, that wait
// for their answer on the stream (POSTs in flight, and records held until
// their answer comes): past it, the oldest is written without its answer
// (StreamAnswer.NotSeen "evicted"), so memory stays bounded and no record
// is lost.
const legacyPendingMax = 1024

// legacyLateMemory bounds, per stream, the ids of requests whose records
// were written without their answer, by which a late answer is counted
// late rather than unpaired.
const legacyLateMemory = 256

// DefaultLegacyAnswerWait is the default of Options.LegacyAnswerWait.
const DefaultLegacyAnswerWait = 60 * time.Second

// legacyPending is a request POSTed to a legacy stream's endpoint that
// waits for its answer on the stream. Its fields after the request's own
// are under legacyStreams.mu.
type legacyPending struct {
	s        *legacyStream
	key      string  // idKey of id
	id       wire.ID // the request's id, owned
	method   string
	protocol string
	start    time.Time
	listing  *listingToken // the drift tracker's (beginExchange), which Tag held
	elem     *list.Element // in legacyStreams.queue; nil once out of the table

	// The answer, once it came (classified from the event's bytes).
	res      *classify.Result
	cerr     error
	answerAt time.Time
	bytes    int64
	text     []byte // the answer's bytes, at most bodyLimit, when the body mode may record them
	notSeen  string // why no answer can come any more (set when taken out of the table unanswered)

	on        *legacyStream // the stream its answer came on (s, or another naming the same endpoint)
	answering chan struct{} // set while its answer is being judged (take, settle), closed then

	rec   *record.Record // the POST's record, held until the answer (nil before its exchange finished)
	obs   *Observation   // the observation told with the record
	timer *time.Timer
	done  bool // the held record was written, or is being
}

// endpointKey is how a POST's URL is matched with an endpoint: its escaped
// path and raw query (the session id is in the query); the host is not
// compared, since the client sent its POST to the proxy.
func endpointKey(u *url.URL) string {
	return u.EscapedPath() + "?" + u.RawQuery
}

// opened is the recorder's StreamEndpoint hook: ex's GET stream named
// endpoint, a URL resolved against the GET's own.
func (l *legacyStreams) opened(ex *recorder.Exchange, endpoint string) {
	u, err := ex.Request().URL.Parse(endpoint)
	if err != nil {
		return
	}
	s := &legacyStream{key: endpointKey(u), path: ex.Request().URL.EscapedPath()}
	ex.Tag = s
	l.mu.Lock()
	if l.open == nil {
		l.open = make(map[string]*legacyStream)
	}
	if o := l.open[s.key]; o != nil && !o.ended {
		// Another open stream names the same endpoint: a POST to it
		// may be answered on either.
		s.tab = o.tab
	} else {
		s.tab = &legacyTable{}
	}
	s.tab.streams = append(s.tab.streams, s)
	if len(l.open) >= legacyMemory {
		// Forget an ended stream first, else any.
		victim := ""
		for k, o := range l.open {
			if victim == "" || !o.end.IsZero() {
				victim = k
			}
			if !o.end.IsZero() {
				break
			}
		}
		delete(l.open, victim)
	}
	l.open[s.key] = s
	l.mu.Unlock()
	l.any.Store(true)
}

// ended notes when the stream s's GET exchange finished: a POST to its
// endpoint that starts after that has no stream to be answered on, while
// one that started before may finish (its record) after it. The ended
// stream is kept (bounded by legacyMemory, forgotten first). The requests
// still waiting for an answer on it get none: their held records are
// written (NotSeen "stream-ended"), and the stream's record (rec) gets its
// answers' counts.
func (l *legacyStreams) ended(s *legacyStream, at time.Time, rec *record.Record) {
	l.mu.Lock()
	s.end = at
	s.ended = true
	s.tab.streams = slices.DeleteFunc(s.tab.streams, func(o *legacyStream) bool { return o == s })
	if n := len(s.tab.streams); n > 0 && l.open[s.key] == s {
		// POSTs to the endpoint go on with the newest stream still
		// open.
		l.open[s.key] = s.tab.streams[n-1]
	}
	var due []*legacyPending
	if len(s.tab.streams) == 0 {
		// No open stream names the endpoint any more.
		for _, lp := range s.tab.pending {
			if lp := l.drop(lp, record.AnswerStreamEnded); lp != nil {
				due = append(due, lp)
			}
		}
	}
	counts := s.answers
	l.mu.Unlock()
	rec.StreamAnswers = &counts
	for _, lp := range due {
		l.emit(lp)
	}
}

// stream returns the stream whose endpoint r was POSTed to at start,
// while it was open.
func (l *legacyStreams) stream(r *http.Request, start time.Time) (*legacyStream, bool) {
	if !l.any.Load() {
		return nil, false
	}
	key := endpointKey(r.URL)
	l.mu.Lock()
	s, ok := l.open[key]
	ok = ok && (s.end.IsZero() || start.Before(s.end))
	l.mu.Unlock()
	return s, ok
}

// annotate judges rec, the record of a POST answered 202, as what it is
// when the POST went to an open legacy stream's endpoint: a request
// accepted (REQUEST_ACCEPTED), a notification or response accepted
// (NOTIFICATION_ACCEPTED), each with answeredOn "stream", without the
// warning request-answered-202. Anything else is left as judged.
func (l *legacyStreams) annotate(ex *recorder.Exchange, rec *record.Record) {
	if rec.Status != http.StatusAccepted || rec.HTTPMethod != http.MethodPost || rec.Method == "" && rec.JSONRPC.ID.IsZero() {
		return
	}
	s, ok := l.stream(ex.Request(), ex.Start())
	if !ok {
		return
	}
	switch rec.Outcome {
	case classify.UnexpectedContentType, classify.EmptyResponse, classify.NotificationAccepted,
		classify.MalformedJSON, classify.InvalidEnvelope:
		// What a 202's body ("Accepted", or nothing) is judged as when
		// read as the answer.
	default:
		return
	}
	request := rec.Method != "" && !rec.JSONRPC.ID.IsZero() && !rec.JSONRPC.ID.IsNull()
	rec.AnsweredOn = record.AnsweredOnStream
	rec.Warnings = slices.DeleteFunc(rec.Warnings, func(w record.Warning) bool {
		return w.Code == classify.WarnRequestAnswered202
	})
	if request {
		rec.Outcome = classify.RequestAccepted
		rec.Reason = fmt.Sprintf("HTTP 202 to a request POSTed to the endpoint the 2024-11-05 HTTP+SSE event stream (GET %s) named: the server accepted it, and its answer travels on that stream", s.path)
	} else {
		rec.Outcome = classify.NotificationAccepted
		rec.Reason = fmt.Sprintf("HTTP 202 to a message POSTed to the endpoint the 2024-11-05 HTTP+SSE event stream (GET %s) named: the server accepted it", s.path)
	}
	rec.Layer = rec.Outcome.Layer()
}

// begin is the Begin hook's part for a POST: a request (an id that is not
// null) POSTed to an open legacy stream's endpoint waits for its answer on
// that stream, from before it is forwarded (the answer may come before its
// POST's response). It returns the pending request, which the exchange's
// Tag then holds (nil when the request is not one). A request of an id
// another waits under on the same stream (or did, its answer not come yet:
// ambiguous) pairs with no answer, nor does that other: an answer of that
// id cannot tell which it answers (the server's answers may come in any
// order). Both records say so (NotSeen "ambiguous"), and their answers
// are counted ambiguous on the stream's record.
func (l *legacyStreams) begin(ex *recorder.Exchange, listing *listingToken) *legacyPending {
	id := ex.ID()
	if id.IsZero() || id.IsNull() {
		return nil
	}
	s, ok := l.stream(ex.Request(), ex.Start())
	if !ok {
		return nil
	}
	lp := &legacyPending{s: s, key: idKey(id), id: wire.IDFromRaw(bytes.Clone(id.Raw())), method: ex.Method(),
		protocol: ex.Protocol(), start: ex.Start(), listing: listing}
	var evicted *legacyPending
	l.mu.Lock()
	if s.ended {
		l.mu.Unlock()
		return nil
	}
	if old := s.tab.pending[lp.key]; old != nil || s.tab.ambiguous[lp.key] > 0 {
		var due *legacyPending
		if old != nil {
			due = l.drop(old, record.AnswerAmbiguous)
		}
		if s.tab.ambiguous == nil {
			s.tab.ambiguous = make(map[string]int)
		}
		if n, ok := s.tab.ambiguous[lp.key]; ok || len(s.tab.ambiguous) < legacyLateMemory {
			s.tab.ambiguous[lp.key] = n + 1
			if old != nil {
				s.tab.ambiguous[lp.key]++
			}
		}
		// Out of the table from the start: its record is written with
		// why, as one whose answer can come no more.
		lp.notSeen = record.AnswerAmbiguous
		l.mu.Unlock()
		if due != nil {
			l.emit(due)
		}
		return lp
	}
	if l.queue.Len() >= l.max {
		evicted = l.drop(l.queue.Front().Value.(*legacyPending), record.AnswerEvicted)
	}
	if s.tab.pending == nil {
		s.tab.pending = make(map[string]*legacyPending)
	}
	s.tab.pending[lp.key] = lp
	lp.elem = l.queue.PushBack(lp)
	l.mu.Unlock()
	if evicted != nil {
		l.emit(evicted)
	}
	return lp
}

// drop takes lp out of the table unanswered, for why (a record.Answer…
// reason). It returns lp when its record is held and is now due (the
// caller writes it with emit, after unlocking); a request still in flight
// is written by its own exchange, saying why. Called with mu held.
func (l *legacyStreams) drop(lp *legacyPending, why string) *legacyPending {
	l.unlink(lp)
	lp.notSeen = why
	if why != record.AnswerStreamEnded && why != record.AnswerAmbiguous && len(lp.s.tab.late) < legacyLateMemory {
		// Its answer may still come on the stream: counted late then.
		if lp.s.tab.late == nil {
			lp.s.tab.late = make(map[string]bool)
		}
		lp.s.tab.late[lp.key] = true
	}
	if lp.rec == nil || lp.done {
		return nil
	}
	lp.done = true
	if lp.timer != nil {
		lp.timer.Stop()
	}
	return lp
}

// unlink takes lp out of its stream's table and the queue. Called with mu
// held.
func (l *legacyStreams) unlink(lp *legacyPending) {
	if lp.elem == nil {
		return
	}
	l.queue.Remove(lp.elem)
	lp.elem = nil
	delete(lp.s.tab.pending, lp.key)
}

// answered is the recorder's StreamMessage hook: data, a JSON-RPC response
// (m its one parse) on ex's legacy stream, is the answer of the request of
// its id (and JSON type) POSTed to that stream's endpoint. It is judged by
// the classifier as that request's answer, from the event's bytes, outside
// the lock every stream's pairing shares (a large answer holds up no other
// stream); the request's record gets the verdict, now when it is held, or
// when its exchange finishes. A response no waiting request has is
// counted, late or unpaired, on the stream's record.
func (l *legacyStreams) answered(ex *recorder.Exchange, data []byte, m *wire.Message) {
	s, ok := ex.Tag.(*legacyStream)
	if !ok {
		return
	}
	lp, at := l.take(s, m.ID)
	if lp == nil {
		return
	}
	if l.classifying != nil {
		l.classifying()
	}
	cex := &classify.Exchange{Method: lp.method, ID: lp.id, ProtocolVersion: lp.protocol}
	cex.Carries(bytes.Clone(data))
	res, cerr := (&classify.Classifier{}).Classify(cex)
	var text []byte
	if l.keepsBody(res) {
		text = bytes.Clone(data[:min(len(data), l.bodyLimit)])
	}
	l.settle(lp, res, cerr, at, int64(len(data)), text)
}

// skipped is the recorder's StreamSkipped hook: an event of ex's legacy
// stream was read through without being kept (over the classifier's event
// size or memory budget), its first bytes in sk.Head. When they show a
// response (a result or error member) and its id, it is the answer of the
// request of that id POSTed to the stream's endpoint, and that request's
// record is NOT_CLASSIFIED, as an answer over the limit is over Streamable
// HTTP, with the answer seen; a request or notification of the server is
// not an answer. Any other (the id behind a result written first, as the
// TypeScript SDK writes it, or bytes that are not JSON) may be an answer
// that cannot be paired: it is counted unread on the stream's record.
func (l *legacyStreams) skipped(ex *recorder.Exchange, sk *wire.SkippedEventError, event int) {
	s, ok := ex.Tag.(*legacyStream)
	if !ok {
		return
	}
	id, method, response := wire.ScanHead(sk.Head)
	if method && !response {
		return
	}
	rid := wire.IDFromRaw(id)
	if !response || !rid.IsString() && !rid.IsNumber() {
		l.mu.Lock()
		s.answers.Unread++
		l.mu.Unlock()
		return
	}
	lp, at := l.take(s, rid)
	if lp == nil {
		return
	}
	d := &classify.NotClassifiedDetails{Cause: classify.CauseEventTooLarge, Size: sk.Length, Limit: sk.Limit, Event: event}
	res := &classify.Result{Outcome: classify.NotClassified, Status: http.StatusOK}
	res.SetContentType("text/event-stream")
	if errors.Is(sk, wire.ErrBudgetExhausted) {
		d.Cause, d.InUse = classify.CauseMemoryBudget, sk.InUse
		res.Reason = fmt.Sprintf("not classified: its answer, event %d of the stream, is %d bytes, and holding it would take classification past its memory budget of %d bytes (%d in use; --classify-memory)", event, d.Size, d.Limit, d.InUse)
	} else {
		res.Reason = fmt.Sprintf("not classified: its answer, event %d of the stream, is %d bytes, more than the %d bytes the classifier holds (--max-event-size)", event, d.Size, d.Limit)
	}
	res.SetNotClassified(d)
	var text []byte
	if l.keepsBody(res) {
		// The answer's first bytes: all that was kept of it.
		text = bytes.Clone(sk.Head[:min(len(sk.Head), l.bodyLimit)])
	}
	l.settle(lp, res, nil, at, sk.Length, text)
}

// keepsBody reports whether the body mode records the text of an answer
// judged res.
func (l *legacyStreams) keepsBody(res *classify.Result) bool {
	return l.bodies == BodiesAll || l.bodies == BodiesFull || l.bodies == BodiesErrors && !res.Outcome.Success()
}

// take finds, for a response of id on the stream s, the request
// waiting for it, and takes it out of the table, marked answering (its
// record waits for settle, whatever else ends); at is when the answer was
// read. A response no waiting request has is counted, late or unpaired,
// and take returns nil.
func (l *legacyStreams) take(s *legacyStream, id wire.ID) (lp *legacyPending, at time.Time) {
	at = time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	s.answers.Responses++
	key, _ := answeredKey(s.tab.pending, id)
	lp = s.tab.pending[key]
	if lp == nil {
		if n := s.tab.ambiguous[key]; n > 0 {
			if n == 1 {
				delete(s.tab.ambiguous, key)
			} else {
				s.tab.ambiguous[key] = n - 1
			}
			s.answers.Ambiguous++
		} else if s.tab.late[key] {
			delete(s.tab.late, key)
			s.answers.Late++
		} else {
			s.answers.Unpaired++
		}
		return nil, at
	}
	l.unlink(lp)
	s.answers.Paired++
	lp.on = s
	lp.answering = make(chan struct{})
	return lp, at
}

// settle puts the answer's verdict into lp, taken (take), and writes its
// record when it is held.
func (l *legacyStreams) settle(lp *legacyPending, res *classify.Result, cerr error, at time.Time, n int64, text []byte) {
	l.mu.Lock()
	lp.res, lp.cerr, lp.answerAt, lp.bytes, lp.text = res, cerr, at, n, text
	close(lp.answering)
	lp.answering = nil
	due := lp.rec != nil && !lp.done
	if due {
		lp.done = true
		lp.timer.Stop()
	}
	l.mu.Unlock()
	if due {
		l.emit(lp)
	}
}

// hold decides, when the exchange of lp's POST finished, what its record
// rec (judged by annotate) says: the answer's verdict when it came
// already, REQUEST_ACCEPTED with why when none can come, and otherwise
// nothing yet: the record is held (true), to be written when the answer
// comes, the stream ends, the wait runs out or the proxy shuts down. obs,
// when set, is told with the record.
func (l *legacyStreams) hold(lp *legacyPending, rec *record.Record, obs *Observation) bool {
	l.mu.Lock()
	if rec.Outcome != classify.RequestAccepted || rec.AnsweredOn != record.AnsweredOnStream {
		// Not answered 202 (the server answered in the response, or
		// refused it): nothing comes on the stream for it.
		l.unlink(lp)
		l.mu.Unlock()
		return false
	}
	if ch := lp.answering; ch != nil {
		// Its answer came and is being judged: the verdict is
		// moments away.
		l.mu.Unlock()
		<-ch
		l.mu.Lock()
	}
	if l.closed && lp.res == nil && lp.notSeen == "" {
		// The shutdown began (Wait): the sink is closed next, and no one
		// would write a record held now.
		l.drop(lp, record.AnswerShutdown)
	}
	if lp.res != nil || lp.notSeen != "" {
		l.mu.Unlock()
		l.apply(lp, rec)
		return false
	}
	lp.rec, lp.obs = rec, obs
	l.held.Add(1)
	l.heldN.Add(1)
	lp.timer = time.AfterFunc(l.wait, func() { l.timeout(lp) })
	l.mu.Unlock()
	return true
}

// timeout writes lp's held record without its answer: the wait ran out.
func (l *legacyStreams) timeout(lp *legacyPending) {
	l.mu.Lock()
	if lp.done || lp.answering != nil {
		// Written, or its answer came and is being judged (settle
		// writes it).
		l.mu.Unlock()
		return
	}
	due := l.drop(lp, record.AnswerTimeout)
	l.mu.Unlock()
	if due != nil {
		l.emit(due)
	}
}

// shutdown writes every held record without its answer: the proxy shut
// down (Wait), and waits until they were handed to the sink, or ctx is
// done. From then on no record is held (hold).
func (l *legacyStreams) shutdown(ctx context.Context) error {
	l.mu.Lock()
	l.closed = true
	var due []*legacyPending
	for e := l.queue.Front(); e != nil; {
		next := e.Next()
		if lp := l.drop(e.Value.(*legacyPending), record.AnswerShutdown); lp != nil {
			due = append(due, lp)
		}
		e = next
	}
	l.mu.Unlock()
	for _, lp := range due {
		l.emit(lp)
	}
	done := make(chan struct{})
	go func() {
		l.held.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		// select picks at random among ready cases: all written as ctx
		// ended is not a loss (as recorder.Wait).
		n := l.heldN.Load()
		if n == 0 {
			return nil
		}
		return fmt.Errorf("%d records of 2024-11-05 HTTP+SSE requests still held: %w", n, ctx.Err())
	}
}

// emit writes lp's held record, with its answer or why there is none, and
// tells the observer.
func (l *legacyStreams) emit(lp *legacyPending) {
	defer l.held.Done()
	l.apply(lp, lp.rec)
	l.write(lp.rec)
	l.heldN.Add(-1)
	if lp.obs != nil {
		l.observe(lp.obs)
	}
}

// apply puts into rec, the REQUEST_ACCEPTED record of lp's POST, what
// became of its answer: the classifier's verdict on the answer (outcome,
// layer, reason, JSON-RPC and tool facts, warnings), the HTTP facts
// staying the POST's own (its 202), or why no answer was seen. lp is out
// of the table and no longer changes.
func (l *legacyStreams) apply(lp *legacyPending, rec *record.Record) {
	if lp.res == nil {
		rec.StreamAnswer = &record.StreamAnswer{NotSeen: lp.notSeen}
		switch lp.notSeen {
		case record.AnswerStreamEnded:
			rec.Reason += "; its answer was not seen: the stream ended first"
		case record.AnswerTimeout:
			rec.Reason += fmt.Sprintf("; its answer was not seen within %s of the request", l.wait)
		case record.AnswerEvicted:
			rec.Reason += fmt.Sprintf("; its answer was not waited for: more than %d requests waited for theirs", l.max)
		case record.AnswerShutdown:
			rec.Reason += "; its answer was not seen: the proxy shut down first"
		case record.AnswerAmbiguous:
			rec.Reason += "; its answer cannot be told apart: another request of the same id waited for its answer on the stream at the same time (the server cannot tell them apart either)"
		}
		return
	}
	status, ct, respBytes, method, protocol := rec.Status, rec.ContentType, rec.ResponseBytes, rec.Method, rec.ProtocolVersion
	warnings := rec.Warnings
	rec.SetResult(lp.res)
	rec.Status, rec.ContentType, rec.ResponseBytes, rec.Method, rec.ProtocolVersion = status, ct, respBytes, method, protocol
	// The POST's own warnings (its headers, its 202) come first.
	for _, w := range rec.Warnings {
		if !slices.Contains(warnings, w) {
			warnings = append(warnings, w)
		}
	}
	rec.Warnings = warnings
	rec.Reason = fmt.Sprintf("answered on the 2024-11-05 HTTP+SSE event stream (GET %s) after the POST's HTTP 202: %s", lp.on.path, rec.Reason)
	rec.StreamAnswer = &record.StreamAnswer{Seen: true, After: record.Duration(lp.answerAt.Sub(lp.start)), Bytes: lp.bytes}
	switch {
	case lp.text != nil:
		// The POST's own body is the transport's fixed "Accepted"; the
		// answer is what a reader of a failed call needs (errors mode) or
		// asked for (all, full). Redacted when the record is encoded, as
		// every body.
		rec.ResponseBody = &record.Body{Text: strings.ToValidUTF8(string(lp.text), "\uFFFD"), Truncated: int64(len(lp.text)) < lp.bytes}
	case l.bodies == BodiesErrors && rec.Outcome.Success():
		// Recorded while the request looked accepted; a success keeps no
		// body in errors mode.
		rec.ResponseBody = nil
	}
	if lp.cerr != nil {
		if rec.Note != "" {
			rec.Note += "; "
		}
		rec.Note += "the classifier failed on the answer: " + lp.cerr.Error()
	}
}
