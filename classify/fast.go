package classify

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"strconv"
	"unicode/utf8"

	"github.com/mcpdiag/mcpdiag/wire"
)

// fastLimit bounds the arrays and objects the fast path validates without
// descending into them (structuredContent, _meta, members it does not
// know): one no longer than this cannot nest deeply enough to reach
// encoding/json's limit of 10000 together with the few levels the fast path
// descends, so the fast path's verdict on validity equals json.Valid's on a
// body of any length. A larger one sends the body to the general path.
const fastLimit = 16 << 10

// fastScanValue is wire.ScanValue for a value the fast path does not
// descend into: -1 for an array or object longer than fastLimit.
func fastScanValue(data []byte, i int) int {
	end := wire.ScanValue(data, i)
	if end > 0 && end-i > fastLimit && (data[i] == '{' || data[i] == '[') {
		return -1
	}
	return end
}

// fastToolCall classifies the common tools/call response — a complete
// CallToolResult with text blocks, or one whose isError is true — in a single
// validating pass over the bytes. It reports false, having changed nothing in
// r, for anything else (errors, MRTR, other block types or members it does
// not check, escapes in the strings it compares, duplicate members…); the
// general path then classifies the body from scratch. FuzzFastPath checks
// that both paths agree wherever the fast one answers. event says data is
// the data of an SSE event (held by the stream's reader): the fast path
// then takes results only (an error's id decides whether the stream skips
// it) and copies the response it keeps.
func (c *Classifier) fastToolCall(r *Result, ex *Exchange, data []byte, event bool) bool {
	var f fastFacts
	if !c.fastScan(ex, data, event, r.Method(), r.Protocol(), &f) {
		return false
	}
	c.fastApply(r, ex, data, event, &f)
	return true
}

// The verdicts fastScan reads (fastFacts.kind).
const (
	fastTool  = iota + 1 // a CallToolResult: TOOL_SUCCESS or TOOL_ERROR
	fastInput            // an input_required result
	fastError            // an error response, for the general envelope rules
)

// fastFacts are what fastScan read of a body, for fastApply to write (and
// for Classify to choose the size of the Result's allocation by). It holds
// offsets into the body rather than slices, and is kept small: every call
// zeroes it.
type fastFacts struct {
	kind                      int
	idStart, idEnd            int // the response id's raw bytes, data[idStart:idEnd]
	hasResultType, hasIsError bool
	isErr, hasRequestState    bool
	hasID                     bool // fastError: an id member was read
	// fastError: the error object data[errStart:errEnd], its code, its
	// message data[msgStart:msgEnd] and its data member
	// data[dataStart:dataEnd] (dataEnd 0: none).
	errStart, errEnd   int
	errCode            int64
	msgStart, msgEnd   int
	dataStart, dataEnd int
	inputs             fastInputs
	// errStore (fastError) and inBuf (fastInput), when set, are the room
	// for the verdict's details in the Result's allocation (inBuf: at
	// least the bytes the input requests take packed).
	errStore *errorStore
	inBuf    []byte
}

