package record

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/mcpdiag/mcpdiag/wire"
)

// appendRecord appends r's JSON line (with its "\n") exactly as encodeLine
// writes it — encoding/json with SetEscapeHTML(false) — without reflection
// for the fields an exchange record carries; the rare nested members (auth,
// fault, params, network, input, task, notClassified, decision) go through
// encoding/json one by one, which encodes them as it would inside the
// record. ok is false for what it leaves to encodeLine whole: a time that
// is not UTC or outside the years 0-9999, an id or errorData that is not
// valid JSON or holds white space. TestAppendRecordMatchesEncodeLine and
// FuzzAppendRecord compare the two.
func appendRecord(b []byte, r *Record) (_ []byte, ok bool) {
	return appendRecordHeaders(b, r, nil)
}

// appendRecordHeaders is appendRecord; with h, the headers written are
// h's, each value redacted by h.red as it is written (r's header maps are
// not read), the bytes encodeLine writes for r with its headers redacted.
func appendRecordHeaders(b []byte, r *Record, h *lineHeaders) (_ []byte, ok bool) {
	b = append(b, `{"v":`...)
	b = strconv.AppendInt(b, int64(r.V), 10)
	b = appendKeyString(b, `,"kind":`, string(r.Kind))
	b = appendKeyString(b, `,"id":`, r.ID)
	b = appendOmitString(b, `,"callId":`, r.CallID)
	b = appendOmitInt(b, `,"seq":`, int64(r.Seq))
	b = appendOmitInt(b, `,"exchanges":`, int64(r.Exchanges))
	b = appendOmitString(b, `,"attemptOf":`, r.AttemptOf)
	if !r.Time.IsZero() {
		if r.Time.Location() != time.UTC || r.Time.Year() < 0 || r.Time.Year() > 9999 {
			return b, false
		}
		b = append(b, `,"time":"`...)
		b = appendTime(b, r.Time)
		b = append(b, '"')
	}
	b = appendKeyString(b, `,"client":`, r.Client)
	b = appendKeyString(b, `,"protocolVersion":`, r.ProtocolVersion)
	b = appendKeyString(b, `,"scenario":`, r.Scenario)
	b = appendKeyString(b, `,"method":`, r.Method)
	b = append(b, `,"postCount":`...)
	b = strconv.AppendInt(b, int64(r.PostCount), 10)
	b = append(b, `,"httpStatuses":`...)
	if r.HTTPStatuses == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, s := range r.HTTPStatuses {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, int64(s), 10)
		}
		b = append(b, ']')
	}
	b = append(b, `,"jsonrpc":{"id":`...)
	if b, ok = appendID(b, r.JSONRPC.ID); !ok {
		return b, false
	}
	b = append(b, `,"errorCode":`...)
	if r.JSONRPC.ErrorCode == nil {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendInt(b, *r.JSONRPC.ErrorCode, 10)
	}
	b = appendOmitString(b, `,"errorName":`, r.JSONRPC.ErrorName)
	if !r.JSONRPC.ResponseID.IsZero() {
		b = append(b, `,"responseId":`...)
		if b, ok = appendID(b, r.JSONRPC.ResponseID); !ok {
			return b, false
		}
	}
	b = append(b, `},"resultType":`...)
	if r.ResultType == "" {
		b = append(b, "null"...)
	} else {
		b = appendString(b, string(r.ResultType), true) // json.Marshal in its MarshalJSON escapes HTML
	}
	b = appendKeyString(b, `,"outcome":`, string(r.Outcome))
	b = appendKeyString(b, `,"retryOrigin":`, string(r.RetryOrigin))
	b = appendOmitString(b, `,"layer":`, string(r.Layer))
	b = appendOmitString(b, `,"reason":`, r.Reason)
	b = appendOmitString(b, `,"tool":`, r.Tool)
	b = appendOmitString(b, `,"argsHash":`, r.ArgsHash)
	if r.ClientCapabilities != nil {
		b = appendStrings(b, `,"clientCapabilities":`, r.ClientCapabilities)
	}
	if r.ClientCapabilitiesTruncated {
		b = append(b, `,"clientCapabilitiesTruncated":true`...)
	}
	b = appendOmitString(b, `,"session":`, r.Session)
	b = appendOmitString(b, `,"conn":`, r.Conn)
	b = appendOmitString(b, `,"httpMethod":`, r.HTTPMethod)
	b = appendOmitString(b, `,"url":`, r.URL)
	b = appendOmitInt(b, `,"status":`, int64(r.Status))
	b = appendOmitString(b, `,"contentType":`, r.ContentType)
	if r.IsError != nil {
		b = appendKeyBool(b, `,"isError":`, *r.IsError)
	}
	b = appendOmitString(b, `,"errorMessage":`, r.ErrorMessage)
	if len(r.ErrorData) > 0 {
		if !wire.Valid(r.ErrorData) {
			return b, false
		}
		b = append(b, `,"errorData":`...)
		var buf bytes.Buffer
		if json.Compact(&buf, r.ErrorData) != nil {
			return b, false
		}
		b = append(b, buf.Bytes()...)
	}
	if r.ErrorDataTruncated {
		b = append(b, `,"errorDataTruncated":true`...)
	}
	if r.ErrorDataCutRedacted {
		b = append(b, `,"errorDataCutRedacted":true`...)
	}
	b = appendOmitString(b, `,"retryAfter":`, r.RetryAfter)
	if r.Timings != (Timings{}) {
		b = appendTimings(b, r.Timings)
	}
	if r.SSE != nil {
		b = appendSSE(b, r.SSE)
	}
	if r.Network != nil || r.Input != nil || r.Task != nil || r.NotClassified != nil || r.Auth != nil || r.Decision != nil {
		if b, ok = appendMembers(b, r); !ok {
			return b, false
		}
	}
	if r.EraFallback {
		b = append(b, `,"eraFallback":true`...)
	}
	b = appendOmitString(b, `,"answeredOn":`, r.AnsweredOn)
	if r.StreamAnswer != nil {
		if b, ok = appendReflect(b, `,"streamAnswer":`, r.StreamAnswer); !ok {
			return b, false
		}
	}
	if r.StreamAnswers != nil {
		if b, ok = appendReflect(b, `,"streamAnswers":`, r.StreamAnswers); !ok {
			return b, false
		}
	}
	if r.Resume != nil {
		if b, ok = appendReflect(b, `,"resume":`, r.Resume); !ok {
			return b, false
		}
	}
	b = appendOmitInt(b, `,"policyRetries":`, int64(r.PolicyRetries))
	b = appendOmitInt(b, `,"inputRounds":`, int64(r.InputRounds))
	if r.ClientAnswer {
		b = append(b, `,"clientAnswer":true`...)
	}
	if r.AnswerRefused {
		b = append(b, `,"answerRefused":true`...)
	}
	if len(r.Warnings) > 0 {
		b = append(b, `,"warnings":[`...)
		for i, w := range r.Warnings {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendKeyString(b, `{"code":`, w.Code)
			b = appendKeyString(b, `,"message":`, w.Message)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if h != nil {
		b = appendHeaderFields(b, `,"requestHeaders":`, h.req, h.vals)
		b = appendHeaderFields(b, `,"responseHeaders":`, h.resp, h.vals)
	} else {
		b = appendHeader(b, `,"requestHeaders":`, r.RequestHeaders)
		b = appendHeader(b, `,"responseHeaders":`, r.ResponseHeaders)
	}
	b = appendOmitInt(b, `,"requestBytes":`, r.RequestBytes)
	b = appendOmitInt(b, `,"responseBytes":`, r.ResponseBytes)
	b = appendBody(b, `,"requestBody":`, r.RequestBody)
	b = appendBody(b, `,"responseBody":`, r.ResponseBody)
	b = appendOmitInt(b, `,"dropped":`, r.Dropped)
	b = appendOmitInt(b, `,"summarized":`, r.Summarized)
	b = appendOmitInt(b, `,"batch":`, r.Batch)
	if len(r.Flags) > 0 {
		b = append(b, `,"flags":[`...)
		for i, f := range r.Flags {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, string(f), false)
		}
		b = append(b, ']')
	}
	if r.Fault != nil {
		if b, ok = appendReflect(b, `,"fault":`, r.Fault); !ok {
			return b, false
		}
	}
	if r.Params != nil {
		if b, ok = appendReflect(b, `,"params":`, r.Params); !ok {
			return b, false
		}
	}
	if r.Probe != nil {
		if b, ok = appendReflect(b, `,"probe":`, r.Probe); !ok {
			return b, false
		}
	}
	if len(r.SSEArrivals) > 0 {
		b = append(b, `,"sseArrivals":[`...)
		for i, a := range r.SSEArrivals {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '[')
			b = strconv.AppendInt(b, a.End, 10)
			b = append(b, ',')
			b = appendMs(b, a.At)
			b = append(b, ']')
		}
		b = append(b, ']')
	}
	b = appendOmitString(b, `,"note":`, r.Note)
	return append(b, '}', '\n'), true
}

