package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/internal/testwait"
	"github.com/mcpdiag/mcpdiag/ui"
)

// oldRecordSecrets are the credentials plantedRecordFile puts in a record
// line that was never redacted (a file written before a redaction fix, or
// by another producer).
var oldRecordSecrets = []string{
	"XreasonPw9f8e7d6c", "XnoteKey4b3c2a10", "XbearerTok0123456789abcdef", "XerrdataPw55aa66bb",
	"XurlKey77cc88dd", "XbodyCs11ee22ff", "XreqbodyPw33aa44bb", "XwarnTok99ab88cd", "XnetPw12cd34ef",
}

// plantedRecordFile writes ui/testdata/records.jsonl's first line with a
// credential in every text member a reader prints, and returns its path.
func plantedRecordFile(t *testing.T) string {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "ui", "testdata", "records.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	if !sc.Scan() {
		t.Fatal("no first line")
	}
	var m map[string]any
	if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	s := oldRecordSecrets
	m["outcome"], m["layer"], m["status"] = "JSONRPC_ERROR", "jsonrpc", 200
	m["reason"] = `upstream said password: "` + s[0] + `"`
	m["note"] = "retry with api_key=" + s[1]
	m["errorMessage"] = "invalid API key: " + s[2]
	m["errorCode"] = -32000
	m["errorData"] = map[string]any{"password": s[3]}
	m["url"] = "http://127.0.0.1:18932/mcp?v=1&api_key=" + s[4]
	m["requestHeaders"] = map[string][]string{"Authorization": {"Bearer " + s[2]}, "Content-Type": {"application/json"}}
	m["responseBody"] = map[string]any{"text": `{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"bad","data":{"client_secret":"` + s[5] + `"}}}`}
	m["requestBody"] = map[string]any{"text": `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"login","arguments":{"password":"` + s[6] + `"}}}`}
	m["warnings"] = []map[string]string{{"code": "W", "message": "the server echoed token=" + s[7]}}
	m["network"] = map[string]string{"phase": "read", "error": "dial postgres://admin:" + s[8] + "@db:5432: refused"}
	line, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	for _, sec := range s {
		if !bytes.Contains(line, []byte(sec)) {
			t.Fatalf("the planted line lacks %s", sec)
		}
	}
	path := filepath.Join(t.TempDir(), "old.jsonl")
	if err := os.WriteFile(path, append(line, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestReadersRedactOldRecords: a record file that holds credentials in the
// clear (written before today's redaction fixes, or by another producer)
// shows none of them in any output of report (text, --json, --html, --har)
// or matrix --from-records (table, --json, --junit): every reader redacts
// each record as it reads it.
func TestReadersRedactOldRecords(t *testing.T) {
	in := plantedRecordFile(t)
	dir := t.TempDir()
	html, har, junit := filepath.Join(dir, "r.html"), filepath.Join(dir, "r.har"), filepath.Join(dir, "m.xml")
	outputs := map[string][]byte{}
	for _, args := range [][]string{
		{"report", "--html", html, "--har", har, in},
		{"report", "--json", in},
		{"matrix", "--from-records", in, "--junit", junit},
		{"matrix", "--from-records", in, "--json"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(args, nil, &stdout, &stderr)
		name := strings.Join(args[:2], " ")
		if code != 0 && code != 1 {
			t.Fatalf("%s: exit %d: %s", name, code, stderr.String())
		}
		outputs[name+": stdout"] = stdout.Bytes()
		outputs[name+": stderr"] = stderr.Bytes()
	}
	for _, p := range []string{html, har, junit} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		outputs[filepath.Base(p)] = b
	}
	if !bytes.Contains(outputs["r.html"], []byte("[redacted")) {
		t.Errorf("the HTML page holds no mask: the planted record is not in it")
	}
	leaks := 0
	for name, out := range outputs {
		for _, sec := range oldRecordSecrets {
			if bytes.Contains(out, []byte(sec)) {
				leaks++
				t.Errorf("%s prints %s", name, sec)
			}
		}
	}
	if leaks > 0 {
		t.Logf("%d leaks", leaks)
	}
}

// TestUIRedactsOldRecords: ui's live page over a record file that holds
// credentials in the clear sends none of them in its events.
func TestUIRedactsOldRecords(t *testing.T) {
	in := plantedRecordFile(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	urls := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- ui.Follow(ctx, ui.FollowOptions{Files: []string{in}, Poll: 50 * time.Millisecond, Ready: func(u string) { urls <- u }})
	}()
	var u string
	select {
	case u = <-urls:
	case err := <-done:
		t.Fatalf("Follow ended before serving: %v", err)
	case <-time.After(testwait.Bound):
		t.Fatalf("Follow neither served nor ended within %s", testwait.Bound)
	}
	rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
	defer rcancel()
	req, err := http.NewRequestWithContext(rctx, "GET", u+"events", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got bytes.Buffer
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		got.Write(sc.Bytes())
		got.WriteByte('\n')
		if bytes.Contains(sc.Bytes(), []byte("upstream said password")) {
			break
		}
	}
	if !bytes.Contains(got.Bytes(), []byte("upstream said password")) {
		t.Fatalf("the page never sent the planted record:\n%.2000s", got.String())
	}
	for _, sec := range oldRecordSecrets {
		if bytes.Contains(got.Bytes(), []byte(sec)) {
			t.Errorf("the live page sends %s", sec)
		}
	}
	cancel()
	testwait.Recv(t, done, "Follow to end after its context was cancelled")
}
