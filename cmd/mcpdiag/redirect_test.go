package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpdiag/mcpdiag/record"
)

// TestCallRefusesCrossOriginRedirect: `mcpdiag call --header X-API-Key: …
// --bearer …` against a server that answers 307 to another 127.0.0.1
// listener sends nothing there, exits 4, and records the redirect with its
// status, its Location and the refusal.
func TestCallRefusesCrossOriginRedirect(t *testing.T) {
	const key, token = "apikey-SECRET-5566778899", "bearer-SECRET-1122334455"
	var otherHits atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		otherHits.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
	}))
	t.Cleanup(other.Close)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", other.URL+"/collect")
		w.WriteHeader(http.StatusTemporaryRedirect)
	}))
	t.Cleanup(srv.Close)
	rec := filepath.Join(t.TempDir(), "calls.jsonl")
	var out, errb bytes.Buffer
	code := run([]string{"call", srv.URL + "/mcp", "echo", "--protocol", "2026-07-28", "--header", "X-API-Key: " + key, "--bearer", token, "--record", rec}, strings.NewReader(""), &out, &errb)
	if code != 4 {
		t.Fatalf("exit %d, want 4\n%s%s", code, out.String(), errb.String())
	}
	if n := otherHits.Load(); n != 0 {
		t.Fatalf("the other origin received %d request(s)", n)
	}
	if !strings.Contains(out.String(), "redirect was refused") {
		t.Errorf("the report does not say the redirect was refused:\n%s", out.String())
	}
	data, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte(key)) || bytes.Contains(data, []byte(token)) {
		t.Fatal("a credential is in the record")
	}
	var ex *record.Record
	for r, err := range record.NewReader(bytes.NewReader(data)).All() {
		if err != nil {
			t.Fatal(err)
		}
		if r.Kind == record.KindExchange {
			ex = r
		}
	}
	if ex == nil || ex.Status != 307 || ex.ResponseHeaders.Get("Location") != other.URL+"/collect" || ex.Outcome != "HTTP_ERROR" || !strings.Contains(ex.Reason, "another origin") {
		t.Fatalf("exchange record %+v", ex)
	}
}
