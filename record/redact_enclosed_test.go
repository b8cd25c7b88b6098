package record

import (
	"strings"
	"testing"
)

// TestEnclosedAssignments: a credential written name=value right after a
// quote, a bracket, a comma or a pipe (a container's environment in a tool's
// text, a Python list, a call's keyword in parentheses, a comma-separated
// setting) loses its value, the text around it kept byte for byte, and a
// second Scrub changes nothing; an assignment that is no credential, and a
// count, stay. A list of assignments is no name/value pair: ["DB_PASSWORD=…",
// "PATH=/bin"] keeps PATH=/bin. Before, each secret here was recorded in the
// clear (server-everything's echo through proxy --stdio --record-bodies all
// showed the first), and PATH=/bin was masked in its place.
func TestEnclosedAssignments(t *testing.T) {
	const secret = "plainvalue9876"
	for _, c := range []struct{ in, keep string }{
		{`{"Env": ["DB_PASSWORD=plainvalue9876", "PATH=/bin"]}`, `"PATH=/bin"]}`},
		{`{\"Env\": [\"DB_PASSWORD=plainvalue9876\", \"PATH=/bin\"]}`, `\"PATH=/bin\"]}`},
		{`['API_KEY=plainvalue9876']`, `']`},
		{`connect(api_key=plainvalue9876)`, `)`},
		{`opts: a=1,api_key=plainvalue9876,b=2`, `,b=2`},
		{`"x.token=plainvalue9876"`, `"`},
		{`"password=plainvalue9876"`, `"`},
		{"`secret=plainvalue9876`", "`"},
		{`flags|client_secret=plainvalue9876|x`, `|x`},
		// review22: after any of these bytes no rule read the name, and
		// the value was recorded in the clear.
		{`<p>password=plainvalue9876</p>`, `</p>`},
		{`<td>api_key=plainvalue9876</td><td>x</td>`, `</td><td>x</td>`},
		{`**password=plainvalue9876**`, `**`},
		{`error:password=plainvalue9876 rejected`, ` rejected`},
		{`GET /reset/token=plainvalue9876 HTTP/1.1`, ` HTTP/1.1`},
		{`$DB_PASSWORD=plainvalue9876`, ``},
		{`bob@password=plainvalue9876`, ``},
		{`!secret=plainvalue9876;x`, `;x`},
		{`~token=plainvalue9876`, ``},
		{`^api_key=plainvalue9876`, ``},
	} {
		got := Default.Scrub(c.in)
		if strings.Contains(got, secret) || !strings.HasSuffix(got, c.keep) || !strings.Contains(got, "[redacted:len=14:") {
			t.Errorf("Scrub(%q) = %q: want the value masked and %q kept", c.in, got, c.keep)
		}
		if again := Default.Scrub(got); again != got {
			t.Errorf("Scrub twice: %q, then %q", got, again)
		}
	}
	// An HTML character reference in the value does not end it
	// (FuzzEscapedPairMetamorphic, review22: "PlAnTeD&#39;0123…" after a
	// quote kept all after the "&"): masked whole, 19 bytes as written.
	for _, c := range []struct{ in, keep string }{
		{`"access_token=plain&#39;value9876" x`, `" x`},
		{`<p>password=plain&#39;value9876</p>`, `</p>`},
		{`(password=plain&#39;value9876) x`, `) x`},
	} {
		got := Default.Scrub(c.in)
		if strings.Contains(got, "value9876") || !strings.HasSuffix(got, c.keep) || !strings.Contains(got, "[redacted:len=19:") {
			t.Errorf("Scrub(%q) = %q: want the value masked whole and %q kept", c.in, got, c.keep)
		}
		if again := Default.Scrub(got); again != got {
			t.Errorf("Scrub twice: %q, then %q", got, again)
		}
	}
	for _, s := range []string{
		`["PATH=/bin", "HOME=/root"]`, `"state=open"`, `"code=200"`, `(max_tokens=100)`, `"password=true"`,
		`["LANG=C", "TERM=xterm"]`, `(x=1, y=2)`,
		`<p>state=open</p>`, `**max_tokens=100**`, `error:password_length=12`, `/v1/tokens=3`, `$HOME=/root`,
	} {
		if got := Default.Scrub(s); got != s {
			t.Errorf("Scrub(%q) = %q, want it unchanged", s, got)
		}
	}
	// Through a tool result as the proxy records it.
	body := []byte(`{"result":{"content":[{"type":"text","text":"{\"Env\": [\"DB_PASSWORD=plainvalue9876\", \"PATH=/bin\"]}"}]},"jsonrpc":"2.0","id":3}`)
	if got := string(Default.RedactJSON(body)); strings.Contains(got, secret) || !strings.Contains(got, `\"PATH=/bin\"`) {
		t.Errorf("RedactJSON: %s", got)
	}
}
