package record

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"unicode/utf8"

	"github.com/mcpdiag/mcpdiag/wire"
)

// ArgsHash identifies a call by what it asks for: "sha256:" and the
// hex SHA-256 of the JSON array [method, tool, canonical arguments]. The
// canonical form sorts object keys (by their UTF-8 bytes, duplicates kept in
// their order), drops insignificant whitespace, writes strings with one
// fixed escaping and numbers exactly as they were written (1.0 and 1 differ).
// So the same arguments in another key order or layout hash equal, and a
// retry of a call can be matched with the call it repeats across client,
// proxy and server records. Empty args hash as JSON null; args that are not
// JSON hash their raw bytes under a distinct framing.
//
// The hash is an identity, not a secrecy device: arguments of low entropy
// (a PIN, a yes/no flag) can be recovered by hashing guesses.
func ArgsHash(method, tool string, args json.RawMessage) string {
	return argsHash(method, tool, args, false, false)
}

// argsHash is ArgsHash; skipMeta drops a top-level "_meta" member of an
// object args (used for non-tool methods, whose params carry per-request
// _meta values); valid says args are known to be valid JSON (a member of a
// message wire.ParseMessage validated), so they are walked, not validated
// again.
func argsHash(method, tool string, args []byte, skipMeta, valid bool) string {
	st := hashStates.Get().(*hashState)
	buf := &st.buf
	buf.Reset()
	// The canonical form is about as long as the arguments: grown once,
	// and the buffer is reused by the next hash.
	buf.Grow(len(method) + len(tool) + len(args) + 16)
	buf.WriteByte('[')
	writeJSONString(buf, method)
	buf.WriteByte(',')
	writeJSONString(buf, tool)
	buf.WriteByte(',')
	if err := canonicalJSONInto(buf, &st.members, args, skipMeta, valid); err != nil {
		buf.Reset()
		buf.WriteByte('[')
		writeJSONString(buf, method)
		buf.WriteByte(',')
		writeJSONString(buf, tool)
		buf.WriteString(",null,")
		writeJSONString(buf, string(args))
	}
	buf.WriteByte(']')
	sum := sha256.Sum256(buf.Bytes())
	st.put()
	const prefix = "sha256:"
	var out [len(prefix) + 2*sha256.Size]byte
	copy(out[:], prefix)
	hex.Encode(out[len(prefix):], sum[:])
	return string(out[:])
}

// hashState is argsHash's room, reused from hash to hash (hashStates): the
// canonical form's buffer and the object members being sorted. Every
// recorded tools/call is hashed, and the two were most of its garbage.
type hashState struct {
	buf     bytes.Buffer
	members []member
}

var hashStates = sync.Pool{New: func() any { return new(hashState) }}

// Bounds of what a hashState keeps for the next hash: the arguments of a
// rare large call are not held in a pool.
const (
	maxPooledHashBuf     = 64 << 10
	maxPooledHashMembers = 1024
)

// put gives st back to the pool (or to the collector when it grew past
// its bounds). Its members hold no bytes of the arguments: each object's
// members are cleared once written.
func (st *hashState) put() {
	if st.buf.Cap() > maxPooledHashBuf || cap(st.members) > maxPooledHashMembers {
		return
	}
	st.buf.Reset()
	hashStates.Put(st)
}

