package record

import (
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// plantCarriers write a secret v as text puts it: bare (a provider key),
// and after each kind of name the redactor knows (escapedCarriers last).
var plantCarriers = append([]func(v string) string{
	func(v string) string { return v },
	func(v string) string { return "Token: " + v },
	func(v string) string { return "run --password " + v + " now" },
	func(v string) string { return `{"pass": "` + v + `"}` },
	func(v string) string { return `{"name": "X-Api-Key", "value": "` + v + `"}` },
	func(v string) string { return `[["Authorization", "` + v + `"]]` },
	func(v string) string { return "authorization: token " + v },
	func(v string) string { return "Bearer " + v },
	func(v string) string { return "https://api.example/v1?api_key=" + v + "&x=1" },
	// After an unfinished quoted credential (scrub10).
	func(v string) string { return `password: "Apw1234567 then token: "` + v + `" end` },
	func(v string) string { return `password: 'Apw1234567 then api_key: '` + v + `' end` },
	func(v string) string { return `db_password="Apw1234567 then secret='` + v + `' end` },
	func(v string) string { return `api_key="Apw1234567 then client_secret = "` + v + `"` },
	func(v string) string { return `{"password": "Apw1234567 then "token": "` + v + `"}` },
	func(v string) string { return `{'password': 'Apw1234567 then 'token': '` + v + `'}` },
	func(v string) string { return `token='` + v + ` and more'` },
	// Nested to any depth under a name in text (redact12).
	func(v string) string { return `password={"a":{"b":"` + v + `"}}` },
	func(v string) string { return `secret: {"x": {"y": "` + v + `"}}` },
	func(v string) string { return `{"token": [{"a": ["` + v + `"]}], "n": 1` },
	func(v string) string { return `{'password': {'a': {'b': '` + v + `'}}}` },
	func(v string) string { return `api_key = {"a": [1, {"b": "` + v + `"}]}` },
	func(v string) string { return `cut: {"secret": {"a": {"b": "` + v },
	// A name written with escapes (redact12).
	func(v string) string { return `cut {"p\u0061ssword": "` + v },
	func(v string) string { return `{"\u0074oken": "` + v + `", "x` },
	func(v string) string { return `client%5Fsecret=` + v + `&x=1` },
	func(v string) string { return `api%2Dkey: ` + v },
	func(v string) string { return `error p%61ssword=` + v },
	// A bare value (a number when the secret is one) under a credential
	// name (redact12).
	func(v string) string { return `{"pin": ` + v + `}` },
	func(v string) string { return `pin=` + v },
	func(v string) string { return `PIN: ` + v },
	func(v string) string { return `{"user": "bob", "pass": ` + v + `}` },
	func(v string) string { return `{"db_pass": ` + v + `, "fail": 0}` },
	func(v string) string { return `{'user_pw': ` + v + `}` },
	// names21: a one-time password's word, a credential word before a
	// neutral last segment, a blank for separator.
	func(v string) string { return `user.otp: ` + v },
	func(v string) string { return `verify otp=` + v + `&user=bob` },
	func(v string) string { return `{"mfa": {"totp": ` + v + `}}` },
	func(v string) string { return `secret.value: ` + v },
	func(v string) string { return `client_secret ` + v },
}, escapedCarriers...)

// plantWords are what the random texts around a secret are made of: words,
// JSON and URL punctuation, and near-misses of the shapes.
var plantWords = []string{
	"the", "tool", "failed", "sk-learn", "task-list", "ASIAN", "akia", "Asia/Tokyo", "ghp_short", "xoxo-",
	"{", "}", "[", "]", `"`, ":", ",", "=", "&", "?", "/", "\\n", "%2F", "-", "_", "ok", "200", "key", "value", "name",
}

func plantText(rng *rand.Rand, secret string) string {
	var b strings.Builder
	n := rng.IntN(12)
	at := rng.IntN(n + 1)
	for i := 0; i <= n; i++ {
		if i == at {
			c := rng.IntN(len(plantCarriers))
			if c == 0 && !isProviderKey(secret) {
				c = 1 // a value of no shape is found by its name only
			}
			b.WriteString("\n" + plantCarriers[c](secret) + "\n")
		}
		if i < n {
			b.WriteString(plantWords[rng.IntN(len(plantWords))])
			if rng.IntN(2) == 0 {
				b.WriteByte(' ')
			}
		}
	}
	return b.String()
}

// TestPlantedSecretsNeverRecorded (redact10): each secret shape (a
// provider key, a value only its name tells, a number), planted at a
// random place of a random request or response body, an SSE event, a
// body cut without the encoder's mark, a header value, error message,
// error data, reason and URL, is in no line the encoder writes nor in what the
// reader gives back, and reading a written line back changes nothing
// (redaction is idempotent).
func TestPlantedSecretsNeverRecorded(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 2026))
	var secrets []string
	for _, k := range providerKeys {
		secrets = append(secrets, k)
	}
	iters := 3000
	if testing.Short() {
		iters = 300
	}
	for it := range iters {
		secret := secrets[rng.IntN(len(secrets))]
		switch rng.IntN(4) {
		case 0:
			secret = "Zq" + strings.Repeat(string(rune('a'+rng.IntN(26))), 3) + "9x8W7v" // a value only a name tells
		case 1:
			secret = strconv.Itoa(4_000_000_000 + rng.IntN(999_999_999)) // a numeric PIN or password (redact12)
		}
		rec := &Record{Kind: KindExchange, Method: "tools/call", Outcome: "TOOL_SUCCESS"}
		switch rng.IntN(9) {
		case 0:
			rec.ResponseBody = &Body{Text: plantText(rng, secret)}
		case 6:
			rec.RequestBody = &Body{Text: plantText(rng, secret)}
		case 7:
			// An SSE event whose data is no JSON document.
			rec.ResponseBody = &Body{Text: "event: message\ndata: " + strings.ReplaceAll(plantText(rng, secret), "\n", "\ndata: ") + "\n\n"}
		case 8:
			// A body a capture cut after the secret, without the
			// encoder's mark (another producer's record).
			text := plantText(rng, secret)
			cut := strings.Index(text, secret) + len(secret) + rng.IntN(8)
			rec.ResponseBody = &Body{Text: text[:min(cut, len(text))], Truncated: true}
		case 1:
			rec.RequestHeaders = http.Header{"X-Note": {plantText(rng, secret)}}
		case 2:
			rec.ErrorMessage = plantText(rng, secret)
		case 3:
			d, _ := json.Marshal(map[string]string{"detail": plantText(rng, secret)})
			rec.ErrorData = d
		case 4:
			rec.Reason = plantText(rng, secret)
		case 5:
			rec.URL = "http://127.0.0.1:8080/mcp/s/" + secret + "/sse"
			if !isProviderKey(secret) {
				continue // a path segment of no known shape is not redacted (docs/security.md)
			}
		}
		planted, _ := json.Marshal(rec) // for the messages: what was planted
		line, err := (&Encoder{}).Encode(rec)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(line), secret) {
			t.Fatalf("iteration %d: the line keeps %q: %s\nplanted: %s", it, secret, line, planted)
		}
		back, err := Decode(line)
		if err != nil {
			t.Fatal(err)
		}
		read, _ := json.Marshal(back)
		if strings.Contains(string(read), secret) {
			t.Fatalf("iteration %d: the reader gives back %q: %s", it, secret, read)
		}
		again, err := (&Encoder{}).Encode(back)
		if err != nil {
			t.Fatal(err)
		}
		if a, b := stripVolatile(t, line), stripVolatile(t, again); string(a) != string(b) {
			t.Fatalf("iteration %d: read back and written again, the record changed:\n%s\n%s\nplanted: %s", it, a, b, planted)
		}
	}
}

// isProviderKey reports whether s is one of providerKeys.
func isProviderKey(s string) bool {
	for _, k := range providerKeys {
		if k == s {
			return true
		}
	}
	return false
}
