package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"path/filepath"
	"testing"
)

// TestExemptTailsNeverRecorded (redact19): a credential name followed by
// the words of a redaction exemption, client_secret_token_endpoint (a
// descriptor's) and api_key_idempotency_key (an idempotency key's), in a
// tools/call's arguments (JSON members, and JSON text in a string), in a
// request header, and in the server's result (structuredContent members,
// text lines), goes through the real HTTP proxy (127.0.0.1, bodies
// recorded) to a real upstream on 127.0.0.1 and back: the client gets
// every value (the proxy changes nothing), the record file holds none of
// them, and it keeps the values of the exempt names themselves
// (token_endpoint, idempotency_key, Idempotency-Key). Before redact19 the
// record held each of them as sent.
func TestExemptTailsNeverRecorded(t *testing.T) {
	secrets := map[string]string{
		"args descriptor": canary("argdesc"), "args idempotency": canary("argidem"),
		"args text descriptor": canary("atxdesc"), "args text idempotency": canary("atxidem"),
		"header idempotency": canary("hdridem"),
		"result descriptor":  canary("resdesc"), "result idempotency": canary("residem"),
		"result text descriptor": canary("rtxdesc"), "result text idempotency": canary("rtxidem"),
	}
	const (
		tokenEndpoint = "https://as.example/oauth/token"
		idemKey       = "k-19-idempotent"
		headerKey     = "k-19-header"
	)
	upstream := newTravelUpstream(t, "X-Api-Key-Idempotency-Key", func(w http.ResponseWriter, id json.RawMessage, _ string) {
		text := "client_secret_token_endpoint: " + secrets["result text descriptor"] + "\napi_key_idempotency_key=" + secrets["result text idempotency"]
		result, _ := json.Marshal(map[string]any{
			"content": []any{map[string]any{"type": "text", "text": text}},
			"structuredContent": map[string]any{
				"client_secret_token_endpoint": secrets["result descriptor"],
				"api_key_idempotency_key":      secrets["result idempotency"],
				"token_endpoint":               tokenEndpoint,
				"idempotency_key":              idemKey,
			},
		})
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":` + string(result) + `}`))
	})

	rec := filepath.Join(t.TempDir(), "proxy.jsonl")
	px := runHTTPProxyForTest(t, proxyOptions{upstream: upstream.URL + "/mcp", recordFile: rec, recordBodies: "all"})

	textArg, _ := json.Marshal(map[string]string{
		"client_secret_token_endpoint": secrets["args text descriptor"],
		"api_key_idempotency_key":      secrets["args text idempotency"],
	})
	args, _ := json.Marshal(map[string]any{
		"client_secret_token_endpoint": secrets["args descriptor"],
		"api_key_idempotency_key":      secrets["args idempotency"],
		"token_endpoint":               tokenEndpoint,
		"idempotency_key":              idemKey,
		"text":                         string(textArg),
	})
	body := `{"jsonrpc":"2.0","id":19,"method":"tools/call","params":{"name":"echo","arguments":` + string(args) + `}}`
	got := postMCP(t, px.base+"/mcp", body, map[string]string{"X-Api-Key-Idempotency-Key": secrets["header idempotency"], "Idempotency-Key": headerKey})
	px.stop()

	// The test proves something only if every value travelled.
	all := upstream.travelled(got)
	for _, k := range sortedKeys(secrets) {
		if !bytes.Contains(all, []byte(secrets[k])) {
			t.Errorf("the %s secret never travelled: the test proves nothing for it", k)
		}
	}
	out := outputs{}
	out.file(t, "proxy --record", rec)
	out.leaks(t, secrets)
	for _, keep := range []string{tokenEndpoint, idemKey, headerKey, `client_secret_token_endpoint\":\"[redacted:len=`, `api_key_idempotency_key\":\"[redacted:len=`} {
		if !bytes.Contains(out["proxy --record"], []byte(keep)) {
			t.Errorf("the record lost %q (kept, or masked, as a diagnosis needs):\n%s", keep, out["proxy --record"])
		}
	}
}
