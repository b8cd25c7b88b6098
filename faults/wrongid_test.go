package faults

import (
	"testing"

	"github.com/mcpdiag/mcpdiag/wire"
)

// TestWrongIDDiffersByValue: the id sse.wrong_id and errors.jsonrpc_error's
// wrong-id answers carry is never the request's id by value. A number id not
// written in plain digits (99999.0) fell back to 99999, the same id
// (wire.ID.Equal), so the scenario's "wrong" answer was the right one.
func TestWrongIDDiffersByValue(t *testing.T) {
	for _, raw := range []string{`1`, `-3`, `99999`, `99999.0`, `9999900000e-5`, `1e0`, `1.5`, `9223372036854775807`,
		`-9223372036854775808`, `123456789012345678901234567890`, `98999`, `"a"`, `""`, `"99999"`, `"a-wrong"`} {
		id := wire.IDFromRaw([]byte(raw))
		got := wrongID(id)
		if got.Equal(id) {
			t.Errorf("wrongID(%s) = %s: the same id", raw, got)
		}
		if got.IsString() != id.IsString() {
			t.Errorf("wrongID(%s) = %s: another JSON type", raw, got)
		}
	}
}
