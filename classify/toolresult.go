package classify

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/mcpdiag/mcpdiag/wire"
)

// mrtrMethods are the requests that may answer input_required
// (MCP 2026-07-28 MRTR: "Servers MUST NOT send InputRequiredResult responses
// on any other client requests").
func mrtrMethod(m string) bool {
	return m == "tools/call" || m == "prompts/get" || m == "resources/read"
}

// result judges the result member of a response with the right id.
func (c *Classifier) result(r *Result, ex *Exchange, res []byte) {
	toolCall := r.Method() == "tools/call"
	invalid := InvalidResult
	if toolCall {
		invalid = InvalidToolResult
	}
	if wire.Kind(res) != '{' {
		r.Outcome = invalid
		r.Reason = "result is not a JSON object"
		return
	}
	var f resultFields
	f.scan(res)
	resultType := "complete"
	if f.hasResultType {
		s, ok := wire.StringValue(f.resultType)
		if !ok {
			r.Outcome = invalid
			r.Reason = fmt.Sprintf("resultType is %s, not a string", f.resultType)
			return
		}
		resultType = s
		r.setResultType(s)
	} else if r.Protocol() == Protocol2026 {
		r.addWarnNoResultType()
	}
	switch resultType {
	case "complete":
	case "input_required":
		if !mrtrMethod(r.Method()) {
			r.Outcome = invalid
			r.Reason = fmt.Sprintf("resultType input_required is not allowed for %s (only tools/call, prompts/get, resources/read)", r.Method())
			return
		}
		c.inputRequired(r, &f, invalid)
		return
	case "task":
		if toolCall && declared(ex.Extensions, TasksExtension) {
			c.task(r, &f)
			return
		}
		r.Outcome = invalid
		if toolCall {
			r.Reason = "resultType \"task\" without the tasks extension declared for this request is unknown to the client"
		} else {
			r.Reason = fmt.Sprintf("resultType \"task\" is only defined for tools/call, not %s", r.Method())
		}
		return
	default:
		r.Outcome = invalid
		r.Reason = fmt.Sprintf("resultType %q is unknown to the client (spec: an unrecognized resultType MUST be considered invalid)", resultType)
		return
	}
	if !toolCall {
		r.Outcome = ResultSuccess
		r.Reason = fmt.Sprintf("%s returned a result", r.Method())
		return
	}
	c.callToolResult(r, &f)
}

func declared(exts []string, id string) bool {
	for _, e := range exts {
		if e == id {
			return true
		}
	}
	return false
}

type resultFields struct {
	resultType, content, isError, structured, inputRequests, requestState, taskID, status, meta []byte
	hasResultType, hasContent, hasIsError, hasStructured, hasInputRequests, hasRequestState     bool
	hasTaskID, hasStatus, hasMeta                                                               bool
}

func (f *resultFields) scan(obj []byte) {
	_ = wire.EachField(obj, func(k, v []byte) bool {
		switch string(wire.Key(k)) {
		case "resultType":
			f.resultType, f.hasResultType = v, true
		case "content":
			f.content, f.hasContent = v, true
		case "isError":
			f.isError, f.hasIsError = v, true
		case "structuredContent":
			f.structured, f.hasStructured = v, true
		case "inputRequests":
			f.inputRequests, f.hasInputRequests = v, true
		case "requestState":
			f.requestState, f.hasRequestState = v, true
		case "taskId":
			f.taskID, f.hasTaskID = v, true
		case "status":
			f.status, f.hasStatus = v, true
		case "_meta":
			f.meta, f.hasMeta = v, true
		}
		return true
	})
}

