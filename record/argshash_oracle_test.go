package record

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
)

// oldCanonicalJSON is canonicalJSON as it was before issue 12 (a token
// stream from encoding/json's decoder), kept as the oracle of the one on
// wire's navigator.
func oldCanonicalJSON(buf *bytes.Buffer, v []byte, skipMeta bool) error {
	if len(bytes.TrimSpace(v)) == 0 {
		buf.WriteString("null")
		return nil
	}
	if !json.Valid(v) {
		return errNotOneValue
	}
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber()
	if err := oldCanonicalValue(buf, dec, skipMeta); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errNotOneValue
	}
	return nil
}

// oldWriteJSONString is writeJSONString as it was: encoding/json's encoder
// without HTML escaping.
func oldWriteJSONString(buf *bytes.Buffer, s string) {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	buf.Truncate(buf.Len() - 1) // the newline Encode adds
}

func oldCanonicalValue(buf *bytes.Buffer, dec *json.Decoder, skipMeta bool) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			type member struct {
				key string
				val []byte
			}
			var members []member
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return err
				}
				key, _ := kt.(string)
				var sub bytes.Buffer
				if err := oldCanonicalValue(&sub, dec, false); err != nil {
					return err
				}
				if skipMeta && key == "_meta" {
					continue
				}
				members = append(members, member{key, sub.Bytes()})
			}
			if _, err := dec.Token(); err != nil {
				return err
			}
			slices.SortStableFunc(members, func(a, b member) int { return cmp.Compare(a.key, b.key) })
			buf.WriteByte('{')
			for i, m := range members {
				if i > 0 {
					buf.WriteByte(',')
				}
				oldWriteJSONString(buf, m.key)
				buf.WriteByte(':')
				buf.Write(m.val)
			}
			buf.WriteByte('}')
		case '[':
			buf.WriteByte('[')
			for i := 0; dec.More(); i++ {
				if i > 0 {
					buf.WriteByte(',')
				}
				if err := oldCanonicalValue(buf, dec, false); err != nil {
					return err
				}
			}
			if _, err := dec.Token(); err != nil {
				return err
			}
			buf.WriteByte(']')
		default:
			return errNotOneValue
		}
	case string:
		oldWriteJSONString(buf, t)
	case json.Number:
		buf.WriteString(t.String())
	case bool:
		if t {
			buf.WriteString("true")
		} else {
			buf.WriteString("false")
		}
	case nil:
		buf.WriteString("null")
	}
	return nil
}

// FuzzCanonicalJSONOracle: the canonical form on wire's navigator is byte
// for byte the one encoding/json's decoder gave, on any input (both refuse
// what is not one JSON value), with and without skipping _meta.
func FuzzCanonicalJSONOracle(f *testing.F) {
	for _, s := range []string{
		``, `null`, ` {"b":1, "a":[1,2.50,{"z":"\u00e9","y":null}]} `, `{"a":1,"a":2}`, `{"_meta":{"x":1},"k":"v"}`,
		`{"s":"\u2028\u2029\u0000<>&\/"}`, "{\"s\":\"\xff\xfe\"}", "{\"\xe2\x80\xa8\":1}", `{"\u005fmeta":1}`,
		`[1,2`, `{"a":1}{}`, `"x"`, `-0.0e+1`, `[[[[]]]]`, `{"é":1,"e":2,"E":3}`, "\"\u2028\"",
	} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, v []byte, skipMeta bool) {
		var got, want bytes.Buffer
		gerr := canonicalJSON(&got, v, skipMeta, false)
		werr := oldCanonicalJSON(&want, v, skipMeta)
		if (gerr == nil) != (werr == nil) {
			t.Fatalf("canonicalJSON(%q, %v): error %v, oracle error %v", v, skipMeta, gerr, werr)
		}
		if gerr == nil && !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Fatalf("canonicalJSON(%q, %v) = %q, oracle %q", v, skipMeta, got.Bytes(), want.Bytes())
		}
		if gerr == nil {
			// Known-valid input is walked without validating: same result.
			var trusted bytes.Buffer
			if err := canonicalJSON(&trusted, v, skipMeta, true); err != nil || !bytes.Equal(trusted.Bytes(), want.Bytes()) {
				t.Fatalf("canonicalJSON(%q, %v, valid) = %q, %v; oracle %q", v, skipMeta, trusted.Bytes(), err, want.Bytes())
			}
		}
	})
}

// BenchmarkCanonicalJSON times the args hash's canonical form, the walk on
// wire's navigator against the old encoding/json token decoder (the oracle
// above), side by side in one run, on the arguments of a small tools/call
// and on a larger object of mixed members.
//
//	go test ./record -run '^$' -bench CanonicalJSON -benchmem -count 5
func BenchmarkCanonicalJSON(b *testing.B) {
	small := []byte(`{"text":"` + strings.Repeat("y", 820) + `"}`)
	var mixed strings.Builder
	mixed.WriteString(`{"query":"select * from t where a = \"b\"","limit":50,"filters":[`)
	for i := range 40 {
		if i > 0 {
			mixed.WriteByte(',')
		}
		fmt.Fprintf(&mixed, `{"field":"f%d","op":"eq","value":%d,"tags":["x","y\u00e9"],"on":true}`, i, i*7)
	}
	mixed.WriteString(`],"options":{"z":null,"b":1.50,"a":"\u2713"}}`)
	for _, c := range []struct {
		name string
		v    []byte
	}{{"small", small}, {"mixed", []byte(mixed.String())}} {
		for _, impl := range []struct {
			name string
			fn   func(*bytes.Buffer, []byte, bool) error
		}{
			{"wire", func(buf *bytes.Buffer, v []byte, skip bool) error { return canonicalJSON(buf, v, skip, false) }},
			{"wire-valid", func(buf *bytes.Buffer, v []byte, skip bool) error { return canonicalJSON(buf, v, skip, true) }},
			{"encoding-json", oldCanonicalJSON},
		} {
			b.Run(c.name+"/"+impl.name, func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(c.v)))
				var buf bytes.Buffer
				for b.Loop() {
					buf.Reset()
					if err := impl.fn(&buf, c.v, false); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
