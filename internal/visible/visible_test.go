package visible

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestString(t *testing.T) {
	for _, c := range []struct{ name, in, want, lines string }{
		{"plain", "TOOL_SUCCESS (application layer)", "TOOL_SUCCESS (application layer)", ""},
		{"empty", "", "", ""},
		{"non-ASCII letters stay", "café — 東京 ✓ 🙂", "café — 東京 ✓ 🙂", ""},
		{"clipboard write (OSC 52)", "\x1b]52;c;ZXZpbA==\x07", `\x1b]52;c;ZXZpbA==\x07`, ""},
		{"fake link (OSC 8)", "\x1b]8;;https://evil.example/\x1b\\ok\x1b]8;;\x1b\\", `\x1b]8;;https://evil.example/\x1b\ok\x1b]8;;\x1b\`, ""},
		{"clear screen", "\x1b[2J\x1b[H", `\x1b[2J\x1b[H`, ""},
		{"carriage return over a verdict", "FAIL\rPASS", `FAIL\rPASS`, `FAIL\rPASS`},
		{"newline and tab", "a\nb\tc", `a\nb\tc`, "a\nb\tc"},
		{"NUL, BEL, DEL", "\x00\x07\x7f", `\x00\x07\x7f`, ""},
		{"C1 CSI", "\u009b2J", `\u009b2J`, ""},
		{"bidi override", "evil\u202eLIAF", `evil\u202eLIAF`, ""},
		{"bidi isolates and marks", "\u2066\u2067\u2068\u2069\u200e\u200f\u061c", `\u2066\u2067\u2068\u2069\u200e\u200f\u061c`, ""},
		{"line and paragraph separators", "a\u2028b\u2029c", `a\u2028b\u2029c`, ""},
		{"zero width and BOM", "a\u200bb\ufeff", `a\u200bb\ufeff`, ""},
		{"tag characters", "\U000E0041\U000E0042", `\U000e0041\U000e0042`, ""},
		{"invalid UTF-8", "a\xff\xe2\x80b", `a\xff\xe2\x80b`, ""},
		{"U+FFFD as sent stays", "a\ufffdb", "a\ufffdb", ""},
		{"U+FFFE and U+FFFF, which XML writes as U+FFFD (review15)", "a\ufffeb\uffff", `a\ufffeb\uffff`, ""},
		{"a lone backslash stays", `C:\Program Files\`, `C:\Program Files\`, ""},
		{"JSON escapes of a quote stay", `{"a":"say \"hi\""}`, `{"a":"say \"hi\""}`, ""},
		{"a backslash before an escape letter is doubled", `\x1b \n \u202e \\`, `\\x1b \\n \\u202e \\\`, ""},
		{"a backslash before an escaped character", "\\\x1b", `\\\x1b`, ""},
		{"a backslash before a kept newline is not doubled", "\\\n", `\\\n`, "\\\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := String(c.in); got != c.want {
				t.Errorf("String(%q) = %q, want %q", c.in, got, c.want)
			}
			lines := c.lines
			if lines == "" {
				lines = c.want
			}
			if got := Lines(c.in); got != lines {
				t.Errorf("Lines(%q) = %q, want %q", c.in, got, lines)
			}
			for _, mode := range []bool{false, true} {
				if back, err := unescape(render(c.in, mode)); err != nil || back != c.in {
					t.Errorf("unescape(render(%q, %v)) = %q, %v", c.in, mode, back, err)
				}
			}
		})
	}
}

// TestStringReturnsItsInput: text with nothing to escape is returned as it
// is, not copied.
func TestStringReturnsItsInput(t *testing.T) {
	s := strings.Repeat("tools/call echo 200 TOOL_SUCCESS ", 10)
	if got := String(s); got != s || testing.AllocsPerRun(10, func() { String(s) }) != 0 {
		t.Errorf("String of plain text allocates or changes it: %q", got)
	}
}

// unescape reverses render: the escapes it writes, and a backslash that
// starts none of them read as itself.
func unescape(s string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		hex := func(n int) (uint64, error) {
			if i+2+n > len(s) {
				return 0, strconv.ErrSyntax
			}
			return strconv.ParseUint(s[i+2:i+2+n], 16, 32)
		}
		switch s[i+1] {
		case '\\':
			b.WriteByte('\\')
			i++
		case 't':
			b.WriteByte('\t')
			i++
		case 'n':
			b.WriteByte('\n')
			i++
		case 'r':
			b.WriteByte('\r')
			i++
		case 'x':
			v, err := hex(2)
			if err != nil {
				return "", err
			}
			b.WriteByte(byte(v))
			i += 3
		case 'u', 'U':
			n := 4
			if s[i+1] == 'U' {
				n = 8
			}
			v, err := hex(n)
			if err != nil {
				return "", err
			}
			b.WriteRune(rune(v))
			i += 1 + n
		default:
			b.WriteByte('\\')
		}
	}
	return b.String(), nil
}

// FuzzString: the output is valid UTF-8 and holds no control, format or
// separator character (Lines: but a newline or a tab), and it reads back
// as the input, so two different inputs never print the same.
func FuzzString(f *testing.F) {
	for _, s := range []string{"", "plain", "\x1b]52;c;ZXZpbA==\x07", "FAIL\rPASS", "a\u202eb", `\x1b`, "\\\x1b", "\xff", `\\\`, "\U000E0041", "\\\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		for _, lines := range []bool{false, true} {
			out := render(in, lines)
			if !utf8.ValidString(out) {
				t.Fatalf("render(%q, %v) = %q: not UTF-8", in, lines, out)
			}
			for _, r := range out {
				if Escaped(r) && !(lines && (r == '\n' || r == '\t')) {
					t.Fatalf("render(%q, %v) = %q holds %U", in, lines, out, r)
				}
			}
			back, err := unescape(out)
			if err != nil || back != in {
				t.Fatalf("render(%q, %v) = %q reads back as %q (%v)", in, lines, out, back, err)
			}
		}
	})
}

func TestJSON(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"a":"plain"}`, `{"a":"plain"}`},
		{"{\"a\":\"café 東京 🙂\"}", "{\"a\":\"café 東京 🙂\"}"},
		{"{\"a\":\"\u202eLIAF\u009b\u2028\"}", `{"a":"\u202eLIAF\u009b\u2028"}`},
		{"{\"a\":\"\U000E0041\"}", `{"a":"\udb40\udc41"}`},
		{"{\"a\":\"\xff\"}", `{"a":"\ufffd"}`},
		{"{\n  \"a\": 1\n}", "{\n  \"a\": 1\n}"},
		{"{\"a\":\"\x7f\"}", `{"a":"\u007f"}`},
	} {
		if got := string(JSON([]byte(c.in))); got != c.want {
			t.Errorf("JSON(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// FuzzJSON: JSON keeps the value of any JSON text encoding/json writes and
// leaves no character String escapes but the ASCII whitespace between
// tokens.
func FuzzJSON(f *testing.F) {
	for _, s := range []string{"", "plain", "\u202e\u009b\x1b", "\U000E0041", "\xff\xfe", "\u2028"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		b, err := json.MarshalIndent(map[string]any{"k" + in: []string{in}}, "", "\t")
		if err != nil {
			t.Fatal(err)
		}
		out := JSON(b)
		var before, after any
		if err := json.Unmarshal(b, &before); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(out, &after); err != nil || !reflect.DeepEqual(before, after) {
			t.Fatalf("JSON(%q) = %q reads as %v (%v), not %v", b, out, after, err, before)
		}
		for _, r := range string(out) {
			if Escaped(r) && r != '\n' && r != '\t' {
				t.Fatalf("JSON(%q) = %q holds %U", b, out, r)
			}
		}
	})
}
