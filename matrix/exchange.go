package matrix

import (
	"net/http"
	"sort"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/judge"
	"github.com/mcpdiag/mcpdiag/record"
)

// serverLine is a fault server's log line: the record, and the raw line
// (for --record).
type serverLine struct {
	rec *record.Record
	raw []byte
}

func parseServerLine(raw []byte) (*serverLine, error) {
	rec, err := record.Decode(raw)
	if err != nil {
		return nil, err
	}
	return &serverLine{rec: rec, raw: raw}, nil
}

// endpoint is the fault endpoint the line is about ("" for a line of no
// fault endpoint: an admin request, an authorization server's line).
func (l *serverLine) endpoint() string {
	if l.rec.Fault == nil {
		return ""
	}
	return l.rec.Fault.Endpoint
}

// fromServer builds the exchanges of one endpoint's log lines (their
// POSTs), in POST order. expected is the case's expected outcome (see
// judge.FromRecord).
func fromServer(lines []*serverLine, expected classify.Outcome) []*judge.Exchange {
	var out []*judge.Exchange
	for _, l := range lines {
		if l.rec.HTTPMethod != http.MethodPost {
			continue
		}
		out = append(out, judge.FromRecord(l.rec, expected))
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].N < out[j].N })
	return out
}
