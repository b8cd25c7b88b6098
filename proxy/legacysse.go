package proxy

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/recorder"
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
// The hot path pays nothing until such a stream was seen, and then a map
// lookup for a POST answered 202.
type legacyStreams struct {
	any  atomic.Bool // some legacy stream was seen: most proxies never see one
	mu   sync.Mutex
	open map[string]*legacyStream // by the endpoint's path and query
}

// legacyStream is one legacy event stream: the key of its endpoint (see
// endpointKey), the path of the GET that opened it, and when its exchange
// ended (zero while it is open).
type legacyStream struct {
	key, path string
	end       time.Time
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
// stream is kept (bounded by legacyMemory, forgotten first).
func (l *legacyStreams) ended(s *legacyStream, at time.Time) {
	l.mu.Lock()
	s.end = at
	l.mu.Unlock()
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
		rec.Reason = fmt.Sprintf("HTTP 202 to a request POSTed to the endpoint the 2024-11-05 HTTP+SSE event stream (GET %s) named: the server accepted it, and its answer travels on that stream; its outcome is on the stream's record, not paired with this one", s.path)
	} else {
		rec.Outcome = classify.NotificationAccepted
		rec.Reason = fmt.Sprintf("HTTP 202 to a message POSTed to the endpoint the 2024-11-05 HTTP+SSE event stream (GET %s) named: the server accepted it", s.path)
	}
	rec.Layer = rec.Outcome.Layer()
}
