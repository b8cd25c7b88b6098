package proxy

import (
	"bytes"
	"fmt"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/wire"
)

// onLongServerLine judges a line of the server's stdout that is longer
// than the proxy holds for inspection (StdioOptions.MaxLineSize). The line
// was forwarded whole; what it was, its head and its tail tell:
//
//   - not JSON at its start: STDIO_NOISE, with its size;
//   - a request or notification of the server (a method in its first
//     members, no result or error): passed on, and a request is waited for
//     as any server request;
//   - a response whose id shows (in its first members, or as its last
//     member) and answers a pending request: that request's record, at
//     once, NOT_CLASSIFIED with the line's size and the limit;
//   - anything else: a record of its own, NOT_CLASSIFIED, that says it
//     answers no pending request (or that its id could not be read).
func (s *stdioProxy) onLongServerLine(head, tail []byte, size int64, clientGone bool) {
	now := time.Now()
	h := bytes.TrimLeft(head, " \t\r")
	if len(h) == 0 || h[0] != '{' && h[0] != '[' {
		s.onNoise(head, size, "")
		return
	}
	hm := scanHead(h)
	if hm.method && !hm.response {
		if hm.id == nil || wire.IDFromRaw(hm.id).IsNull() {
			return // a notification: not recorded, as any notification
		}
		// Noted as any server request (noteServerRequest): one of its id
		// still waiting is recorded superseded, not dropped.
		id := wire.IDFromRaw(bytes.Clone(hm.id))
		s.noteServerRequest(&stdioPending{start: now, line: bytes.Clone(bytes.TrimSpace(head)), msg: wire.Message{Kind: wire.MessageRequest, ID: id, Method: hm.methodName}, fromSrv: true})
		return
	}
	idRaw := hm.id
	if idRaw == nil {
		idRaw = tailID(tail)
	}
	details := &classify.NotClassifiedDetails{Cause: classify.CauseBodyTooLarge, Size: size, Limit: int64(s.maxLine)}
	limit := fmt.Sprintf("more than the %d bytes the proxy holds for inspection (--max-event-size); it was forwarded whole", s.maxLine)
	if idRaw != nil {
		id := wire.IDFromRaw(bytes.Clone(idRaw))
		s.mu.Lock()
		k, _ := answeredKey(s.pending, id)
		p := s.pending[k]
		delete(s.pending, k)
		s.mu.Unlock()
		if p != nil {
			res := &classify.Result{
				Outcome:   classify.NotClassified,
				Reason:    fmt.Sprintf("not classified: the response line is %d bytes, %s", size, limit),
				BodyBytes: size,
			}
			res.SetMethod(p.msg.Method)
			res.SetProtocol(p.protocol)
			res.SetNotClassified(details)
			s.finishResult(p, res, nil, nil, now, clientGone, fmt.Sprintf("the response (%d bytes) was forwarded to the client untouched; only its classification was given up", size))
			return
		}
		s.orphanLong(head, size, details, fmt.Sprintf("not classified: a line of %d bytes, %s, answers id %s, which no pending request has", size, limit, id.String()))
		return
	}
	s.orphanLong(head, size, details, fmt.Sprintf("not classified: a line of %d bytes, %s; its id could not be read, so it is matched to no request", size, limit))
}

// orphanLong records an oversized line that answers no pending request.
func (s *stdioProxy) orphanLong(head []byte, size int64, d *classify.NotClassifiedDetails, reason string) {
	rec := s.orphanRecord(head, classify.NotClassified, reason)
	if rec == nil {
		return
	}
	rec.ResponseBytes = size
	res := &classify.Result{Outcome: classify.NotClassified, Reason: reason}
	res.SetNotClassified(d)
	rec.SetResult(res)
	s.writeOrphan(rec)
}

// headMembers are the top-level members at the start of a message that
// could be read before the line was cut.
type headMembers struct {
	method, response bool
	methodName       string
	id               []byte
}

