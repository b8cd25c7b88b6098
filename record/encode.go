package record

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/internal/visible"
	"github.com/mcpdiag/mcpdiag/wire"
)

// Limits.
const (
	// DefaultBodyLimit caps each recorded body excerpt and ErrorData:
	// 1 MiB, as go-sdk's SSE line cap and Go's DefaultMaxHeaderBytes.
	DefaultBodyLimit = 1 << 20
	// DefaultMaxLineSize is the longest line the encoder writes and the
	// reader accepts by default. The encoder keeps its lines below it by
	// dropping body texts when needed.
	DefaultMaxLineSize = 8 << 20
)

// Errors of the encoder.
var (
	// ErrRecordTooLarge is returned for a record whose line exceeds the
	// maximum line size even without its bodies.
	ErrRecordTooLarge = errors.New("record: record too large")
	// ErrSecretInLine is returned when a registered secret survived
	// redaction; the line is not written. It means a bug in this package.
	ErrSecretInLine = errors.New("record: a registered secret survived redaction; line not written")
)

// Encoder turns records into redacted JSON lines. The zero value uses the
// Default redactor and the default limits. An Encoder is safe for concurrent
// use.
type Encoder struct {
	// Redactor scrubs the records; Default when nil.
	Redactor *Redactor
	// BodyLimit caps each body excerpt and ErrorData in bytes;
	// DefaultBodyLimit when 0. A negative limit records no body text.
	BodyLimit int
	// MaxLineSize bounds a line; DefaultMaxLineSize when 0.
	MaxLineSize int
	// Now returns the time for records with a zero Time; time.Now when nil.
	Now func() time.Time
}

func (e *Encoder) redactor() *Redactor {
	if e == nil || e.Redactor == nil {
		return Default
	}
	return e.Redactor
}

func (e *Encoder) bodyLimit() int {
	if e == nil || e.BodyLimit == 0 {
		return DefaultBodyLimit
	}
	return e.BodyLimit
}

func (e *Encoder) maxLine() int {
	if e == nil || e.MaxLineSize <= 0 {
		return DefaultMaxLineSize
	}
	return e.MaxLineSize
}

// Marshal encodes rec as one redacted JSON line (ending in "\n") with a zero
// Encoder.
func Marshal(rec *Record) ([]byte, error) {
	var e Encoder
	return e.Encode(rec)
}

// Encode returns rec as one JSON line ending in "\n", redacted. It never
// modifies rec. It fills in the schema version, a new ID when rec has none,
// the time when it is zero, retryOrigin "none" on an exchange or call that
// has none, and [] for absent httpStatuses. When the line would exceed
// MaxLineSize, the body texts and ErrorData are dropped (and marked
// truncated); when it still does, the error is ErrRecordTooLarge.
func (e *Encoder) Encode(rec *Record) ([]byte, error) {
	return e.encodeInto(nil, rec)
}

