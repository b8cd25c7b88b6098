package report

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/record"
)

// LegacyFallbackWindow is how long after a POST initialize answered 404 or
// 405 (see refusedInitialize) the same client's legacy GET may start for
// the 404 or 405 to count as the 2024-11-05 fallback rather than a
// failure.
const LegacyFallbackWindow = 30 * time.Second

// heldInitialize is a refused initialize (refusedInitialize) awaiting its
// client's next request (see settleLegacy).
type heldInitialize struct {
	o       obs
	run, ua string
	start   time.Time
	target  string
	// next is the start of the earliest request of the same client seen
	// after it that is not its legacy GET (zero: none yet): a GET that
	// started later is not the next request.
	next time.Time
}

// refusedInitialize reports whether r is the POST initialize that the
// spec's backward-compatibility rule for the 2024-11-05 HTTP+SSE transport
// (basic/transports, "Backward Compatibility") tells a client to fall back
// from: a recorder's exchange (it names the connection) of a POST over
// HTTP of the JSON-RPC method initialize, answered HTTP_ERROR 404 or 405.
// Only typed fields are read, never the reason.
func refusedInitialize(r *record.Record) bool {
	return r.Kind == record.KindExchange && r.Conn != "" && r.HTTPMethod == http.MethodPost && r.Method == "initialize" &&
		r.Outcome == classify.HTTPError && (r.Status == http.StatusNotFound || r.Status == http.StatusMethodNotAllowed) &&
		!r.Time.IsZero() && r.Probe == nil && !r.EraFallback
}

// legacyGET reports whether r is a request for the 2024-11-05 transport's
// event stream: a GET without a JSON-RPC method that accepts
// text/event-stream.
func legacyGET(r *record.Record) bool {
	return r.HTTPMethod == http.MethodGet && r.Method == "" &&
		slices.ContainsFunc(r.RequestHeaders.Values("Accept"), func(v string) bool { return strings.Contains(v, "text/event-stream") })
}

// endpoint is r's URL without its query (the server URL a client POSTs
// initialize to and GETs the legacy stream from), or "".
func endpoint(r *record.Record) string {
	u, err := url.Parse(r.URL)
	if err != nil || u.Host == "" {
		return ""
	}
	u.RawQuery, u.Fragment = "", ""
	return u.String()
}

// userAgent is r's User-Agent header, as recorded.
func userAgent(r *record.Record) string {
	return strings.Join(r.RequestHeaders.Values("User-Agent"), ", ")
}

// holdInitialize keeps a refused initialize until Close or its client's
// legacy GET settles it. The requests already counted come first (the
// latest maxRecentRequests, remember): the order of the file is not the
// order of the client's requests (a GET recorded before the 404, files
// read in another order), so the client's earliest request remembered that
// started after r settles it at once when it is the legacy GET (settleLegacy's
// rule), and else bounds the GET to come.
func (a *Accumulator) holdInitialize(r *record.Record, o obs) {
	h := heldInitialize{o: o, run: record.ConnRun(r.Conn), ua: userAgent(r), start: r.Time, target: endpoint(r)}
	var next *recentRequest
	for k := range a.recent {
		q := a.recentAt(k)
		if record.ConnRun(q.conn) == h.run && q.ua == h.ua && q.at.After(h.start) && (next == nil || q.at.Before(next.at)) {
			next = q
		}
	}
	if next != nil {
		if next.target != "" && next.target == h.target && next.at.Sub(h.start) <= LegacyFallbackWindow {
			h.o.fallback, h.o.legacy = true, true
			a.link(h.o)
			a.exchanges.add(h.o)
			return
		}
		h.next = next.at
	}
	if len(a.inits) >= maxPendingProbes {
		a.releaseInit(0) // the oldest: a failure
	}
	a.inits = append(a.inits, h)
}

// settleLegacy decides the refused initializes that exchange record r
// settles, before r is counted. A POST initialize answered 404 or 405 is the
// 2024-11-05 fallback when the same client's next request is its legacy GET
// (legacyGET) of the same URL (query left out), started within
// LegacyFallbackWindow after it. The same client is the same recording
// process (the RUN of conn: the client's GET comes on a connection of its
// own) and the same User-Agent (clientInfo is not in a GET). Records come in
// the order exchanges ended, and the GET's is written when its stream
// ends, after the session's POSTs: "next" is by start time, so each other
// request of the client that started after the initialize moves the bound
// a GET must start before, and nothing but the GET or Close settles it:
// Close counts the ones still held as failures (until then Summary leaves
// them out), as a 404 or 405 no GET followed is.
func (a *Accumulator) settleLegacy(r *record.Record) {
	if len(a.inits) == 0 || r.Kind != record.KindExchange || r.Conn == "" || r.Time.IsZero() {
		return
	}
	run, ua := record.ConnRun(r.Conn), userAgent(r)
	for i := 0; i < len(a.inits); i++ {
		h := &a.inits[i]
		if h.run != run || h.ua != ua || !r.Time.After(h.start) {
			continue
		}
		earliest := h.next.IsZero() || r.Time.Before(h.next)
		if legacyGET(r) && earliest && r.Time.Sub(h.start) <= LegacyFallbackWindow && h.target != "" && endpoint(r) == h.target {
			h.o.fallback, h.o.legacy = true, true
			a.releaseInit(i)
			i--
			continue
		}
		if earliest {
			h.next = r.Time
		}
	}
}

// releaseInit counts the i-th held initialize and forgets it.
func (a *Accumulator) releaseInit(i int) {
	if a.inits[i].o.fallback {
		a.link(a.inits[i].o)
	}
	a.exchanges.add(a.inits[i].o)
	a.inits = slices.Delete(a.inits, i, i+1)
}

// flushInits counts every refused initialize still held as a failure: no
// legacy GET of its client came.
func (a *Accumulator) flushInits() {
	for _, h := range a.inits {
		a.exchanges.add(h.o)
	}
	clear(a.inits)
	a.inits = a.inits[:0]
}
