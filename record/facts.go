package record

import (
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Flag is a response flag: one fact about how an exchange ended, in a short
// code. The codes follow Envoy's response flags where Envoy has one (UF, UC,
// UR, UT, DF, UPE, DC, FI); the others are mcpdiag's own. A reader must keep
// (and may ignore) a flag it does not know.
type Flag string

// The flags. See FlagDoc for what each means; docs/records.md lists them.
const (
	// FlagUF: the upstream could not be reached (refused, unreachable, TLS,
	// connect timeout): the proxy answered 502/504 itself, with a
	// Proxy-Status header (RFC 9209).
	FlagUF Flag = "UF"
	// FlagUC: the upstream took the request and closed or reset the
	// connection before any response; the proxy dropped the client's
	// connection the same way.
	FlagUC Flag = "UC"
	// FlagUT: the upstream took the request and did not answer in time:
	// the proxy answered 504.
	FlagUT Flag = "UT"
	// FlagDF: the upstream's name did not resolve (DNS): the proxy answered
	// 502.
	FlagDF Flag = "DF"
	// FlagUPE: the upstream answered something that is not HTTP: the proxy
	// answered 502.
	FlagUPE Flag = "UPE"
	// FlagUR: the upstream cut the response after it had started; the
	// client received the cut response.
	FlagUR Flag = "UR"
	// FlagDC: the client disconnected (or stopped reading) before the end
	// of the response.
	FlagDC Flag = "DC"
	// FlagFI: a fault scenario fired on this request (the "fault" member
	// says which).
	FlagFI Flag = "FI"
	// FlagSD: the proxy (or serve: the recorder's owner) shut down with the
	// exchange in flight; the request was still waiting for (the end of) its
	// answer when the capture ended (Record.CutByShutdown).
	FlagSD Flag = "SD"
	// FlagUX: the stdio server process ended with this request unanswered
	// (or, for a server request, the client had not answered it).
	FlagUX Flag = "UX"
	// FlagHJ: a handler took over (hijacked) the connection, to reset or
	// close it: no HTTP response was written through the recorder.
	FlagHJ Flag = "HJ"
	// FlagAB: the handler aborted the response mid-body
	// (http.ErrAbortHandler): the client's connection was cut.
	FlagAB Flag = "AB"
)

var flagDocs = map[Flag]string{
	FlagUF:  "upstream connection failure: the proxy answered 502/504 itself (Proxy-Status, RFC 9209)",
	FlagUC:  "upstream connection termination before any response: the client's connection was dropped the same way",
	FlagUT:  "upstream request timeout: the proxy answered 504",
	FlagDF:  "upstream DNS resolution failed: the proxy answered 502",
	FlagUPE: "upstream protocol error (not HTTP): the proxy answered 502",
	FlagUR:  "upstream reset after the response started: the client received the cut response",
	FlagDC:  "downstream connection termination: the client left before the end of the response",
	FlagFI:  "fault injected: a fault scenario fired on this request",
	FlagSD:  "shutdown: the proxy shut down with the exchange in flight",
	FlagUX:  "upstream exited: the stdio server ended with the request unanswered",
	FlagHJ:  "hijacked: a handler took over the connection; no HTTP response went through the recorder",
	FlagAB:  "aborted: the handler aborted the response mid-body",
}

// AllFlags returns the flags this package knows, in FlagDoc's order.
func AllFlags() []Flag {
	return []Flag{FlagUF, FlagUC, FlagUT, FlagDF, FlagUPE, FlagUR, FlagDC, FlagFI, FlagSD, FlagUX, FlagHJ, FlagAB}
}

// FlagDoc says what a flag means, "" for a flag this package does not know.
func FlagDoc(f Flag) string { return flagDocs[f] }

// Flags is a set of response flags, kept sorted and without repeats by Add.
// It is written as a JSON array of strings, and left out when empty.
type Flags []Flag

// Has reports whether f is in the set.
func (fs Flags) Has(f Flag) bool { return slices.Contains(fs, f) }

// Add puts f into the set (once).
func (fs *Flags) Add(f ...Flag) {
	for _, x := range f {
		if x == "" || fs.Has(x) {
			continue
		}
		*fs = append(*fs, x)
	}
	slices.Sort(*fs)
}

// Pending reports an exchange whose request was still waiting for its
// answer when the capture ended: the proxy shut down with it in flight (SD)
// or the stdio server ended without answering it (UX). A client that did not
// get an answer to such a request was not given one; it is not a client
// that dropped it.
func (fs Flags) Pending() bool { return fs.Has(FlagSD) || fs.Has(FlagUX) }

// Fault is a fault layer's decision about one request: the scenarios in
// force, the seed that replays them, what fired, and every scenario's
// decision. It comes from the faults package (the tap on the request's
// context) and is set on the exchanges of mcpdiag serve and of mcpdiag proxy
// with --scenario.
type Fault struct {
	// Selection is the scenarios in force, as --scenario writes them
	// ("a+b"); "" when none was.
	Selection string `json:"selection"`
	// Endpoint names the fault endpoint (mcpdiag serve: its path, with the
	// query of an /s/{id}/mcp endpoint; the proxy: "proxy", or
	// "header:a+b" for a per-request selection).
	Endpoint string `json:"endpoint,omitempty"`
	// Seed seeds the scenarios' schedules and delays, as a decimal string
	// (it may exceed the 2^53 that JSON numbers keep exactly).
	Seed uint64 `json:"seed,string"`
	// Fired lists the scenarios that fired, outermost first (never null).
	Fired []string `json:"fired"`
	// Decisions are every scenario's decision, fired or not, outermost
	// first (never null).
	Decisions []FaultDecision `json:"decisions"`
	// Count numbers this request among the endpoint's POSTs, per method and
	// per tool.
	Count *FaultCount `json:"count,omitempty"`
	// Counters are the endpoint's counters after this request.
	Counters *FaultCounters `json:"counters,omitempty"`
	// IssuedState is the StateHash of the requestState a scenario answered
	// with (an input_required result), "" when none.
	IssuedState string `json:"issuedState,omitempty"`
}

// FiredString returns the scenarios that fired, joined with "+" ("" for
// none, and for a nil Fault).
func (f *Fault) FiredString() string {
	if f == nil {
		return ""
	}
	s := ""
	for i, id := range f.Fired {
		if i > 0 {
			s += "+"
		}
		s += id
	}
	return s
}

// FaultDecision is one scenario's decision about one request.
type FaultDecision struct {
	// Scenario is the scenario id; Layer its position, outermost 0.
	Scenario string `json:"scenario"`
	Layer    int    `json:"layer"`
	// Matched reports that the request matched the scenario's rules; N is
	// its number among the matches.
	Matched bool `json:"matched"`
	N       int  `json:"n,omitempty"`
	// Fired reports that the scenario acted; Why says why (or why not).
	Fired bool   `json:"fired"`
	Why   string `json:"why"`
	// PassedThrough reports a request the scenario's schedule chose that
	// the scenario left unchanged (a small id for server.id_as_string, a
	// success for a scenario that rewrites errors, baseline): Fired is
	// false then, and Notes say why. A scenario whose rules delay is
	// not passed through: the delay changed the exchange.
	PassedThrough bool `json:"passedThrough,omitempty"`
	// Draw is the schedule's random draw, when there was one.
	Draw *float64 `json:"draw,omitempty"`
	// DelayMs are the delays the scenario waited, in milliseconds.
	DelayMs []int64 `json:"delayMs,omitempty"`
	// Notes are what the scenario said it did.
	Notes []string `json:"notes,omitempty"`
}

// FaultCount numbers one request: among the endpoint's POSTs, among the
// POSTs of its JSON-RPC method, and among the tools/call of its tool.
type FaultCount struct {
	Post   int `json:"post"`
	Method int `json:"method"`
	Tool   int `json:"tool"`
}

// FaultCounters are a fault endpoint's counters: POSTs, and POSTs per
// JSON-RPC method and per tool (tools/call by params.name).
type FaultCounters struct {
	Posts   int            `json:"posts"`
	Methods map[string]int `json:"methods"`
	Tools   map[string]int `json:"tools"`
}

// Params are facts of the request's params that the matrix judge reads:
// the _meta it carried and the MRTR members. The hashes keep the values out
// of the record.
type Params struct {
	// Meta lists the keys of params._meta, sorted (never null).
	Meta []string `json:"meta"`
	// MetaProtocolVersion is _meta's io.modelcontextprotocol/protocolVersion,
	// "" when absent (the record's protocolVersion prefers the
	// MCP-Protocol-Version header).
	MetaProtocolVersion string `json:"metaProtocolVersion,omitempty"`
	// Capabilities identifies _meta's clientCapabilities: "sha256:" and 16
	// hex digits of its canonical JSON.
	Capabilities string `json:"capabilities,omitempty"`
	// RequestState is the StateHash of params.requestState (MRTR), "" when
	// none.
	RequestState string `json:"requestState,omitempty"`
	// InputResponses lists the keys of params.inputResponses, sorted.
	InputResponses []string `json:"inputResponses,omitempty"`
}

// Arrival is when one SSE event of a response reached the client: End is
// the byte offset in the response body just past the event's blank line, At
// the time since the request started when those bytes had been flushed to
// the client. It is written as the JSON pair [End, ms].
type Arrival struct {
	End int64
	At  time.Duration
}

// MarshalJSON writes [End, ms] (ms with microsecond precision).
func (a Arrival) MarshalJSON() ([]byte, error) {
	b := []byte{'['}
	b = strconv.AppendInt(b, a.End, 10)
	b = append(b, ',')
	us := a.At.Round(time.Microsecond)
	b = strconv.AppendFloat(b, float64(us)/float64(time.Millisecond), 'f', -1, 64)
	return append(b, ']'), nil
}

// UnmarshalJSON reads [End, ms].
func (a *Arrival) UnmarshalJSON(b []byte) error {
	var pair []json.Number
	if err := json.Unmarshal(b, &pair); err != nil {
		return err
	}
	if len(pair) != 2 {
		return errors.New("record: an SSE arrival is [endOffset, ms]")
	}
	end, err := pair[0].Int64()
	if err != nil {
		return err
	}
	ms, err := pair[1].Float64()
	if err != nil {
		return err
	}
	a.End, a.At = end, time.Duration(ms*float64(time.Millisecond))
	return nil
}

// ProbeHeader is the request header mcpdiag probe sends on each request it
// sends on purpose (over HTTP), naming the probe (ProbeHeaderValue).
// mcpdiag proxy records such a request with that Probe (ProbeFromHeader),
// so that report, matrix --from-records and the page judge a probe run
// seen through the proxy as they judge the probe's own records: its
// deliberate errors are probes, not the client's failures or rule
// violations.
const ProbeHeader = "Mcpdiag-Probe"

// maxProbeHeader bounds the ProbeHeader value the proxy reads.
const maxProbeHeader = 96

// ProbeHeaderValue is ProbeHeader's value for the probe of this kind at
// this index in the run of this seed: "KIND; seed=SEED; index=INDEX".
func ProbeHeaderValue(kind string, seed uint64, index int) string {
	return kind + "; seed=" + strconv.FormatUint(seed, 10) + "; index=" + strconv.Itoa(index)
}

// ProbeFromHeader returns the Probe a request's header h names by
// ProbeHeader (ProbeHeaderValue's form, at most 96 bytes), or nil when it
// names none. A value that is a kind alone (what mcpdiag sent before the
// seed and index were added) gives the kind, with seed "" and index 0.
func ProbeFromHeader(h map[string][]string) *Probe {
	v := h[ProbeHeader]
	if len(v) == 0 || v[0] == "" || len(v[0]) > maxProbeHeader {
		return nil
	}
	kind, rest, _ := strings.Cut(v[0], ";")
	kind = strings.TrimSpace(kind)
	if kind == "" {
		return nil
	}
	p := &Probe{Kind: kind, Detail: "marked by mcpdiag probe's " + ProbeHeader + " request header"}
	for rest != "" {
		var param string
		param, rest, _ = strings.Cut(rest, ";")
		name, val, _ := strings.Cut(strings.TrimSpace(param), "=")
		switch name {
		case "seed":
			if _, err := strconv.ParseUint(val, 10, 64); err == nil {
				p.Seed = val
			}
		case "index":
			if n, err := strconv.Atoi(val); err == nil && n >= 0 {
				p.Index = n
			}
		}
	}
	return p
}

// Probe identifies a request mcpdiag probe sent on purpose: the kind of
// probe (an argument against the tool's inputSchema, an unknown tool name,
// an envelope probe), the seed of the run and the probe's index, from which
// the same probe is made again, and the schema property it targets.
type Probe struct {
	// Kind is the probe's kind ("required-missing", "wrong-type",
	// "unknown-tool", "id-string", "notification", …; see package probe).
	Kind string `json:"kind"`
	// Seed is the run's seed, a decimal string; Index the probe's place in
	// the run (from 0).
	Seed  string `json:"seed"`
	Index int    `json:"index"`
	// Property is the inputSchema property the probe breaks ("" when it
	// targets none).
	Property string `json:"property,omitempty"`
	// Detail says what the probe did in a few words ("value 11 above
	// maximum 10").
	Detail string `json:"detail,omitempty"`
	// Answer is what came back for the probe, as the probe saw it, in the
	// same words over Streamable HTTP and stdio (ProbeAnswerResponse,
	// ProbeAnswerNone, ProbeAnswerSilent). The probe rules read it, not the
	// HTTP status: a stdio answer has none. "" in records written before
	// the fact existed (their HTTP status says it: see judge.FromRecord).
	Answer string `json:"answer,omitempty"`
	// Asked counts the requests the server sent the client while the probe
	// waited for its answer, on every channel the probe reads: the call's
	// response stream, the 2025-11-25 standalone GET stream, a stdio
	// server's stdout (answered on 2025-11-25, not on 2026-07-28, which
	// forbids them). The SSE facts count only the first.
	Asked int `json:"asked,omitempty"`
}

// The values of Probe.Answer.
const (
	// ProbeAnswerResponse: something came back for the probe: over HTTP a
	// response, whatever its status or body (a cut stream included); over
	// stdio a JSON-RPC line for it (for a notification, a line that
	// answers it, which MCP says it must not get).
	ProbeAnswerResponse = "response"
	// ProbeAnswerNone: nothing came back within the timeout, or the
	// connection or the server process ended first. For a notification
	// over stdio: the ping sent after it got no answer either.
	ProbeAnswerNone = "none"
	// ProbeAnswerSilent: a notification over stdio that no line answered,
	// shown by a ping sent after it whose answer came first: what MCP
	// prescribes (a notification gets no response).
	ProbeAnswerSilent = "silent"
)
