package matrix

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/faults"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/wire"
)

// Exchange is one request as the rules see it, read from the fault
// server's log line or from a record captured on the way (mcpdiag proxy,
// mcpdiag call).
type Exchange struct {
	// N numbers the POSTs of a trace from 1, in arrival order (the server's
	// POST count, or the order of the records).
	N int `json:"post"`
	// Start is when the request arrived; End when its answer ended.
	Start time.Time `json:"-"`
	End   time.Time `json:"-"`
	// HTTPMethod is POST, GET or DELETE.
	HTTPMethod string `json:"-"`
	// Method, ID, Tool and ArgsHash come from the request body.
	Method   string  `json:"method,omitempty"`
	ID       wire.ID `json:"id,omitzero"`
	Tool     string  `json:"tool,omitempty"`
	ArgsHash string  `json:"-"`
	// Header holds the request headers (credentials redacted).
	Header http.Header `json:"-"`
	// Session is the hashed Mcp-Session-Id.
	Session string `json:"-"`
	// MetaProtocol is params._meta's protocol version; MetaKnown says
	// whether the request's _meta could be read at all.
	MetaProtocol string `json:"-"`
	MetaKnown    bool   `json:"-"`
	// Capabilities identifies the declared client capabilities.
	Capabilities string `json:"-"`
	// State is the StateHash of the requestState sent ("" when none);
	// StateKnown says whether the request's params could be read.
	State      string   `json:"-"`
	StateKnown bool     `json:"-"`
	Inputs     []string `json:"-"`
	// Issued is the StateHash of the requestState the answer carried;
	// IssuedAny reports an answer that carried one (even when its value is
	// unknown).
	Issued    string `json:"-"`
	IssuedAny bool   `json:"-"`
	// Status is the HTTP status sent (0: none); RetryAfter its Retry-After.
	Status     int    `json:"status"`
	RetryAfter string `json:"-"`
	// Outcome is the classification of the answer, when the source knows
	// it: records do; the server log only for a 2xx answer that a fired
	// scenario broke (the scenario's expected outcome).
	Outcome classify.Outcome `json:"-"`
	// Failed reports an answer that did not finish the request: a non-2xx
	// status, no response, a cut stream or a broken body. Rejected reports
	// a failure the server made before acting on the request (4xx), or a
	// request that never left the client.
	Failed   bool `json:"-"`
	Rejected bool `json:"-"`
	// What says how the answer failed, for evidence ("HTTP 503", "the
	// stream was cut", …); "" when it did not.
	What string `json:"-"`
	// Tag is What in a word, for the table: the status ("503"), "reset",
	// "drop" (the connection was closed), "gone" (no answer), "cut" (a cut
	// stream) or "body" (a broken body).
	Tag string `json:"-"`
	// Pending reports a request the capture shows was never answered.
	Pending bool `json:"-"`
	// Fired names the fault scenarios that fired on the request.
	Fired string `json:"-"`
}

// Key identifies "the same request": method, tool and arguments hash. An
// MRTR round and a retry have the key of the request they repeat.
func (x *Exchange) Key() string { return x.Method + "\x00" + x.Tool + "\x00" + x.ArgsHash }

// Round reports an MRTR round: a request that carries requestState or
// inputResponses.
func (x *Exchange) Round() bool { return x.State != "" || len(x.Inputs) > 0 }

// IsRequest reports a JSON-RPC request (a POST with a method and an id).
func (x *Exchange) IsRequest() bool {
	return x.HTTPMethod == http.MethodPost && x.Method != "" && !x.ID.IsZero() && !x.ID.IsNull()
}

// Label names the exchange in evidence: "POST 3 (tools/call delete_item, id 3)".
func (x *Exchange) Label() string {
	what := x.Method
	if x.Tool != "" {
		what += " " + x.Tool
	}
	if what == "" {
		what = "not JSON-RPC"
	}
	if !x.ID.IsZero() && !x.ID.IsNull() {
		what += ", id " + x.ID.String()
	}
	return fmt.Sprintf("POST %d (%s)", x.N, what)
}

