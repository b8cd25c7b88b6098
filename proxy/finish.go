package proxy

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/wire"
)

// run is the exchange's finishing goroutine: it classifies the response as
// the client received it (reading the pipe while the response streams),
// waits for the handler to end, and writes the one record of the exchange.
// It starts with the first response bytes, or when the handler ends.
func (p *Proxy) run(ex *exchange) {
	defer p.wg.Done()
	defer p.inFlight.Add(-1)
	var capt *capture
	if p.opts.Bodies != BodiesNone {
		capt = &capture{limit: p.bodyLimit}
	}
	var res *classify.Result
	var cerr error
	if ex.status == 0 {
		<-ex.ended
		res = p.noResponse(ex)
	} else {
		var body io.Reader = ex.bodyReader()
		if capt != nil {
			capt.r = body
			body = capt
		}
		if ex.msg.Kind == wire.MessageRequest || ex.msg.Kind == wire.MessageNotification || ex.msg.Kind == wire.MessageResponse {
			cl := classify.Classifier{MaxEventSize: p.opts.MaxEventSize, Budget: p.budget}
			cl.KeepResponse = ex.msg.Method == "tools/list" || ex.msg.Method == "initialize"
			res, cerr = cl.Classify(&classify.Exchange{
				Method: ex.msg.Method, ID: idOrNil(ex.msg), Notification: ex.msg.Kind != wire.MessageRequest,
				ProtocolVersion: ex.protocol, Extensions: ex.msg.Extensions,
				Status: ex.status, Header: ex.respHeader, Body: body,
			})
		} else {
			res = p.plainHTTP(ex, body)
		}
		if capt != nil && !capt.more && ex.pipe != nil {
			// Keep capturing what the classifier did not read (it stops
			// at a malformed event, and reads 64 KiB of an error body).
			_, _ = io.Copy(io.Discard, capt)
		}
		if ex.pipe != nil {
			ex.pipe.stop()
		}
		<-ex.ended
	}
	p.finish(ex, res, cerr, capt)
}

// noResponse classifies an exchange in which no response headers reached
// the client.
func (p *Proxy) noResponse(ex *exchange) *classify.Result {
	var err error
	switch {
	case ex.hijacked:
		err = errHijacked
	case ex.mirrored:
		err = errors.New(urlFree(ex.upErr))
	case ex.shutdown:
		err = errShutdown
	case ex.clientGone:
		err = errClientGone
	default:
		// The handler wrote nothing: net/http answers 200 with no body.
		ex.status = http.StatusOK
		res, _ := (&classify.Classifier{}).Classify(&classify.Exchange{
			Method: ex.msg.Method, ID: idOrNil(ex.msg), Notification: ex.msg.Kind != wire.MessageRequest,
			ProtocolVersion: ex.protocol, Status: http.StatusOK, Header: http.Header{},
		})
		return res
	}
	res, _ := (&classify.Classifier{}).Classify(&classify.Exchange{
		Method: ex.msg.Method, ID: idOrNil(ex.msg), Notification: ex.msg.Kind != wire.MessageRequest,
		ProtocolVersion: ex.protocol, Err: err, RequestSent: ex.reqSent.Load(),
	})
	return res
}

