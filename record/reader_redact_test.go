package record

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// corpusLines returns every line of the record files under the module's
// testdata directories (records of every producer and era).
func corpusLines(t testing.TB) [][]byte {
	t.Helper()
	var files []string
	for _, pat := range []string{"../*/testdata/*.jsonl", "../*/testdata/*/*.jsonl", "testdata/*.jsonl"} {
		m, err := filepath.Glob(pat)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < 5 {
		t.Fatalf("only %d record files under testdata: %v", len(files), files)
	}
	var lines [][]byte
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, DefaultMaxLineSize)
		for sc.Scan() {
			if l := bytes.TrimSpace(sc.Bytes()); len(l) > 0 {
				lines = append(lines, bytes.Clone(l))
			}
		}
		f.Close()
		if err := sc.Err(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	return lines
}

// decodeRaw is Decode without its redaction: the record as the line holds it.
func decodeRaw(t testing.TB, line []byte) *Record {
	t.Helper()
	rec := new(Record)
	if err := json.Unmarshal(line, rec); err != nil {
		t.Fatal(err)
	}
	Upgrade(rec, line)
	return rec
}

func marshalPlain(t testing.TB, rec *Record) string {
	t.Helper()
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestDecodeRedacts: a line that holds credentials in the clear (a file
// written before a redaction fix, or by another producer) is read with each
// of them masked, in every member a reader prints.
func TestDecodeRedacts(t *testing.T) {
	tests := []struct {
		name, line, secret string
	}{
		{"reason", `{"kind":"exchange","reason":"upstream said password: \"Xsecret1a2b3c\""}`, "Xsecret1a2b3c"},
		{"note", `{"kind":"exchange","note":"api_key=Xsecret1a2b3c"}`, "Xsecret1a2b3c"},
		{"errorMessage quoting the request's key", `{"kind":"exchange","errorMessage":"invalid key Xsecret1a2b3c4d","requestHeaders":{"Authorization":["Bearer Xsecret1a2b3c4d"]}}`, "Xsecret1a2b3c4d"},
		{"errorData", `{"kind":"exchange","errorData":{"password":"Xsecret1a2b3c"}}`, "Xsecret1a2b3c"},
		{"url", `{"kind":"exchange","url":"http://h/mcp?v=1&access_token=Xsecret1a2b3c"}`, "Xsecret1a2b3c"},
		{"header", `{"kind":"exchange","requestHeaders":{"X-Api-Key":["Xsecret1a2b3c"]}}`, "Xsecret1a2b3c"},
		{"body", `{"kind":"exchange","responseBody":{"text":"{\"client_secret\":\"Xsecret1a2b3c\"}"}}`, "Xsecret1a2b3c"},
		{"warning", `{"kind":"exchange","warnings":[{"code":"W","message":"token=Xsecret1a2b3c"}]}`, "Xsecret1a2b3c"},
		{"network", `{"kind":"exchange","network":{"phase":"dial","error":"postgres://u:Xsecret1a2b3c@db"}}`, "Xsecret1a2b3c"},
		{"auth", `{"kind":"exchange","auth":{"step":"token","errorDescription":"client_secret=Xsecret1a2b3c"}}`, "Xsecret1a2b3c"},
		{"session", `{"kind":"exchange","session":"Xsecret1a2b3c"}`, "Xsecret1a2b3c"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(marshalPlain(t, decodeRaw(t, []byte(tt.line))), tt.secret) {
				t.Fatalf("the test line does not hold %s as read without redaction", tt.secret)
			}
			rec, err := Decode([]byte(tt.line))
			if err != nil {
				t.Fatal(err)
			}
			if got := marshalPlain(t, rec); strings.Contains(got, tt.secret) {
				t.Errorf("Decode kept %s: %s", tt.secret, got)
			}
			var seen []*Record
			for r, err := range NewReader(strings.NewReader(tt.line + "\n")).All() {
				if err != nil {
					t.Fatal(err)
				}
				seen = append(seen, r)
			}
			if len(seen) != 1 || strings.Contains(marshalPlain(t, seen[0]), tt.secret) {
				t.Errorf("Reader: %d records, or the secret kept", len(seen))
			}
		})
	}
}

// TestDecodeKeepsRedactedRecords: every record of the corpora (lines
// mcpdiag wrote) reads the same with and without Decode's redaction, and
// redacting a record Decode returned changes nothing (idempotence).
func TestDecodeKeepsRedactedRecords(t *testing.T) {
	lines := corpusLines(t)
	changed := 0
	for i, line := range lines {
		rec, err := Decode(line)
		if err != nil {
			continue // a line of another shape in a corpus
		}
		once := marshalPlain(t, rec)
		if twice := marshalPlain(t, Default.Record(rec)); twice != once {
			t.Errorf("line %d: redacting a read record again changed it:\n once %s\ntwice %s", i, once, twice)
		}
		if raw := marshalPlain(t, decodeRaw(t, line)); raw != once {
			changed++
			if changed <= 3 {
				t.Errorf("line %d: a record mcpdiag wrote changed when read:\n  raw %s\n read %s", i, raw, once)
			}
		}
	}
	if changed > 0 {
		t.Errorf("%d of %d corpus records changed when read", changed, len(lines))
	}
}

// FuzzDecodeRedactIdempotent: for any line, the record Decode returns is a
// fixed point of Redactor.Record, and a line Decode accepts still decodes
// after its record is encoded again.
func FuzzDecodeRedactIdempotent(f *testing.F) {
	for _, l := range corpusLines(f) {
		f.Add(l)
	}
	f.Add([]byte(`{"kind":"exchange","reason":"password: \"[redacted:len=6:h=0011aabb]\"","url":"http://h/?token=[redacted]"}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		rec, err := Decode(line)
		if err != nil {
			return
		}
		once := marshalPlain(t, rec)
		if twice := marshalPlain(t, Default.Record(rec)); twice != once {
			t.Errorf("not idempotent:\n once %s\ntwice %s", once, twice)
		}
	})
}

// BenchmarkDecodeCorpus reads every line of the corpora with Decode (redacted)
// and, in BenchmarkDecodeCorpusRaw, without its redaction.
func BenchmarkDecodeCorpus(b *testing.B) {
	lines := corpusLines(b)
	var n int
	for _, l := range lines {
		n += len(l)
	}
	b.SetBytes(int64(n))
	b.ReportAllocs()
	for b.Loop() {
		for _, l := range lines {
			Decode(l)
		}
	}
}

func BenchmarkDecodeCorpusRaw(b *testing.B) {
	lines := corpusLines(b)
	b.ReportAllocs()
	for b.Loop() {
		for _, l := range lines {
			decodeRaw(b, l)
		}
	}
}
