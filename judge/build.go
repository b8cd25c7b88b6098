package judge

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/retry"
	"github.com/mcpdiag/mcpdiag/wire"
)

// FromRecord returns the exchange one record describes, whatever its kind:
// an exchange record (mcpdiag proxy, mcpdiag call, the fault server's
// recorder) or a fault server's line of kind server. It reads typed fields
// only: the request's facts, the answer's status and outcome, the flags
// (HJ, AB, and Flags.Pending), the fault decision (what fired, the POST
// count, the requestState issued), the capability names the request
// declared (clientCapabilities) and the params facts (_meta, requestState,
// inputResponses); where a record has no params facts or capability names,
// the captured request body when it is whole.
//
// expected is the case's expected outcome ("" for records judged without a
// case): a 2xx answer the record does not classify (a fault server's line),
// to a request on which a scenario fired, failed when expected is a
// failure a scenario makes in a 2xx body (a cut stream, malformed JSON, …).
//
// N is the fault endpoint's POST count (a version-1 server line's
// postCount), 0 when no fault endpoint counted the request; NewTrace numbers
// the POSTs of a trace.
func FromRecord(r *record.Record, expected classify.Outcome) *Exchange {
	x := &Exchange{
		Start: r.Time, End: r.Time.Add(time.Duration(r.Timings.Total)),
		HTTPMethod: r.HTTPMethod, Method: r.Method, ID: r.JSONRPC.ID, Tool: r.Tool, ArgsHash: r.ArgsHash,
		Header: http.Header(r.RequestHeaders), Session: r.Session,
		Status: r.Status, RetryAfter: r.RetryAfter, Outcome: r.Outcome, Fired: r.Scenario,
	}
	if x.HTTPMethod == "" {
		x.HTTPMethod = http.MethodPost
	}
	x.Stdio = strings.HasPrefix(r.URL, "stdio:")
	x.ClientAnswer = r.ClientAnswer
	if r.ClientAnswer {
		x.AnswerTo = r.Method
	}
	if r.ClientAnswer && !x.Stdio {
		// A client's answer POSTed over HTTP names the server request's
		// method: it is no request of the client's (IsRequest), as its
		// id is the server's.
		x.Method = ""
	}
	x.Legacy = r.AnsweredOn == record.AnsweredOnStream
	x.Probe, x.ErrorCode, x.IsError, x.ResponseBytes = r.Probe, r.JSONRPC.ErrorCode, r.IsError, r.ResponseBytes
	if !r.JSONRPC.ResponseID.Equal(r.JSONRPC.ID) {
		// The record keeps a response id spelled otherwise too (1.0 for
		// 1); to a rule it is the same id.
		x.ResponseID = r.JSONRPC.ResponseID
	}
	if r.Probe != nil && r.Probe.Answer == "" {
		// A probe record written before the probe said what came back
		// (record.Probe.Answer) was an HTTP one: its status says it.
		p := *r.Probe
		p.Answer = record.ProbeAnswerNone
		if r.Status != 0 {
			p.Answer = record.ProbeAnswerResponse
		}
		x.Probe = &p
	}
	if b := r.ResponseBody; b != nil {
		x.ResponseBody = b.Text
	}
	for _, w := range r.Warnings {
		x.Warnings = append(x.Warnings, w.Code)
	}
	x.Protocol, x.ContentType = r.ProtocolVersion, r.ContentType
	x.ProxyRefused = proxyRefused(http.Header(r.ResponseHeaders))
	if r.SSE != nil {
		x.ServerRequests = r.SSE.Requests
	}
	if r.Probe != nil && r.Probe.Asked > x.ServerRequests {
		// The probe counts the requests on every channel it reads (the
		// standalone GET stream, a stdio server's stdout), the SSE facts
		// those on the response stream only.
		x.ServerRequests = r.Probe.Asked
	}
	if r.Kind == record.KindServer {
		x.N = r.PostCount
	}
	if f := r.Fault; f != nil {
		x.Fired = f.FiredString()
		x.Issued, x.IssuedAny = f.IssuedState, f.IssuedState != ""
		if f.Count != nil && f.Count.Post > 0 {
			x.N = f.Count.Post
		}
	}
	if p := r.Params; p != nil {
		x.MetaProtocol, x.MetaKnown, x.Capabilities = p.MetaProtocolVersion, true, p.Capabilities
		x.State, x.StateKnown, x.Inputs = p.RequestState, true, p.InputResponses
		x.NoCapabilities = !slices.Contains(p.Meta, wire.MetaClientCapabilities)
	} else if b := r.RequestBody; b != nil && !b.Truncated {
		readRequestBody(x, []byte(b.Text))
	}
	x.ClientCapabilities = r.ClientCapabilities
	if b := r.RequestBody; x.ClientCapabilities == nil && b != nil && !b.Truncated {
		// A record written before clientCapabilities, with its body.
		m := wire.ParseMessage([]byte(b.Text))
		x.ClientCapabilities = m.Capabilities()
	}
	if r.Input != nil && r.Input.HasRequestState {
		x.IssuedAny = true
	}
	if b := r.ResponseBody; x.IssuedAny && x.Issued == "" && b != nil && !b.Truncated {
		if st, ok := issuedState([]byte(b.Text)); ok {
			x.Issued = st
		}
	}
	// A handler that took the connection over (HJ) or aborted the answer
	// (AB) had the request: it may have acted on it, whatever the record's
	// transport facts say of a request that was never sent upstream.
	handled := r.Flags.Has(record.FlagHJ) || r.Flags.Has(record.FlagAB)
	switch {
	case r.Flags.Has(record.FlagHJ):
		x.Failed, x.What, x.Tag = true, "the connection was closed without a response", "drop"
	case r.Flags.Has(record.FlagAB):
		x.Failed, x.What, x.Tag = true, "the response was aborted mid-body", "cut"
	case r.ClientAnswer && !x.Stdio && r.AnswerRefused:
		// The server refused the client's answer with a JSON-RPC error
		// in a 2xx's body: its failure, whatever the client answered
		// (the outcome and error code are the server's refusal).
		x.Failed, x.What, x.Tag = true, fmt.Sprintf("HTTP %d, the server refused the client's answer (%s)", r.Status, r.Outcome), bodyTag(r.Outcome)
	case r.ClientAnswer && !x.Stdio && r.Status >= 200 && r.Status < 300:
		// The server accepted the client's answer: the record's outcome
		// judges the client's answer (docs/decisions.md, answers13), no
		// failure of the server's.
	case r.Outcome != "" && healthy(r.Outcome):
	case r.Outcome != "":
		x.Failed, x.What, x.Tag = true, string(r.Outcome), bodyTag(r.Outcome)
		switch {
		case r.Status >= 300:
			x.What, x.Tag = fmt.Sprintf("HTTP %d, %s", r.Status, r.Outcome), strconv.Itoa(r.Status)
		case r.Status != 0:
			x.What = fmt.Sprintf("HTTP %d, %s", r.Status, r.Outcome)
		case r.Network != nil:
			// A closed or refused connection in words: Go's text for it
			// varies between identical runs (EOF or a reset, a port). Other
			// causes keep the record's text, mcpdiag's own words that say
			// more ("… within the 200ms limit").
			what := r.Network.Error
			if c := r.Network.Cause; c == classify.NetClosed || c == classify.NetRefused {
				what = c.Words()
			}
			x.What, x.Tag = fmt.Sprintf("%s: %s", r.Outcome, what), "gone"
		}
	case r.Status == 0:
		x.Failed, x.What, x.Tag = true, "no response (the client left first)", "gone"
	case r.Status >= 300:
		x.Failed, x.What, x.Tag = true, fmt.Sprintf("HTTP %d", r.Status), strconv.Itoa(r.Status)
	case x.Fired != "" && bodyFailure(expected):
		x.Failed, x.What, x.Tag = true, fmt.Sprintf("HTTP %d and %s (%s: %s)", r.Status, bodyWords(expected), x.Fired, expected), bodyTag(expected)
		x.Outcome = expected
	}
	if x.Failed {
		x.Rejected = rejected(r.Status) || !handled && r.Network != nil && !r.Network.RequestSent
		x.Pending = r.Status == 0 && r.Flags.Pending()
	}
	return x
}