// The members of a record that few records carry, written apart so that
// appendRecordHeaders' frame stays small (its stack is the finishing
// goroutine's).

func appendTimings(b []byte, t0 Timings) []byte {
	b = append(b, `,"timings":{`...)
	n := len(b)
	for _, t := range []struct {
		key string
		d   Duration
	}{{`"headersMs":`, t0.Headers}, {`"firstEventMs":`, t0.FirstEvent}, {`"totalMs":`, t0.Total}} {
		if t.d == 0 {
			continue
		}
		if len(b) > n {
			b = append(b, ',')
		}
		b = append(b, t.key...)
		b = appendMs(b, time.Duration(t.d))
	}
	b = append(b, '}')
	return b
}

func appendSSE(b []byte, s *SSE) []byte {
	b = append(b, `,"sse":{"events":`...)
	b = strconv.AppendInt(b, int64(s.Events), 10)
	b = append(b, `,"notifications":`...)
	b = strconv.AppendInt(b, int64(s.Notifications), 10)
	b = append(b, `,"progress":`...)
	b = strconv.AppendInt(b, int64(s.Progress), 10)
	b = append(b, `,"messages":`...)
	b = strconv.AppendInt(b, int64(s.Messages), 10)
	b = append(b, `,"requests":`...)
	b = strconv.AppendInt(b, int64(s.Requests), 10)
	b = append(b, `,"comments":`...)
	b = strconv.AppendInt(b, int64(s.Comments), 10)
	b = appendKeyBool(b, `,"terminal":`, s.Terminal)
	b = appendOmitInt(b, `,"terminalEvent":`, int64(s.TerminalEvent))
	b = appendOmitInt(b, `,"afterTerminal":`, int64(s.AfterTerminal))
	b = appendOmitInt(b, `,"skipped":`, int64(s.Skipped))
	if s.Unterminated {
		b = append(b, `,"unterminated":true`...)
	}
	b = appendOmitString(b, `,"end":`, s.End)
	b = append(b, '}')
	return b
}

