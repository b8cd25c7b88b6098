package record

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Upgrade fills the typed members of schema version 2 into a record decoded
// from an older line (v 1, or no v), whose raw JSON is line: the response
// flags its note said in words, the SSE arrival times a note held
// ("sseArrivals=[…]"), and, from the "serve" member of a version-1 fault
// server line, the fault decision (Fault) and the request's params facts
// (Params). It is the only code that reads version-1 note text; Decode calls
// it, so that every reader (report, matrix --from-records) judges old files
// by the same typed fields as new ones. The record keeps its v, kind and
// note. A record of version 2 or later is left as it is.
func Upgrade(r *Record, line []byte) {
	if r == nil || r.V >= 2 {
		return
	}
	r.Flags.Add(v1Flags(r)...)
	if i := strings.LastIndex(r.Note, v1ArrivalsPrefix); i >= 0 && r.SSEArrivals == nil {
		var a []Arrival
		if json.Unmarshal([]byte(r.Note[i+len(v1ArrivalsPrefix):]), &a) == nil {
			r.SSEArrivals = a
			r.Note = strings.TrimSuffix(strings.TrimSpace(r.Note[:i]), ";")
		}
	}
	if r.Fault == nil && r.Scenario != "" && r.Flags.Has(FlagFI) && r.Kind == KindExchange {
		// A version-1 proxy record with --scenario: the scenario member is
		// what fired; the note has the seed.
		f := &Fault{Fired: strings.Split(r.Scenario, "+"), Decisions: []FaultDecision{}}
		if i := strings.Index(r.Note, "(seed "); i >= 0 {
			var seed uint64
			if _, err := fmt.Sscan(r.Note[i+len("(seed "):], &seed); err == nil {
				f.Seed = seed
			}
		}
		r.Fault = f
	}
	if len(line) == 0 || r.Kind != KindServer {
		return
	}
	var ext struct {
		Serve *v1Serve `json:"serve"`
	}
	if json.Unmarshal(line, &ext) != nil || ext.Serve == nil {
		return
	}
	s := ext.Serve
	f := &Fault{Selection: r.Scenario, Endpoint: s.Endpoint, Seed: s.Seed, IssuedState: s.IssuedState,
		Decisions: s.Faults, Count: s.Count, Counters: s.Counters}
	if f.Decisions == nil {
		f.Decisions = []FaultDecision{}
	}
	if s.Fired != "" {
		f.Fired = strings.Split(s.Fired, "+")
	} else {
		for _, d := range s.Faults {
			if d.Fired {
				f.Fired = append(f.Fired, d.Scenario)
			}
		}
	}
	if f.Fired == nil {
		f.Fired = []string{}
	}
	if len(f.Fired) > 0 {
		r.Flags.Add(FlagFI)
	}
	r.Fault = f
	r.Params = &Params{Meta: s.Meta, MetaProtocolVersion: s.MetaProtocolVersion, Capabilities: s.Capabilities,
		RequestState: s.RequestState, InputResponses: s.InputResponses}
	if r.Params.Meta == nil {
		r.Params.Meta = []string{}
	}
	if r.RetryAfter == "" {
		r.RetryAfter = s.RetryAfter
	}
	if s.Hijacked {
		r.Flags.Add(FlagHJ)
	}
	if s.Aborted {
		r.Flags.Add(FlagAB)
	}
}

// v1ArrivalsPrefix starts the SSE arrival times in a version-1 note that was
// not rewritten into a member.
const v1ArrivalsPrefix = "sseArrivals="

// v1Serve is the "serve" member of a version-1 fault server line
// (faults.ServerDetails of that version).
type v1Serve struct {
	Endpoint            string          `json:"endpoint"`
	Seed                uint64          `json:"seed,string"`
	Count               *FaultCount     `json:"count"`
	Counters            *FaultCounters  `json:"counters"`
	Meta                []string        `json:"meta"`
	MetaProtocolVersion string          `json:"metaProtocolVersion"`
	Capabilities        string          `json:"capabilities"`
	RequestState        string          `json:"requestState"`
	InputResponses      []string        `json:"inputResponses"`
	IssuedState         string          `json:"issuedState"`
	RetryAfter          string          `json:"retryAfter"`
	Fired               string          `json:"fired"`
	Faults              []FaultDecision `json:"faults"`
	Hijacked            bool            `json:"hijacked"`
	Aborted             bool            `json:"aborted"`
}

// v1Flags reads the flags a version-1 producer wrote in words: the proxy's
// and the stdio proxy's notes, and the error of a request that was never
// answered.
func v1Flags(r *Record) []Flag {
	text := r.Note
	if r.Network != nil {
		text += " " + r.Network.Error
	}
	if text == "" {
		return nil
	}
	var out []Flag
	for _, f := range []Flag{FlagUF, FlagUC, FlagUT, FlagDF, FlagUPE, FlagUR, FlagDC, FlagFI} {
		// "(UF, Proxy-Status …", "(UC, connection_terminated)", "(UR)",
		// "(DC)", "(FI)": the proxy wrote a flag in parentheses.
		if strings.Contains(text, "("+string(f)+")") || strings.Contains(text, "("+string(f)+",") {
			out = append(out, f)
		}
	}
	if strings.Contains(text, "shut down") {
		out = append(out, FlagSD)
	}
	if strings.Contains(text, "the server ended") || strings.Contains(text, "never answered") ||
		strings.Contains(text, "before responding") && !strings.Contains(text, "proxy-generated") {
		// The stdio proxy: the server process exited, was killed or ended
		// with the request pending.
		out = append(out, FlagUX)
	}
	if strings.Contains(text, "hijacked") || strings.Contains(text, "connection taken over") {
		out = append(out, FlagHJ)
	}
	if strings.Contains(text, "response aborted mid-body") {
		out = append(out, FlagAB)
	}
	if strings.Contains(text, "fired: ") {
		out = append(out, FlagFI)
	}
	return out
}
