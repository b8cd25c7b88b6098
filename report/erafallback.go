package report

import (
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/wire"
)

// EraFallbackWindow is how long after a refused 2026-07-28 request (see
// refusedProbe) the same client's initialize may start for the request to
// count as an era fallback rather than a failure.
const EraFallbackWindow = 30 * time.Second

// quickFallback is how soon after a refused probe (under it, not at it) an
// initialize of the same client on another HTTP connection makes it an era
// fallback by itself (see settle); a later one only when the probe's
// connection goes on. The built-in client's initialize follows its probe
// within milliseconds; a Node client's second run (the Inspector CLI, modern
// then legacy in a shell loop) came 944 ms after the first's probe.
const quickFallback = 250 * time.Millisecond

// maxRecentRequests bounds the requests remembered for a refused probe
// recorded after its client's next request (see recall).
const maxRecentRequests = 256

// maxPendingProbes bounds the refused requests held while their client's
// next request is awaited; past it the oldest is counted as a failure.
const maxPendingProbes = 1024

// pendingProbe is a refused 2026-07-28 request whose client's next request
// has not been seen yet: its observation is added to the exchanges once
// that request (or the end of the window, or Close) settles it.
type pendingProbe struct {
	o            obs
	conn, client string
	at           time.Time
	// initialized: an initialize of the same client started on another
	// connection after the probe; its connection's next request decides.
	initialized bool
	// next is the start of the earliest request that does not make the
	// probe a fallback seen on its connection after it (zero: none yet).
	// Records come in the order exchanges end: a request that started
	// before it may still come (the proxy recorded a 2025-11-25 client's
	// notifications/initialized before its initialize), so the probe waits
	// for the window's end or Close, a failure unless one that started
	// before next makes it a fallback.
	next time.Time
}

// refusedProbe reports whether r is a 2026-07-28 request that a server of
// the 2025-11-25 era refused: the answer that the 2026-07-28 transport's
// §Backward compatibility tells a client to fall back to initialize on (a
// 4xx other than 401, 403, 408 and 429, without a modern error; as the
// built-in client decides in client/setup.go eraFromProbe). Only typed
// fields are read: kind, protocol version, method, outcome, status and the
// JSON-RPC error code, never the reason. A record the client already
// marked (EraFallback) or a probe of mcpdiag probe is not one: report counts
// those as they say.
//
// Over stdio (the stdio proxy's records: no HTTP method, a "stdio:" URL) a
// client that speaks both eras sends server/discover first, and any JSON-RPC
// error but UnsupportedProtocolVersion (-32022) means a legacy server
// (basic/transports/stdio §Backward Compatibility, as the stdio probe
// decides): such an answer to server/discover is a refused probe too.
func refusedProbe(r *record.Record) bool {
	if r.Kind != record.KindExchange || r.EraFallback || r.Probe != nil ||
		r.ProtocolVersion != wire.Protocol2026 || r.Method == "" || r.Method == "initialize" {
		return false
	}
	if r.HTTPMethod == "" && strings.HasPrefix(r.URL, "stdio:") {
		c := r.JSONRPC.ErrorCode
		return r.Method == "server/discover" && r.Outcome == classify.JSONRPCError && c != nil && *c != -32022
	}
	if r.Outcome != classify.HTTPError || r.Status < 400 || r.Status >= 500 {
		return false
	}
	switch r.Status {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusRequestTimeout, http.StatusTooManyRequests:
		return false // not a version signal: the same request would meet it at any era
	}
	if c := r.JSONRPC.ErrorCode; c != nil {
		switch *c {
		case -32020, -32021, -32601, -32602:
			return false // a modern error: the server speaks 2026-07-28
		}
	}
	return true
}

// hold keeps a refused probe until its client's next request is seen.
func (a *Accumulator) hold(r *record.Record, o obs) {
	if len(a.pending) >= maxPendingProbes {
		a.release(0) // the oldest: a failure
	}
	a.pending = append(a.pending, pendingProbe{o: o, conn: r.Conn, client: r.Client, at: r.Time})
}