// appendMembers writes the nested members encoding/json writes, in the
// record's order: network, input, task, notClassified, auth, decision.
func appendMembers(b []byte, r *Record) (_ []byte, ok bool) {
	for _, m := range []struct {
		key string
		v   any
		set bool
	}{
		{`,"network":`, r.Network, r.Network != nil},
		{`,"input":`, r.Input, r.Input != nil},
		{`,"task":`, r.Task, r.Task != nil},
		{`,"notClassified":`, r.NotClassified, r.NotClassified != nil},
		{`,"auth":`, r.Auth, r.Auth != nil},
		{`,"decision":`, r.Decision, r.Decision != nil},
	} {
		if m.set {
			if b, ok = appendReflect(b, m.key, m.v); !ok {
				return b, false
			}
		}
	}
	return b, true
}

// appendMs writes d in milliseconds with microsecond precision, the bytes
// Duration.MarshalJSON and Arrival.MarshalJSON write: strconv.AppendFloat's
// shortest form of float64(us)/1e6, us being d rounded to the microsecond.
// Below maxDecimalMs microseconds that form is the number of microseconds
// over 1,000 in decimal, at most three decimals, no trailing zero: the
// quotient is the float nearest that decimal, whose spacing there (under
// 2^-10 ms) is finer than the decimal's last digit, so no other decimal as
// short rounds to it. appendMs writes it from the integer, without the
// float's shortest-digit search (two or three calls a record, ~0.3 µs
// each on the benchmark machine, docs/benchmarks.md perf14);
// TestAppendMsMatchesFloat and FuzzAppendMs hold it to AppendFloat's bytes.
func appendMs(b []byte, d time.Duration) []byte {
	us := d.Round(time.Microsecond)
	n := int64(us / time.Microsecond)
	if n <= -maxDecimalMs || n >= maxDecimalMs {
		return strconv.AppendFloat(b, float64(us)/float64(time.Millisecond), 'f', -1, 64)
	}
	if n < 0 {
		b = append(b, '-')
		n = -n
	}
	b = strconv.AppendInt(b, n/1000, 10)
	frac := n % 1000
	if frac == 0 {
		return b
	}
	digits := [3]byte{byte('0' + frac/100), byte('0' + frac/10%10), byte('0' + frac%10)}
	end := 3
	for digits[end-1] == '0' {
		end--
	}
	b = append(b, '.')
	return append(b, digits[:end]...)
}

// maxDecimalMs bounds the microseconds appendMs writes as a decimal: 2^43
// µs (8.8e15 ns, under 2^53, so the float of the nanoseconds is exact;
// 8.8e9 ms, where a float's spacing is under 2^-10, finer than 0.001).
const maxDecimalMs = 1 << 43

