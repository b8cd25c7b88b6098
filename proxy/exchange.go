package proxy

import (
	"log"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/internal/loopback"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/recorder"
)

// front is the recorder in front of the forwarding chain (recorder.Front),
// embedded in Proxy under this unexported name: Proxy's ServeHTTP is its.
type front = recorder.Front

// route is what the proxy passes r to (its recorder.Front's route): the
// forwarding chain, or a refusal the proxy answers itself and records: the
// loopback guard's (refuseForeign) or the admin path's (refuseAdmin). The
// guards' decisions are taken here, their 403s answered inside the
// recorder; the chain is recorder → fault layer → middleware → reverse
// proxy.
func (p *Proxy) route(w http.ResponseWriter, r *http.Request) http.Handler {
	if !p.opts.AllowForeignHost && onLoopbackListener(r) {
		if ok, _ := loopback.Check(r); !ok {
			return p.refuseHost
		}
	}
	if p.refusesAdmin(r) {
		return p.refuse
	}
	return p.handler
}

// refuseForeign answers 403 itself to a request whose Host or Origin is
// not loopback on a loopback listener (the DNS-rebinding guard, see
// Options.AllowForeignHost), and notes it on the exchange's record: a
// client refused by the proxy finds why in the records, not only in its
// own error. Proxy-Status (RFC 9209) says the proxy answered, not the
// server: mcpdiag probe then judges no Origin check of the server's on
// this 403 (judge.Exchange.ProxyRefused).
func (p *Proxy) refuseForeign(w http.ResponseWriter, r *http.Request) {
	_, why := loopback.Check(r)
	if len(why) > 300 {
		cut := 300
		for cut > 0 && !utf8.RuneStart(why[cut]) {
			cut-- // not inside a character the Host or Origin holds
		}
		why = why[:cut] + "…"
	}
	if ex := recorder.From(r.Context()); ex != nil {
		ex.Refused("proxy-generated: mcpdiag proxy answered 403 itself: " + why)
	}
	w.Header().Set("Proxy-Status", ProxyStatusRefused)
	http.Error(w, "mcpdiag proxy: "+why, http.StatusForbidden)
}

// beginExchange is the recorder's Begin hook: a tools/list starts a
// listing the drift tracker waits for (drift.go).
func (p *Proxy) beginExchange(ex *recorder.Exchange) {
	switch ex.Method() {
	case "tools/list":
		ex.Tag = p.drift.listingStarted(p.driftKey(ex), ex.Start())
	case "notifications/cancelled":
		p.cancels.note(p.driftKey(ex), ex)
	}
	if p.legacy.any.Load() && ex.Request().Method == http.MethodPost {
		// A request POSTed to a 2024-11-05 HTTP+SSE stream's endpoint
		// waits for its answer on the stream (legacysse.go).
		listing, _ := ex.Tag.(*listingToken)
		if lp := p.legacy.begin(ex, listing); lp != nil {
			ex.Tag = lp
		}
	}
}

// finishExchange is the recorder's Finish hook: the tool-definition drift
// and unknown-tool warnings, and the observer. The drift warning records
// it returns are written after the exchange's.
func (p *Proxy) finishExchange(f *recorder.Finished) []*record.Record {
	ex, rec, res := f.Exchange, f.Record, f.Result
	if s, ok := ex.Tag.(*legacyStream); ok {
		end := ex.End()
		if end.IsZero() {
			end = time.Now()
		}
		p.legacy.ended(s, end, rec)
	}
	if rec.Status == http.StatusAccepted {
		p.legacy.annotate(ex, rec)
	}
	listing, _ := ex.Tag.(*listingToken)
	lp, _ := ex.Tag.(*legacyPending)
	if lp != nil {
		listing = lp.listing
	}
	var drifts []Drift
	if ex.Method() == "tools/list" && res != nil && len(res.Response()) > 0 {
		key := p.driftKey(ex)
		drifts = p.drift.observe(key, res.Response(), ex.End())
		for _, d := range drifts {
			rec.Warnings = append(rec.Warnings, record.Warning{Code: d.Code, Message: d.Message})
		}
		if body, complete := ex.Body(); complete {
			p.drift.listedInOrder(key, ex.Start(), body, res.Response())
		}
	}
	p.drift.listingEnded(listing)
	if rec.Method == "tools/call" && rec.Outcome == classify.ToolError {
		p.drift.unknownTool(p.driftKey(ex), rec, ex.Start())
	}
	if p.cancels.seen() {
		p.cancels.annotate(p.driftKey(ex), ex, rec)
	}

	var o *Observation
	if p.opts.Observer != nil {
		parent, state := ex.TraceContext()
		up := &ex.Up
		o = &Observation{
			Record: rec, Start: ex.Start(), End: ex.End(), Transport: TransportTCP,
			TraceParent: parent, TraceState: state,
			ClientAddr: ex.Request().RemoteAddr, ServerAddr: p.upstream.Host,
			ProxyError: up.ProxyError, UpstreamError: up.ProxyError, UpstreamReset: f.UpstreamReset, ClientGone: f.ClientGone,
			Drift: drifts,
		}
		if up.Mirrored {
			o.UpstreamError = ProxyConnectionTerminated
		}
		if !up.Start.IsZero() {
			o.Upstream = Leg{Start: up.Start, End: up.End}
			if o.Upstream.End.IsZero() {
				o.Upstream.End = ex.End()
			}
		}
	}
	if lp != nil && p.legacy.hold(lp, rec, o) {
		// Written, and observed, when its answer comes on the stream.
		f.Hold = true
	} else if o != nil {
		p.opts.Observer.Observe(o)
	}
	// Nothing here keeps rec or res past the return but an observer: the
	// recorder may reuse the record's memory.
	f.ReleaseRecord = p.opts.Observer == nil
	after := make([]*record.Record, 0, len(drifts))
	for _, d := range drifts {
		p.log.Warn(d.Message, "tool", d.Tool, "code", d.Code)
		after = append(after, driftRecord(rec, d))
	}
	return after
}

// driftRecord is the warning record of one changed tool. The exchange's
// record gets its id first, so that the warning can name it.
func driftRecord(ex *record.Record, d Drift) *record.Record {
	if ex.ID == "" {
		ex.ID = record.NewID()
	}
	return &record.Record{
		Kind: KindWarning, Time: time.Now(), Client: ex.Client, ProtocolVersion: ex.ProtocolVersion,
		Scenario: ex.Scenario, Method: "tools/list", Tool: d.Tool, URL: ex.URL, Session: ex.Session,
		HTTPStatuses: []int{}, Layer: classify.LayerApplication,
		Reason:   d.Message,
		Warnings: []record.Warning{{Code: d.Code, Message: d.Message}},
		Note:     "changed: " + strings.Join(d.Changes, ", ") + "; seen in exchange " + ex.ID,
	}
}

// slogLogger adapts the proxy's logger for ReverseProxy.ErrorLog.
func slogLogger(l *slog.Logger) *log.Logger {
	return slog.NewLogLogger(l.Handler(), slog.LevelDebug)
}

// onLoopbackListener reports whether r came in on a loopback address of
// the server that serves the proxy.
func onLoopbackListener(r *http.Request) bool {
	addr, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	return addr != nil && loopback.Listener(addr)
}

// driftKey is the drift tracker's key of the server ex went to: the
// upstream URL's, or the request's own target path's on the upstream host.
func (p *Proxy) driftKey(ex *recorder.Exchange) string {
	return p.drift.key(p.targetPath(ex.Request().URL))
}
