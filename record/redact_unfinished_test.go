package record

import (
	"strings"
	"testing"
)

// TestUnfinishedValueKeepsNoSecondCredential (audit10): a quoted
// credential left unfinished in text, followed on the same line by a
// second credential in quotes, is masked up to the second name, and the
// second is masked too. Before, the first value ran to the second value's
// opening quote (its mask ended there) and the second credential was kept
// in the clear in every case below.
func TestUnfinishedValueKeepsNoSecondCredential(t *testing.T) {
	t.Parallel()
	red := NewRedactorKey([]byte("unfinished"))
	const a, v = "Apw1234567", "Btok7654321"
	m := red.Mask(v)
	cases := []struct{ name, in, want string }{
		{"yaml double", `password: "` + a + ` then token: "` + v + `" end`,
			`password: "` + Redacted + `" token: "` + m + `" end`},
		{"yaml single", `password: '` + a + ` then token: '` + v + `' end`,
			`password: '` + Redacted + `' token: '` + m + `' end`},
		{"yaml second single", "db:\n  password: '" + a + " then api_key: '" + v + "'\n  host: x",
			"db:\n  password: '" + Redacted + "' api_key: '" + m + "'\n  host: x"},
		{"assign double", `api_key="` + a + ` then token="` + v + `" end`,
			`api_key="` + Redacted + `" token="` + m + `" end`},
		{"assign single", `api_key='` + a + ` then client_secret='` + v + `' end`,
			`api_key='` + Redacted + `' client_secret='` + m + `' end`},
		{"assign blanks", `password = "` + a + ` then token = "` + v + `" end`,
			`password = "` + Redacted + `" token = "` + m + `" end`},
		{"json", `{"password": "` + a + ` then "token": "` + v + `"}`,
			`{"password": "` + Redacted + `""token": "` + m + `"}`},
		{"json single", `{'password': '` + a + ` then 'token': '` + v + `'}`,
			`{'password': '` + Redacted + `''token': '` + m + `'}`},
		{"json escaped", `{\"password\": \"` + a + ` then \"token\": \"` + v + `\"}`,
			`{\"password\": \"` + Redacted + `\"\"token\": \"` + m + `\"}`},
		{"flow mapping", `{password: "` + a + `, token: "` + v + `"}`,
			`{password: "` + Redacted + `" token: "` + m + `"}`},
		{"yaml then assign", `password: "` + a + ` then api_key="` + v + `" end`,
			`password: "` + Redacted + `" api_key="` + m + `" end`},
	}
	for _, c := range cases {
		got := red.Scrub(c.in)
		if got != c.want {
			t.Errorf("%s: Scrub(%q)\n = %q\nwant %q", c.name, c.in, got, c.want)
		}
		if strings.Contains(got, v) || strings.Contains(got, a) {
			t.Errorf("%s: Scrub(%q) = %q keeps a credential", c.name, c.in, got)
		}
	}
	// A value in single quotes after name= with no blank ran, as a form
	// value, to its first blank: the rest of it was kept.
	for _, c := range []struct{ in, want string }{
		{`api_key='abc def'`, `api_key='` + red.Mask("abc def") + `'`},
		{`x token='pass word here' end`, `x token='` + red.Mask("pass word here") + `' end`},
		{`http://127.0.0.1/cb?code='a b'&x=1`, `http://127.0.0.1/cb?code='` + red.Mask("a b") + `'&x=1`},
	} {
		if got := red.Scrub(c.in); got != c.want {
			t.Errorf("Scrub(%q)\n = %q\nwant %q", c.in, got, c.want)
		}
	}
	// A closed value whose quote is followed by what is no credential
	// value stays whole, its length in its mask; so does a value ending
	// in a name with nothing after its quote (it may be the password).
	keep := []struct{ in, want string }{
		{`password: "a b" token: "` + v + `" end`, `password: "` + red.Mask("a b") + `" token: "` + m + `" end`},
		{`password: "key: "`, `password: "` + red.Mask("key: ") + `"`},
		{`password: "x user: "bob" end`, `password: "` + red.Mask("x user: ") + `"bob" end`},
		{`{"password": "` + a + `","token": "` + v + `"}`, `{"password": "` + red.Mask(a) + `","token": "` + m + `"}`},
	}
	for _, c := range keep {
		if got := red.Scrub(c.in); got != c.want {
			t.Errorf("Scrub(%q)\n = %q\nwant %q", c.in, got, c.want)
		}
	}
}