// fastScan is the reading half of fastToolCall: it reads data, changes
// nothing but f, and reports whether fastApply can write the verdict. method
// and protocol are the Result's (the request's, with their defaults).
func (c *Classifier) fastScan(ex *Exchange, data []byte, event bool, method, protocol string, f *fastFacts) bool {
	if method != "tools/call" {
		return false
	}
	var (
		idStart, idEnd                int
		hasJSONRPC, hasID, hasResult  bool
		hasResultType, hasContent     bool
		inputRequired                 bool // resultType "input_required" (else "complete")
		hasIsError, isErr, hasStruct  bool
		structuredIsObject, protoText bool
		hasMeta, hasError             bool
		hasInputs, hasRequestState    bool
		errStart, errEnd              int
	)
	i := wire.SkipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return false
	}
	i = wire.SkipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return false
	}
	for {
		var key []byte
		if key, i = fastMember(data, i); i < 0 {
			return false
		}
		switch string(key) {
		case "jsonrpc":
			if hasJSONRPC || !hasPrefixAt(data, i, `"2.0"`) {
				return false
			}
			hasJSONRPC = true
			i += 5
		case "id":
			if hasID {
				return false
			}
			hasID = true
			idStart = i
			if c := data[i]; c == '"' {
				var esc bool
				if i, esc = wire.ScanString(data, i); i < 0 || esc {
					return false
				}
			} else if c != '-' && (c < '0' || c > '9') {
				return false
			} else if i = wire.ScanValue(data, i); i < 0 {
				return false
			}
			idEnd = i
		case "result":
			if hasResult || data[i] != '{' {
				return false
			}
			hasResult = true
			// The result object, member by member.
			i = wire.SkipSpace(data, i+1)
			if i < len(data) && data[i] == '}' {
				return false
			}
			for {
				var rkey []byte
				if rkey, i = fastMember(data, i); i < 0 {
					return false
				}
				switch string(rkey) {
				case "resultType":
					// Only the two values the fast path answers for, as
					// they are spelled (an escape in either, or any other
					// value, is the general path's).
					switch {
					case hasResultType:
						return false
					case hasPrefixAt(data, i, `"complete"`):
						i += len(`"complete"`)
					case hasPrefixAt(data, i, `"input_required"`):
						inputRequired, i = true, i+len(`"input_required"`)
					default:
						return false
					}
					hasResultType = true
				case "isError":
					if hasIsError {
						return false
					}
					hasIsError = true
					switch {
					case hasPrefixAt(data, i, "true"):
						isErr, i = true, i+4
					case hasPrefixAt(data, i, "false"):
						i += 5
					default:
						return false
					}
				case "content":
					if hasContent || data[i] != '[' {
						return false
					}
					hasContent = true
					if i, protoText = fastTextBlocks(data, i); i < 0 {
						return false
					}
				case "structuredContent":
					if hasStruct {
						return false
					}
					hasStruct, structuredIsObject = true, data[i] == '{'
					if i = fastScanValue(data, i); i < 0 {
						return false
					}
				case "_meta":
					if hasMeta || data[i] != '{' {
						return false
					}
					hasMeta = true
					if i = fastScanValue(data, i); i < 0 {
						return false
					}
				case "inputRequests":
					if hasInputs || data[i] != '{' {
						return false
					}
					hasInputs = true
					if i = f.inputs.read(data, i); i < 0 {
						return false
					}
				case "requestState":
					if hasRequestState || data[i] != '"' {
						return false
					}
					hasRequestState = true
					if i, _ = wire.ScanString(data, i); i < 0 {
						return false
					}
				case "taskId", "status":
					return false
				default:
					if i = fastScanValue(data, i); i < 0 {
						return false
					}
				}
				var closed bool
				if i, closed = fastAfter(data, i, '}'); i < 0 {
					return false
				} else if closed {
					break
				}
			}
		case "error":
			if hasError || data[i] != '{' {
				return false
			}
			hasError, errStart = true, i
			if i = fastErrorObject(data, i, f); i < 0 {
				return false
			}
			errEnd = i
		case "method":
			return false
		default:
			if i = fastScanValue(data, i); i < 0 {
				return false
			}
		}
		var closed bool
		if i, closed = fastAfter(data, i, '}'); i < 0 {
			return false
		} else if closed {
			break
		}
	}
	if i != len(data) && wire.SkipSpace(data, i) != len(data) {
		return false
	}
	f.idStart, f.idEnd = idStart, idEnd
	if hasError && !hasResult && hasJSONRPC && !event {
		// A well-framed error response: the general envelope rules take it
		// from here, without validating and scanning the body again.
		f.kind, f.hasID, f.errStart, f.errEnd = fastError, hasID, errStart, errEnd
		return true
	}
	if hasError || !hasJSONRPC || !hasID || !hasResult {
		return false
	}
	if !ex.ID.IsZero() && !wire.IDFromRaw(data[idStart:idEnd]).Equal(ex.ID) {
		return false
	}
	if inputRequired {
		// Left to the general path: 2025-11-25, and neither inputRequests
		// nor requestState.
		if protocol == Protocol2025 || (!hasInputs && !hasRequestState) {
			return false
		}
		f.kind, f.hasRequestState = fastInput, hasRequestState
		return true
	}
	if !hasContent || protoText || hasInputs || hasRequestState {
		return false
	}
	if hasStruct && !structuredIsObject && protocol == Protocol2025 {
		return false
	}
	f.kind, f.hasResultType, f.hasIsError, f.isErr = fastTool, hasResultType, hasIsError, isErr
	return true
}