// encodeInto is Encode writing the line into dst's room when it is large
// enough (Async reuses its lines' buffers); the line may be another slice.
func (e *Encoder) encodeInto(dst []byte, rec *Record) ([]byte, error) {
	if rec == nil {
		return nil, errors.New("record: nil record")
	}
	st := encodeStates.Get().(*encodeState)
	defer st.put()
	// The headers are read once (names sorted, rules looked up): for the
	// secrets they carry, then redacted as they are written.
	st.h.req = readHeaders(st.h.req, rec.RequestHeaders)
	st.h.resp = readHeaders(st.h.resp, rec.ResponseHeaders)
	red := e.redactor().withFieldSecrets(st.h.req, st.h.resp)
	st.h.redact(red)
	c := &st.c
	e.sanitizeInto(c, red, rec, false)
	if c.V == 0 {
		c.V = SchemaVersion
	}
	if c.ID == "" {
		c.ID = NewID()
	}
	if c.Time.IsZero() {
		if e != nil && e.Now != nil {
			c.Time = e.Now()
		} else {
			c.Time = time.Now()
		}
	}
	c.Time = c.Time.UTC()
	if c.RetryOrigin == "" && (c.Kind == KindExchange || c.Kind == KindCall) {
		c.RetryOrigin = OriginNone
	}
	if c.HTTPStatuses == nil {
		c.HTTPStatuses = []int{}
	}
	line, err := encodeRecord(dst, c, &st.h)
	if err != nil {
		return nil, err
	}
	// A peer's invisible characters as \u escapes: the same JSON value, and
	// a file that cat, less or grep shows as it is (visible.JSON; nothing
	// is copied when no byte is DEL or from 0x80 on).
	line = visible.JSON(line)
	if len(line) > e.maxLine() {
		for _, b := range []**Body{&c.RequestBody, &c.ResponseBody} {
			if *b != nil {
				*b = &Body{Truncated: true, CutRedacted: true}
			}
		}
		if c.ErrorData != nil {
			c.ErrorData, c.ErrorDataTruncated, c.ErrorDataCutRedacted = nil, true, true
		}
		if line, err = encodeRecord(line, c, &st.h); err != nil {
			return nil, err
		}
		line = visible.JSON(line)
		if len(line) > e.maxLine() {
			return nil, fmt.Errorf("%w: %d bytes without bodies, limit %d", ErrRecordTooLarge, len(line), e.maxLine())
		}
	}
	return red.checkLine(line)
}

// encodeRecord encodes r as one JSON line: by hand (appendRecord) where it can,
// else by reflection (encodeLine); the bytes are the same. The line is
// written into dst's room when it is large enough for the expected size.
// With h, r's header maps are not redacted yet: they are redacted as
// written, from h.
func encodeRecord(dst []byte, r *Record, h *lineHeaders) ([]byte, error) {
	size := 1024 + len(r.Reason) + len(r.Note) + len(r.URL)
	if r.RequestBody != nil {
		size += len(r.RequestBody.Text) + len(r.RequestBody.Text)/8
	}
	if r.ResponseBody != nil {
		size += len(r.ResponseBody.Text) + len(r.ResponseBody.Text)/8
	}
	if cap(dst) < size {
		dst = make([]byte, 0, size)
	}
	if b, ok := appendRecordHeaders(dst[:0], r, h); ok {
		return b, nil
	}
	// encoding/json takes the record as an interface, which would move
	// every record given to encodeRecord to the heap (Encode's sanitized
	// copy, ~900 bytes per record): only this rare path pays for a copy.
	cp := *r
	if h != nil {
		cp.RequestHeaders = h.red.headersShared(cp.RequestHeaders)
		cp.ResponseHeaders = h.red.headersShared(cp.ResponseHeaders)
	}
	return encodeLine(&cp)
}

func encodeLine(r *Record) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return nil, fmt.Errorf("record: encode: %w", err)
	}
	return buf.Bytes(), nil
}

// checkLine is the last line of defence: a registered secret that is still
// in the line is replaced; if that breaks the JSON, the line is refused.
func (r *Redactor) checkLine(line []byte) ([]byte, error) {
	changed := false
	for _, sec := range r.secretList() {
		if bytes.Contains(line, []byte(sec.variant)) {
			line = bytes.ReplaceAll(line, []byte(sec.variant), []byte(r.Mask(sec.raw)))
			changed = true
		}
	}
	if changed && !json.Valid(line) {
		return nil, ErrSecretInLine
	}
	return line, nil
}

// sanitize returns a redacted copy of rec; rec itself is not modified and
// no slice or map of the copy is shared with it where a value changed.
func (e *Encoder) sanitize(red *Redactor, rec *Record) Record {
	var c Record
	e.sanitizeInto(&c, red, rec, true)
	return c
}

