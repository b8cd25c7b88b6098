package proxy

import (
	"bytes"

	"github.com/mcpdiag/mcpdiag/record"
)

// ExtensionLines wraps the sink of a record.Async (or any LineWriter) so
// that the proxy's extension members, which travel through the record
// encoder inside the record's note, are written as members of their own.
// Today there is one: "sseArrivals", the SSE event arrival times of a
// --record-bodies full record, as [[endOffset, ms], …] (endOffset is the
// byte offset in the response body just past the event's blank line, ms the
// time since the request started when those bytes were flushed to the
// client). Without the wrapper the same data stays readable in the note, as
// "sseArrivals=[…]".
//
// Record readers ignore members they do not know, so the lines stay valid
// records for every consumer.
func ExtensionLines(lw record.LineWriter) record.LineWriter {
	return extensionLines{lw}
}

type extensionLines struct {
	record.LineWriter
}

func (e extensionLines) WriteLine(line []byte) error {
	return e.LineWriter.WriteLine(spliceArrivals(line))
}

// arrivalsEnd is how a line whose note ends with the arrivals ends: the
// note is the record's last member, and the arrivals the note's last part.
var arrivalsEnd = []byte(`]]"}` + "\n")

// spliceArrivals turns `,"note":"…; sseArrivals=[…]"}` at the end of a line
// into `,"note":"…","sseArrivals":[…]}` (and a note that held only the
// arrivals into no note). Any other line is returned as it is.
func spliceArrivals(line []byte) []byte {
	if !bytes.HasSuffix(line, arrivalsEnd) {
		return line
	}
	i := bytes.LastIndex(line, []byte(arrivalsPrefix+"["))
	if i < 0 {
		return line
	}
	arrivals := line[i+len(arrivalsPrefix) : len(line)-3] // up to the closing quote
	for _, c := range arrivals {
		if !(c >= '0' && c <= '9' || c == '.' || c == ',' || c == '-' || c == '[' || c == ']') {
			return line
		}
	}
	head := line[:i]
	var out bytes.Buffer
	out.Grow(len(line) + 16)
	switch {
	case bytes.HasSuffix(head, []byte(`,"note":"`)):
		out.Write(head[:len(head)-len(`,"note":"`)])
	case bytes.HasSuffix(head, []byte("; ")):
		out.Write(head[:len(head)-2])
		out.WriteByte('"')
	default:
		return line
	}
	out.WriteString(`,"sseArrivals":`)
	out.Write(arrivals)
	out.WriteString("}\n")
	return out.Bytes()
}