func (c *Classifier) inputRequired(r *Result, f *resultFields, invalid Outcome) {
	if r.Protocol() == Protocol2025 {
		r.warn(WarnInputRequired2025, "an input_required result on a 2025-11-25 exchange")
	}
	if !f.hasInputRequests && !f.hasRequestState {
		r.Outcome = invalid
		r.Reason = "input_required without inputRequests and without requestState (the server MUST include at least one)"
		return
	}
	if f.hasRequestState && wire.Kind(f.requestState) != '"' {
		r.Outcome = invalid
		r.Reason = "requestState is not a string"
		return
	}
	if f.hasMeta && wire.Kind(f.meta) != '{' {
		r.Outcome = invalid
		r.Reason = "_meta is not an object"
		return
	}
	in := &InputDetails{HasRequestState: f.hasRequestState, Requests: []InputRequest{}}
	if f.hasInputRequests {
		if wire.Kind(f.inputRequests) != '{' {
			r.Outcome = invalid
			r.Reason = "inputRequests is not an object"
			return
		}
		problem := ""
		_ = wire.EachField(f.inputRequests, func(k, v []byte) bool {
			key, _ := wire.StringValue(k)
			if wire.Kind(v) != '{' {
				problem = fmt.Sprintf("inputRequests[%q] is not an object", key)
				return false
			}
			method, hasMethod := wire.Field(v, "method")
			m, ok := wire.StringValue(method)
			if !hasMethod || !ok {
				problem = fmt.Sprintf("inputRequests[%q] has no string method", key)
				return false
			}
			params, hasParams := wire.Field(v, "params")
			if hasParams && wire.Kind(params) != '{' {
				problem = fmt.Sprintf("inputRequests[%q].params is not an object", key)
				return false
			}
			req := InputRequest{Key: key, Method: m}
			switch m {
			case "elicitation/create":
				if !hasParams {
					problem = fmt.Sprintf("inputRequests[%q] (elicitation/create) has no params", key)
					return false
				}
				req.Mode = "form"
				if mode, ok := wire.Field(params, "mode"); ok {
					req.Mode, _ = wire.StringValue(mode)
				}
				if msg, ok := wire.Field(params, "message"); !ok || wire.Kind(msg) != '"' {
					problem = fmt.Sprintf("inputRequests[%q] (elicitation/create) has no string message", key)
					return false
				}
			case "sampling/createMessage":
				if !hasParams {
					problem = fmt.Sprintf("inputRequests[%q] (sampling/createMessage) has no params", key)
					return false
				}
				msgs, ok := wire.Field(params, "messages")
				if !ok || wire.Kind(msgs) != '[' {
					problem = fmt.Sprintf("inputRequests[%q] (sampling/createMessage) has no messages array", key)
					return false
				}
			case "roots/list":
			default:
				problem = fmt.Sprintf("inputRequests[%q] asks for %q, which is not elicitation/create, sampling/createMessage or roots/list", key, m)
				return false
			}
			in.Requests = append(in.Requests, req)
			return true
		})
		if problem != "" {
			r.Outcome = invalid
			r.Reason = problem
			return
		}
	}
	r.keepInput(in)
	r.Outcome = InputRequired
	state := "absent"
	if in.HasRequestState {
		state = "present"
	}
	r.Reason = "the server needs input before it can finish: " + strconv.Itoa(len(in.Requests)) + " input request(s), requestState " + state
}

func (c *Classifier) task(r *Result, f *resultFields) {
	id, ok1 := wire.StringValue(f.taskID)
	st, ok2 := wire.StringValue(f.status)
	if !f.hasTaskID || !ok1 || !f.hasStatus || !ok2 {
		r.Outcome = InvalidToolResult
		r.Reason = "a task result needs a string taskId and a string status"
		return
	}
	r.moreRare().task = &TaskDetails{TaskID: id, Status: st}
	r.Outcome = TaskCreated
	r.Reason = fmt.Sprintf("the server created task %s (status %s); poll it with tasks/get", id, st)
}

// The reasons of the two application outcomes, shared with the fast path.
const (
	reasonToolError   = "the tool ran and reported an error (isError: true); show it to the model, do not retry blindly"
	reasonToolSuccess = "the tool call completed"
)

// mcpErrorText is a JSON-RPC error code in a tool error's text, compiled
// on the first tool error (most processes classify none).
var mcpErrorText = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`MCP error -32[0-9]{3}`) })

// protocolErrorText returns the JSON-RPC error code a tool error's text
// carries ("MCP error -32602", as the TypeScript SDK v1 words an error it
// turns into an isError result), and false when it carries none but
// errors of invalid arguments on protocol (the exchange's revision) 2025-11-25 or
// later: SEP-1303 (MCP 2025-11-25 tools §Error Handling) makes input
// validation errors tool execution errors, so the SDK's "MCP error -32602:
// Input validation error: …" and "… Invalid arguments for tool X: …" are
// what the spec asks for there, not a protocol failure dressed as a tool
// error. Before 2025-11-25 invalid arguments were a protocol error. Every
// code in the text is looked at, not only the first.
func protocolErrorText(s, protocol string) (string, bool) {
	sep1303 := protocol >= wire.Protocol2025 // revisions are dates: 2025-11-25 or later
	for _, loc := range mcpErrorText().FindAllStringIndex(s, -1) {
		code := s[loc[0]:loc[1]]
		if sep1303 && code == "MCP error -32602" {
			rest := strings.TrimPrefix(s[loc[1]:], ": ")
			if strings.HasPrefix(rest, "Input validation error") || strings.HasPrefix(rest, "Invalid arguments for tool ") {
				continue
			}
		}
		return code, true
	}
	return "", false
}

