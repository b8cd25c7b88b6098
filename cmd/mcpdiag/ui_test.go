package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/internal/browser"
)

func TestUICommandUsage(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "r.jsonl", []byte(`{"kind":"exchange","id":"A"}`+"\n"))
	cases := []struct {
		name string
		args []string
		err  string
	}{
		{"no file", []string{"ui"}, "mcpdiag: ui: name at least one record file"},
		{"missing file", []string{"ui", filepath.Join(dir, "nope.jsonl")}, "mcpdiag: cannot open "},
		{"directory", []string{"ui", dir}, "mcpdiag: " + dir + " is a directory"},
		{"not loopback", []string{"ui", "--addr", "0.0.0.0:0", file}, "mcpdiag: --addr 0.0.0.0:0: the page is served on loopback only"},
		{"bad poll", []string{"ui", "--poll", "0s", file}, "mcpdiag: --poll must be positive"},
	}
	for _, c := range cases {
		var stdout, stderr bytes.Buffer
		code := run(c.args, nil, &stdout, &stderr)
		lines := strings.Split(strings.TrimRight(stderr.String(), "\n"), "\n")
		if code != 2 || len(lines) != 1 || !strings.HasPrefix(lines[0], c.err) || stdout.Len() != 0 {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 2 and one line %q…", c.name, code, stdout.String(), stderr.String(), c.err)
		}
	}
}

// mcpdiag ui over a record file that grows: the page shows what is there,
// then a record appended to the file, without a reload.
func TestUICommandLive(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "ui", "testdata", "records.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimSuffix(string(raw), "\n"), "\n")
	path := writeFile(t, t.TempDir(), "proxy.jsonl", []byte(strings.Join(lines[:10], "")))
	ready := make(chan string, 1)
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr bytes.Buffer
	done := make(chan error, 1)
	go func() {
		done <- runUI(ctx, &stdout, &stderr, []string{path}, uiOptions{addr: "127.0.0.1:0", poll: 20 * time.Millisecond, ready: func(u string) { ready <- u }})
	}()
	var url string
	select {
	case url = <-ready:
	case err := <-done:
		t.Fatalf("ui ended: %v: %s", err, stderr.String())
	}
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("ui after cancel: %v", err)
		}
	}()
	if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.Contains(url, "/u/") || len(url) < len("http://127.0.0.1:1/u/")+32 {
		t.Fatalf("URL %q: want loopback with a 128-bit token", url)
	}
	p := browser.Open(t, url)
	rows := `document.querySelectorAll('#rows tr.row[data-id]').length`
	browser.WaitFor(t, p, "the file's 10 records", rows+` === 10`)
	browser.Eval[bool](t, p, `(window.__sameDocument = true)`)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(lines[10]); err != nil {
		t.Fatal(err)
	}
	f.Close()
	browser.WaitFor(t, p, "the appended record", rows+` === 11`)
	id := lines[10][strings.Index(lines[10], `"id":"`)+6:]
	id = id[:strings.IndexByte(id, '"')]
	if !browser.Eval[bool](t, p, `document.querySelector('#rows tr.row[data-id="`+id+`"]') !== null && window.__sameDocument === true`) {
		t.Errorf("record %s is not shown, or the page was reloaded", id)
	}
	if c := p.Console(); len(c) > 0 {
		t.Errorf("console: %q", c)
	}
	origin := url[:strings.Index(url, "/u/")]
	for _, u := range p.Requests() {
		if !strings.HasPrefix(u, origin+"/") {
			t.Errorf("the page requested %s (origin %s)", u, origin)
		}
	}
}
