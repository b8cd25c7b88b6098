package record

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestCutMarkBothDirections (redact10): a truncated body or errorData is
// trimmed of its unfinished last token unless it carries the mark the
// encoder now writes (cutRedacted, errorDataCutRedacted): a record file
// written before the mark, or by another producer, loses the fragment
// when it is read; a record the encoder wrote reads back as written.
func TestCutMarkBothDirections(t *testing.T) {
	const frag = "hunter2-fragment"
	for _, tc := range []struct {
		name, line string
		gone       bool // the fragment must not be read back
	}{
		{"body without the mark", `{"kind":"exchange","responseBody":{"text":"connect postgres://admin:` + frag + `","truncated":true}}`, true},
		{"body with the mark", `{"kind":"exchange","responseBody":{"text":"plain words then ` + frag + `","truncated":true,"cutRedacted":true}}`, false},
		{"request body without the mark", `{"kind":"exchange","requestBody":{"text":"{\"note\": \"` + frag + `","truncated":true}}`, true},
		{"errorData string without the mark", `{"kind":"exchange","errorData":"see postgres://svc:` + frag + `","errorDataTruncated":true}`, true},
		{"errorData string with the mark", `{"kind":"exchange","errorData":"plain words then ` + frag + `","errorDataTruncated":true,"errorDataCutRedacted":true}`, false},
		{"errorData object, cut flag only", `{"kind":"exchange","errorData":{"detail":"` + frag + `"},"errorDataTruncated":true}`, false},
	} {
		rec, err := Decode([]byte(tc.line))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		read, _ := json.Marshal(rec) // what the reader gives every output
		if got := strings.Contains(string(read), frag); got == tc.gone {
			t.Errorf("%s: fragment read back %v, want %v: %s", tc.name, got, !tc.gone, read)
		}
		if tc.gone && !strings.Contains(string(read), Redacted) {
			t.Errorf("%s: the dropped token is not marked: %s", tc.name, read)
		}
		line, err := (&Encoder{}).Encode(rec)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		// Read again: the mark is there now and nothing changes.
		again, err := Decode(line)
		if err != nil {
			t.Fatal(err)
		}
		line2, _ := (&Encoder{}).Encode(again)
		if string(stripVolatile(t, line2)) != string(stripVolatile(t, line)) {
			t.Errorf("%s: a second read changed the record:\n%s\n%s", tc.name, line, line2)
		}
	}
}

// stripVolatile drops the members the encoder fills in (id, time) so two
// encodings of one record compare.
func stripVolatile(t *testing.T, line []byte) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(line, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "id")
	delete(m, "time")
	b, _ := json.Marshal(m)
	return b
}

// TestEncodeCutErrorData: error data a producer cut before redaction (not
// JSON any more, ErrorDataTruncated set) loses its unfinished last token,
// as a cut body does; the encoder marks what it wrote.
func TestEncodeCutErrorData(t *testing.T) {
	secret := "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1c2VyLTEifQ.c2lnbmF0dXJl"
	for cut := len(`{"detail": "token `) + 1; cut < len(`{"detail": "token `)+len(secret); cut++ {
		data := (`{"detail": "token ` + secret)[:cut]
		rec := &Record{Kind: KindExchange, ErrorData: json.RawMessage(data), ErrorDataTruncated: true}
		line, err := (&Encoder{}).Encode(rec)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Decode(line)
		if err != nil {
			t.Fatal(err)
		}
		var text string
		if err := json.Unmarshal(got.ErrorData, &text); err != nil {
			t.Fatalf("cut %d: errorData %s is not a string excerpt", cut, got.ErrorData)
		}
		if frag := data[len(`{"detail": "token `):]; len(frag) >= 4 && strings.Contains(text, frag) {
			t.Errorf("cut %d: errorData %q keeps the fragment %q", cut, text, frag)
		}
		if !got.ErrorDataTruncated || !got.ErrorDataCutRedacted || !strings.HasSuffix(text, Redacted) {
			t.Errorf("cut %d: %s", cut, line)
		}
	}
}
