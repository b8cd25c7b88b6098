package record

import (
	"encoding/json"
	"strings"
	"testing"
)

// nestCarriers write a structure under a credential name as text does:
// a form or log field, a field line, JSON text, a Python dict's repr, an
// assignment, escaped JSON inside a JSON string.
var nestCarriers = []func(name, v string) string{
	func(n, v string) string { return n + "=" + v },
	func(n, v string) string { return n + ": " + v },
	func(n, v string) string { return `{"` + n + `": ` + v },
	func(n, v string) string { return `{'` + n + `': ` + v },
	func(n, v string) string { return n + " = " + v },
	func(n, v string) string {
		b, _ := json.Marshal(`{"` + n + `": ` + v + `}`)
		return `"text": ` + string(b)
	},
}

// FuzzNestedUnderName (redact12): a value planted at a depth of the
// fuzzer's choice in objects and arrays of the fuzzer's choice, their
// strings and member names the fuzzer's bytes, under a credential name in
// each way text writes one, with the fuzzer's text before and after it:
// the planted value is in no excerpt (Body, as text) nor in Scrub's
// output. A depth past maxNestDepth is masked to the end of the text.
//
// Run it with a budget in iterations: go test -fuzz FuzzNestedUnderName
// -fuzztime 100000x ./record.
func FuzzNestedUnderName(f *testing.F) {
	f.Add("log: ", " end", "a", uint8(0), uint8(2), uint16(0b10))
	f.Add("bad input: ", "} x", `}{"\`, uint8(2), uint8(3), uint16(0b101))
	f.Add("", "", "it's", uint8(3), uint8(1), uint16(0))
	f.Add("x", "&y=1", "[", uint8(1), uint8(70), uint16(0xffff))
	f.Add("e: ", "", "\n", uint8(5), uint8(4), uint16(0b11))
	// Escaped JSON whose strings hold brackets (review12).
	f.Add("log ", " end", "x}y", uint8(5), uint8(2), uint16(0b10))
	f.Add("", "", `]"\`, uint8(11), uint8(3), uint16(0b1))
	red := NewRedactor()
	f.Fuzz(func(t *testing.T, before, after, filler string, which, depth uint8, shape uint16) {
		if len(before)+len(after)+len(filler) > 1<<12 {
			t.Skip()
		}
		for _, s := range []string{before, after, filler} {
			if strings.Contains(strings.ToLower(s), "planted") {
				t.Skip()
			}
		}
		py := which%uint8(len(nestCarriers)) == 3
		str := func(s string) string {
			if py {
				// A Python repr's string: in single quotes, escaped.
				return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\n", `\n`, "\r", `\r`).Replace(s) + "'"
			}
			b, _ := json.Marshal(s)
			return string(b)
		}
		v := str(plantValue)
		d := int(depth) % (maxNestDepth + 8)
		for i := range d {
			if shape>>(i%16)&1 == 1 {
				v = "[" + str(filler) + ", " + v + ", 1]"
			} else {
				v = "{" + str(filler) + ": " + str(filler) + ", " + str(filler+"k") + ": " + v + "}"
			}
		}
		if d == 0 {
			v = "{" + str(filler) + ": " + v + "}"
		}
		name := plantNames[int(which/uint8(len(nestCarriers)))%len(plantNames)]
		in := before + " \n" + nestCarriers[int(which)%len(nestCarriers)](name, v) + "\n" + after
		out := red.Scrub(in)
		if strings.Contains(out, plantValue) {
			t.Fatalf("planted value survived Scrub:\n in %q\nout %q", in, out)
		}
		if ex, _ := red.Body([]byte(in), 0); strings.Contains(ex, plantValue) {
			t.Fatalf("planted value survived Body:\n in %q\nout %q", in, ex)
		}
	})
}