func (c *Classifier) callToolResult(r *Result, f *resultFields) {
	if !f.hasContent {
		r.Outcome = InvalidToolResult
		r.Reason = "content is missing (CallToolResult requires a content array)"
		return
	}
	if wire.Kind(f.content) != '[' {
		r.Outcome = InvalidToolResult
		r.Reason = "content is not an array"
		return
	}
	if f.hasIsError && !isBool(f.isError) {
		r.Outcome = InvalidToolResult
		r.Reason = fmt.Sprintf("isError is %s, not a boolean", abbreviate(f.isError))
		return
	}
	if f.hasStructured && r.Protocol() == Protocol2025 && wire.Kind(f.structured) != '{' {
		r.Outcome = InvalidToolResult
		r.Reason = "structuredContent is not an object (required by 2025-11-25)"
		return
	}
	if f.hasMeta && wire.Kind(f.meta) != '{' {
		r.Outcome = InvalidToolResult
		r.Reason = "_meta is not an object"
		return
	}
	isErr := f.hasIsError && wire.Kind(f.isError) == 't'
	problem := ""
	protocolText := false
	_ = wire.EachElement(f.content, func(i int, block []byte) bool {
		var p string
		var typ string
		typ, p = checkBlock(block)
		if p != "" {
			problem = fmt.Sprintf("content[%d] %s", i, p)
			return false
		}
		switch typ {
		case "text", "image", "audio", "resource_link", "resource":
		default:
			r.warn(WarnUnknownContentBlock, "content[%d] has unknown type %q", i, typ)
		}
		if isErr && typ == "text" && !protocolText {
			if t, ok := wire.Field(block, "text"); ok && bytes.Contains(t, []byte("MCP error -32")) {
				s, _ := wire.StringValue(t)
				if code, ok := protocolErrorText(s, r.Protocol()); ok {
					protocolText = true
					r.warn(WarnProtocolErrorAsTool, "the tool error text carries %q: a protocol failure dressed as a tool error", code)
				}
			}
		}
		return true
	})
	if problem != "" {
		r.Outcome = InvalidToolResult
		r.Reason = problem
		return
	}
	if f.hasIsError {
		r.SetIsError(isErr)
	}
	if isErr {
		r.Outcome = ToolError
		r.Reason = reasonToolError
		return
	}
	r.Outcome = ToolSuccess
	r.Reason = reasonToolSuccess
}

func isBool(v []byte) bool {
	k := wire.Kind(v)
	return k == 't' || k == 'f'
}

func abbreviate(v []byte) string {
	if len(v) > 40 {
		return string(v[:37]) + "..."
	}
	return string(v)
}

// checkBlock validates one content block and returns its type, or a problem.
// Members that a block type does not define are not checked: the schema
// allows additional members, so a text block with a numeric "title" is valid.
func checkBlock(block []byte) (typ, problem string) {
	if wire.Kind(block) != '{' {
		return "", "is not an object"
	}
	var t []byte
	var hasType bool
	// text, data, mimeType, uri, name, resource, annotations, _meta, title,
	// description, size, icons
	var fields [12][]byte
	var seen [12]bool
	_ = wire.EachField(block, func(k, v []byte) bool {
		i := -1
		switch string(wire.Key(k)) {
		case "type":
			t, hasType = v, true
		case "text":
			i = 0
		case "data":
			i = 1
		case "mimeType":
			i = 2
		case "uri":
			i = 3
		case "name":
			i = 4
		case "resource":
			i = 5
		case "annotations":
			i = 6
		case "_meta":
			i = 7
		case "title":
			i = 8
		case "description":
			i = 9
		case "size":
			i = 10
		case "icons":
			i = 11
		}
		if i >= 0 {
			fields[i], seen[i] = v, true
		}
		return true
	})
	s, ok := wire.StringValue(t)
	if !hasType || !ok {
		return "", "has no string type"
	}
	str := func(i int, name string) string {
		if !seen[i] {
			return fmt.Sprintf("(%s) is missing %s", s, name)
		}
		if wire.Kind(fields[i]) != '"' {
			return fmt.Sprintf("(%s) has a non-string %s", s, name)
		}
		return ""
	}
	optStr := func(i int, name string) string {
		if seen[i] && wire.Kind(fields[i]) != '"' {
			return fmt.Sprintf("(%s) has a non-string %s", s, name)
		}
		return ""
	}
	var p string
	switch s {
	case "text":
		p = str(0, "text")
	case "image", "audio":
		if p = str(1, "data"); p == "" {
			p = str(2, "mimeType")
		}
	case "resource_link":
		p = str(3, "uri")
		if p == "" {
			p = str(4, "name")
		}
		if p == "" {
			p = optStr(2, "mimeType")
		}
		if p == "" {
			p = optStr(8, "title")
		}
		if p == "" {
			p = optStr(9, "description")
		}
		if p == "" && seen[10] && (wire.Kind(fields[10]) != '0' || !wire.IsIntegerNumber(fields[10])) {
			p = "(resource_link) has a size that is not an integer"
		}
		if p == "" && seen[11] {
			p = checkIcons(fields[11])
		}
	case "resource":
		p = checkEmbedded(seen[5], fields[5])
	default:
		return s, ""
	}
	if p == "" && seen[6] {
		p = checkAnnotations(fields[6])
	}
	if p == "" && seen[7] && wire.Kind(fields[7]) != '{' {
		p = "has a _meta that is not an object"
	}
	return s, p
}