// hasPrefixAt reports whether data[i:] starts with s.
func hasPrefixAt(data []byte, i int, s string) bool {
	return len(data)-i >= len(s) && string(data[i:i+len(s)]) == s
}

// jsonrpc20 is the jsonrpc member's value the fast path accepts.
var jsonrpc20 = []byte(`"2.0"`)

// fastApply writes the verdict fastScan read into r, exactly as the general
// path writes it.
func (c *Classifier) fastApply(r *Result, ex *Exchange, data []byte, event bool, f *fastFacts) {
	switch f.kind {
	case fastError:
		env := envelope{jsonrpc: jsonrpc20, hasJSONRPC: true, err: data[f.errStart:f.errEnd], hasError: true,
			errParsed: true, errCode: f.errCode, errMsg: data[f.msgStart:f.msgEnd], store: f.errStore}
		if f.dataEnd > 0 {
			env.errData = data[f.dataStart:f.dataEnd]
		}
		if f.hasID {
			env.id, env.hasID = data[f.idStart:f.idEnd], true
		}
		c.response(r, ex, &env)
		if c.KeepResponse {
			r.moreRare().response = c.ownBody(ex, data)
		}
		return
	case fastInput:
		r.jsonrpc = JSONRPCDetails{ID: r.ownID(data[f.idStart:f.idEnd])}
		r.codes |= codeJSONRPC
		r.codes |= rtypeInputRequired << codeRTShift
		buf := f.inBuf
		if buf == nil {
			// ClassifyInto, an event, a long key: r's room.
			buf = r.inputBuf(packedLen(f.inputs.packedRest()))
		}
		r.more().input = f.inputs.pack(buf, data, f.hasRequestState)
		r.Outcome = InputRequired
		r.Reason = inputReason(f.inputs.n, f.hasRequestState)
	default:
		r.jsonrpc = JSONRPCDetails{ID: r.ownID(data[f.idStart:f.idEnd])}
		r.codes |= codeJSONRPC
		if f.hasResultType {
			r.codes |= rtypeComplete << codeRTShift
		} else if codeFieldProto.index(r) == protoIndex2026 {
			r.addWarnNoResultType()
		}
		if f.hasIsError {
			r.SetIsError(f.isErr)
		}
		if f.isErr {
			r.Outcome = ToolError
			r.Reason = reasonToolError
		} else {
			r.Outcome = ToolSuccess
			r.Reason = reasonToolSuccess
		}
	}
	if c.KeepResponse {
		if event {
			r.moreRare().response = bytes.Clone(data)
		} else {
			r.moreRare().response = c.ownBody(ex, data)
		}
	}
}

// inputReasons are the general path's reasons for 0-4 input requests,
// without and with requestState, so the fast path builds none.
var inputReasons = func() (t [5][2]string) {
	for n := range t {
		for st, word := range []string{"absent", "present"} {
			t[n][st] = inputReasonText(n, word)
		}
	}
	return t
}()

func inputReasonText(n int, state string) string {
	return "the server needs input before it can finish: " + strconv.Itoa(n) + " input request(s), requestState " + state
}

func inputReason(n int, hasState bool) string {
	st := 0
	if hasState {
		st = 1
	}
	if n < len(inputReasons) {
		return inputReasons[n][st]
	}
	return inputReasonText(n, [2]string{"absent", "present"}[st])
}

// fastInputs holds the input requests the fast path read: up to
// len(reqs), with keys and modes as offsets into the body until details
// copies them out.
type fastInputs struct {
	n    int
	reqs [4]fastInputReq
}

// fastInputReq is one input request the fast path read.
type fastInputReq struct {
	keyStart, keyEnd   int32 // the key, data[keyStart:keyEnd]
	modeStart, modeEnd int32 // the mode's bytes (modeCopy)
	method             uint8 // an index in inputMethods
	mode               uint8 // modeNone, modeForm, modeURL, modeCopy
}

// The modes of a fastInputReq: none (Mode ""), "form" (spelled so, or
// absent from an elicitation), "url", or the bytes at modeStart:modeEnd.
const (
	modeNone = iota
	modeForm
	modeURL
	modeCopy
)