// sanitizeInto is sanitize writing the copy into c; with headers false,
// c keeps rec's header maps as they are (the caller redacts them).
func (e *Encoder) sanitizeInto(c *Record, red *Redactor, rec *Record, headers bool) {
	s := red.Scrub
	*c = *rec

	c.Kind = Kind(s(string(c.Kind)))
	c.ID, c.CallID, c.AttemptOf = s(c.ID), s(c.CallID), s(c.AttemptOf)
	c.Client, c.ProtocolVersion, c.Scenario, c.Method = s(c.Client), s(c.ProtocolVersion), s(c.Scenario), s(c.Method)
	var idWarnings []Warning
	c.JSONRPC.ID, idWarnings = utf8ID(red, c.JSONRPC.ID, "request", idWarnings)
	c.JSONRPC.ResponseID, idWarnings = utf8ID(red, c.JSONRPC.ResponseID, "response", idWarnings)
	c.JSONRPC.ID = scrubID(red, c.JSONRPC.ID)
	c.JSONRPC.ResponseID = scrubID(red, c.JSONRPC.ResponseID)
	c.JSONRPC.ErrorName = s(c.JSONRPC.ErrorName)
	c.ResultType = ResultType(s(string(c.ResultType)))
	c.Outcome = classify.Outcome(s(string(c.Outcome)))
	c.RetryOrigin = RetryOrigin(s(string(c.RetryOrigin)))
	c.Layer = classify.Layer(s(string(c.Layer)))
	c.Reason, c.Tool, c.ArgsHash = s(c.Reason), s(c.Tool), s(c.ArgsHash)
	c.ClientCapabilities = scrubShared(s, c.ClientCapabilities)
	if caps, cut := capNames(c.ClientCapabilities); cut {
		c.ClientCapabilities, c.ClientCapabilitiesTruncated = caps, true
	}
	c.Conn, c.AnsweredOn = s(c.Conn), s(c.AnsweredOn)
	c.Session = HashSession(c.Session)
	c.HTTPMethod, c.URL = s(c.HTTPMethod), red.URL(c.URL)
	c.ContentType, c.ErrorMessage, c.RetryAfter, c.Note = s(c.ContentType), s(c.ErrorMessage), s(c.RetryAfter), s(c.Note)
	if len(c.ErrorData) > 0 {
		c.ErrorData, c.ErrorDataTruncated = e.errorData(red, c.ErrorData, c.ErrorDataTruncated && !c.ErrorDataCutRedacted, c.ErrorDataTruncated)
	}
	c.ErrorDataCutRedacted = c.ErrorDataTruncated
	if c.SSE != nil {
		// Shared with rec unless its one string changed: a copy was an
		// allocation for every event stream's record ("eof" never changes).
		if end := s(c.SSE.End); end != c.SSE.End {
			v := *c.SSE
			v.End = end
			c.SSE = &v
		}
	}
	sanitizeMembers(c, red)
	if c.Warnings != nil {
		ws := make([]Warning, len(c.Warnings))
		for i, w := range c.Warnings {
			ws[i] = Warning{Code: s(w.Code), Message: s(w.Message)}
		}
		c.Warnings = ws
	}
	if idWarnings != nil {
		c.Warnings = append(slices.Clip(c.Warnings), idWarnings...)
	}
	if headers {
		c.RequestHeaders = red.headersShared(c.RequestHeaders)
		c.ResponseHeaders = red.headersShared(c.ResponseHeaders)
	}
	c.RequestBody = e.body(red, c.RequestBody)
	c.ResponseBody = e.body(red, c.ResponseBody)
}

