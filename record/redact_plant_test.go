package record

import (
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
)

// plantCarriers write a secret v as text puts it: bare (a provider key),
// and after each kind of name the redactor knows.
var plantCarriers = []func(v string) string{
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
}

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

// TestPlantedSecretsNeverRecorded (redact10): each secret shape, planted
// at a random place of a random body, header value, error message, error
// data, reason and URL, is in no line the encoder writes nor in what the
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
		if rng.IntN(3) == 0 {
			secret = "Zq" + strings.Repeat(string(rune('a'+rng.IntN(26))), 3) + "9x8W7v" // a value only a name tells
		}
		rec := &Record{Kind: KindExchange, Method: "tools/call", Outcome: "TOOL_SUCCESS"}
		switch rng.IntN(6) {
		case 0:
			rec.ResponseBody = &Body{Text: plantText(rng, secret)}
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
		line, err := (&Encoder{}).Encode(rec)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(line), secret) {
			t.Fatalf("iteration %d: the line keeps %q: %s", it, secret, line)
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
			t.Fatalf("iteration %d: read back and written again, the record changed:\n%s\n%s", it, a, b)
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
