package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestMask22ThroughTheProxy (mask22): a tool's result travels through the
// real HTTP proxy (127.0.0.1, bodies recorded) from a real upstream on
// 127.0.0.1, and the record and report's outputs over it (text, --json,
// --html, --har) keep what a diagnosis reads and hold no secret: OAuth
// metadata's two-name lists (grant_types, the token endpoint's methods)
// and a tool's required arguments are kept as sent, in structuredContent
// (JSON) and in a text content (JSON text); a name/value pair array
// (fetch's headers) still has its value masked; a credential-shaped word
// in a credential exception's message is masked, a time in one kept; a
// response header under a credential's name ending in a time keeps the
// time and masks a string; a .netrc entry streamed over data lines has
// its password masked.
func TestMask22ThroughTheProxy(t *testing.T) {
	secrets := map[string]string{
		"pair array, JSON":      canary("m22pj"),
		"pair array, text":      canary("m22pt"),
		"pair under a non-list": canary("m22pn"),
		"exception message":     canary("m22ex"),
		"exception, API key":    canary("m22ak"),
		"string under a time":   canary("m22st"),
		"netrc over data lines": canary("m22nd"),
	}
	metadata := `{"issuer":"https://as.example","grant_types_supported":["authorization_code","refresh_token"],` +
		`"grant_types":["password","refresh_token"],"token_endpoint_auth_methods_supported":["client_secret_basic","none"],` +
		`"scopes_supported":["session","read"],"required":["api_key","query"]}`
	var (
		mu   sync.Mutex
		sent []byte
	)
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		sent = append(sent, b...)
		mu.Unlock()
		var req struct {
			ID     json.RawMessage `json:"id"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		if err := json.Unmarshal(b, &req); err != nil || len(req.ID) == 0 {
			http.Error(w, "want a JSON-RPC request", http.StatusBadRequest)
			return
		}
		if req.Params.Name == "stream" {
			// A tool's output streamed a line an event, then its answer.
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, "data: cat ~/.netrc\ndata: machine api.example.com\ndata: login bob\ndata: password "+
				secrets["netrc over data lines"]+"\n\ndata: "+`{"jsonrpc":"2.0","id":`+string(req.ID)+`,"result":{"content":[]}}`+"\n\n")
			return
		}
		text := metadata + "\n" + `{"headers":[["authorization","Bearer ` + secrets["pair array, text"] + `"],["accept","*/*"]]}` +
			"\nPasswordMismatchError: expected " + secrets["exception message"] + " for bob" +
			"\nAuthenticationError: Incorrect API key provided: " + secrets["exception, API key"] + ". See https://as.example/keys." +
			"\nTokenExpiredError: jwt expired at 2026-12-07T10:00:00Z"
		structured := `{"metadata":` + metadata + `,"headers":[["X-Api-Key","` + secrets["pair array, JSON"] + `"]],` +
			`"args":["--api-key","` + secrets["pair under a non-list"] + `"]}`
		textJSON, _ := json.Marshal(text)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Client-Secret-Expires-At", "1700000000")
		w.Header().Set("X-Token-Expires-At", secrets["string under a time"])
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(req.ID)+`,"result":{"content":[{"type":"text","text":`+
			string(textJSON)+`}],"structuredContent":`+structured+`}}`)
	}))
	defer upstream.Close()

	dir := t.TempDir()
	rec := filepath.Join(dir, "proxy.jsonl")
	px := runHTTPProxyForTest(t, proxyOptions{upstream: upstream.URL + "/mcp", recordFile: rec, recordBodies: "all"})
	var got []byte
	for i, tool := range []string{"metadata", "stream"} {
		req, err := http.NewRequest(http.MethodPost, px.base+"/mcp",
			strings.NewReader(`{"jsonrpc":"2.0","id":`+string(rune('1'+i))+`,"method":"tools/call","params":{"name":"`+tool+`","arguments":{}}}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		got = append(got, b...)
		for name, vs := range resp.Header {
			got = append(got, name+": "+strings.Join(vs, ", ")+"\n"...)
		}
	}
	px.stop()

	mu.Lock()
	all := append(append([]byte{}, sent...), got...)
	mu.Unlock()
	for _, k := range sortedKeys(secrets) {
		if !bytes.Contains(all, []byte(secrets[k])) {
			t.Errorf("the %s secret never travelled: the test proves nothing for it", k)
		}
	}
	out := outputs{}
	out.file(t, "proxy --record", rec)
	out.reports(t, dir, rec)
	needles := map[string]string{}
	for k, v := range secrets {
		needles[k], needles[k+", JSON-escaped"] = v, jsonQuoted(v)
	}
	out.leaks(t, needles)
	// The metadata as JSON (structuredContent) and as JSON text in a
	// string (the text content), each held in the record's body text: a
	// JSON string, so quoted once more.
	quote := func(s string) string { return strings.Trim(jsonQuoted(s), `"`) }
	keeps := []string{quote(metadata), quote(quote(metadata)),
		quote(`"headers":[["X-Api-Key","[redacted:len=`), quote(`"args":["--api-key","[redacted:len=`),
		quote(quote(`[["authorization","Bearer [redacted:len=`)),
		quote(quote("PasswordMismatchError: expected [redacted:len=")), quote(quote("AuthenticationError: Incorrect API key provided: [redacted:len=")),
		quote(quote("TokenExpiredError: jwt expired at 2026-12-07T10:00:00Z")),
		`"X-Client-Secret-Expires-At":["1700000000"]`, `"X-Token-Expires-At":["[redacted:len=`,
		quote("data: login bob\ndata: password [redacted:len=")}
	for _, keep := range keeps {
		if !bytes.Contains(out["proxy --record"], []byte(keep)) {
			t.Errorf("the record lost %s (kept, or masked, as a diagnosis needs):\n%s", keep, out["proxy --record"])
		}
	}
}