// inputMethods are the methods an input request of the fast path may have
// (fastInputReq.method), as they are spelled in the body with their quotes;
// inputMethodNames are the same without them.
var (
	inputMethods     = [...]string{`"elicitation/create"`, `"sampling/createMessage"`, `"roots/list"`}
	inputMethodNames = [len(inputMethods)]string{"elicitation/create", "sampling/createMessage", "roots/list"}
)

const (
	methodElicitation = iota
	methodSampling
	methodRoots
)

// read reads the inputRequests object at data[i] and returns the index
// after it, or -1 for anything the general path must judge: more than four
// requests, an escape or a byte that is not UTF-8 in a key or mode, a
// repeated member, a method other than elicitation/create,
// sampling/createMessage and roots/list, or a request the general path
// would refuse (no params, no string message, no messages array, a mode
// that is not a string).
func (in *fastInputs) read(data []byte, i int) int {
	i = wire.SkipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return i + 1
	}
	if len(data) > 1<<31-1 {
		return -1 // offsets are int32
	}
	for {
		key, j := fastMember(data, i)
		if j < 0 || in.n == len(in.reqs) || !validUTF8(key) || data[j] != '{' {
			return -1
		}
		for _, prev := range in.reqs[:in.n] {
			if string(data[prev.keyStart:prev.keyEnd]) == string(key) {
				return -1 // a repeated key: the general path keeps both, in order
			}
		}
		q := &in.reqs[in.n]
		*q = fastInputReq{keyStart: int32(i + 1), keyEnd: int32(i + 1 + len(key))}
		var hasMethod, hasParams, hasMode, hasMessage, hasMessages bool
		i = wire.SkipSpace(data, j+1)
		if i < len(data) && data[i] == '}' {
			return -1
		}
		for {
			var k []byte
			if k, i = fastMember(data, i); i < 0 {
				return -1
			}
			switch string(k) {
			case "method":
				// Only the three methods, as they are spelled (an
				// escape, or any other method, is the general path's).
				switch {
				case hasMethod:
					return -1
				case hasPrefixAt(data, i, inputMethods[methodElicitation]):
					q.method = methodElicitation
				case hasPrefixAt(data, i, inputMethods[methodSampling]):
					q.method = methodSampling
				case hasPrefixAt(data, i, inputMethods[methodRoots]):
					q.method = methodRoots
				default:
					return -1
				}
				hasMethod, i = true, i+len(inputMethods[q.method])
			case "params":
				if hasParams || data[i] != '{' {
					return -1
				}
				hasParams = true
				i = wire.SkipSpace(data, i+1)
				if i < len(data) && data[i] == '}' {
					i++
					break
				}
				for {
					var pk []byte
					if pk, i = fastMember(data, i); i < 0 {
						return -1
					}
					switch string(pk) {
					case "mode":
						if hasMode || data[i] != '"' {
							return -1
						}
						hasMode = true
						switch {
						case hasPrefixAt(data, i, `"form"`):
							q.mode, i = modeForm, i+len(`"form"`)
						case hasPrefixAt(data, i, `"url"`):
							q.mode, i = modeURL, i+len(`"url"`)
						default:
							end, esc := wire.ScanString(data, i)
							if end < 0 || esc || !validUTF8(data[i+1:end-1]) {
								return -1
							}
							q.mode, q.modeStart, q.modeEnd, i = modeCopy, int32(i+1), int32(end-1), end
						}
					case "message":
						if hasMessage || data[i] != '"' {
							return -1
						}
						hasMessage = true
						if i, _ = wire.ScanString(data, i); i < 0 {
							return -1
						}
					case "messages":
						if hasMessages || data[i] != '[' {
							return -1
						}
						hasMessages = true
						if i = fastScanValue(data, i); i < 0 {
							return -1
						}
					default:
						if i = fastScanValue(data, i); i < 0 {
							return -1
						}
					}
					var closed bool
					if i, closed = fastAfter(data, i, '}'); i < 0 {
						return -1
					} else if closed {
						break
					}
				}
			default:
				if i = fastScanValue(data, i); i < 0 {
					return -1
				}
			}
			var closed bool
			if i, closed = fastAfter(data, i, '}'); i < 0 {
				return -1
			} else if closed {
				break
			}
		}
		if !hasMethod {
			return -1
		}
		switch q.method {
		case methodElicitation:
			if !hasParams || !hasMessage {
				return -1
			}
			if !hasMode {
				q.mode = modeForm
			}
		case methodSampling:
			if !hasParams || !hasMessages {
				return -1
			}
			q.mode = modeNone
		case methodRoots:
			q.mode = modeNone
		}
		in.n++
		var closed bool
		if i, closed = fastAfter(data, i, '}'); i < 0 {
			return -1
		} else if closed {
			return i
		}
	}
}