// settle decides the refused probes that exchange record r settles, before r
// is counted. A refused probe is an era fallback when the same client's next
// request is an initialize that starts within EraFallbackWindow after it;
// any other next request, none in the window, or none at all (Close) leaves
// it a failure. "The same client" is the same connection (conn, the proxy's
// id of the client's TCP connection): the probe's next request on that
// connection decides. A client may send its initialize on another
// connection: an initialize of the same non-empty client (clientInfo's
// name@version, or the User-Agent) on another connection, when no probe is
// held on its own, marks the probes of that client held on other
// connections, and a marked probe is an era fallback when its connection's
// next request is a 2025-11-25 one (the client went on in the session it
// fell back to). A client name is no process: a marked probe whose
// connection sees no more requests (a run that gave up, another run of the
// same client initializing on its own connections) stays a failure. Records
// without a time are linked by order alone.
func (a *Accumulator) settle(r *record.Record) {
	if len(a.pending) == 0 {
		return
	}
	timed := func(p *pendingProbe) bool { return !p.at.IsZero() && !r.Time.IsZero() }
	kept := a.pending[:0]
	for _, p := range a.pending {
		// A probe its client's initialize marked (within the window) waits
		// for its own connection's next request, however late it ends.
		if !p.initialized && timed(&p) && r.Time.Sub(p.at) > EraFallbackWindow {
			a.exchanges.add(p.o) // no next request in the window: a failure
			continue
		}
		kept = append(kept, p)
	}
	clear(a.pending[len(kept):])
	a.pending = kept
	after := func(p *pendingProbe) bool { return !timed(p) || !r.Time.Before(p.at) }
	for i := range a.pending {
		p := &a.pending[i]
		if p.conn == "" || p.conn != r.Conn || !after(p) {
			continue
		}
		// The request that makes the probe a fallback when it is the next:
		// an initialize, or, for a probe marked by its client's initialize
		// elsewhere, the session it fell back to going on.
		fallsBack := r.Method == "initialize" || p.initialized && r.ProtocolVersion == wire.Protocol2025
		switch earliest := p.next.IsZero() || r.Time.Before(p.next); {
		case r.Time.IsZero():
			// Linked by order alone: the next record decides.
			p.o.fallback = fallsBack
			a.release(i)
		case !earliest:
			// A later request than one already seen: not the next.
		case fallsBack:
			p.o.fallback = true
			a.release(i)
		default:
			p.next = r.Time
		}
		return
	}
	if r.Method != "initialize" || r.Client == "" {
		return
	}
	for i := range a.pending {
		p := &a.pending[i]
		if p.client != r.Client || p.conn == r.Conn || !after(p) {
			continue
		}
		if timed(p) && r.Time.Sub(p.at) < quickFallback && r.HTTPMethod != "" {
			// The client reacted to the refusal at once, on a connection
			// of its own: Go's transport, for one, returns a connection to
			// its pool after the response's body is closed, not before the
			// next request, which then often dials anew (the built-in
			// client through the proxy: 150 of 300 runs). A later run of
			// the same client, a process starting anew, is not this quick.
			// Over HTTP only: a stdio session is one pipe, another one is
			// another run.
			p.o.fallback = true
			a.release(i)
			return
		}
		p.initialized = true
	}
}

// release counts the i-th held probe and forgets it.
func (a *Accumulator) release(i int) {
	if a.pending[i].o.fallback {
		a.link(a.pending[i].o)
	}
	a.exchanges.add(a.pending[i].o)
	a.pending = slices.Delete(a.pending, i, i+1)
}

// link notes that the exchange o was counted as an era fallback by
// linking, for TakeEraFallbacks.
func (a *Accumulator) link(o obs) {
	if o.id != "" && a.opts.KeepLinks {
		a.linked = append(a.linked, o.id)
	}
}

