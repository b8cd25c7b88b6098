package faults

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sort"
	"strconv"

	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/wire"
)

// ServerDetails is what the fault server knows about one request beyond the
// record's plain fields, as one value: a view of the record's typed members
// (see DetailsOf), in the shape of the "serve" member of version-1 server
// lines.
type ServerDetails struct {
	// Endpoint is the endpoint's path (with its query for /s/{id}/mcp).
	Endpoint string `json:"endpoint"`
	// Seed is the endpoint's seed, as a decimal string (it may exceed the
	// 2^53 that JSON numbers keep exactly).
	Seed uint64 `json:"seed,string"`
	// Count numbers this request: POST, method and tool.
	Count Count `json:"count"`
	// Counters are the endpoint's counters after this request.
	Counters Counters `json:"counters"`
	// Meta lists the params._meta keys the request carried.
	Meta []string `json:"meta"`
	// MetaProtocolVersion is params._meta's protocol version
	// (io.modelcontextprotocol/protocolVersion), "" when absent; the
	// record's protocolVersion prefers the MCP-Protocol-Version header.
	MetaProtocolVersion string `json:"metaProtocolVersion,omitempty"`
	// Capabilities identifies params._meta's clientCapabilities (a hash of
	// its canonical JSON), so that a client declaring more shows.
	Capabilities string `json:"capabilities,omitempty"`
	// RequestState is the StateHash of the params.requestState the request
	// carried (MRTR), "" when none.
	RequestState string `json:"requestState,omitempty"`
	// InputResponses lists the keys of params.inputResponses (MRTR).
	InputResponses []string `json:"inputResponses,omitempty"`
	// IssuedState is the StateHash of the requestState a scenario answered
	// with (an input_required result), "" when none.
	IssuedState string `json:"issuedState,omitempty"`
	// RetryAfter is the Retry-After header of the response, when one was
	// sent.
	RetryAfter string `json:"retryAfter,omitempty"`
	// Fired names the scenarios that fired, joined with "+" ("" for none).
	Fired string `json:"fired"`
	// Faults are every scenario's decision, fired or not, outermost first.
	Faults []Firing `json:"faults"`
	// Hijacked reports that the connection was taken over (reset or
	// closed); Aborted that the response was aborted mid-stream.
	Hijacked bool `json:"hijacked,omitempty"`
	Aborted  bool `json:"aborted,omitempty"`
}

// Facts returns the endpoint's view of the request as the record's typed
// members: the decision (Fault) with the request's numbers, the counters
// after it and the requestState issued, and the request's params facts.
// A recorder in front of the endpoint (package recorder) puts them into the
// exchange record. The params facts are nil when the endpoint read no
// JSON-RPC request or notification (a body over MaxBody, invalid JSON, a
// batch, a response, a GET): the record then does not say what _meta
// carried, rather than say it carried nothing.
func (o *Observation) Facts() (*record.Fault, *record.Params) {
	f := o.Fault()
	q := o.Request
	if q == nil {
		return f, nil
	}
	c := q.Counters.clone()
	f.Count = &record.FaultCount{Post: q.Count.Post, Method: q.Count.Method, Tool: q.Count.Tool}
	f.Counters = &record.FaultCounters{Posts: c.Posts, Methods: c.Methods, Tools: c.Tools}
	f.IssuedState = q.IssuedState()
	return f, paramsOf(q)
}

// paramsOf returns the params facts of a request: the _meta keys, its
// protocol version, a hash of its capabilities, and the MRTR members; nil
// when q's body was not read as a JSON-RPC request or notification, whose
// _meta is then unknown (an empty Meta would say "declared none").
func paramsOf(q *Request) *record.Params {
	if m := q.Message; m == nil || m.Kind != wire.MessageRequest && m.Kind != wire.MessageNotification {
		return nil
	}
	p := &record.Params{Meta: append([]string{}, q.Meta...)}
	if v, ok := q.MetaValue(wire.MetaProtocolVersion); ok {
		p.MetaProtocolVersion, _ = wire.StringValue(v)
	}
	if v, ok := q.MetaValue(wire.MetaClientCapabilities); ok {
		if c, err := record.CanonicalJSON(v); err == nil {
			sum := sha256.Sum256(c)
			p.Capabilities = "sha256:" + hex.EncodeToString(sum[:8])
		}
	}
	m := readMRTR(q)
	if m.RequestState != nil {
		p.RequestState = StateHash(json.RawMessage(strconv.Quote(*m.RequestState)))
	}
	for k := range m.InputResponses {
		p.InputResponses = append(p.InputResponses, k)
	}
	sort.Strings(p.InputResponses)
	return p
}

// DetailsOf returns the server details of a record: a view of its typed
// members Fault, Params, Flags and RetryAfter, in the shape of the "serve"
// member version-1 server lines carried (record.Decode upgrades those into
// the same typed members). A record without a Fault gives zero details.
func DetailsOf(r *record.Record) ServerDetails {
	d := ServerDetails{Meta: []string{}, Faults: []Firing{}}
	if r == nil || r.Fault == nil {
		return d
	}
	f := r.Fault
	d.Endpoint, d.Seed, d.Fired, d.IssuedState, d.RetryAfter = f.Endpoint, f.Seed, f.FiredString(), f.IssuedState, r.RetryAfter
	if f.Decisions != nil {
		d.Faults = f.Decisions
	}
	if f.Count != nil {
		d.Count = Count(*f.Count)
	}
	if f.Counters != nil {
		d.Counters = Counters(*f.Counters)
	}
	if p := r.Params; p != nil {
		if p.Meta != nil {
			d.Meta = p.Meta
		}
		d.MetaProtocolVersion, d.Capabilities, d.RequestState, d.InputResponses = p.MetaProtocolVersion, p.Capabilities, p.RequestState, p.InputResponses
	}
	d.Hijacked, d.Aborted = r.Flags.Has(record.FlagHJ), r.Flags.Has(record.FlagAB)
	return d
}

// Decision returns a fault layer's decision about one request as the
// record's typed member: the selection in force, the endpoint, the seed,
// the scenarios that fired and every scenario's decision (its notes
// scrubbed by the record encoder).
func Decision(selection, endpoint string, seed uint64, firings []Firing) *record.Fault {
	f := &record.Fault{Selection: selection, Endpoint: endpoint, Seed: seed, Fired: []string{}, Decisions: []Firing{}}
	for _, x := range firings {
		x.Notes = append([]string(nil), x.Notes...)
		x.DelayMs = append([]int64(nil), x.DelayMs...)
		f.Decisions = append(f.Decisions, x)
		if x.Fired {
			f.Fired = append(f.Fired, x.Scenario)
		}
	}
	return f
}

// Fault returns the observation's decision as the record's typed member.
func (o *Observation) Fault() *record.Fault {
	return Decision(o.Scenario, o.Endpoint, o.Seed, o.Firings)
}
