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

// idKey is the key of a JSON-RPC id in the proxy's tables of requests
// waiting for their answers: its value (wire.ID.Key), so that ids pair as
// wire.ID.Equal pairs them: a string by its decoded value, a number by its
// exact value (1 and 1.0 one id; 9007199254740993 and 9007199254740992
// two, where a float64 made them one and a second request took the
// first's place).
func idKey(id wire.ID) string { return id.Key() }

// answeredKey returns the key in pending of the request an answer of id
// answers: the one of the same id (idKey), else the one whose id is the
// same text as the other JSON type (otherTypeKey), else, for a number, the one
// request only whose id reads as the same float64: a server (or client)
// that reads ids into a float64 answers 9007199254740993 as
// 9007199254740992, and the record's classification then names the
// mismatch. ok is false (and key id's own) when no request, or more
// than one so rounded, waits.
func answeredKey[V any](pending map[string]V, id wire.ID) (key string, ok bool) {
	key = idKey(id)
	if _, ok := pending[key]; ok {
		return key, ok
	}
	if k, ok := otherTypeKey(pending, id); ok {
		return k, true
	}
	if !id.IsNumber() {
		return key, false
	}
	f, err := strconv.ParseFloat(string(id.Raw()), 64)
	if err != nil {
		return key, false
	}
	found := ""
	for k := range pending {
		// A number's key is "n" and a number's text (wire.ID.Key).
		if len(k) < 2 || k[0] != 'n' {
			continue
		}
		if g, err := strconv.ParseFloat(k[1:], 64); err == nil && g == f {
			if found != "" {
				return key, false
			}
			found = k
		}
	}
	if found == "" {
		return key, false
	}
	return found, true
}

// otherTypeKey returns the key in pending of the request whose id is id's
// text in the other JSON type: the number 7 for an answer of id "7", the
// string "7" for an answer of id 7. Such an answer breaks JSON-RPC (an id
// keeps its type), but its sender meant that request, and a client that
// reads ids loosely (the TypeScript SDK looks a response up by
// Number(response.id)) takes it as that request's answer; paired, the
// record's classification names the mismatch (INVALID_ENVELOPE) instead of
// an answer to no request and a request never answered.
func otherTypeKey[V any](pending map[string]V, id wire.ID) (string, bool) {
	var other wire.ID
	switch {
	case id.IsNumber():
		other = wire.StringID(string(id.Raw()))
	case id.IsString():
		v, ok := wire.StringValue(id.Raw())
		if !ok {
			return "", false
		}
		n, err := wire.ParseID(v)
		if err != nil || !n.IsNumber() || string(n.Raw()) != v {
			return "", false
		}
		other = n
	default:
		return "", false
	}
	k := idKey(other)
	_, ok := pending[k]
	return k, ok
}
