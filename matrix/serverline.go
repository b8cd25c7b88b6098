package matrix

import (
	"github.com/mcpdiag/mcpdiag/record"
)

// serverLine is a fault server's log line: the record, and the raw line
// (for --record).
type serverLine struct {
	rec *record.Record
	raw []byte
	sum uint64 // FromRecords: the line's hash, once raw is dropped
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