// NewTrace returns the trace of one client's records, or of one fault
// endpoint's: the POSTs among them (exchange and server records; call and
// other records are skipped) as exchanges read by FromRecord, with the
// case's expected outcome when c is set, in arrival order. When a fault
// endpoint counted every POST (mcpdiag serve's lines carry Fault.Count; the
// proxy's, even with --scenario, do not) they are ordered and numbered by
// that count; otherwise by their start time, numbered from 1. The lines of the endpoint's
// authorization server among them (IsAuthServerLine) go to Trace.Auth, in
// time order. The caller sets the client run, the tools' safety, the
// limits and Passive.
func NewTrace(name string, recs []*record.Record, c *Case) *Trace {
	var expected classify.Outcome
	if c != nil {
		expected = c.Expected
	}
	return newTrace(name, recs, c, func(*record.Record) classify.Outcome { return expected })
}

// NewPassiveTrace is NewTrace for records judged without a case (mcpdiag
// matrix --from-records): expected gives, for a record, the outcome the
// scenarios that fired on it make (the catalogue's, "" when none fired or
// the catalogue does not know them). FromRecord reads it only for a 2xx
// answer the record does not classify (the lines of a fault server older
// than its recorder): without it a cut stream there read as complete.
func NewPassiveTrace(name string, recs []*record.Record, expected func(*record.Record) classify.Outcome) *Trace {
	return newTrace(name, recs, nil, expected)
}