// plainHTTP judges an exchange that is not a JSON-RPC message (GET and
// DELETE on the MCP endpoint, OAuth metadata, a body that is not JSON-RPC)
// at the HTTP layer only.
func (p *Proxy) plainHTTP(ex *exchange, body io.Reader) *classify.Result {
	if ex.status < 200 || ex.status > 299 {
		res, _ := (&classify.Classifier{}).Classify(&classify.Exchange{
			Method: ex.msg.Method, Status: ex.status, Header: ex.respHeader, Body: body,
		})
		_, _ = io.Copy(io.Discard, body)
		return res
	}
	res := &classify.Result{Status: ex.status, ContentType: ex.respHeader.Get("Content-Type"), Warnings: []classify.Warning{}}
	what := fmt.Sprintf("HTTP %d to %s", ex.status, ex.in.Method)
	var err error
	if isEventStream(res.ContentType) {
		sse := &classify.SSEDetails{}
		rd := wire.NewSSEReader(body, p.opts.MaxEventSize)
		rd.SetBudget(p.budget)
		defer rd.Release()
		for {
			ev, rerr := rd.Next()
			if errors.As(rerr, new(*wire.SkippedEventError)) {
				// Only counted here: over the limit or the budget, it is
				// read through and not parsed.
				sse.Events++
				sse.Skipped++
				continue
			}
			if rerr != nil {
				if rerr != io.EOF && !errors.As(rerr, new(*wire.UnterminatedEventError)) {
					err = rerr
				}
				break
			}
			sse.Events++
			if m := wire.ParseMessage(ev.Data); m.Kind == wire.MessageRequest {
				sse.Requests++
			} else if m.Kind == wire.MessageNotification {
				sse.Notifications++
			}
		}
		sse.Comments = rd.Comments
		_, _ = io.Copy(io.Discard, body)
		sse.End = "eof"
		if err != nil {
			sse.End = "error: " + err.Error()
		}
		res.SSE = sse
		res.BodyBytes = rd.Bytes
		what += fmt.Sprintf(", an event stream of %d event(s)", sse.Events)
	} else {
		n, rerr := io.Copy(io.Discard, body)
		res.BodyBytes, err = n, rerr
	}
	if err != nil && !errors.Is(err, errClientGone) && !errors.Is(err, errShutdown) {
		res.Outcome = classify.NetworkError
		res.Network = &classify.NetworkDetails{Error: err.Error(), Phase: "body", RequestSent: true}
		res.Reason = what + ", cut: " + err.Error()
	} else {
		res.Outcome = classify.ResultSuccess
		res.Reason = what + "; not a JSON-RPC exchange, judged at the HTTP layer only"
	}
	res.Layer = res.Outcome.Layer()
	return res
}

// capture keeps the first limit bytes the classifier reads, for the record.
type capture struct {
	r     io.Reader
	buf   []byte
	limit int
	more  bool
}

func (c *capture) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if n > 0 {
		room := c.limit - len(c.buf)
		if room > 0 {
			c.buf = append(c.buf, p[:min(n, room)]...)
		}
		if n > room {
			c.more = true
		}
	}
	return n, err
}