// scanHead reads the top-level members at the start of a JSON object
// until its first incomplete or unreadable member.
func scanHead(head []byte) headMembers {
	var hm headMembers
	i := wire.SkipSpace(head, 0)
	if i >= len(head) || head[i] != '{' {
		return hm
	}
	i = wire.SkipSpace(head, i+1)
	for i < len(head) && head[i] == '"' {
		end, _ := wire.ScanString(head, i)
		if end < 0 {
			break
		}
		key := string(wire.Key(head[i:end]))
		i = wire.SkipSpace(head, end)
		if i >= len(head) || head[i] != ':' {
			break
		}
		i = wire.SkipSpace(head, i+1)
		vend := wire.ScanValue(head, i)
		switch key {
		case "method":
			hm.method = true
			if vend > 0 {
				hm.methodName, _ = wire.StringValue(head[i:vend])
			}
		case "result", "error":
			hm.response = true
		}
		if vend < 0 {
			break
		}
		if key == "id" {
			hm.id = head[i:vend]
		}
		i = wire.SkipSpace(head, vend)
		if i >= len(head) || head[i] != ',' {
			break
		}
		i = wire.SkipSpace(head, i+1)
	}
	return hm
}

// tailMembers reads the top-level members at the end of a message whose
// head hides them (a request written with its params first: the method
// and id come after them). The tail must end in the object's last brace;
// the members are the longest run `"key":VALUE, …}` that starts after a
// comma or a brace and reads to that brace exactly. A member of a nested
// object is followed by its own brace before the line's, and a quote
// inside a string is escaped, so neither is taken for the message's.
func tailMembers(tail []byte) headMembers {
	var tm headMembers
	t := bytes.TrimRight(tail, " \t\r\n")
	if len(t) == 0 || t[len(t)-1] != '}' {
		return tm
	}
	t = bytes.TrimRight(t[:len(t)-1], " \t\r\n")
	for i := 0; i < len(t); i++ {
		if t[i] != '"' {
			continue
		}
		before := bytes.TrimRight(t[:i], " \t\r\n")
		if len(before) == 0 || before[len(before)-1] != ',' && before[len(before)-1] != '{' {
			continue
		}
		if m, ok := readMembers(t, i); ok {
			return m
		}
	}
	return tm
}

// readMembers reads `"key":VALUE` members separated by commas from t[i:]
// to t's end exactly; ok is false when t[i:] is not such a run.
func readMembers(t []byte, i int) (m headMembers, ok bool) {
	for {
		end, _ := wire.ScanString(t, i)
		if end < 0 {
			return headMembers{}, false
		}
		key := string(wire.Key(t[i:end]))
		i = wire.SkipSpace(t, end)
		if i >= len(t) || t[i] != ':' {
			return headMembers{}, false
		}
		i = wire.SkipSpace(t, i+1)
		vend := wire.ScanValue(t, i)
		if vend < 0 {
			return headMembers{}, false
		}
		switch key {
		case "method":
			m.method = true
			m.methodName, _ = wire.StringValue(t[i:vend])
		case "result", "error":
			m.response = true
		case "id":
			m.id = t[i:vend]
		}
		i = wire.SkipSpace(t, vend)
		if i == len(t) {
			return m, true
		}
		if t[i] != ',' {
			return headMembers{}, false
		}
		i = wire.SkipSpace(t, i+1)
		if i >= len(t) || t[i] != '"' {
			return headMembers{}, false
		}
	}
}

// tailID reads the id of a message whose last top-level member is its id:
// the line ends in `,"id":VALUE}` (spaces allowed). A nested "id" is never
// followed by the object's last brace and the line's end, so it is not
// taken for the message's.
func tailID(tail []byte) []byte {
	t := bytes.TrimRight(tail, " \t\r\n")
	if len(t) == 0 || t[len(t)-1] != '}' {
		return nil
	}
	t = bytes.TrimRight(t[:len(t)-1], " \t\r\n")
	for from := len(t); ; {
		i := bytes.LastIndex(t[:from], []byte(`"id"`))
		if i < 0 {
			return nil
		}
		from = i
		before := bytes.TrimRight(t[:i], " \t\r\n")
		if len(before) == 0 || before[len(before)-1] != ',' && before[len(before)-1] != '{' {
			continue
		}
		j := wire.SkipSpace(t, i+4)
		if j >= len(t) || t[j] != ':' {
			continue
		}
		j = wire.SkipSpace(t, j+1)
		end := wire.ScanValue(t, j)
		if end != len(t) {
			continue
		}
		v := wire.IDFromRaw(t[j:end])
		if !v.IsString() && !v.IsNumber() {
			return nil
		}
		return t[j:end]
	}
}