// TakeEraFallbacks returns the IDs of the exchange records counted as era
// fallbacks by linking since the last call (none without
// Options.KeepLinks), in the order they were
// settled, and forgets them: the refused 2026-07-28 requests (see
// refusedProbe) whose client's next request was its initialize (see settle
// and recall). A record that marks itself (record.Record.EraFallback, the
// built-in client's) is not among them; neither is a probe still held,
// which a later record may settle. A page over the same records marks
// these rows as not failed, as the Summary counts them (package ui).
func (a *Accumulator) TakeEraFallbacks() []string {
	ids := a.linked
	a.linked = nil
	return ids
}

// flushProbes counts every probe still held as a failure: no next request
// of its client came.
func (a *Accumulator) flushProbes() {
	for _, p := range a.pending {
		a.exchanges.add(p.o)
	}
	clear(a.pending)
	a.pending = a.pending[:0]
}

// recentRequest is an exchange request already counted, remembered for a
// refused probe recorded after it (see recall).
type recentRequest struct {
	conn, client string
	at           time.Time
	initialize   bool
	http         bool
	// noMethod marks an exchange without a JSON-RPC method (a GET, a
	// DELETE), kept for holdInitialize's look back (recall skips it); ua
	// is its User-Agent, and target, for a legacy GET (legacyGET), the
	// URL it streams from (endpoint).
	noMethod   bool
	ua, target string
}

// remember keeps r for recall and holdInitialize: the latest
// maxRecentRequests exchanges with a start time and a connection.
func (a *Accumulator) remember(r *record.Record) {
	if r.Time.IsZero() || r.Conn == "" {
		return
	}
	q := recentRequest{conn: r.Conn, client: r.Client, at: r.Time, initialize: r.Method == "initialize", http: r.HTTPMethod != "",
		noMethod: r.Method == "", ua: userAgent(r)}
	if legacyGET(r) {
		q.target = endpoint(r)
	}
	if len(a.recent) < maxRecentRequests {
		a.recent = append(a.recent, q)
		return
	}
	// A ring: the oldest is overwritten, not shifted out (a copy of the
	// whole window for every record of a long file).
	a.recent[a.recentOldest] = q
	a.recentOldest = (a.recentOldest + 1) % maxRecentRequests
}

// recentAt is the k-th remembered request, oldest first.
func (a *Accumulator) recentAt(k int) *recentRequest {
	return &a.recent[(a.recentOldest+k)%len(a.recent)]
}

// recall finds refused probe r's era fallback among the requests already
// counted, when its client's next request was recorded before it: records
// are written as exchanges end, and the proxy's finishing goroutines may
// write the probe's after the initialize that followed it on the same
// connection. It is a fallback when the earliest request recorded on r's
// connection that started after r is an initialize within
// EraFallbackWindow, or, with none there, when the same client's
// initialize on another HTTP connection started within quickFallback after
// r (see settle); otherwise r is held, since a request that started
// earlier may still come.
func (a *Accumulator) recall(r *record.Record) bool {
	if r.Time.IsZero() || r.Conn == "" {
		return false
	}
	var next *recentRequest
	for k := range a.recent {
		q := a.recentAt(k)
		if !q.noMethod && q.conn == r.Conn && q.at.After(r.Time) && (next == nil || q.at.Before(next.at)) {
			next = q
		}
	}
	if next != nil {
		return next.initialize && next.at.Sub(r.Time) <= EraFallbackWindow
	}
	if r.Client == "" {
		return false
	}
	for k := range a.recent {
		// As settle: the same client's quick initialize on a new HTTP
		// connection, once.
		q := a.recentAt(k)
		if q.initialize && q.http && q.client == r.Client && q.conn != r.Conn && q.at.After(r.Time) && q.at.Sub(r.Time) < quickFallback {
			q.initialize = false
			return true
		}
	}
	return false
}
