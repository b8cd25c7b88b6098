package record

import (
	"net/http"
	"time"
)

// Call links the exchanges of one logical call and builds its summary
// record. A producer creates one per call, passes each exchange record to
// Add before writing it, and writes Summary at the end. A Call is not safe
// for concurrent use: a call's exchanges are sequential.
type Call struct {
	sum   Record
	start time.Time
	end   time.Time
	n     int
	// method is the call's method when base named one: only its
	// exchanges give the call its identity.
	method string
	// terminal is the exchange whose verdict the summary carries, when
	// the producer named one (see Terminal).
	terminal *Record
}

// NewCall starts a call. base carries what is known up front (Client,
// Scenario, AttemptOf, ProtocolVersion, Method, …); its ID is kept, or a new
// one is made. The summary's kind is KindCall. When base names the Method
// (tools/call), the call's identity comes from the exchanges of that method
// only, never from the set-up exchanges (initialize, tools/list) before it.
func NewCall(base Record) *Call {
	c := &Call{sum: base, method: base.Method}
	c.sum.Kind = KindCall
	if c.sum.ID == "" {
		c.sum.ID = NewID()
	}
	c.sum.HTTPStatuses = append([]int{}, base.HTTPStatuses...)
	return c
}

// ID returns the id of the call record, which exchanges carry as callId.
func (c *Call) ID() string { return c.sum.ID }

// Add counts the exchange ex and links it to the call: it sets ex.CallID,
// ex.Seq, ex.PostCount and ex.HTTPStatuses (the call's counters up to and
// including ex), fills ex's Client, Scenario and ProtocolVersion from the
// call when ex has none, and makes the first exchange of a repeated call
// (AttemptOf set) carry retryOrigin "user". ex.Status, ex.HTTPMethod,
// ex.RetryOrigin and the verdict must be set before Add. The summary takes
// the call's identity (method, tool, arguments hash) from the first exchange
// that has it (of the call's method, when NewCall was given one), the session
// from the first exchange that has one, and the verdict (outcome, layer,
// result type, error, response id, SSE counts, warnings, decision, …) from
// the latest exchange, unless Terminal names another; its request id is that
// exchange's too when it is of the call's method (see verdictOf).
func (c *Call) Add(ex *Record) {
	c.n++
	if ex.Kind == "" {
		ex.Kind = KindExchange
	}
	ex.CallID = c.sum.ID
	ex.Seq = c.n
	if ex.HTTPMethod == "" || ex.HTTPMethod == http.MethodPost {
		c.sum.PostCount++
	}
	c.sum.HTTPStatuses = append(c.sum.HTTPStatuses, ex.Status)
	ex.PostCount = c.sum.PostCount
	ex.HTTPStatuses = append([]int(nil), c.sum.HTTPStatuses...)
	fill(&ex.Client, c.sum.Client)
	fill(&ex.Scenario, c.sum.Scenario)
	fill(&ex.ProtocolVersion, c.sum.ProtocolVersion)
	if c.n == 1 && c.sum.AttemptOf != "" && (ex.RetryOrigin == "" || ex.RetryOrigin == OriginNone) {
		ex.RetryOrigin = OriginUser
	}
	switch ex.RetryOrigin {
	case OriginPolicy:
		c.sum.PolicyRetries++
	case OriginMRTR:
		c.sum.InputRounds++
	}

	s := &c.sum
	fill(&s.Client, ex.Client)
	fill(&s.ProtocolVersion, ex.ProtocolVersion)
	fill(&s.Session, ex.Session)
	fill(&s.HTTPMethod, ex.HTTPMethod)
	fill(&s.URL, ex.URL)
	if c.method == "" || ex.Method == c.method {
		fill(&s.Method, ex.Method)
		fill(&s.Tool, ex.Tool)
		fill(&s.ArgsHash, ex.ArgsHash)
		if s.JSONRPC.ID.IsZero() {
			s.JSONRPC.ID = ex.JSONRPC.ID
		}
	}
	if c.terminal == nil {
		c.verdictOf(ex)
	}

	if !ex.Time.IsZero() {
		if c.start.IsZero() || ex.Time.Before(c.start) {
			c.start = ex.Time
		}
		if end := ex.Time.Add(time.Duration(ex.Timings.Total)); end.After(c.end) {
			c.end = end
		}
	}
}

// Terminal names ex, an exchange of this call, as the one whose verdict the
// summary carries, whatever is added after it. A call's outcome is the
// terminal outcome of its request: on 2025-11-25 the client's answer to a
// server request (elicitation/create) on the tools/call stream is posted
// after that stream's response, and its 202 says nothing of the tool.
func (c *Call) Terminal(ex *Record) {
	c.terminal = ex
	c.verdictOf(ex)
}

// verdictOf copies the verdict of exchange ex onto the summary. An exchange
// of the call's method also gives the summary its request id: responseId
// says how the answer differed from that request's id, so the two must be
// one attempt's (a retry sends a new id; the first attempt's id beside the
// last attempt's responseId named a mismatch that never happened, or hid
// one).
func (c *Call) verdictOf(ex *Record) {
	s := &c.sum
	if (c.method == "" || ex.Method == c.method) && !ex.JSONRPC.ID.IsZero() {
		s.JSONRPC.ID = ex.JSONRPC.ID
	}
	s.JSONRPC.ErrorCode, s.JSONRPC.ErrorName, s.JSONRPC.ResponseID = ex.JSONRPC.ErrorCode, ex.JSONRPC.ErrorName, ex.JSONRPC.ResponseID
	s.Outcome, s.Layer, s.Reason, s.ResultType = ex.Outcome, ex.Layer, ex.Reason, ex.ResultType
	s.Status, s.ContentType, s.IsError = ex.Status, ex.ContentType, ex.IsError
	s.ErrorMessage, s.ErrorData, s.ErrorDataTruncated = ex.ErrorMessage, ex.ErrorData, ex.ErrorDataTruncated
	s.RetryAfter, s.Network, s.Input, s.Task, s.NotClassified = ex.RetryAfter, ex.Network, ex.Input, ex.Task, ex.NotClassified
	s.SSE, s.Warnings = ex.SSE, ex.Warnings
	if ex.Decision != nil {
		s.Decision = ex.Decision
	}
}

func fill(dst *string, v string) {
	if *dst == "" {
		*dst = v
	}
}

// Summary returns the call record: kind "call", the counters (postCount,
// httpStatuses, exchanges, policyRetries, inputRounds), the identity of the
// call and the verdict of its last exchange (or of the one named by
// Terminal), Time from the first exchange
// and Timings.Total from its start to the end of the last exchange. Its
// retryOrigin is the strongest origin of the call: "user" when AttemptOf is
// set, else "policy" if the retry policy sent any exchange, else "mrtr" if
// any input round was sent, else "none". The result is a copy; Add may still
// be called afterwards.
func (c *Call) Summary() *Record {
	s := c.sum
	s.Exchanges = c.n
	s.HTTPStatuses = append([]int{}, c.sum.HTTPStatuses...)
	if s.Time.IsZero() {
		s.Time = c.start
	}
	if !c.start.IsZero() && c.end.After(c.start) && s.Timings.Total == 0 {
		s.Timings.Total = Duration(c.end.Sub(c.start))
	}
	switch {
	case s.AttemptOf != "":
		s.RetryOrigin = OriginUser
	case s.PolicyRetries > 0:
		s.RetryOrigin = OriginPolicy
	case s.InputRounds > 0:
		s.RetryOrigin = OriginMRTR
	default:
		s.RetryOrigin = OriginNone
	}
	return &s
}
