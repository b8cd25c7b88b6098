package record

import (
	"encoding/json"
	"io"
	"strings"
	"testing"
)

// plantNames are credential names the fuzzer plants values under; the
// fuzzer also tries names of its own (kept only when sensitiveName says
// they are credential names).
var plantNames = []string{
	"access_token", "apiSecret", "aws_secret_access_key", "passphrase", "jwt", "X-Api-Key", "privateKey",
	"client_assertion", "sessionToken", "DPoP", "cookie", "signature", "pwd", "password", "authorization",
	"otp", "user_totp", "mfaOtpCode", // names21
}

// The planted values: none is registered as a secret, so only the patterns
// can catch them.
const (
	plantValue = "PlAnTeD-0123456789-value"
	plantJWT   = "eyJhbGciOiJFUzI1NiJ9.eyJwbGFudCI6InllcyJ9.UGxBblRlRC1zaWduYXR1cmU"
	plantPEMIn = "UGxBblRlRC1wZW0tYm9keQ"
)

// FuzzRedactAdversarial plants credentials in adversarial bodies (the
// fuzzer's bytes) and checks properties of the redacted excerpt, not
// examples:
//
//   - no planted value survives: a value under a credential name at any
//     depth of a JSON document, a JWT, "Bearer …" and a PEM block in any
//     text or JSON string;
//   - the output is valid JSON when the input was;
//   - names are kept: the output's member names are the input's, in order,
//     except those inside a redacted value.
//
// Run it with a budget in iterations: go test -fuzz FuzzRedactAdversarial
// -fuzztime 100000x ./record.
func FuzzRedactAdversarial(f *testing.F) {
	f.Add(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}]}}`, "", uint8(0), uint8(2), uint16(5))
	f.Add(`{"a":[{"b":{}}],"c":"x"}`, "Api-Key", uint8(3), uint8(1), uint16(0))
	f.Add("event: message\ndata: {\"id\":1}\n\n", "", uint8(4), uint8(0), uint16(7))
	f.Add(`{"k":"\u0041\"\\","n":1e9,"t":true}`, "secret_key", uint8(1), uint8(5), uint16(3))
	f.Add("plain text with a colon: and = signs&x=1", "", uint8(2), uint8(0), uint16(12))
	f.Add(`[1,{"keyword":"x","progressToken":"y"},[]]`, "monkey", uint8(5), uint8(3), uint16(1))
	// names21's shapes: a blank for separator, a .netrc over lines, a
	// time under a secret's name, a key's id, an otp.
	f.Add("client_secret Hx7q2Lm9\nmachine h\nlogin u\npassword p4ss\nuser.otp: 804172\n", "otp", uint8(1), uint8(0), uint16(9))
	f.Add(`{"client_secret_expires_at":0,"key_id":"kid-1","session_count":4,"otp":804172}`, "user_totp", uint8(0), uint8(2), uint16(0))
	red := NewRedactor()
	f.Fuzz(func(t *testing.T, body, name string, which, depth uint8, at uint16) {
		if len(body) > 1<<16 || strings.Contains(strings.ToLower(body), "planted") || strings.Contains(body, "eyJ") || strings.Contains(body, "UGxB") {
			t.Skip()
		}
		if name == "" || !sensitiveName(name, ctxJSON) || len(name) > 64 {
			name = plantNames[int(which)%len(plantNames)]
		}
		var in string
		var planted []string
		if json.Valid([]byte(body)) && strings.HasPrefix(strings.TrimSpace(body), "{") {
			// Plant a member under a credential name at some depth, and a
			// JWT and a Bearer credential in a string.
			member, _ := json.Marshal(name)
			v := `"` + plantValue + `"`
			if which%3 == 1 {
				v = `{"x":["` + plantValue + `"]}`
			}
			plant := string(member) + ":" + v
			for range depth % 4 {
				plant = `"d":{` + plant + `}`
			}
			plant += `,"note":"token ` + plantJWT + ` and Bearer ` + plantValue + `x and -----BEGIN EC PRIVATE KEY-----\n` + plantPEMIn + `\n-----END EC PRIVATE KEY-----"`
			t0 := strings.TrimSpace(body)
			if strings.TrimSpace(t0[1:]) == "}" {
				in = "{" + plant + "}"
			} else {
				in = "{" + plant + "," + t0[1:]
			}
			planted = []string{plantValue, plantJWT, "UGxBblRlRC1zaWduYXR1cmU", plantPEMIn}
		} else {
			// Text: plant the shapes at a position of the fuzzer's choice.
			i := int(at) % (len(body) + 1)
			plant := " Bearer " + plantValue + " " + plantJWT + " \n-----BEGIN PRIVATE KEY-----\n" + plantPEMIn + "\n-----END PRIVATE KEY-----\n "
			in = body[:i] + plant + body[i:]
			planted = []string{plantValue, plantJWT, plantPEMIn}
		}
		out, truncated := red.Body([]byte(in), 0)
		if truncated {
			t.Fatalf("a %d-byte body was truncated at the default limit", len(in))
		}
		for _, p := range planted {
			if strings.Contains(out, p) {
				t.Fatalf("planted %q survived:\n in %q\nout %q", p, in, out)
			}
		}
		if !json.Valid([]byte(in)) {
			return
		}
		if !json.Valid([]byte(out)) {
			t.Fatalf("valid JSON became invalid:\n in %s\nout %s", in, out)
		}
		want, got := memberNames(t, in, red, true), memberNames(t, out, red, false)
		if strings.Join(want, "\x00") != strings.Join(got, "\x00") {
			t.Fatalf("member names changed:\nwant %q\n got %q\n in %s\nout %s", want, got, in, out)
		}
	})
}

// memberNames lists the member names of a JSON document in order. For the
// input (input true), the names inside a value under a credential name are
// left out, since that value is replaced whole, and each name is scrubbed
// as the redactor scrubs every string.
func memberNames(t *testing.T, doc string, red *Redactor, input bool) []string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(doc))
	dec.UseNumber()
	var names []string
	var walk func(record bool)
	walk = func(record bool) {
		tok, err := dec.Token()
		if err != nil {
			t.Fatalf("decoding %s: %v", doc, err)
		}
		switch tok {
		case json.Delim('{'):
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					t.Fatalf("decoding %s: %v", doc, err)
				}
				key := kt.(string)
				if record {
					if input {
						names = append(names, red.Scrub(key))
					} else {
						names = append(names, key)
					}
				}
				walk(record && !(input && sensitiveName(key, ctxJSON)))
			}
			_, _ = dec.Token()
		case json.Delim('['):
			for dec.More() {
				walk(record)
			}
			_, _ = dec.Token()
		}
	}
	walk(true)
	if _, err := dec.Token(); err != io.EOF {
		t.Fatalf("trailing data in %s", doc)
	}
	return names
}
