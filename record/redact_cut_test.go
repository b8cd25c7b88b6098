package record

import (
	"strings"
	"testing"
)

// TestTrimUnfinished: the token a cut ends in is dropped, to the last
// delimiter, or the whole URL whose authority the cut ends in; a
// text ending at a delimiter is kept, so trimming twice is trimming once.
func TestTrimUnfinished(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"text":"ghp_abc`, `{"text":"`},
		{`see postgres://admin:p&ss`, `see `},
		{`at https://h/p?x=1&y=ab`, `at https://h/p?x=1&y=`},
		{`see postgres://admin:pw@db.internal/ap`, `see `},
		{`Authorization: Bearer eyJhbGciOi`, `Authorization: Bearer `},
		{`a=1&password=hunt`, `a=1&password=`},
		{`{"a":[1,2]}`, `{"a":[1,2]}`},
		{`words and more `, `words and more `},
		{`token`, ``},
		{``, ``},
	} {
		got, dropped := trimUnfinished(tc.in)
		if got != tc.want || dropped != (got != tc.in) {
			t.Errorf("trimUnfinished(%q) = %q, %v; want %q", tc.in, got, dropped, tc.want)
		}
		if again, d := trimUnfinished(got); again != got || d {
			t.Errorf("trimUnfinished(%q) trimmed again to %q", got, again)
		}
	}
}

// TestEncodeCutBody: a body the producer cut (Truncated) is recorded
// without its unfinished last token, marked with Redacted; a whole body is
// recorded as it was.
func TestEncodeCutBody(t *testing.T) {
	var e Encoder
	for _, tc := range []struct {
		body Body
		want string
	}{
		{Body{Text: `{"url":"mysql://root:s3cr`, Truncated: true}, `{"url":"` + Redacted},
		{Body{Text: `{"k":"AKIAIOSFODNN7EX`, Truncated: true}, `{"k":"` + Redacted},
		{Body{Text: `{"k":"v", `, Truncated: true}, `{"k":"v", `},
		{Body{Text: `plain words`}, `plain words`},
	} {
		got := e.body(Default, &tc.body)
		if got.Text != tc.want || got.Truncated != tc.body.Truncated {
			t.Errorf("body %q: recorded %q (truncated %v), want %q", tc.body.Text, got.Text, got.Truncated, tc.want)
		}
		if strings.Contains(got.Text, "s3cr") || strings.Contains(got.Text, "AKIA") {
			t.Errorf("body %q: a fragment recorded: %q", tc.body.Text, got.Text)
		}
	}
}
