package record

import (
	"strings"
	"testing"
)

// TestRedactQuotedAndURLSecretsInText (attack8): credentials written in
// free text as config files, Python and URLs write them, with no JWT or
// Bearer shape: a quoted YAML or .env value, a TOML assignment, a Python
// dict's repr (a pydantic error's input_value), a URL's user information,
// an OAuth fragment. Each is masked with its quotes kept; and the texts
// around them that are no credentials stay as they were. All of these were
// kept before.
func TestRedactQuotedAndURLSecretsInText(t *testing.T) {
	t.Parallel()
	red := NewRedactorKey([]byte("textshape"))
	const v = "zqPlainValue0001xq"
	m := red.Mask(v)
	cases := []struct{ in, want string }{
		{`password: "` + v + `"`, `password: "` + m + `"`},
		{`  db_password: '` + v + `'`, `  db_password: '` + m + `'`},
		{`token: "` + v + `"`, `token: "` + m + `"`},
		{`secret: "` + v, `secret: "` + Redacted + `"`}, // cut: no length
		{`OPENAI_API_KEY="` + v + `"`, `OPENAI_API_KEY="` + m + `"`},
		{`export GH_TOKEN='` + v + `'`, `export GH_TOKEN='` + m + `'`},
		{`client_secret = "` + v + `"`, `client_secret = "` + m + `"`},
		{`api_token = ` + v, `api_token = ` + m},
		{`login(user="bob", password="` + v + `")`, `login(user="bob", password="` + m + `")`},
		{`input_value={'user': 'bob', 'password': '` + v + `'}`, `input_value={'user': 'bob', 'password': '` + m + `'}`},
		{`{'api_key': "` + v + `", 'n': 1}`, `{'api_key': "` + m + `", 'n': 1}`},
		{`{'pin_count': 1, 'secret': ` + v + `}`, `{'pin_count': 1, 'secret': ` + m + `}`},
		{`{'pin_code': 1234, 'secret': ` + v + `}`, `{'pin_code': ` + red.Mask("1234") + `, 'secret': ` + m + `}`}, // a PIN (redact12)
		{"could not connect to postgres://admin:" + v + "@127.0.0.1:5432/app", "could not connect to postgres://" + red.Mask("admin:"+v) + "@127.0.0.1:5432/app"},
		{"git clone https://" + v + "@127.0.0.1/org/repo.git", "git clone https://" + m + "@127.0.0.1/org/repo.git"},
		{"redis://:" + v + "@127.0.0.1:6379/0", "redis://" + red.Mask(":"+v) + "@127.0.0.1:6379/0"},
		{"http://127.0.0.1/cb#access_token=" + v + "&token_type=bearer", "http://127.0.0.1/cb#access_token=" + m + "&token_type=bearer"},
	}
	for _, c := range cases {
		if got := red.Scrub(c.in); got != c.want {
			t.Errorf("Scrub(%q)\n = %q\nwant %q", c.in, got, c.want)
		}
	}
	keep := []string{
		"if token == expected { return }",
		"max_tokens = 100",
		`{'author': 'Tolkien', 'keyword': 'ring'}`,
		"write to ops@example.com or see http://127.0.0.1:8080/mcp",
		"session: expired",
		`mode = "fast"`,
		"http://[redacted:len=10:h=0123abcd]@127.0.0.1/",
		`password: "[redacted:len=8:h=0123abcd]"`,
	}
	for _, s := range keep {
		if got := red.Scrub(s); got != s {
			t.Errorf("Scrub(%q) = %q, want it unchanged", s, got)
		}
	}
	// A URL's query carrying JSON (serve's ?params=…): the JSON is
	// redacted as JSON, so an escaped quote inside a string is the
	// string's own.
	u := `http://127.0.0.1/s/x/mcp?params=%7B%22data%22%3A%7B%22config%22%3A%22token%3A+%5C%22` + v + `%5C%22%22%7D%7D`
	if got := red.URL(u); strings.Contains(got, v) || !strings.Contains(got, "redacted") {
		t.Errorf("URL(%q) = %q", u, got)
	}
}

// TestRedactNameValuePairs (attack8): a credential held as a name/value
// pair, {"name": "API_KEY", "value": "…"} (a HAR header, a Kubernetes env
// entry, an HTML form field, MCP's completion/complete argument), is
// masked whichever member comes first and at any depth, and the pair's
// other members and other pairs are kept. The value was kept before.
func TestRedactNameValuePairs(t *testing.T) {
	t.Parallel()
	red := NewRedactorKey([]byte("pairs"))
	const v = "zqPlainValue0002xq"
	m := red.Mask(v)
	cases := []struct{ in, want string }{
		{`{"env":[{"name":"DB_PASSWORD","value":"` + v + `"},{"name":"MODE","value":"fast"}]}`,
			`{"env":[{"name":"DB_PASSWORD","value":"` + m + `"},{"name":"MODE","value":"fast"}]}`},
		{`{"headers":[{"value":"` + v + `","name":"X-Api-Key"}]}`, `{"headers":[{"value":"` + m + `","name":"X-Api-Key"}]}`},
		{`{"Name":"/prod/db/password","Type":"SecureString","Value":"` + v + `"}`, `{"Name":"/prod/db/password","Type":"SecureString","Value":"` + m + `"}`},
		{`{"method":"completion/complete","params":{"argument":{"name":"api_key","value":"` + v + `"}}}`,
			`{"method":"completion/complete","params":{"argument":{"name":"api_key","value":"` + m + `"}}}`},
		{`{"name":"session_ttl","value":null}`, `{"name":"session_ttl","value":null}`},
		{`{"name":"max_tokens","value":100}`, `{"name":"max_tokens","value":100}`},
		{`{"name":"get_token","description":"gets one","value":{"a":1}}`, `{"name":"get_token","description":"gets one","value":"` + red.Mask(`{"a":1}`) + `"}`},
	}
	for _, c := range cases {
		if got, _ := red.Body([]byte(c.in), 0); got != c.want {
			t.Errorf("Body(%s)\n = %s\nwant %s", c.in, got, c.want)
		}
	}
}