// healthy are the outcomes that finish a request (a tool error and an
// unfinished interaction are answers too).
func healthy(o classify.Outcome) bool {
	switch o {
	case classify.ToolSuccess, classify.ResultSuccess, classify.NotificationAccepted,
		classify.ToolError, classify.InputRequired, classify.TaskCreated:
		return true
	}
	return false
}

// bodyFailure reports the outcomes a scenario produces in a 2xx answer (so
// a 2xx answer of a scenario that fired with one of them failed); an
// HTTP_ERROR or NETWORK_ERROR scenario that lets a request through with 2xx
// sent a healthy answer.
func bodyFailure(o classify.Outcome) bool {
	switch o {
	case classify.EmptyResponse, classify.UnexpectedContentType, classify.StreamIncomplete,
		classify.MalformedJSON, classify.InvalidEnvelope, classify.JSONRPCError,
		classify.InvalidToolResult, classify.InvalidResult:
		return true
	}
	return false
}

// rejected reports a status by which the server refused a request before
// acting on it: 4xx, except 408 (an intermediary may time out after
// forwarding the request).
func rejected(status int) bool {
	return status >= 400 && status < 500 && status != http.StatusRequestTimeout
}

// bodyWords says what a broken 2xx answer was.
func bodyWords(o classify.Outcome) string {
	switch o {
	case classify.StreamIncomplete:
		return "a stream that ended before the response"
	case classify.MalformedJSON:
		return "a body that is not JSON"
	case classify.InvalidEnvelope:
		return "a message that is not the JSON-RPC response to it"
	case classify.JSONRPCError:
		return "a JSON-RPC error"
	case classify.EmptyResponse:
		return "no body"
	case classify.UnexpectedContentType:
		return "a body that is not MCP"
	}
	return "a malformed result"
}

// bodyTag names a failed answer's outcome in a word.
func bodyTag(o classify.Outcome) string {
	switch o {
	case classify.StreamIncomplete:
		return "cut"
	case classify.NetworkError:
		return "gone"
	}
	return "body"
}

// serverLine is a server log line: the record and its server details.
type serverLine struct {
	rec   *record.Record
	serve faults.ServerDetails
	raw   []byte
}

func parseServerLine(raw []byte) (*serverLine, error) {
	rec, err := record.Decode(raw)
	if err != nil {
		return nil, err
	}
	l := &serverLine{rec: rec, raw: raw}
	if rec.Fault != nil {
		// The typed members (a version-1 line's "serve" member was
		// upgraded into them by record.Decode). An authorization
		// server's line has none: its facts are rec.Auth.
		l.serve = faults.DetailsOf(rec)
	}
	return l, nil
}

// fromServer builds the exchanges of one endpoint's log lines, in POST
// order. expected is the case's expected outcome: a 2xx answer of a
// scenario that fired is broken when that outcome is a body failure.
func fromServer(lines []*serverLine, expected classify.Outcome) []*Exchange {
	var out []*Exchange
	for _, l := range lines {
		r, s := l.rec, l.serve
		if r.HTTPMethod != http.MethodPost {
			continue
		}
		x := &Exchange{
			N: s.Count.Post, Start: r.Time, End: r.Time.Add(time.Duration(r.Timings.Total)),
			HTTPMethod: r.HTTPMethod, Method: r.Method, ID: r.JSONRPC.ID, Tool: r.Tool, ArgsHash: r.ArgsHash,
			Header: http.Header(r.RequestHeaders), Session: r.Session,
			MetaProtocol: s.MetaProtocolVersion, MetaKnown: true, Capabilities: s.Capabilities,
			State: s.RequestState, StateKnown: true, Inputs: s.InputResponses,
			Issued: s.IssuedState, IssuedAny: s.IssuedState != "",
			Status: r.Status, RetryAfter: s.RetryAfter, Fired: s.Fired,
		}
		if x.N == 0 {
			x.N = r.PostCount
		}
		switch {
		case s.Hijacked:
			x.Failed, x.What, x.Tag = true, "the connection was closed without a response", "drop"
		case s.Aborted:
			x.Failed, x.What, x.Tag = true, "the response was aborted mid-body", "cut"
		case r.Status == 0:
			x.Failed, x.What, x.Tag = true, "no response (the client left first)", "gone"
		case r.Status >= 300:
			x.Failed, x.What, x.Tag = true, fmt.Sprintf("HTTP %d", r.Status), strconv.Itoa(r.Status)
			x.Rejected = rejected(r.Status)
		case s.Fired != "" && bodyFailure(expected):
			x.Failed, x.What, x.Tag = true, fmt.Sprintf("HTTP %d and %s (%s: %s)", r.Status, bodyWords(expected), s.Fired, expected), bodyTag(expected)
			x.Outcome = expected
		}
		out = append(out, x)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].N < out[j].N })
	return out
}

