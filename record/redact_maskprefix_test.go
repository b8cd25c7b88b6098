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
