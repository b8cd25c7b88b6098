package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/retry"
	"github.com/mcpdiag/mcpdiag/wire"
)

// Origin says why an exchange was sent.
type Origin string

// The origins, with the record schema's names.
const (
	OriginNone   Origin = "none"   // the first attempt of a request
	OriginPolicy Origin = "policy" // a retry or recovery the policy decided
	OriginMRTR   Origin = "mrtr"   // the next MRTR round
	OriginUser   Origin = "user"   // the caller repeats a call (--attempt-of)
)

// Exchange is one HTTP request and its classified response.
type Exchange struct {
	// Seq numbers the exchanges of a Client from 1 (the request count so
	// far).
	Seq int
	// HTTPMethod is the HTTP method; "" means POST. A 2025-11-25 stream
	// resumed with Last-Event-ID is a GET, classified as the rest of the
	// request it resumes (Method and ID are that request's).
	HTTPMethod string
	// URL is where the request went: Options.URL, or the Location of a
	// same-origin redirect that was followed.
	URL    string
	Method string
	Tool   string
	// ID is the JSON-RPC id sent (zero for a notification).
	ID       wire.ID
	Origin   Origin
	Protocol string
	// RequestHeader and RequestBody are what was sent. Credentials are in
	// RequestHeader; records redact them.
	RequestHeader http.Header
	RequestBody   []byte
	// Status and ResponseHeader are zero when no response arrived.
	Status         int
	ResponseHeader http.Header
	Result         *classify.Result
	// Decision is the retry policy's verdict on this exchange (nil for
	// exchanges that need none, such as an accepted notification).
	Decision *retry.Decision
	// EraFallback marks auto mode's first 2026-07-28 request (the probe
	// that decides the era) that the server refused as a server of the
	// 2025-11-25 era: the client fell back to initialize, as the spec's
	// backward-compatibility rule says (Decision is that renegotiation). A
	// designed negotiation step: report counts it apart, not as a failure.
	EraFallback bool
	// Start, and the durations from it: to response headers, to the first
	// body byte, to the end of classification.
	Start       time.Time
	ToHeaders   time.Duration
	ToFirstByte time.Duration
	Total       time.Duration

	// ClientAnswer marks the POST of the client's answer to a 2025-11-25
	// server request (elicitation/create on a stream): Method is the
	// server request's, ID the answer's, and Result judges the answer as
	// the recorder of mcpdiag proxy does (classify.JudgeClientAnswer), as
	// record.Record's ClientAnswer says.
	ClientAnswer bool
	// AnswerRefused marks a ClientAnswer the server refused with a
	// JSON-RPC error in a 2xx's body: Result is the server's refusal.
	AnswerRefused bool

	// Auth is the exchange's part in the authorization chain: set on the
	// chain's own exchanges (to the protected resource's metadata and the
	// authorization server), on MCP exchanges that carried the chain's
	// token, and on those answered with a Bearer challenge.
	Auth *AuthInfo

	// sse is what the event stream said about resuming: the last event id
	// and the reconnection time (retry field).
	sse sseWatch
	// outOfTime is set when the call's own deadline stopped the reading of
	// a response whose headers had come: the server was still answering,
	// nothing broke (the reason and the decision say so).
	outOfTime bool
	// cutByStop is set when the call's context was cancelled (an
	// interrupt, the program stopping the call; not its deadline) while
	// the exchange waited for or read its answer: the cut is the stop's,
	// and the decision says so (stoppedDuring) instead of the policy's
	// reading of a network failure.
	cutByStop bool

	// answerAck is, on the POST of a client's answer, the whole 2xx JSON
	// body the server answered it with (nil when none, or over
	// classify.MaxAnswerAck); respBytes counts the response body's bytes
	// the classifier read.
	answerAck []byte
	respBytes int64

	// authBody is the head of an auth-chain response, for the step code
	// only (never recorded); authBytes its full length; authErr an error
	// reading it. authFail is the chain failure this MCP exchange's
	// answer ended in.
	authBody  []byte
	authBytes int64
	authErr   error
	authFail  *AuthFailure
}