// finish builds the exchange's record, updates the session and drift state,
// tells the observer, and writes the record.
func (p *Proxy) finish(ex *exchange, res *classify.Result, cerr error, capt *capture) {
	in := ex.in
	rec := &record.Record{
		Kind:            record.KindExchange,
		Time:            ex.start,
		Client:          ex.client,
		ProtocolVersion: ex.protocol,
		Scenario:        ex.scenario,
		HTTPMethod:      in.Method,
		URL:             ex.out.String(),
		RequestHeaders:  in.Header,
		ResponseHeaders: ex.respHeader,
		Session:         ex.session,
		Status:          ex.status,
		HTTPStatuses:    []int{ex.status},
	}
	if in.Method == http.MethodPost {
		rec.PostCount = 1
	}
	if p.opts.Faults != nil {
		// With fault injection, the scenario is what fired on this request.
		rec.Scenario = ex.fault.FiredString()
		rec.Fault = ex.fault
	}
	if rec.Session == "" && ex.respHeader != nil {
		rec.Session = ex.respHeader.Get("Mcp-Session-Id")
	}
	if ex.reqComplete && ex.msg.Kind != wire.MessageEmpty {
		rec.SetMessage(&ex.msg)
	}
	method, protocol := rec.Method, rec.ProtocolVersion
	if ex.msg.Kind == wire.MessageResponse || ex.msg.Kind == wire.MessageInvalid || ex.msg.Kind == wire.MessageBatch || ex.msg.Kind == wire.MessageEmpty {
		method = ""
	}
	rec.SetResult(res)
	rec.Method, rec.ProtocolVersion = method, protocol
	if n := ex.reqBytes.Load(); n > 0 {
		rec.RequestBytes = n
	} else if ex.reqComplete {
		rec.RequestBytes = int64(len(ex.reqBody))
	}
	rec.ResponseBytes = ex.wrote
	rec.Timings = record.Timings{
		Headers:    record.Duration(ex.headersAt),
		FirstEvent: record.Duration(ex.firstEvent),
		Total:      record.Duration(ex.end.Sub(ex.start)),
	}

	var notes []string
	switch ex.msg.Kind {
	case wire.MessageResponse:
		notes = append(notes, "the client's response to a server request")
	case wire.MessageBatch:
		notes = append(notes, "a JSON-RPC batch; judged at the HTTP layer only")
	case wire.MessageInvalid:
		if ex.malformedBody {
			notes = append(notes, fmt.Sprintf("proxy-generated: the request body is malformed (%s); mcpdiag proxy answered 400 itself, as a server would, and did not forward the request (%s)", ex.reqErr, ProxyRequestError))
		} else if !ex.reqComplete && ex.reqErr == nil {
			notes = append(notes, fmt.Sprintf("the request body is larger than %d bytes; it was forwarded whole but not parsed", p.maxParse))
		} else if in.Method == http.MethodPost {
			notes = append(notes, "the request body is not a JSON-RPC message")
		}
	}
	if ex.proxyError != "" {
		p.stats.upstreamErrors.Add(1)
		cause := ex.upErr
		if cause == nil {
			cause = errors.New("unknown")
		}
		_, _, flag := upstreamFailure(cause, ex.reqSent.Load())
		rec.Flags.Add(flag)
		notes = append(notes, fmt.Sprintf("proxy-generated: mcpdiag proxy answered %d itself because the upstream failed before responding (%s, Proxy-Status error=%s)", ex.status, flag, ex.proxyError))
		rec.Network = &record.Network{Error: urlFree(cause), Phase: "before-response", RequestSent: ex.reqSent.Load(), Timeout: ex.status == http.StatusGatewayTimeout}
	}
	if ex.adminRefused {
		notes = append(notes, "proxy-generated: mcpdiag proxy answered 403 itself: admin paths are not forwarded (--forward-admin)")
	}
	if ex.mirrored {
		p.stats.upstreamErrors.Add(1)
		_, _, flag := upstreamFailure(ex.upErr, ex.reqSent.Load())
		rec.Flags.Add(flag)
		notes = append(notes, fmt.Sprintf("the upstream closed the connection before any response (%s, %s); the proxy dropped the client's connection the same way", flag, ProxyConnectionTerminated))
	}
	if ex.upReset {
		p.stats.upstreamResets.Add(1)
		rec.Flags.Add(record.FlagUR)
		notes = append(notes, fmt.Sprintf("upstream reset after the response started (UR): %s; the client received the cut response (%d bytes)", urlFree(ex.upBodyErr), ex.wrote))
	}
	// A client that stops reading once the response arrived (as the
	// diagnostic client does) is not a failure.
	afterResponse := ex.clientGone && res != nil && res.SSE != nil && res.SSE.Terminal
	if ex.clientGone {
		switch {
		case ex.shutdown:
			p.stats.cutByShutdown.Add(1)
		case !afterResponse:
			p.stats.clientGone.Add(1)
		}
		switch {
		case ex.shutdown:
			rec.Flags.Add(record.FlagSD)
		case !afterResponse:
			rec.Flags.Add(record.FlagDC)
		}
		switch {
		case ex.shutdown:
			notes = append(notes, fmt.Sprintf("the proxy shut down after %d response bytes; the upstream request was cancelled", ex.wrote))
		case ex.status == 0:
			notes = append(notes, "client disconnected (DC) before the response; the upstream request was cancelled")
		case afterResponse:
			notes = append(notes, fmt.Sprintf("the client closed the stream after receiving the response (%d bytes); the upstream stream was cancelled", ex.wrote))
		default:
			notes = append(notes, fmt.Sprintf("client disconnected (DC) after %d response bytes; the upstream request was cancelled", ex.wrote))
		}
		if ex.protocol == classify.Protocol2026 {
			notes[len(notes)-1] += " (in 2026-07-28 a disconnect cancels the request)"
		}
	}
	if ex.hijacked {
		rec.Flags.Add(record.FlagHJ)
		notes = append(notes, "a handler in front of the upstream took over (hijacked) the connection; its raw bytes were not recorded")
	}
	if len(ex.invalidHeaders) > 0 {
		sort.Strings(ex.invalidHeaders)
		notes = append(notes, fmt.Sprintf("the upstream sent header fields with invalid names (%s): net/http does not forward them, so the client did not receive them", strings.Join(quoteAll(ex.invalidHeaders), ", ")))
	}
	if f := ex.fault.FiredString(); f != "" {
		rec.Flags.Add(record.FlagFI)
		notes = append(notes, fmt.Sprintf("fault injected (FI): %s (seed %d)", f, ex.fault.Seed))
	}
	if res != nil && res.Outcome == classify.NotClassified {
		p.stats.notClassified.Add(1)
		notes = append(notes, fmt.Sprintf("the response was forwarded to the client untouched (%d bytes); only its classification was given up", ex.wrote))
	} else if cerr != nil {
		// Classify reports its limits as NOT_CLASSIFIED; anything else is
		// named as it is.
		notes = append(notes, "the classifier failed: "+cerr.Error())
	}

	p.bodies(ex, rec, capt)
	p.rememberSession(ex, rec, res)

	var drifts []Drift
	if ex.msg.Method == "tools/list" && res != nil && len(res.Response) > 0 {
		drifts = p.drift.observe(p.upstream.String(), res.Response, ex.end)
		for _, d := range drifts {
			rec.Warnings = append(rec.Warnings, record.Warning{Code: d.Code, Message: d.Message})
		}
		if ex.reqComplete {
			p.drift.listedInOrder(p.upstream.String(), ex.start, ex.reqBody, res.Response)
		}
	}
	p.drift.listingEnded(ex.listing)
	p.drift.unknownTool(p.upstream.String(), rec, ex.start)
	if len(ex.arrivals) > 0 {
		rec.SSEArrivals = make([]record.Arrival, len(ex.arrivals))
		for i, a := range ex.arrivals {
			rec.SSEArrivals[i] = record.Arrival{End: a.off, At: a.at}
		}
	}
	rec.Note = strings.Join(notes, "; ")

	if p.opts.Observer != nil {
		o := &Observation{
			Record: rec, Start: ex.start, End: ex.end, Transport: TransportTCP,
			TraceParent: ex.traceparent, TraceState: ex.tracestate,
			ClientAddr: in.RemoteAddr, ServerAddr: p.upstream.Host,
			ProxyError: ex.proxyError, UpstreamError: ex.proxyError, UpstreamReset: ex.upReset, ClientGone: ex.clientGone && !afterResponse && !ex.shutdown,
			Drift: drifts,
		}
		if ex.mirrored {
			o.UpstreamError = ProxyConnectionTerminated
		}
		if !ex.upStart.IsZero() {
			o.Upstream = Leg{Start: ex.upStart, End: ex.upEnd}
			if o.Upstream.End.IsZero() {
				o.Upstream.End = ex.end
			}
		}
		p.opts.Observer.Observe(o)
	}
	p.stats.exchanges.Add(1)
	p.write(rec)
	for _, d := range drifts {
		p.log.Warn(d.Message, "tool", d.Tool, "code", d.Code)
		p.write(driftRecord(rec, d))
	}
}