// fromRecord builds the exchange of one record line (kind exchange or
// server). n is its position among the POSTs of its trace.
func fromRecord(r *record.Record, serve *faults.ServerDetails) *Exchange {
	x := &Exchange{
		Start: r.Time, End: r.Time.Add(time.Duration(r.Timings.Total)),
		HTTPMethod: r.HTTPMethod, Method: r.Method, ID: r.JSONRPC.ID, Tool: r.Tool, ArgsHash: r.ArgsHash,
		Header: http.Header(r.RequestHeaders), Session: r.Session,
		Status: r.Status, RetryAfter: r.RetryAfter, Outcome: r.Outcome, Fired: r.Scenario,
	}
	if x.HTTPMethod == "" {
		x.HTTPMethod = http.MethodPost
	}
	if serve != nil {
		s := *serve
		x.MetaProtocol, x.MetaKnown, x.Capabilities = s.MetaProtocolVersion, true, s.Capabilities
		x.State, x.StateKnown, x.Inputs = s.RequestState, true, s.InputResponses
		x.Issued, x.IssuedAny = s.IssuedState, s.IssuedState != ""
		x.RetryAfter, x.Fired = s.RetryAfter, s.Fired
	}
	if b := r.RequestBody; serve == nil && b != nil && !b.Truncated {
		readRequestBody(x, []byte(b.Text))
	}
	if r.Input != nil && r.Input.HasRequestState {
		x.IssuedAny = true
	}
	if b := r.ResponseBody; serve == nil && b != nil && !b.Truncated && x.IssuedAny {
		if st, ok := issuedState([]byte(b.Text)); ok {
			x.Issued = st
		}
	}
	switch {
	case r.Outcome != "" && healthy(r.Outcome):
	case r.Outcome != "":
		x.Failed, x.What, x.Tag = true, string(r.Outcome), bodyTag(r.Outcome)
		switch {
		case r.Status >= 300:
			x.What, x.Tag = fmt.Sprintf("HTTP %d, %s", r.Status, r.Outcome), strconv.Itoa(r.Status)
		case r.Status != 0:
			x.What = fmt.Sprintf("HTTP %d, %s", r.Status, r.Outcome)
		case r.Network != nil:
			x.What, x.Tag = fmt.Sprintf("%s: %s", r.Outcome, r.Network.Error), "gone"
		}
	case r.Status == 0 || r.Status >= 300:
		x.Failed, x.What, x.Tag = true, fmt.Sprintf("HTTP %d", r.Status), strconv.Itoa(r.Status)
	}
	if x.Failed {
		x.Rejected = rejected(r.Status) || r.Network != nil && !r.Network.RequestSent
	}
	if x.Failed && r.Status == 0 && r.Flags.Pending() {
		x.Pending = true
	}
	return x
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
	x.State = faults.StateHash(m.Params.RequestState)
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
		return faults.StateHash(st), true
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