// sanitizeResume returns a redacted copy of v.
func sanitizeResume(red *Redactor, v *Resume) *Resume {
	s := red.Scrub
	c := *v
	c.After, c.LastEventID = s(c.After), s(c.LastEventID)
	if v.RetryMs != nil {
		ms := *v.RetryMs
		c.RetryMs = &ms
	}
	if v.Responses != nil {
		c.Responses = make([]StreamResponse, len(v.Responses))
		for i, r := range v.Responses {
			r.ID = scrubID(red, r.ID)
			r.EventID, r.Method, r.Tool, r.Reason = s(r.EventID), s(r.Method), s(r.Tool), s(r.Reason)
			r.Outcome, r.Layer = classify.Outcome(s(string(r.Outcome))), classify.Layer(s(string(r.Layer)))
			if r.IsError != nil {
				b := *r.IsError
				r.IsError = &b
			}
			if r.ErrorCode != nil {
				n := *r.ErrorCode
				r.ErrorCode = &n
			}
			c.Responses[i] = r
		}
	}
	return &c
}

// sanitizeMembers redacts the members few records carry, for sanitizeInto:
// in a frame of its own, off the path every record takes.
func sanitizeMembers(c *Record, red *Redactor) {
	s := red.Scrub
	if c.Network != nil {
		v := *c.Network
		v.Error, v.Phase, v.Cause = s(v.Error), s(v.Phase), classify.NetCause(s(string(v.Cause)))
		c.Network = &v
	}
	if c.Input != nil {
		v := Input{HasRequestState: c.Input.HasRequestState, Requests: make([]InputRequest, len(c.Input.Requests))}
		for i, q := range c.Input.Requests {
			v.Requests[i] = InputRequest{Key: s(q.Key), Method: s(q.Method), Mode: s(q.Mode)}
		}
		c.Input = &v
	}
	if c.Task != nil {
		c.Task = &Task{TaskID: s(c.Task.TaskID), Status: s(c.Task.Status)}
	}
	if c.StreamAnswer != nil {
		v := *c.StreamAnswer
		v.NotSeen = s(v.NotSeen)
		c.StreamAnswer = &v
	}
	if c.Resume != nil {
		c.Resume = sanitizeResume(red, c.Resume)
	}
	if c.NotClassified != nil {
		v := *c.NotClassified
		v.Cause = s(v.Cause)
		c.NotClassified = &v
	}
	if c.Auth != nil {
		v := *c.Auth
		for _, f := range []*string{&v.Step, &v.Issuer, &v.Resource, &v.Scope, &v.Granted, &v.Grant, &v.ClientAuth, &v.Registration,
			&v.ClientID, &v.PKCE, &v.Via, &v.Error, &v.ErrorDescription, &v.Failure, &v.Rule, &v.TokenResource, &v.TokenIssuer, &v.Server, &v.For, &v.RefreshIn, &v.Note} {
			*f = s(*f)
		}
		v.Issuer, v.Resource, v.TokenResource, v.TokenIssuer = red.URL(v.Issuer), red.URL(v.Resource), red.URL(v.TokenResource), red.URL(v.TokenIssuer)
		v.For = red.URL(v.For)
		if v.InURL != nil {
			names := make([]string, len(v.InURL))
			for i, n := range v.InURL {
				names[i] = s(n)
			}
			v.InURL = names
		}
		c.Auth = &v
	}
	if c.Decision != nil {
		c.Decision = &Decision{Action: s(c.Decision.Action), DelayMs: c.Decision.DelayMs, Reason: s(c.Decision.Reason)}
	}
	if c.Flags != nil {
		fl := make(Flags, len(c.Flags))
		for i, f := range c.Flags {
			fl[i] = Flag(s(string(f)))
		}
		c.Flags = fl
	}
	if c.Fault != nil {
		c.Fault = sanitizeFault(red, c.Fault)
	}
	if c.Params != nil {
		v := *c.Params
		v.Meta = scrubAll(s, v.Meta)
		if v.Meta == nil {
			v.Meta = []string{}
		}
		v.InputResponses = scrubAll(s, v.InputResponses)
		v.MetaProtocolVersion, v.Capabilities, v.RequestState = s(v.MetaProtocolVersion), s(v.Capabilities), s(v.RequestState)
		c.Params = &v
	}
	if c.Probe != nil {
		v := *c.Probe
		v.Kind, v.Seed, v.Property, v.Detail, v.Answer = s(v.Kind), s(v.Seed), s(v.Property), s(v.Detail), s(v.Answer)
		c.Probe = &v
	}
}

