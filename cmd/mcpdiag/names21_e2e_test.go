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

// TestNames21SecretsNeverRecorded (names21): the credentials names21
// found recorded in the clear travel through the real HTTP proxy
// (127.0.0.1, bodies recorded) to a real upstream on 127.0.0.1 and back,
// and neither the record file nor report's outputs over it (text, --json,
// --html page, --har) hold one: an npm token and a Stripe webhook secret
// in a tool's text result, a one-time password under its word (a dotted
// field line, a form pair in text, a JSON member of structuredContent),
// a credential word before a neutral last segment (secret.value:),
// client_secret with a blank for separator, and a .netrc entry split
// over the lines of an upstream's plain-text error. The names and what a
// diagnosis reads beside them are kept: client_secret_expires_at stays
// the number 0, progress.token and an exception's message stay as sent.
// Slack's and Discord's webhook URLs (outsider22) keep their host and
// head, their secret path masked.
func TestNames21SecretsNeverRecorded(t *testing.T) {
	secrets := map[string]string{
		"text npm":           "npm_" + "TCllNwh2WLQlMWVhybM1iQrsTj6rMQ0BOh6d",
		"text whsec":         "whsec_" + canary("n21wh") + "Kd82Ls0q", // 32 letters and digits, as Stripe writes them
		"text user.otp":      "80417263",
		"text otp=":          "59203716",
		"result otp":         "73920418",
		"text secret.value":  canary("n21sv"),
		"text client_secret": canary("n21cs"),
		// Mid-line, as an echo tool gives it back (collide21).
		"text Echo: client_secret": canary("c21cs"),
		"error netrc":              canary("n21net"),
		// A webhook URL's path is its credential (outsider22).
		"text slack webhook":   "T0N22SLK1/B0N22SLK2/" + canary("o22sl"),
		"text discord webhook": "1234567890123456789/" + canary("o22dc") + "-Ab_Cd",
	}
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
		if req.Params.Name == "fail" {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.WriteHeader(http.StatusBadGateway)
			_, _ = io.WriteString(w, "cannot read ~/.netrc entry:\nmachine api.example.com\nlogin bob\npassword "+secrets["error netrc"]+"\n")
			return
		}
		text := "publish token " + secrets["text npm"] + "\nwebhook " + secrets["text whsec"] +
			"\nuser.otp: " + secrets["text user.otp"] + "\nverify otp=" + secrets["text otp="] +
			"\nsecret.value: " + secrets["text secret.value"] + "\nclient_secret " + secrets["text client_secret"] +
			"\nEcho: client_secret   " + secrets["text Echo: client_secret"] +
			"\nprogress.token: 42\nInvalidTokenError: Signature has expired" +
			"\nposted to https://hooks.slack.com/services/" + secrets["text slack webhook"] +
			" and https://discord.com/api/webhooks/" + secrets["text discord webhook"]
		result, _ := json.Marshal(map[string]any{
			"content":           []any{map[string]any{"type": "text", "text": text}},
			"structuredContent": map[string]any{"otp": json.Number(secrets["result otp"]), "client_secret_expires_at": 0},
		})
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":` + string(result) + `}`))
	}))
	defer upstream.Close()

	dir := t.TempDir()
	rec := filepath.Join(dir, "proxy.jsonl")
	px := runHTTPProxyForTest(t, proxyOptions{upstream: upstream.URL + "/mcp", recordFile: rec, recordBodies: "all"})
	var got []byte
	for i, tool := range []string{"echo", "fail"} {
		body := `{"jsonrpc":"2.0","id":` + string(rune('1'+i)) + `,"method":"tools/call","params":{"name":"` + tool + `","arguments":{}}}`
		req, err := http.NewRequest(http.MethodPost, px.base+"/mcp", strings.NewReader(body))
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
	}
	px.stop()

	// The test proves something only if every value travelled.
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
	for _, keep := range []string{`user.otp: [redacted:len=8:`, `otp=[redacted:len=8:`, `secret.value: [redacted:len=`,
		`client_secret [redacted:len=`, `Echo: client_secret   [redacted:len=`, `\"otp\":\"[redacted:len=8:`, `\"client_secret_expires_at\":0`,
		`progress.token: 42`, `InvalidTokenError: Signature has expired`, `login bob\npassword [redacted:len=`,
		`https://hooks.slack.com/services/[redacted:len=`, `https://discord.com/api/webhooks/[redacted:len=`} {
		if !bytes.Contains(out["proxy --record"], []byte(keep)) {
			t.Errorf("the record lost %q (kept, or masked, as a diagnosis needs):\n%s", keep, out["proxy --record"])
		}
	}
}
