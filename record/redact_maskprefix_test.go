package record

import (
	"strings"
	"testing"
)

// TestValueBehindAMaskIsMasked: a value that starts like a mask and goes
// on ("[redacted]Sup3rSecretXY") is no mask: its text after the mask is
// masked too, in every pattern that skips a value already masked (bare
// JSON values in text, form values, command-line flags, assignments),
// while a mask alone is kept as it is (scrubbing twice changes nothing).
func TestValueBehindAMaskIsMasked(t *testing.T) {
	r := NewRedactor()
	const secret = "Sup3rSecretXY"
	for _, s := range []string{
		`error: {"password": [redacted]` + secret + `, broken`,
		`token=[redacted]` + secret + `&x=1`,
		`see ?access_token=[redacted]` + secret,
		`--password [redacted]` + secret,
		`run --api-key [redacted:len=5]` + secret + ` now`,
		`api_key = [redacted]` + secret,
		`password: [redacted]` + secret,
		`{"password": "[redacted]` + secret + `"`,
	} {
		got := r.Scrub(s)
		if strings.Contains(got, secret) || strings.Contains(got, "Secret") {
			t.Errorf("Scrub(%q) = %q: the value behind the mask is in the clear", s, got)
		}
		if again := r.Scrub(got); again != got {
			t.Errorf("Scrub twice changed %q to %q", got, again)
		}
	}
	mask := r.Mask("abcdefgh")
	for _, s := range []string{
		`error: {"password": ` + mask + `, broken`,
		`token=` + mask + `&x=1`,
		`--password ` + mask,
		`api_key = ` + mask,
		`api_key=` + mask + `;`,
	} {
		if got := r.Scrub(s); got != s {
			t.Errorf("Scrub(%q) = %q: a mask alone is kept", s, got)
		}
	}
}

// TestPassNameHoldsNoStructure: under a name that is a credential name
// only by its last word pass or pw, a number, true, false or null is a
// count and kept ({"pass": 5}), but an array or an object may hold the
// password and is masked as under any credential name.
func TestPassNameHoldsNoStructure(t *testing.T) {
	r := NewRedactor()
	for _, tc := range []struct {
		in   string
		keep bool
	}{
		{`{"pass": ["Hunter2Secret"]}`, false},
		{`{"db_pass": {"v": "Hunter2Secret"}}`, false},
		{`{"user_pw": [{"value": "Hunter2Secret"}]}`, false},
		{`{"pass": 5, "fail": 0}`, true},
		{`{"pass": true}`, true},
		{`{"pass": null}`, true},
	} {
		got := string(r.RedactJSON([]byte(tc.in)))
		if tc.keep && got != tc.in {
			t.Errorf("RedactJSON(%s) = %s, want it kept", tc.in, got)
		}
		if !tc.keep && strings.Contains(got, "Hunter2") {
			t.Errorf("RedactJSON(%s) = %s: the password is in the clear", tc.in, got)
		}
	}
}

// TestArrayUnderNameInText: in text that is no JSON document (an error
// message quoting JSON, a cut body), an array of strings or an object
// with no object in it under a credential name is masked whole: the
// bare-value pattern masked its "[" or "{" alone and kept the strings.
func TestArrayUnderNameInText(t *testing.T) {
	r := NewRedactor()
	for _, s := range []string{
		`bad input: {"password": ["Hunter2Secret"]} x`,
		`bad input: {"pass": ["Hunter2Secret", "Other9Secret"]} x`,
		`cut: {"api_key": ["Hunter2Secret`,
		`bad input: {"password": {"v": "Hunter2Secret"}} x`,
		`bad input: {"db_pass": {"v": "Hunter2Secret", "n": 5}, "ok": 1} x`,
		`cut: {"token": {"v": "Hunter2Secret`,
	} {
		got := r.Scrub(s)
		if strings.Contains(got, "Secret") {
			t.Errorf("Scrub(%q) = %q: a string of the array is in the clear", s, got)
		}
		if again := r.Scrub(got); again != got {
			t.Errorf("Scrub twice changed %q to %q", got, again)
		}
	}
}