// fastTextBlocks reads a content array whose blocks are all
// {"type":"text","text":"…"} (members in any order, no others) and returns
// the index after it. protoText reports a text that mentions "MCP error -32",
// which the general path inspects. -1 means "not for the fast path".
func fastTextBlocks(data []byte, i int) (end int, protoText bool) {
	i = wire.SkipSpace(data, i+1)
	if i < len(data) && data[i] == ']' {
		return i + 1, false
	}
	for {
		if i >= len(data) || data[i] != '{' {
			return -1, false
		}
		i = wire.SkipSpace(data, i+1)
		var hasType, hasText bool
		for {
			var key []byte
			if key, i = fastMember(data, i); i < 0 {
				return -1, false
			}
			switch string(key) {
			case "type":
				if hasType || len(data)-i < 6 || string(data[i:i+6]) != `"text"` {
					return -1, false
				}
				hasType, i = true, i+6
			case "text":
				if hasText || i >= len(data) || data[i] != '"' {
					return -1, false
				}
				hasText = true
				s := i
				if i, _ = wire.ScanString(data, i); i < 0 {
					return -1, false
				}
				if i-s > len(protoErrorText)+1 && bytes.Contains(data[s:i], []byte(protoErrorText)) {
					protoText = true
				}
			default:
				return -1, false
			}
			var closed bool
			if i, closed = fastAfter(data, i, '}'); i < 0 {
				return -1, false
			} else if closed {
				break
			}
		}
		if !hasType || !hasText {
			return -1, false
		}
		var closed bool
		if i, closed = fastAfter(data, i, ']'); i < 0 {
			return -1, false
		} else if closed {
			return i, protoText
		}
	}
}

// protoErrorText in a text block is what the general path inspects for a
// protocol error reported as a tool error.
const protoErrorText = "MCP error -32"

// fastErrorObject reads a JSON-RPC error object whose code is a plain
// integer and whose message is a string without escapes (members in any
// order, data optional, others validated and ignored) into f (errCode,
// msgStart/msgEnd, dataStart/dataEnd) and returns the index after it. -1
// means "not for the fast path": the general path decides, including
// whether the object is malformed.
func fastErrorObject(data []byte, i int, f *fastFacts) int {
	var hasCode, hasMsg, hasData bool
	i = wire.SkipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return -1
	}
	for {
		var key []byte
		if key, i = fastMember(data, i); i < 0 {
			return -1
		}
		switch string(key) {
		case "code":
			if hasCode {
				return -1
			}
			hasCode = true
			j, neg := i, false
			if data[j] == '-' {
				neg, j = true, j+1
			}
			start := j
			var n int64
			for j < len(data) && data[j] >= '0' && data[j] <= '9' && j-start < 15 {
				n = n*10 + int64(data[j]-'0')
				j++
			}
			// Only plain integers: no leading zero, fraction or exponent.
			if j == start || (data[start] == '0' && j-start > 1) || (j < len(data) && (data[j] == '.' || data[j] == 'e' || data[j] == 'E' || (data[j] >= '0' && data[j] <= '9'))) {
				return -1
			}
			if neg {
				n = -n
			}
			f.errCode, i = n, j
		case "message":
			if hasMsg || data[i] != '"' {
				return -1
			}
			hasMsg = true
			j, esc := wire.ScanString(data, i)
			// The general path turns bytes that are not UTF-8 into U+FFFD.
			if j < 0 || esc || !validUTF8(data[i+1:j-1]) {
				return -1
			}
			f.msgStart, f.msgEnd, i = i+1, j-1, j
		case "data":
			if hasData {
				return -1
			}
			hasData = true
			j := fastScanValue(data, i)
			if j < 0 {
				return -1
			}
			f.dataStart, f.dataEnd, i = i, j, j
		default:
			if i = fastScanValue(data, i); i < 0 {
				return -1
			}
		}
		var closed bool
		if i, closed = fastAfter(data, i, '}'); i < 0 {
			return -1
		} else if closed {
			break
		}
	}
	if !hasCode || !hasMsg {
		return -1
	}
	return i
}