// request describes one POST to send.
type request struct {
	method       string
	id           wire.ID
	notification bool
	params       json.RawMessage // the params object, _meta included
	tool         string
	header       http.Header // MCP headers for this request
	origin       Origin
	protocol     string
	// raw, when set, is sent as the body instead of an envelope (a JSON-RPC
	// response to a server request).
	raw []byte
	// lastEventID, when set, makes the request a GET that resumes the
	// 2025-11-25 response stream of request id after that event.
	lastEventID string
}

// envelope encodes a JSON-RPC request or notification.
func (r *request) envelope() []byte {
	if r.raw != nil {
		return r.raw
	}
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0",`)
	if !r.notification {
		b.WriteString(`"id":`)
		b.Write(r.id.Raw())
		b.WriteByte(',')
	}
	b.WriteString(`"method":`)
	m, _ := json.Marshal(r.method)
	b.Write(m)
	if r.params != nil {
		b.WriteString(`,"params":`)
		b.Write(r.params)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// firstByteReader notes when the first body byte arrives.
type firstByteReader struct {
	r     io.Reader
	start time.Time
	at    time.Duration
}

func (f *firstByteReader) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if n > 0 && f.at == 0 {
		f.at = time.Since(f.start)
	}
	return n, err
}

// errFirstByteTimeout marks a response whose headers did not arrive in time.
// It is a net.Error that says Timeout, so the classifier reports a timeout
// whichever fires first, this timer or the call's deadline.
var errFirstByteTimeout error = firstByteTimeout{}

type firstByteTimeout struct{}

func (firstByteTimeout) Error() string   { return "no response headers within the first-byte timeout" }
func (firstByteTimeout) Timeout() bool   { return true }
func (firstByteTimeout) Temporary() bool { return false }

// send performs one request and classifies the response. With the OAuth
// flow on, a 401 or a 403 insufficient_scope runs the authorization chain
// and, when it got a token, the same request is sent again with a new id
// (the server refused it without acting on it); the refused exchange is
// recorded with its decision. A chain that fails leaves the refused exchange as the
// answer, marked with the failure (see authStopped).
func (c *Client) send(ctx context.Context, rq *request) *Exchange {
	if c.auth == nil {
		return c.sendFollow(ctx, rq)
	}
	c.auth.refreshIfExpired(ctx)
	ex := c.sendFollow(ctx, rq)
	op := rq.method
	if rq.tool != "" {
		op += " " + rq.tool
	}
	for try := 1; wantsAuth(ex); try++ {
		if try > 3 {
			markChallenge(ex)
			c.auth.setFailure(&AuthFailure{Step: stepOf(ex), Seq: ex.Seq, Rule: "MCP authorization §Step-Up Authorization Flow: retry limits",
				Reason: fmt.Sprintf("the server still answered %d after %d authorizations of this request", ex.Status, try-1)})
		}
		if try > 3 || !c.authExchange(ctx, ex, op, try) {
			if ex.authFail == nil {
				ex.authFail = c.auth.takeFailure()
				c.auth.setFailure(ex.authFail)
			}
			return ex
		}
		c.record(ex)
		c.emit(ex)
		if !rq.notification && rq.raw == nil && rq.lastEventID == "" {
			// A new id, as for any request sent again: the refused one
			// was used (Base protocol › Requests: an ID MUST NOT have
			// been used before by the requestor).
			rq.id = c.newID()
		}
		again := *rq
		again.origin = OriginPolicy
		ex = c.sendFollow(ctx, &again)
	}
	return ex
}

// sendFollow performs one request and classifies the response. A redirect
// is never followed to another origin; a same-origin 307 or 308 is followed
// once, and the redirect is recorded as its own exchange (see redirect.go).
func (c *Client) sendFollow(ctx context.Context, rq *request) *Exchange {
	ex := c.sendTo(ctx, rq, c.opts.URL)
	next, ok := c.checkRedirect(ex, false)
	if !ok {
		return ex
	}
	c.record(ex)
	c.emit(ex)
	ex = c.sendTo(ctx, rq, next)
	c.checkRedirect(ex, true)
	return ex
}

// sendTo performs one request to target and classifies the response.
func (c *Client) sendTo(ctx context.Context, rq *request, target string) *Exchange {
	seq := c.nextSeq()
	httpMethod, body := http.MethodPost, rq.envelope()
	hdr := http.Header{}
	if rq.lastEventID != "" {
		httpMethod, body = http.MethodGet, nil
		hdr.Set("Accept", "text/event-stream")
		hdr.Set("Last-Event-ID", rq.lastEventID)
	} else {
		hdr.Set("Accept", "application/json, text/event-stream")
		hdr.Set("Content-Type", "application/json")
	}
	ex := &Exchange{Seq: seq, URL: target, Method: rq.method, Tool: rq.tool, ID: rq.id, Origin: rq.origin, Protocol: rq.protocol, RequestBody: body, Start: time.Now()}
	if httpMethod != http.MethodPost {
		ex.HTTPMethod = httpMethod
	}
	for k, vs := range c.opts.Header {
		for _, v := range vs {
			hdr.Add(k, v)
		}
	}
	for k, vs := range rq.header {
		hdr[k] = vs
	}
	if v, res, iss := c.authorization(); v != "" {
		hdr.Set("Authorization", v)
		if res != "" {
			ex.Auth = &AuthInfo{Step: StepRequest, TokenResource: res, TokenIssuer: iss}
		}
	}
	ex.RequestHeader = hdr

	cex := &classify.Exchange{Method: rq.method, ID: rq.id, Notification: rq.notification, ProtocolVersion: rq.protocol, Extensions: c.opts.Extensions}
	reqCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var timedOut atomic.Bool
	// When the call's own deadline comes no later than the first-byte
	// timeout, it is the one that ends the wait: a second timer of the
	// same length would race it and make the same hang read two ways.
	fbt := c.opts.firstByte()
	deadlineFirst := false
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) <= fbt {
		deadlineFirst = true
	}
	timer := time.AfterFunc(fbt, func() {
		if !deadlineFirst {
			timedOut.Store(true)
			cancel()
		}
	})
	var sent atomic.Bool
	var fb *firstByteReader
	trace := &httptrace.ClientTrace{
		WroteRequest: func(i httptrace.WroteRequestInfo) { sent.Store(i.Err == nil) },
	}
	var reqBody io.Reader
	if body != nil {
		reqBody = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(reqCtx, trace), httpMethod, target, reqBody)
	if err != nil {
		cex.Err = fmt.Errorf("building the request: %w", err)
	} else {
		req.Header = hdr
		if hdr.Get("Idempotency-Key") != "" || hdr.Get("X-Idempotency-Key") != "" {
			// Go's transport re-sends a request carrying one of these
			// headers by itself when the server closes a kept-alive
			// connection after reading it: the server would run the
			// call twice while the records hold one exchange. Without
			// GetBody it cannot; the failure is this exchange's, and a
			// retry is the policy's, recorded.
			req.GetBody = nil
		}
		if httpMethod == http.MethodGet {
			// The same holds for the GET that resumes a stream: Go's
			// transport replays any GET without a body by itself, so a
			// server that dropped the first would have seen two GETs
			// where the records hold one. An empty body that cannot be
			// replayed makes the drop this exchange's (the policy then
			// resumes again, recorded); the transport sends no body.
			req.Body, req.GetBody = emptyBody{}, nil
		}
		resp, err := c.http.Do(req)
		timer.Stop()
		ex.ToHeaders = time.Since(ex.Start)
		if err != nil {
			if deadlineFirst && errors.Is(ctx.Err(), context.DeadlineExceeded) {
				timedOut.Store(true)
				err = fmt.Errorf("no response headers within the call's time limit (%s): %w", c.opts.timeout(), err)
			} else if timedOut.Load() {
				err = fmt.Errorf("%w (%s): %w", errFirstByteTimeout, fbt, err)
			}
			cex.Err, cex.RequestSent = err, sent.Load()
		} else {
			defer resp.Body.Close()
			ex.Status, ex.ResponseHeader = resp.StatusCode, resp.Header
			fb = &firstByteReader{r: resp.Body, start: ex.Start}
			cex.Status, cex.Header, cex.Body = resp.StatusCode, resp.Header, fb
			// Only a 2025-11-25 stream can be resumed, so only there is
			// the last event id worth a second look at the bytes.
			if rq.protocol == Protocol2025 && isEventStream(resp.Header.Get("Content-Type")) {
				ex.sse.r = fb
				cex.Body = &ex.sse
			}
			if rq.raw != nil {
				// The POST of an answer to a server request: a 2xx JSON
				// body may be the server's refusal (read whole first,
				// as the recorder reads it), and an empty body is the
				// acceptance the answer is judged after.
				cb := &countingReader{r: cex.Body, n: &ex.respBytes}
				cex.Body = cb
				if resp.StatusCode >= 200 && resp.StatusCode <= 299 && isAnswerAckJSON(resp.Header.Get("Content-Type")) {
					b, rerr := io.ReadAll(io.LimitReader(cb, classify.MaxAnswerAck+1))
					if rerr == nil && len(b) <= classify.MaxAnswerAck {
						ex.answerAck = b
					}
					cex.Body = io.MultiReader(bytes.NewReader(b), cb)
				}
			}
		}
	}
	cl := classify.Classifier{StopAtTerminal: true, KeepResponse: true, MaxEventSize: c.opts.MaxEventSize}
	if rq.protocol == Protocol2025 && c.opts.Inputs != nil {
		cl.OnServerRequest = func(msg []byte) { c.answerServerRequest(ctx, ctx, msg) }
	}
	res, err := cl.Classify(cex)
	if ex.answerAck != nil {
		if r, ok := cl.AnswerRefusal(cex, wire.ParseMessage(rq.raw).ID, ex.answerAck); ok {
			res, err, ex.AnswerRefused = r, nil, true
		}
	}
	if err != nil && res.Outcome == "" {
		// Past the classifier's size bound: report it as what the client
		// experienced, a response it could not read whole.
		res.Outcome = classify.StreamIncomplete
		res.Reason = err.Error()
	}
	if res.Reason != "" && timedOut.Load() && res.Outcome == classify.NetworkError {
		res.Reason = "timed out waiting for the response headers: " + res.Reason
	}
	if ex.Status != 0 && errors.Is(ctx.Err(), context.DeadlineExceeded) &&
		(res.Outcome == classify.StreamIncomplete || res.Outcome == classify.NetworkError) {
		// The call's deadline, not the server, ended the reading: the
		// classifier's "the stream broke" or "the body was cut" would
		// blame the server for the client's limit.
		ex.outOfTime = true
		res.Reason = outOfTimeReason(c.opts.timeout(), ex.Start, res.Reason)
	}
	if errors.Is(ctx.Err(), context.Canceled) && (res.Outcome == classify.StreamIncomplete || res.Outcome == classify.NetworkError) {
		ex.cutByStop = true
	}
	ex.Result = res
	ex.Total = time.Since(ex.Start)
	if fb != nil {
		ex.ToFirstByte = fb.at
	}
	return ex
}

