package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestClassifyMasksWhatItReads (reread9): mcpdiag classify quotes the
// response it reads (a JSON-RPC error's message and data) in its verdict;
// a credential there, or the response's own cookie quoted in its body, is
// masked in the JSON verdict, the --text one and the error line.
func TestClassifyMasksWhatItReads(t *testing.T) {
	secrets := []string{"XclsMsg1234abcd", "XclsData5678efgh", "XclsCookie9abc0def"}
	body := `{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"bad password: \"` + secrets[0] +
		`\" for session ` + secrets[2] + `","data":{"api_key":"` + secrets[1] + `"}}}`
	resp := "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nSet-Cookie: sid=" + secrets[2] + "; Path=/\r\n\r\n" + body
	file := filepath.Join(t.TempDir(), "resp.http")
	if err := os.WriteFile(file, []byte(resp), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, mode := range [][]string{nil, {"--text"}} {
		var stdout, stderr bytes.Buffer
		args := append(append([]string{"classify", "--method", "tools/call", "--id", "1"}, mode...), file)
		if code := run(args, nil, &stdout, &stderr); code != 0 {
			t.Fatalf("classify %v: exit %d: %s", mode, code, stderr.String())
		}
		if !strings.Contains(stdout.String(), "JSONRPC_ERROR") || !strings.Contains(stdout.String(), "[redacted:len=") {
			t.Errorf("classify %v: no verdict or no mask: the test proves nothing\n%s", mode, stdout.String())
		}
		for _, sec := range secrets {
			if strings.Contains(stdout.String()+stderr.String(), sec) {
				t.Errorf("classify %v prints %s:\n%s", mode, sec, stdout.String())
			}
		}
	}
}

// TestClassifyKeepsTheChallenge (outsider18): the JSON verdict's
// http.wwwAuthenticate is the evidence for a 401 or 403 (where the
// protected resource metadata is, the scope to ask for, the error); it
// held "[redacted:len=279:…]" in place of the whole object, because the
// verdict is redacted as JSON and "wwwAuthenticate" read as a credential
// name, while records keep the header it is parsed from.
func TestClassifyKeepsTheChallenge(t *testing.T) {
	const meta = "https://mcp.example.com/.well-known/oauth-protected-resource"
	cases := []struct{ name, header, scope, errCode string }{
		{"401 with metadata and scope", `Bearer resource_metadata="` + meta + `", scope="files:read"`, "files:read", ""},
		{"403 insufficient_scope", `Bearer error="insufficient_scope", scope="files:write", resource_metadata="` + meta + `"`, "files:write", "insufficient_scope"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp := "HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: " + c.header + "\r\nContent-Length: 0\r\n\r\n"
			file := filepath.Join(t.TempDir(), "resp.http")
			if err := os.WriteFile(file, []byte(resp), 0o644); err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			if code := run([]string{"classify", "--id", "1", file}, nil, &stdout, &stderr); code != 0 {
				t.Fatalf("classify: exit %d: %s", code, stderr.String())
			}
			var v struct {
				HTTP struct {
					WWWAuthenticate struct {
						Raw, Scheme, ResourceMetadata, Scope, Error string
					}
				}
			}
			if err := json.Unmarshal(stdout.Bytes(), &v); err != nil {
				t.Fatalf("the verdict does not read back (%v):\n%s", err, stdout.String())
			}
			got := v.HTTP.WWWAuthenticate
			if got.Raw != c.header || got.Scheme != "Bearer" || got.ResourceMetadata != meta || got.Scope != c.scope || got.Error != c.errCode {
				t.Errorf("http.wwwAuthenticate = %+v; want raw %q, scheme Bearer, resourceMetadata %q, scope %q, error %q\n%s",
					got, c.header, meta, c.scope, c.errCode, stdout.String())
			}
		})
	}
}

// TestClassifyKeepsTheInputKeys (outsider18): the JSON verdict's
// input.requests[].key is the server's name for an MRTR input request, the
// key an --input FILE answers; it was printed as a mask
// ("[redacted:len=8:…]" for "approval"), because the verdict is redacted as
// JSON and "key" is a credential name there, while records keep it
// (scrubbed as text, as here: a key that is a credential stays masked).
func TestClassifyKeepsTheInputKeys(t *testing.T) {
	const jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJlc2lnbmF0dXJl"
	req := func(method string) string {
		return `{"method":"` + method + `","params":{"mode":"form","message":"?","requestedSchema":{"type":"object","properties":{}}}}`
	}
	cases := []struct {
		name, requests string
		want           []string // the keys printed, in order
	}{
		{"one key", `{"approval":` + req("elicitation/create") + `}`, []string{"approval"}},
		{"two keys", `{"key":` + req("elicitation/create") + `,"roots":{"method":"roots/list"}}`, []string{"key", "roots"}},
		{"a key that is a JWT stays masked", `{"` + jwt + `":` + req("elicitation/create") + `}`, []string{"[redacted:len="}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			body := `{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":` + c.requests + `,"requestState":"c3RhdGU"}}`
			resp := "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n" + body
			file := filepath.Join(t.TempDir(), "resp.http")
			if err := os.WriteFile(file, []byte(resp), 0o644); err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			if code := run([]string{"classify", "--id", "1", file}, nil, &stdout, &stderr); code != 0 {
				t.Fatalf("classify: exit %d: %s", code, stderr.String())
			}
			var v struct {
				Outcome string
				Input   struct {
					Requests []struct{ Key, Method string }
				}
			}
			if err := json.Unmarshal(stdout.Bytes(), &v); err != nil {
				t.Fatalf("the verdict does not read back (%v):\n%s", err, stdout.String())
			}
			if v.Outcome != "INPUT_REQUIRED" || len(v.Input.Requests) != len(c.want) {
				t.Fatalf("outcome %s, %d input requests; want INPUT_REQUIRED, %d\n%s", v.Outcome, len(v.Input.Requests), len(c.want), stdout.String())
			}
			for i, w := range c.want {
				if got := v.Input.Requests[i].Key; !strings.HasPrefix(got, w) {
					t.Errorf("input.requests[%d].key = %q, want %q\n%s", i, got, w, stdout.String())
				}
			}
			if strings.Contains(stdout.String(), "eyJzdWIi") {
				t.Errorf("the JWT key is printed:\n%s", stdout.String())
			}
		})
	}
}