// validUTF8 is utf8.Valid with the usual case, an ASCII string, a word
// at a time.
func validUTF8(b []byte) bool {
	for len(b) >= 8 {
		if binary.LittleEndian.Uint64(b)&swarHighs != 0 {
			return utf8.Valid(b) // all before b is ASCII: b starts a rune
		}
		b = b[8:]
	}
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return utf8.Valid(b)
		}
	}
	return true
}

// fastMember reads `"key" :` at data[i] and returns the key (without
// quotes) and the index of the value, or -1 when the key is not a plain
// string (escapes make the fast path give up) or no value follows.
func fastMember(data []byte, i int) (key []byte, value int) {
	if i >= len(data) || data[i] != '"' {
		return nil, -1
	}
	// The key, eight bytes at a time: the first quote, backslash or
	// control character ends it (only a quote ends it well). Keys are
	// short, so this mostly takes one or two words and no call.
	j := i + 1
	for {
		if j+8 <= len(data) {
			x := binary.LittleEndian.Uint64(data[j:])
			q := x ^ ('"' * swarOnes)
			bs := x ^ ('\\' * swarOnes)
			m := ((q - swarOnes) &^ q) | ((bs - swarOnes) &^ bs) | ((x - 0x20*swarOnes) &^ x)
			if m &= swarHighs; m == 0 {
				j += 8
				continue
			}
			j += bits.TrailingZeros64(m) >> 3
		} else {
			for j < len(data) && data[j] != '"' && data[j] != '\\' && data[j] >= 0x20 {
				j++
			}
			if j >= len(data) {
				return nil, -1
			}
		}
		break
	}
	if data[j] != '"' {
		return nil, -1 // an escape (the general path decodes it) or invalid
	}
	key = data[i+1 : j]
	j++
	if j < len(data) && data[j] == ':' {
		j++
	} else {
		j = wire.SkipSpace(data, j)
		if j >= len(data) || data[j] != ':' {
			return nil, -1
		}
		j++
	}
	if j < len(data) && data[j] > ' ' {
		return key, j
	}
	j = wire.SkipSpace(data, j)
	if j >= len(data) {
		return nil, -1
	}
	return key, j
}

// swarOnes and swarHighs are the word constants of the eight-bytes-at-a-time
// scans (as in wire's string validator): a term (x - ones) &^ x, masked by
// highs, marks the bytes of x that are zero; the lowest mark is exact.
const (
	swarOnes  = 0x0101010101010101
	swarHighs = 0x8080808080808080
)

// fastAfter reads what follows a member or element at data[i]: a comma
// (closed false, i at the next item) or closer (closed true, i after it).
// -1 for anything else.
func fastAfter(data []byte, i int, closer byte) (next int, closed bool) {
	// The usual case inline: the closer, or a comma and the next item,
	// with no space around them.
	if i+1 < len(data) {
		if c := data[i]; c == closer {
			return i + 1, true
		} else if c == ',' && data[i+1] > ' ' {
			return i + 1, false
		}
	}
	return fastAfterSpace(data, i, closer)
}

// fastAfterSpace is fastAfter for any spacing.
func fastAfterSpace(data []byte, i int, closer byte) (next int, closed bool) {
	i = wire.SkipSpace(data, i)
	if i < len(data) {
		if c := data[i]; c == closer {
			return i + 1, true
		} else if c == ',' {
			return wire.SkipSpace(data, i+1), false
		}
	}
	return -1, false
}

// skipWS is wire.SkipSpace with the usual case, no space at all, inline.
func skipWS(data []byte, i int) int {
	if i < len(data) && data[i] > ' ' {
		return i
	}
	return wire.SkipSpace(data, i)
}