// CanonicalJSON returns the canonical form of the JSON value v that ArgsHash
// hashes, or an error when v is not a single JSON value. Empty input is null.
func CanonicalJSON(v []byte) ([]byte, error) {
	var buf bytes.Buffer
	if err := canonicalJSON(&buf, v, false, false); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

var errNotOneValue = errors.New("record: not a single JSON value")

// canonicalJSON writes the canonical form of v to buf (v is validated first
// unless valid says it is known to be valid). It walks v with
// wire's navigator (one validation, then the members in place); the result is
// byte for byte what a decode with encoding/json and a re-encode would give
// (the old implementation is the oracle of FuzzCanonicalJSONOracle).
func canonicalJSON(buf *bytes.Buffer, v []byte, skipMeta, valid bool) error {
	var members []member
	return canonicalJSONInto(buf, &members, v, skipMeta, valid)
}

// canonicalJSONInto is canonicalJSON with room for the object members
// (ms, left empty as it was given).
func canonicalJSONInto(buf *bytes.Buffer, ms *[]member, v []byte, skipMeta, valid bool) error {
	if len(bytes.TrimSpace(v)) == 0 {
		buf.WriteString("null")
		return nil
	}
	if !valid && !wire.Valid(v) {
		return errNotOneValue
	}
	return canonicalValue(buf, ms, bytes.TrimSpace(v), skipMeta)
}

// member is one object member: its key's value (the bytes sorted on), the
// raw key when it is already in canonical form (written as it is), and the
// raw value.
type member struct {
	key   []byte
	plain []byte
	val   []byte
}

// canonicalValue writes the canonical form of the valid JSON value v (no
// surrounding whitespace). An object's members are sorted in ms, past its
// length (nested objects use the room after them), and cleared once written.
func canonicalValue(buf *bytes.Buffer, ms *[]member, v []byte, skipMeta bool) error {
	switch wire.Kind(v) {
	case '{':
		start := len(*ms)
		defer func() {
			clear((*ms)[start:])
			*ms = (*ms)[:start]
		}()
		err := wire.EachField(v, func(k, val []byte) bool {
			m := member{val: val}
			if plainString(k) {
				m.key, m.plain = k[1:len(k)-1], k
			} else {
				s, _ := wire.StringValue(k)
				m.key = []byte(s)
			}
			if skipMeta && string(m.key) == "_meta" {
				return true
			}
			*ms = append(*ms, m)
			return true
		})
		if err != nil {
			return err
		}
		members := (*ms)[start:]
		slices.SortStableFunc(members, func(a, b member) int { return bytes.Compare(a.key, b.key) })
		buf.WriteByte('{')
		for i, m := range members {
			if i > 0 {
				buf.WriteByte(',')
			}
			if m.plain != nil {
				buf.Write(m.plain)
			} else {
				writeJSONString(buf, string(m.key))
			}
			buf.WriteByte(':')
			if err := canonicalValue(buf, ms, m.val, false); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	case '[':
		buf.WriteByte('[')
		var ierr error
		err := wire.EachElement(v, func(i int, el []byte) bool {
			if i > 0 {
				buf.WriteByte(',')
			}
			ierr = canonicalValue(buf, ms, el, false)
			return ierr == nil
		})
		if err != nil {
			return err
		}
		if ierr != nil {
			return ierr
		}
		buf.WriteByte(']')
	case '"':
		if plainString(v) {
			buf.Write(v)
			return nil
		}
		s, ok := wire.StringValue(v)
		if !ok {
			return errNotOneValue
		}
		writeJSONString(buf, s)
	default:
		// Numbers exactly as written; true, false, null.
		buf.Write(v)
	}
	return nil
}

// plainString reports whether the raw JSON string v, which is valid JSON
// (canonicalValue's input is validated), is already in the form
// writeJSONString gives its value: no escapes, valid UTF-8, no character
// encoding/json escapes (U+2028, U+2029; a valid string holds no control
// character or quote unescaped). The backslash is looked for by
// bytes.IndexByte and the bytes at or above 0x80 four words at a time:
// about a third of the time of a check of every byte for the characters a
// string of unknown validity may hold (plainPrefix), which was a quarter
// of a 1 KiB tools/call's hash (docs/benchmarks.md, record3).
func plainString(v []byte) bool {
	inner := v[1 : len(v)-1]
	if bytes.IndexByte(inner, '\\') >= 0 {
		return false
	}
	return !hasHigh(inner) || utf8.Valid(inner) && !bytes.Contains(inner, []byte("\u2028")) && !bytes.Contains(inner, []byte("\u2029"))
}

// hasHigh reports whether b holds a byte at or above 0x80.
func hasHigh(b []byte) bool {
	var m uint64
	for len(b) >= 32 {
		m |= binary.LittleEndian.Uint64(b) | binary.LittleEndian.Uint64(b[8:]) |
			binary.LittleEndian.Uint64(b[16:]) | binary.LittleEndian.Uint64(b[24:])
		b = b[32:]
	}
	for len(b) >= 8 {
		m |= binary.LittleEndian.Uint64(b)
		b = b[8:]
	}
	for _, c := range b {
		m |= uint64(c)
	}
	return m&swarHigh != 0
}

// writeJSONString writes s as a JSON string without HTML escaping, as
// encoding/json's encoder does (appendString).
func writeJSONString(buf *bytes.Buffer, s string) {
	buf.Write(appendString(buf.AvailableBuffer(), s, false))
}

// StateHash identifies a requestState value without recording it:
// "sha256:" and the first 16 hex digits of the SHA-256 of the JSON string's
// decoded value (of the raw bytes when raw is not a JSON string). Two
// requestStates hash alike when they are the same string, however their JSON
// escapes were written. "" for an absent or null value. The fault server
// (Params.RequestState, Fault.IssuedState) and the judge (a request body's
// requestState) hash with it, so that their hashes compare.
func StateHash(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	v := []byte(raw)
	var s string
	if raw[0] == '"' && json.Unmarshal(raw, &s) == nil {
		v = []byte(s)
	}
	sum := sha256.Sum256(v)
	return "sha256:" + hex.EncodeToString(sum[:8])
}
