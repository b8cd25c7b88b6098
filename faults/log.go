package faults

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"

	"github.com/mcpdiag/mcpdiag/record"
)

// ServerDetails is the "serve" member of a server log line: what the fault
// server knows beyond the record's own fields. Consumers that read lines as
// record.Record ignore it (unknown fields are ignored by contract).
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

// Record returns the observation as a record of kind "server".
func (o *Observation) Record() *record.Record {
	rec := &record.Record{
		Kind: record.KindServer, Time: o.Time, Scenario: o.Scenario,
		HTTPMethod: o.HTTPMethod, URL: o.URL, Status: o.Status, ContentType: o.ContentType,
		RequestHeaders: o.Header, ResponseBytes: o.Bytes,
		Timings: record.Timings{Total: record.Duration(o.Duration)},
	}
	if q := o.Request; q != nil {
		if q.Post {
			rec.SetRequest(q.Body)
		}
		rec.Client, rec.ProtocolVersion, rec.Session = q.Client, q.Protocol, q.Session
		rec.PostCount = q.Count.Post
		if rec.Method == "" {
			rec.Method = q.Method
		}
	}
	if rec.Client == "" {
		rec.Client = o.Header.Get("User-Agent")
	}
	switch {
	case o.Hijacked:
		rec.Note = "connection taken over and closed: no HTTP response"
	case o.Aborted:
		rec.Note = "response aborted mid-body"
	}
	if f := o.Fired(); f != "" {
		if rec.Note != "" {
			rec.Note += "; "
		}
		rec.Note += "fired: " + f
	}
	return rec
}

// Details returns the "serve" member of the observation's log line.
func (o *Observation) Details() ServerDetails {
	// The endpoint's query holds the scenario's params, which may carry
	// anything a user put there: redacted as a URL.
	d := ServerDetails{Endpoint: record.RedactURL(o.Endpoint), Seed: o.Seed, Fired: o.Fired(), Faults: o.Firings, Hijacked: o.Hijacked, Aborted: o.Aborted,
		RetryAfter: o.RetryAfter}
	if q := o.Request; q != nil {
		d.Count, d.Counters, d.Meta = q.Count, q.Counters, q.Meta
		if v, ok := q.MetaValues["io.modelcontextprotocol/protocolVersion"]; ok {
			_ = json.Unmarshal(v, &d.MetaProtocolVersion)
		}
		if v, ok := q.MetaValues["io.modelcontextprotocol/clientCapabilities"]; ok {
			if c, err := record.CanonicalJSON(v); err == nil {
				sum := sha256.Sum256(c)
				d.Capabilities = "sha256:" + hex.EncodeToString(sum[:8])
			}
		}
		p := readMRTR(q)
		if p.RequestState != nil {
			d.RequestState = StateHash(json.RawMessage(strconv.Quote(*p.RequestState)))
		}
		for k := range p.InputResponses {
			d.InputResponses = append(d.InputResponses, k)
		}
		sort.Strings(d.InputResponses)
		d.IssuedState = q.IssuedState()
	}
	if d.Meta == nil {
		d.Meta = []string{}
	}
	if d.Faults == nil {
		d.Faults = []Firing{}
	}
	for i := range d.Faults {
		for j, n := range d.Faults[i].Notes {
			d.Faults[i].Notes[j] = record.Scrub(n)
		}
	}
	return d
}

// Line encodes the observation as one JSONL line: the record, redacted by
// enc (credential headers, session id hashed), with the "serve" member
// added before the closing brace.
func (o *Observation) Line(enc *record.Encoder) ([]byte, error) {
	line, err := enc.Encode(o.Record())
	if err != nil {
		return nil, err
	}
	return AddMember(line, "serve", o.Details())
}

// AddMember adds a member to an encoded JSON object line ("{…}\n").
func AddMember(line []byte, name string, v any) ([]byte, error) {
	body := bytes.TrimRight(line, "\n")
	if len(body) < 2 || body[len(body)-1] != '}' {
		return nil, fmt.Errorf("faults: not a JSON object line")
	}
	var ext bytes.Buffer
	enc := json.NewEncoder(&ext)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(body)+ext.Len()+len(name)+8)
	out = append(out, body[:len(body)-1]...)
	if len(body) > 2 {
		out = append(out, ',')
	}
	out = append(out, '"')
	out = append(out, name...)
	out = append(out, `":`...)
	out = append(out, bytes.TrimRight(ext.Bytes(), "\n")...)
	out = append(out, "}\n"...)
	return out, nil
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
