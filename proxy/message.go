package proxy

import (
	"bytes"
	"strconv"

	"github.com/mcpdiag/mcpdiag/wire"
)

// keep returns the facts of m that a pending stdio request holds on to,
// owning their bytes: m aliases a line buffer the reader reuses.
func keep(m wire.Message) wire.Message {
	m.ID = wire.IDFromRaw(bytes.Clone(m.ID.Raw()))
	m.Cancelled = wire.IDFromRaw(bytes.Clone(m.Cancelled.Raw()))
	m.Body, m.Params, m.Arguments, m.Meta = nil, nil, nil, nil
	return m
}

// idKey is a map key for a JSON-RPC id: numbers by their float64 value,
// strings after unescaping. It is looser than wire.ID.Equal (exact values):
// an answer whose id a server rounded through a float64 is still paired with
// its request, and the record's classification then names the mismatch.
func idKey(id wire.ID) string {
	switch {
	case id.IsString():
		s, _ := wire.StringValue(id.Raw())
		return "s" + s
	case id.IsNumber():
		if f, err := strconv.ParseFloat(string(id.Raw()), 64); err == nil {
			if f == 0 {
				// -0 and 0 are one id (wire.ID.Equal, and float64 ==),
				// but FormatFloat writes -0 as "-0".
				return "n0"
			}
			return "n" + strconv.FormatFloat(f, 'g', -1, 64)
		}
	}
	return "r" + string(id.Raw())
}