func (e *Encoder) body(red *Redactor, b *Body) *Body {
	if b == nil {
		return nil
	}
	raw, dropped := b.Text, false
	if b.Truncated && !b.CutRedacted {
		// Cut before it was redacted (a capture's limit, a stream that
		// stopped; or a record file written without the mark): its last
		// token may be part of a credential the patterns cannot judge
		// (redact_cut.go). A body this encoder wrote carries the mark:
		// its cut was made after redaction, and it is read as written.
		raw, dropped = trimUnfinished(raw)
	}
	text, cut := red.Body([]byte(raw), e.bodyLimit())
	if dropped && !cut {
		text += Redacted
	}
	truncated := b.Truncated || cut
	return &Body{Text: text, Truncated: truncated, CutRedacted: truncated}
}

// errorData redacts and caps the raw JSON of a JSON-RPC error's data. Data
// that is too large, or not JSON, becomes a JSON string holding a redacted
// excerpt. With unfinished, the data was cut before it was redacted (and
// not marked ErrorDataCutRedacted): its last token is dropped, as a cut
// body's is (redact_cut.go), whether it is raw text or a JSON string
// holding an excerpt (a record file read back).
func (e *Encoder) errorData(red *Redactor, data json.RawMessage, unfinished, truncated bool) (json.RawMessage, bool) {
	limit := e.bodyLimit()
	if unfinished && limit >= 0 {
		raw := string(data)
		var str string
		if json.Valid(data) {
			if json.Unmarshal(data, &str) != nil {
				unfinished = false // an object or array: whole, nothing cut in it
			} else {
				raw = str
			}
		}
		if unfinished {
			t, dropped := trimUnfinished(raw)
			text, _ := red.Body([]byte(t), limit)
			if dropped {
				text += Redacted
			}
			var buf bytes.Buffer
			writeJSONString(&buf, text)
			return buf.Bytes(), true
		}
	}
	if json.Valid(data) {
		out := red.redactJSON(data)
		if limit > 0 && len(out) <= limit {
			var buf bytes.Buffer
			if json.Compact(&buf, out) == nil {
				return buf.Bytes(), truncated
			}
		}
	}
	if limit < 0 {
		return nil, true
	}
	text, cut := red.Body(data, limit)
	var buf bytes.Buffer
	writeJSONString(&buf, text)
	return buf.Bytes(), truncated || cut
}

// sanitizeFault returns a scrubbed copy of f: the endpoint is redacted as a
// URL (its query holds the scenario's params, which may carry anything a user
// put there), every string scrubbed.
func sanitizeFault(red *Redactor, f *Fault) *Fault {
	s := red.Scrub
	v := *f
	v.Selection, v.IssuedState = s(v.Selection), s(v.IssuedState)
	v.Endpoint = red.URL(v.Endpoint)
	v.Fired = scrubAll(s, v.Fired)
	if v.Fired == nil {
		v.Fired = []string{}
	}
	v.Decisions = make([]FaultDecision, len(f.Decisions))
	for i, d := range f.Decisions {
		d.Scenario, d.Why = s(d.Scenario), s(d.Why)
		d.Notes = scrubAll(s, d.Notes)
		d.DelayMs = slices.Clone(d.DelayMs)
		if d.Draw != nil {
			x := *d.Draw
			d.Draw = &x
		}
		v.Decisions[i] = d
	}
	if f.Count != nil {
		c := *f.Count
		v.Count = &c
	}
	if f.Counters != nil {
		c := FaultCounters{Posts: f.Counters.Posts, Methods: map[string]int{}, Tools: map[string]int{}}
		for k, n := range f.Counters.Methods {
			c.Methods[s(k)] = n
		}
		for k, n := range f.Counters.Tools {
			c.Tools[s(k)] = n
		}
		v.Counters = &c
	}
	return &v
}