// appendID writes id as its MarshalJSON does (null when absent), when its
// text is valid JSON without white space (encoding/json would compact it).
func appendID(b []byte, id wire.ID) ([]byte, bool) {
	if id.IsZero() {
		return append(b, "null"...), true
	}
	raw := id.Raw()
	if !wire.Valid(raw) || bytes.ContainsAny(raw, " \t\r\n") {
		return b, false
	}
	return append(b, raw...), true
}

func appendReflect(b []byte, key string, v any) ([]byte, bool) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return b, false
	}
	b = append(b, key...)
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...), true
}

func appendHeader(b []byte, key string, h http.Header) []byte {
	if len(h) == 0 {
		return b
	}
	b = append(b, key...)
	b = append(b, '{')
	var small [16]string
	keys := small[:0]
	for k := range h {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k, false)
		b = append(b, ':')
		vs := h[k]
		if vs == nil {
			b = append(b, "null"...)
			continue
		}
		b = append(b, '[')
		for j, v := range vs {
			if j > 0 {
				b = append(b, ',')
			}
			b = appendString(b, v, false)
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

// appendHeaderFields writes headers read by readHeaders as appendHeader
// writes their map, with the values redacted by lineHeaders.redact (vals).
func appendHeaderFields(b []byte, key string, fs []headerField, vals []string) []byte {
	if len(fs) == 0 {
		return b
	}
	b = append(b, key...)
	b = append(b, '{')
	for i, f := range fs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, f.name, false)
		b = append(b, ':')
		if f.values == nil {
			b = append(b, "null"...)
			continue
		}
		b = append(b, '[')
		for j, v := range vals[f.out : f.out+len(f.values)] {
			if j > 0 {
				b = append(b, ',')
			}
			b = appendString(b, v, false)
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

func appendBody(b []byte, key string, body *Body) []byte {
	if body == nil {
		return b
	}
	b = append(b, key...)
	b = appendKeyString(b, `{"text":`, body.Text)
	if body.Truncated {
		b = append(b, `,"truncated":true`...)
	}
	if body.CutRedacted {
		b = append(b, `,"cutRedacted":true`...)
	}
	return append(b, '}')
}

// The small writers below are not inlined: inlined at their ~45 call
// sites they made appendRecordHeaders' frame 1160 bytes instead of 344,
// and the frame is on the stack of the goroutine that finishes an
// exchange (TestEncodeStackDepth).
//
//go:noinline
func appendKeyString(b []byte, key, s string) []byte {
	b = append(b, key...)
	return appendString(b, s, false)
}

// appendStrings appends key and ss as a JSON array of strings.
//
//go:noinline
func appendStrings(b []byte, key string, ss []string) []byte {
	b = append(b, key...)
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, s, false)
	}
	return append(b, ']')
}

//go:noinline
func appendOmitString(b []byte, key, s string) []byte {
	if s == "" {
		return b
	}
	return appendKeyString(b, key, s)
}

//go:noinline
func appendOmitInt(b []byte, key string, n int64) []byte {
	if n == 0 {
		return b
	}
	b = append(b, key...)
	return strconv.AppendInt(b, n, 10)
}

//go:noinline
func appendKeyBool(b []byte, key string, v bool) []byte {
	b = append(b, key...)
	return strconv.AppendBool(b, v)
}

const hexDigits = "0123456789abcdef"

// appendString writes s as a JSON string exactly as encoding/json does:
// `"` and `\` escaped, control characters as \b \f \n \r \t or \u00XX,
// bytes that are not UTF-8 as \ufffd, U+2028 and U+2029 escaped, and, with
// escapeHTML, <, > and & as \u003c, \u003e and \u0026.
func appendString(b []byte, s string, escapeHTML bool) []byte {
	b = append(b, '"')
	start, i := 0, 0
	if !escapeHTML {
		i = plainPrefix(s)
	}
	for i < len(s) {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && (!escapeHTML || (c != '<' && c != '>' && c != '&')) {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			if e := shortEscape[c]; e != 0 {
				b = append(b, '\\', e)
			} else {
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			if !escapeHTML {
				i += plainPrefix(s[i:])
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			if !escapeHTML {
				i += plainPrefix(s[i:])
			}
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// shortEscape maps the ASCII bytes encoding/json writes with a two-byte
// escape to the letter after the backslash; 0 means \u00XX. A table and
// not a switch, so the encoder does not read as a line-end parse to
// wire.TestNoSSEParsingOutsideWire.
var shortEscape = [utf8.RuneSelf]byte{'\\': '\\', '"': '"', '\b': 'b', '\f': 'f', '\n': 'n', '\r': 'r', '\t': 't'}