// outOfTimeReason says that the call's time limit ran out while the
// response to a request sent at start was still arriving; detail is the
// classifier's reason, whose error is kept after the colon.
func outOfTimeReason(limit time.Duration, start time.Time, detail string) string {
	if i := strings.LastIndex(detail, ": "); i >= 0 {
		detail = detail[i+2:]
	}
	return fmt.Sprintf("%s: the request went %s earlier and its response had not ended (nothing broke; mcpdiag stopped reading and sent no cancel, so the server may still be running the tool): %s",
		outOfTimeHead(limit), time.Since(start).Round(time.Millisecond), detail)
}

// outOfTimeHead is the first clause of outOfTimeReason, which the call's
// decision repeats.
func outOfTimeHead(limit time.Duration) string {
	return fmt.Sprintf("the call's time limit (--timeout %s) ran out while the server was still answering", limit)
}

// emptyBody is a request body of no bytes that the transport cannot replay
// (unlike nil or http.NoBody). The transport probes it, finds it empty and
// sends no body and no Content-Length.
type emptyBody struct{}

func (emptyBody) Read([]byte) (int, error) { return 0, io.EOF }
func (emptyBody) Close() error             { return nil }

// countingReader counts the bytes read through it into n.
type countingReader struct {
	r io.Reader
	n *int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	k, err := c.r.Read(p)
	*c.n += int64(k)
	return k, err
}

// isAnswerAckJSON reports whether a Content-Type is application/json, as
// the recorder reads it (recorder's isJSON) when it looks for the refusal
// of a client's answer: the two must agree on which bodies are read.
func isAnswerAckJSON(ct string) bool {
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	return strings.EqualFold(strings.TrimSpace(ct), "application/json")
}