// driftRecord is the warning record of one changed tool.
func driftRecord(ex *record.Record, d Drift) *record.Record {
	return &record.Record{
		Kind: KindWarning, Time: time.Now(), Client: ex.Client, ProtocolVersion: ex.ProtocolVersion,
		Scenario: ex.Scenario, Method: "tools/list", Tool: d.Tool, URL: ex.URL, Session: ex.Session,
		HTTPStatuses: []int{}, Layer: classify.LayerApplication,
		Reason:   d.Message,
		Warnings: []record.Warning{{Code: d.Code, Message: d.Message}},
		Note:     "changed: " + strings.Join(d.Changes, ", ") + "; seen in exchange " + ex.ID,
	}
}

// write hands a record to the sink.
func (p *Proxy) write(rec *record.Record) {
	if p.opts.Records == nil {
		return
	}
	if rec.ID == "" {
		rec.ID = record.NewID()
	}
	if err := p.opts.Records.Write(rec); err != nil {
		p.reportLoss(p.stats.recordErrors.Add(1), rec, err)
	}
}

// maxLoggedLosses is how many refused records the proxy names one by one in
// its log; past it they are counted (Stats.RecordErrors), not logged.
const maxLoggedLosses = 20

// reportLoss logs the n-th record the sink refused, by name.
func (p *Proxy) reportLoss(n int64, rec *record.Record, err error) {
	switch {
	case n <= maxLoggedLosses:
		p.log.Error("record lost: "+record.RefOf(rec).String(), slog.Any("error", err))
	case n == maxLoggedLosses+1:
		p.log.Error(fmt.Sprintf("more than %d records lost; later losses are counted, not logged", maxLoggedLosses))
	}
}