func newTrace(name string, recs []*record.Record, c *Case, expectedOf func(*record.Record) classify.Outcome) *Trace {
	var xs []*Exchange
	var auth []*record.Record
	counted := true
	for _, r := range recs {
		if r.Kind != record.KindExchange && r.Kind != record.KindServer {
			continue
		}
		if IsAuthServerLine(r) {
			auth = append(auth, r)
			continue
		}
		x := FromRecord(r, expectedOf(r))
		if x.HTTPMethod != http.MethodPost {
			continue
		}
		counted = counted && x.N > 0
		xs = append(xs, x)
	}
	if counted {
		sort.SliceStable(xs, func(i, j int) bool { return xs[i].N < xs[j].N })
	} else {
		sort.SliceStable(xs, func(i, j int) bool { return xs[i].Start.Before(xs[j].Start) })
		for i, x := range xs {
			x.N = i + 1
		}
	}
	sort.SliceStable(auth, func(i, j int) bool { return auth[i].Time.Before(auth[j].Time) })
	return &Trace{Name: name, Case: c, Exchanges: xs, Auth: auth}
}

// IsAuthServerLine reports a line of an authorization server's log
// (mcpdiag serve's /oauth/N): a request to it, not to the MCP endpoint, so
// it goes to Trace.Auth, not to Exchanges.
func IsAuthServerLine(r *record.Record) bool {
	return r.Auth != nil && r.Auth.Server != "" && r.Fault == nil
}

