package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/record"
)

// TestRedact20SecretsNeverRecorded (redact20): each class of credential
// redact20 found recorded in the clear travels through the real HTTP proxy
// (127.0.0.1, bodies recorded) to a real upstream on 127.0.0.1 and back,
// and the record file holds none of them: a dotted credential name on a
// "name: value" line of a tool's text result (access.code, code.verifier,
// auth.token with a value of two words), a password's or PIN's form under
// its word (pw_hash, pin_number) in structuredContent and in text, a
// .netrc entry's password, a Stripe key, curl's -u password and a JWT
// whose dots are written "\u002e" in an upstream's text error, and a session's idempotency key
// in a request header (masked, not hashed unkeyed). The client gets every
// value (the proxy changes nothing); the record keeps the names and what a
// diagnosis reads beside them.
func TestRedact20SecretsNeverRecorded(t *testing.T) {
	jwt := canaryJWT("r20jwt")
	jwtEsc := strings.ReplaceAll(jwt, ".", `\u002e`)
	secrets := map[string]string{
		"text access.code":   canary("r20acc"),
		"text code.verifier": canary("r20ver"),
		"text auth.token":    canary("r20tok"),
		"result pw_hash":     canary("r20pwh"),
		"result pin_number":  "80417263",
		"text pw_hash":       canary("r20tph"),
		"error netrc":        canary("r20net"),
		"error stripe":       "sk_live_" + canary("r20stripe0"),
		"error escaped JWT":  jwtEsc,
		"error curl -u":      canary("r20curl"),
	}
	const sessionIdem = "order-20-0001"
	upstream := newTravelUpstream(t, "Session-Idempotency-Key", func(w http.ResponseWriter, id json.RawMessage, tool string) {
		if tool == "fail" {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.WriteHeader(http.StatusBadGateway)
			_, _ = io.WriteString(w, "upstream failed with token "+secrets["error escaped JWT"]+"\n"+
				"machine api.example.com login bob password "+secrets["error netrc"]+"\n"+
				"charge refused for "+secrets["error stripe"]+"\n"+
				"retry with: curl -s -u bob:"+secrets["error curl -u"]+" https://api.example/v1\n")
			return
		}
		text := "config:\naccess.code: " + secrets["text access.code"] + "\ncode.verifier: " + secrets["text code.verifier"] +
			"\nauth.token: Bearer-less " + secrets["text auth.token"] + "\nuser.pw_hash: " + secrets["text pw_hash"] + "\nparams.name: echo"
		result, _ := json.Marshal(map[string]any{
			"content":           []any{map[string]any{"type": "text", "text": text}},
			"structuredContent": map[string]any{"pw_hash": secrets["result pw_hash"], "pin_number": secrets["result pin_number"], "pass_rate": "0.97"},
		})
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":` + string(result) + `}`))
	})

	rec := filepath.Join(t.TempDir(), "proxy.jsonl")
	px := runHTTPProxyForTest(t, proxyOptions{upstream: upstream.URL + "/mcp", recordFile: rec, recordBodies: "all"})
	var got []byte
	for i, tool := range []string{"echo", "fail"} {
		body := `{"jsonrpc":"2.0","id":` + string(rune('1'+i)) + `,"method":"tools/call","params":{"name":"` + tool + `","arguments":{}}}`
		got = append(got, postMCP(t, px.base+"/mcp", body, map[string]string{"Session-Idempotency-Key": sessionIdem})...)
	}
	px.stop()

	// The test proves something only if every value travelled.
	all := upstream.travelled(got)
	for _, k := range sortedKeys(secrets) {
		if !bytes.Contains(all, []byte(secrets[k])) && !bytes.Contains(all, []byte(jsonQuoted(secrets[k]))) {
			t.Errorf("the %s secret never travelled: the test proves nothing for it", k)
		}
	}
	if !bytes.Contains(all, []byte(sessionIdem)) {
		t.Errorf("the session idempotency key never travelled")
	}
	out := outputs{}
	out.file(t, "proxy --record", rec)
	// Each as the file writes it too (the record's JSON escapes the
	// backslash of "\u002e"), and the JWT's segments alone.
	needles := map[string]string{}
	for k, v := range secrets {
		needles[k], needles[k+", JSON-escaped"] = v, jsonQuoted(v)
	}
	for i, seg := range strings.Split(jwt, ".") {
		needles["escaped JWT segment "+string(rune('0'+i))] = seg
	}
	out.leaks(t, needles)
	if h := record.HashSession(sessionIdem); bytes.Contains(out["proxy --record"], []byte(h)) {
		t.Errorf("the record holds the unkeyed hash %s of the session idempotency key", h)
	}
	for _, keep := range []string{`access.code: [redacted:len=`, `code.verifier: [redacted:len=`, `auth.token: [redacted:len=`,
		`params.name: echo`, `\"pass_rate\":\"0.97\"`, `machine api.example.com login bob password [redacted:len=`, `curl -s -u bob:[redacted:len=`,
		`"Session-Idempotency-Key":["[redacted:len=13:`} {
		if !bytes.Contains(out["proxy --record"], []byte(keep)) {
			t.Errorf("the record lost %q (kept, or masked, as a diagnosis needs):\n%s", keep, out["proxy --record"])
		}
	}
}

// jsonQuoted is s as a JSON string holds it, without its quotes.
func jsonQuoted(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}