// bodies puts the request and response bodies into rec, per the body mode.
func (p *Proxy) bodies(ex *exchange, rec *record.Record, capt *capture) {
	mode := p.opts.Bodies
	if mode == BodiesNone || capt == nil {
		return
	}
	if mode == BodiesAll || mode == BodiesFull {
		if len(ex.reqBody) > 0 {
			b := ex.reqBody[:min(len(ex.reqBody), p.bodyLimit)]
			rec.RequestBody = &record.Body{Text: string(b), Truncated: len(b) < len(ex.reqBody) || !ex.reqComplete}
		}
	}
	if mode == BodiesErrors && rec.Outcome.Success() {
		return
	}
	if len(capt.buf) > 0 || capt.more {
		rec.ResponseBody = &record.Body{Text: string(capt.buf), Truncated: capt.more}
	}
}

// rememberSession keeps the client and negotiated version of a 2025-11-25
// session for its later requests, and forgets a deleted session.
func (p *Proxy) rememberSession(ex *exchange, rec *record.Record, res *classify.Result) {
	if ex.status < 200 || ex.status > 299 {
		return
	}
	switch {
	case ex.msg.Method == "initialize" && rec.Session != "":
		info := sessionInfo{client: ex.client, protocol: ex.protocol}
		if res != nil && len(res.Response) > 0 {
			if r, ok := wire.Field(res.Response, "result"); ok {
				if v, ok := wire.Field(r, "protocolVersion"); ok {
					if s, ok := wire.StringValue(v); ok {
						info.protocol = s
					}
				}
			}
		}
		p.sessions.put(rec.Session, info)
	case ex.in.Method == http.MethodDelete && ex.session != "":
		p.sessions.del(ex.session)
	}
}

// urlFree is an error's text without the URL a *url.Error adds (it may
// carry credentials, and the record has the URL already).
func urlFree(err error) string {
	if err == nil {
		return ""
	}
	var ue *url.Error
	if errors.As(err, &ue) && ue.Err != nil {
		return ue.Err.Error()
	}
	return err.Error()
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
}
