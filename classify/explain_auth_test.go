package classify

import (
	"net/http"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/wire"
)

// TestExplainChallengeShowsOnlyItsParameters: --text's auth line names the
// challenge's scheme and the parameters it carried, each as it came, and
// nothing for one it did not carry (the JSON omits it too). Before, a 401
// whose WWW-Authenticate had no error printed error="" (and scope="" for
// one without a scope), as if the server had sent them empty.
func TestExplainChallengeShowsOnlyItsParameters(t *testing.T) {
	const rm = "http://127.0.0.1:1/.well-known/oauth-protected-resource"
	tests := []struct {
		status    int
		challenge string
		want      string
	}{
		{401, `Bearer resource_metadata="` + rm + `", scope="mcp"`, `  auth:   Bearer scope="mcp" resource_metadata="` + rm + `"`},
		{401, `Bearer resource_metadata="` + rm + `"`, `  auth:   Bearer resource_metadata="` + rm + `"`},
		{401, `Bearer`, `  auth:   Bearer`},
		{401, `Bearer error="invalid_token", resource_metadata="` + rm + `"`, `  auth:   Bearer error="invalid_token" resource_metadata="` + rm + `"`},
		{403, `Bearer error="insufficient_scope", error_description="needs \"write\"", scope="mcp mcp:write", resource_metadata="` + rm + `"`,
			`  auth:   Bearer error="insufficient_scope" error_description="needs \"write\"" scope="mcp mcp:write" resource_metadata="` + rm + `"`},
	}
	for _, tt := range tests {
		ex := &Exchange{
			Method: "tools/call", ID: wire.IntID(1), Status: tt.status,
			Header: http.Header{http.CanonicalHeaderKey("WWW-Authenticate"): {tt.challenge}},
			Body:   strings.NewReader(""),
		}
		r, err := Classify(ex)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, line := range strings.Split(Explain(r), "\n") {
			if strings.HasPrefix(line, "  auth:") {
				got = append(got, line)
			}
		}
		if len(got) != 1 || got[0] != tt.want {
			t.Errorf("WWW-Authenticate: %s\nauth lines %q\nwant       %q", tt.challenge, got, tt.want)
		}
	}
}