// scrubShared returns ss scrubbed: ss itself when no string changes (the
// capability names of every 2026-07-28 record, copied for none), else a
// scrubbed copy (nil for nil, empty for empty).
func scrubShared(s func(string) string, ss []string) []string {
	for _, x := range ss {
		if s(x) != x {
			return scrubAll(s, ss)
		}
	}
	return ss
}

// MaxCapabilityNameBytes bounds each name of a record's ClientCapabilities
// as a line writes it: a longer name is cut to at most this many bytes, at
// a UTF-8 boundary, and ends in "…", and ClientCapabilitiesTruncated is
// set, so that a client declaring a name of a mebibyte does not make
// every record carry it. The name is cut after it was scrubbed: the cut
// never leaves the start of a credential the redactor would have judged
// whole.
const MaxCapabilityNameBytes = 64

// capNames returns names with each name longer than MaxCapabilityNameBytes
// cut (see there), sorted and each once again, and whether it cut one;
// names itself when it cut none (names is never modified).
func capNames(names []string) ([]string, bool) {
	i := slices.IndexFunc(names, func(n string) bool { return len(n) > MaxCapabilityNameBytes })
	if i < 0 {
		return names, false
	}
	out := slices.Clone(names)
	for j, n := range out[i:] {
		if len(n) > MaxCapabilityNameBytes {
			k := MaxCapabilityNameBytes
			for k > 0 && !utf8.RuneStart(n[k]) {
				k--
			}
			out[i+j] = n[:k] + "…"
		}
	}
	slices.Sort(out)
	return slices.Compact(out), true
}

// scrubAll returns the scrubbed copy of ss (nil for nil).
func scrubAll(s func(string) string, ss []string) []string {
	if ss == nil {
		return nil
	}
	out := make([]string, len(ss))
	for i, x := range ss {
		out[i] = s(x)
	}
	return out
}

// IDNotUTF8 is the code of the warning a record gets when a JSON-RPC id on
// the wire was a string whose bytes are not UTF-8: a record line is UTF-8
// JSON, which cannot hold those bytes, so the id is recorded with U+FFFD in
// their place and the warning gives the bytes as sent, in hex.
const IDNotUTF8 = "id-not-utf8"

// utf8ID returns id as it can be recorded: a string id that is not UTF-8
// with U+FFFD for each run of bytes that are not, and a warning (appended to ws)
// that says which id (the request's, the response's) and its bytes. The
// bytes are not given when red masks a credential in the id: in hex they
// would carry it past the redaction of the id itself (scrubID).
func utf8ID(red *Redactor, id wire.ID, which string, ws []Warning) (wire.ID, []Warning) {
	raw := id.Raw()
	if !id.IsString() || utf8.Valid(raw) {
		return id, ws
	}
	fixed := wire.IDFromRaw([]byte(strings.ToValidUTF8(string(raw), "\ufffd")))
	bytesAs := fmt.Sprintf("its bytes as sent were %x", raw)
	if v, ok := wire.StringValue(fixed.Raw()); !ok || red.Scrub(v) != v {
		bytesAs = "its bytes as sent are not given, since it holds a credential (redacted in the id)"
	}
	ws = append(ws, Warning{Code: IDNotUTF8, Message: fmt.Sprintf(
		"the %s id is not UTF-8 (JSON text must be UTF-8, RFC 8259 §8.1): %s; it is recorded with U+FFFD in place of the bytes that are not", which, bytesAs)})
	return fixed, ws
}

// scrubID scrubs a string id; numbers and null are kept.
func scrubID(red *Redactor, id wire.ID) wire.ID {
	if !id.IsString() {
		return id
	}
	s, ok := wire.StringValue(id.Raw())
	if !ok {
		return id
	}
	if clean := red.Scrub(s); clean != s {
		return wire.StringID(clean)
	}
	return id
}