// readRequestBody reads _meta's protocol version, the capabilities,
// requestState and inputResponses from a captured request body.
func readRequestBody(x *Exchange, body []byte) {
	var m struct {
		Params struct {
			RequestState   json.RawMessage            `json:"requestState"`
			InputResponses map[string]json.RawMessage `json:"inputResponses"`
			Meta           map[string]json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	if wire.Kind(body) != '{' || json.Unmarshal(body, &m) != nil {
		return
	}
	x.StateKnown, x.MetaKnown = true, true
	x.State = record.StateHash(m.Params.RequestState)
	for k := range m.Params.InputResponses {
		x.Inputs = append(x.Inputs, k)
	}
	sort.Strings(x.Inputs)
	if v, ok := m.Params.Meta[wire.MetaProtocolVersion]; ok {
		_ = json.Unmarshal(v, &x.MetaProtocol)
	}
	if v, ok := m.Params.Meta[wire.MetaClientCapabilities]; ok {
		if c, err := record.CanonicalJSON(v); err == nil {
			x.Capabilities = string(c)
		}
	} else {
		x.NoCapabilities = true
	}
}

// issuedState finds result.requestState in a captured response: a JSON
// body, or the data of an event stream's events.
func issuedState(body []byte) (string, bool) {
	find := func(msg []byte) (string, bool) {
		res, ok := wire.Field(msg, "result")
		if !ok {
			return "", false
		}
		st, ok := wire.Field(res, "requestState")
		if !ok {
			return "", false
		}
		return record.StateHash(st), true
	}
	body = bytes.TrimSpace(body)
	if wire.Kind(body) == '{' {
		return find(body)
	}
	rd := wire.NewSSEReader(bytes.NewReader(body), len(body))
	for {
		ev, err := rd.Next()
		var ue *wire.UnterminatedEventError
		switch {
		case errors.As(err, &ue):
			// A last event without its blank line still says what the
			// server issued.
			ev.Data = ue.Data
		case err != nil:
			return "", false
		}
		if d := bytes.TrimSpace(ev.Data); wire.Kind(d) == '{' {
			if st, ok := find(d); ok {
				return st, true
			}
		}
		if ue != nil {
			return "", false
		}
	}
}

// ReadSafety reads the tools' safety from their annotations into safety,
// when r is a tools/list exchange whose whole response body was recorded
// (JSON or an event stream); it reports whether it found tools.
func ReadSafety(r *record.Record, safety map[string]retry.Safety) bool {
	if r.Method != "tools/list" || r.ResponseBody == nil || r.ResponseBody.Truncated {
		return false
	}
	return readSafety([]byte(r.ResponseBody.Text), safety)
}

// readSafety reads the tools of a tools/list answer (JSON or an event
// stream) into safety.
func readSafety(body []byte, safety map[string]retry.Safety) bool {
	msg := bytes.TrimSpace(body)
	if wire.Kind(msg) != '{' {
		// An event stream: the last event that holds a JSON object.
		rd := wire.NewSSEReader(bytes.NewReader(body), len(body))
		for {
			ev, err := rd.Next()
			var ue *wire.UnterminatedEventError
			if errors.As(err, &ue) {
				ev.Data, err = ue.Data, nil
			}
			if d := bytes.TrimSpace(ev.Data); wire.Kind(d) == '{' {
				msg = bytes.Clone(d)
			}
			if err != nil || ue != nil {
				break
			}
		}
	}
	var m struct {
		Result struct {
			Tools []struct {
				Name        string `json:"name"`
				Annotations struct {
					ReadOnlyHint    *bool `json:"readOnlyHint"`
					DestructiveHint *bool `json:"destructiveHint"`
					IdempotentHint  *bool `json:"idempotentHint"`
				} `json:"annotations"`
			} `json:"tools"`
		} `json:"result"`
	}
	if json.Unmarshal(msg, &m) != nil || len(m.Result.Tools) == 0 {
		return false
	}
	for _, t := range m.Result.Tools {
		a := t.Annotations
		safety[t.Name] = retry.SafetyFromHints(a.ReadOnlyHint, a.DestructiveHint, a.IdempotentHint)
	}
	return true
}

// proxyRefused reports a response header with a Proxy-Status (RFC 9209)
// member that carries an error: a proxy answered, not the server.
func proxyRefused(h http.Header) bool {
	for _, v := range h.Values("Proxy-Status") {
		if strings.Contains(v, "error=") {
			return true
		}
	}
	return false
}