// checkIcons validates a resource link's icons: an array of Icon objects
// with a string src, and when present a string mimeType, an array of string
// sizes and a theme of "light" or "dark".
func checkIcons(icons []byte) string {
	if wire.Kind(icons) != '[' {
		return "(resource_link) has icons that are not an array"
	}
	p := ""
	_ = wire.EachElement(icons, func(i int, icon []byte) bool {
		if wire.Kind(icon) != '{' {
			p = fmt.Sprintf("(resource_link) has icons[%d] that is not an object", i)
			return false
		}
		hasSrc := false
		_ = wire.EachField(icon, func(k, v []byte) bool {
			switch string(wire.Key(k)) {
			case "src":
				hasSrc = true
				if wire.Kind(v) != '"' {
					p = fmt.Sprintf("(resource_link) has icons[%d] with a non-string src", i)
				}
			case "mimeType":
				if wire.Kind(v) != '"' {
					p = fmt.Sprintf("(resource_link) has icons[%d] with a non-string mimeType", i)
				}
			case "theme":
				if !wire.StringIs(v, "light") && !wire.StringIs(v, "dark") {
					p = fmt.Sprintf("(resource_link) has icons[%d] with a theme that is not \"light\" or \"dark\"", i)
				}
			case "sizes":
				if !isStringArray(v) {
					p = fmt.Sprintf("(resource_link) has icons[%d] with sizes that are not an array of strings", i)
				}
			}
			return p == ""
		})
		if p == "" && !hasSrc {
			p = fmt.Sprintf("(resource_link) has icons[%d] without src", i)
		}
		return p == ""
	})
	return p
}

// isStringArray reports whether v is an array whose elements are all strings.
func isStringArray(v []byte) bool {
	if wire.Kind(v) != '[' {
		return false
	}
	ok := true
	_ = wire.EachElement(v, func(_ int, e []byte) bool {
		ok = wire.Kind(e) == '"'
		return ok
	})
	return ok
}

// checkEmbedded validates the resource of an embedded resource block: a
// TextResourceContents or a BlobResourceContents.
func checkEmbedded(present bool, res []byte) string {
	if !present {
		return "(resource) is missing resource"
	}
	if wire.Kind(res) != '{' {
		return "(resource) has a resource that is not an object"
	}
	var uri, text, blob, mime, meta []byte
	var hasURI, hasText, hasBlob, hasMime, hasMeta bool
	_ = wire.EachField(res, func(k, v []byte) bool {
		switch string(wire.Key(k)) {
		case "uri":
			uri, hasURI = v, true
		case "text":
			text, hasText = v, true
		case "blob":
			blob, hasBlob = v, true
		case "mimeType":
			mime, hasMime = v, true
		case "_meta":
			meta, hasMeta = v, true
		}
		return true
	})
	switch {
	case !hasURI || wire.Kind(uri) != '"':
		return "(resource) has a resource without a string uri"
	case hasMime && wire.Kind(mime) != '"':
		return "(resource) has a resource with a non-string mimeType"
	case hasMeta && wire.Kind(meta) != '{':
		return "(resource) has a resource whose _meta is not an object"
	case hasText && wire.Kind(text) == '"', hasBlob && wire.Kind(blob) == '"':
		return ""
	}
	return "(resource) has a resource with neither a string text nor a string blob"
}

func checkAnnotations(a []byte) string {
	if wire.Kind(a) != '{' {
		return "has annotations that are not an object"
	}
	p := ""
	_ = wire.EachField(a, func(k, v []byte) bool {
		switch string(wire.Key(k)) {
		case "audience":
			if wire.Kind(v) != '[' {
				p = "has annotations.audience that is not an array"
				return false
			}
			_ = wire.EachElement(v, func(_ int, e []byte) bool {
				if !wire.StringIs(e, "user") && !wire.StringIs(e, "assistant") {
					p = "has an annotations.audience entry that is not \"user\" or \"assistant\""
					return false
				}
				return true
			})
		case "priority":
			if wire.Kind(v) != '0' || !priorityInRange(v) {
				p = "has annotations.priority that is not a number from 0 to 1"
			}
		case "lastModified":
			if wire.Kind(v) != '"' {
				p = "has annotations.lastModified that is not a string"
			}
		}
		return p == ""
	})
	return p
}
