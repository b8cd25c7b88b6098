package record

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mcpdiag/mcpdiag/internal/testwait"
)

func readAll(t *testing.T, path string) (recs []*Record, lineErrs []*LineError) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd := NewReader(f)
	for rec, err := range rd.All() {
		var le *LineError
		switch {
		case errors.As(err, &le):
			lineErrs = append(lineErrs, le)
		case err != nil:
			t.Fatal(err)
		default:
			recs = append(recs, rec)
		}
	}
	return recs, lineErrs
}

// TestNoSecretInFile writes records that carry credentials in every place
// the issue names and checks that none of the secret bytes reach the file.
func TestNoSecretInFile(t *testing.T) {
	t.Parallel()
	secrets := map[string]string{
		"authorization": "AUTHZ-tok-0001",
		"cookie":        "COOKIE-val-0002",
		"setcookie":     "SETCOOKIE-val-0003",
		"apikey":        "APIKEY-val-0004",
		"bodybearer":    "BODYBEARER-0005",
		"access":        "ACCESS-tok-0006",
		"refresh":       "REFRESH-tok-0007",
		"clientsecret":  "CLIENTSECRET-0008",
		"verifier":      "VERIFIER-val-0009",
		"formcode":      "FORMCODE-val-0010",
		"cli":           "CLI-bearer-0011",
		"session":       "SESSION-id-0012",
		"urltoken":      "URLTOKEN-0013",
		"sseid":         "SSEIDTOKEN-0014",
	}
	red := NewRedactor()
	if err := red.AddSecret(secrets["cli"]); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "rec.jsonl")
	w, err := OpenFile(path, FileOptions{Encoder: Encoder{Redactor: red}})
	if err != nil {
		t.Fatal(err)
	}
	ex := &Record{
		Kind: KindExchange, HTTPMethod: "POST",
		URL: "https://mcp.example/mcp?access_token=" + secrets["urltoken"],
		RequestHeaders: http.Header{
			"Authorization":  {"Bearer " + secrets["authorization"]},
			"Cookie":         {"sid=" + secrets["cookie"]},
			"X-Api-Key":      {secrets["apikey"]},
			"Mcp-Session-Id": {secrets["session"]},
			"Content-Type":   {"application/json"},
		},
		ResponseHeaders: http.Header{"Set-Cookie": {"s=" + secrets["setcookie"] + "; Secure"}},
		RequestBody: &Body{Text: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"login","arguments":{"deep":{"deeper":[` +
			`{"access_token":"` + secrets["access"] + `","refresh_token":"` + secrets["refresh"] + `"}]},` +
			`"oauth":{"client_secret":"` + secrets["clientsecret"] + `","code_verifier":"` + secrets["verifier"] + `"}}}}`},
		ResponseBody: &Body{Text: "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\"," +
			"\"text\":\"use Authorization: Bearer " + secrets["bodybearer"] + "\"}],\"id_token\":\"" + secrets["sseid"] + "\"}}\n\n"},
		ErrorMessage: "upstream rejected token " + secrets["cli"],
		Session:      secrets["session"],
	}
	ex.SetRequest([]byte(ex.RequestBody.Text))
	form := &Record{
		Kind: KindExchange, HTTPMethod: "POST", URL: "https://as.example/token",
		RequestBody: &Body{Text: "grant_type=authorization_code&code=" + secrets["formcode"] + "&code_verifier=" + secrets["verifier"]},
		Note:        "Authorization: Bearer " + secrets["authorization"],
	}
	call := NewCall(Record{Client: "test@1"})
	call.Add(ex)
	call.Add(form)
	for _, r := range []*Record{ex, form, call.Summary()} {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if os.Getenv("RECORD_DUMP") != "" {
		t.Logf("%s", data)
	}
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range secrets {
		if bytes.Contains(data, []byte(s)) {
			t.Errorf("secret %s (%s) is in the file", name, s)
		}
	}
	if !bytes.Contains(data, []byte(HashSession(secrets["session"]))) {
		t.Error("the session hash is missing")
	}
	recs, lerrs := readAll(t, path)
	if len(recs) != 3 || len(lerrs) != 0 {
		t.Fatalf("read %d records, %d bad lines", len(recs), len(lerrs))
	}
	if !IsRedacted(recs[0].RequestHeaders.Get("Authorization")) || recs[0].RequestHeaders.Get("Content-Type") != "application/json" {
		t.Errorf("request headers: %v", recs[0].RequestHeaders)
	}
	st, _ := os.Stat(path)
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", st.Mode().Perm())
	}
}

func TestFileWriterAppendsAcrossOpens(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "rec.jsonl")
	for i, n := range []int{2, 3} {
		policy := []SyncPolicy{SyncAlways, SyncNever}[i]
		w, err := OpenFile(path, FileOptions{Sync: policy})
		if err != nil {
			t.Fatal(err)
		}
		for j := range n {
			if err := w.Write(&Record{Kind: KindExchange, Note: fmt.Sprintf("open %d rec %d", i, j)}); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Sync(); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if err := w.Write(&Record{}); !errors.Is(err, ErrClosed) {
			t.Errorf("Write after Close = %v", err)
		}
	}
	data, _ := os.ReadFile(path)
	if n := bytes.Count(data, []byte("\n")); n != 5 {
		t.Errorf("%d lines, want 5", n)
	}
	recs, _ := readAll(t, path)
	if len(recs) != 5 || recs[0].Note != "open 0 rec 0" || recs[4].Note != "open 1 rec 2" {
		t.Errorf("records: %d", len(recs))
	}
}

func TestFileWriterStartsOnNewLineAfterCrash(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "rec.jsonl")
	if err := os.WriteFile(path, []byte(`{"v":1,"kind":"exchange","note":"cut by a cra`), 0o600); err != nil {
		t.Fatal(err)
	}
	w, err := OpenFile(path, FileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(&Record{Kind: KindCall, Note: "after"}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	recs, lerrs := readAll(t, path)
	if len(recs) != 1 || recs[0].Note != "after" || len(lerrs) != 1 || lerrs[0].Line != 1 {
		t.Errorf("records %d, bad lines %v", len(recs), lerrs)
	}
}

// TestFileWriterConcurrent writes from many goroutines through two
// independent opens of one file: every line must be a whole record.
func TestFileWriterConcurrent(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "rec.jsonl")
	var ws []*FileWriter
	for range 2 {
		w, err := OpenFile(path, FileOptions{Sync: SyncNever})
		if err != nil {
			t.Fatal(err)
		}
		ws = append(ws, w)
	}
	const goroutines, per = 8, 100
	big := strings.Repeat("0123456789abcdef", 1024) // 16 KiB body: larger than a pipe buffer
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range per {
				rec := &Record{Kind: KindExchange, Note: fmt.Sprintf("g%d-%d", g, i), ResponseBody: &Body{Text: big}}
				if err := ws[g%2].Write(rec); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	testwait.Wait(t, &wg, "the writers' 800 records")
	for _, w := range ws {
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	recs, lerrs := readAll(t, path)
	if len(recs) != goroutines*per || len(lerrs) != 0 {
		t.Fatalf("%d records, %d bad lines; want %d, 0", len(recs), len(lerrs), goroutines*per)
	}
	seen := map[string]bool{}
	for _, r := range recs {
		if seen[r.Note] || r.ResponseBody == nil || r.ResponseBody.Text != big {
			t.Fatalf("record %q duplicated or damaged", r.Note)
		}
		seen[r.Note] = true
	}
}

func TestWriteLineRejectsNonLines(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	s := NewStreamWriter(&buf, Encoder{})
	for _, in := range []string{"", "{}", "{}\n{}\n", "a\nb"} {
		if err := s.WriteLine([]byte(in)); !errors.Is(err, ErrNotOneLine) {
			t.Errorf("WriteLine(%q) = %v", in, err)
		}
	}
	if buf.Len() != 0 {
		t.Errorf("wrote %q", buf.String())
	}
}

func TestStreamWriter(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	bw := bufio.NewWriter(&buf)
	s := NewStreamWriter(bw, Encoder{})
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			if err := s.Write(&Record{Kind: KindExchange, Seq: i}); err != nil {
				t.Error(err)
			}
		})
	}
	testwait.Wait(t, &wg, "the 50 writes")
	// Flushed after every line: nothing is left in the bufio.Writer.
	if bw.Buffered() != 0 {
		t.Errorf("%d bytes not flushed", bw.Buffered())
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Write(&Record{}); !errors.Is(err, ErrClosed) {
		t.Errorf("Write after Close = %v", err)
	}
	n := 0
	for _, err := range NewReader(&buf).All() {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 50 {
		t.Errorf("%d records, want 50", n)
	}
}

func TestParsePolicies(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]SyncPolicy{"": SyncClose, "close": SyncClose, "always": SyncAlways, "never": SyncNever} {
		if got, err := ParseSyncPolicy(in); got != want || err != nil {
			t.Errorf("ParseSyncPolicy(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseSyncPolicy("sometimes"); err == nil {
		t.Error("ParseSyncPolicy accepted sometimes")
	}
	if _, err := OpenFile(filepath.Join(t.TempDir(), "x"), FileOptions{Sync: "weekly"}); err == nil {
		t.Error("OpenFile accepted a bad policy")
	}
	for in, want := range map[string]QueuePolicy{"": QueueBlock, "block": QueueBlock, "drop": QueueDrop} {
		if got, err := ParseQueuePolicy(in); got != want || err != nil {
			t.Errorf("ParseQueuePolicy(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseQueuePolicy("lose"); err == nil {
		t.Error("ParseQueuePolicy accepted lose")
	}
}
