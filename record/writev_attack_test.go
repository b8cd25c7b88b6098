//go:build linux

package record

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mcpdiag/mcpdiag/internal/testwait"
)

// attackLines returns n distinct lines, the i-th of size 40+i%97 bytes.
func attackLines(n int) [][]byte {
	lines := make([][]byte, n)
	for i := range lines {
		lines[i] = fmt.Appendf(nil, "{\"i\":%d,\"pad\":%q}\n", i, strings.Repeat("x", i%97))
	}
	return lines
}

// TestFileWriterWriteLinesPastIOVMax: a batch of more lines than IOV_MAX
// (1,024) goes out whole and in order, to a file and to a pipe its reader
// drains slowly (the writev's continuation after EAGAIN and after each
// 1,024 lines).
func TestFileWriterWriteLinesPastIOVMax(t *testing.T) {
	lines := attackLines(3000)
	lines[1500] = nil // an empty line in the middle takes no iovec
	want := bytes.Join(lines, nil)

	path := filepath.Join(t.TempDir(), "r.jsonl")
	w, err := OpenFile(path, FileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w.broken = true
	if n, err := w.writeLines(lines); n != len(lines) || err != nil {
		t.Fatalf("writeLines = %d, %v", n, err)
	}
	w.Close()
	if got, _ := os.ReadFile(path); !bytes.Equal(got, append([]byte("\n"), want...)) {
		t.Errorf("file: %d bytes, want %d in order", len(got), len(want)+1)
	}

	r, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	w, err = OpenFile(fmt.Sprintf("/proc/self/fd/%d", pw.Fd()), FileOptions{})
	pw.Close()
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(r, int64(len(want)))) // small reads
		got <- b
	}()
	if n, err := w.writeLines(lines); n != len(lines) || err != nil {
		t.Fatalf("pipe: writeLines = %d, %v", n, err)
	}
	w.Close()
	if b := testwait.Recv(t, got, "the pipe's reader to reach the end"); !bytes.Equal(b, want) {
		t.Errorf("pipe: the reader got %d bytes, not the %d written in order", len(b), len(want))
	}
}

// TestFileWriterWriteLinesErrors: a full device and a pipe its reader
// closed fail the batch with the system's error, no line counted written
// that is not whole, and the next batch starts on a new line after a cut.
func TestFileWriterWriteLinesErrors(t *testing.T) {
	lines := attackLines(2000)
	w, err := OpenFile("/dev/full", FileOptions{})
	if err != nil {
		t.Skip(err)
	}
	n, err := w.writeLines(lines)
	if n != 0 || !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("/dev/full: writeLines = %d, %v; want 0, ENOSPC", n, err)
	}
	w.Close()

	r, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	w, err = OpenFile(fmt.Sprintf("/proc/self/fd/%d", pw.Fd()), FileOptions{})
	pw.Close()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	// The pipe holds 64 KiB: the first batch fills it and more, the reader
	// takes 10,000 bytes and goes away.
	done := make(chan struct{})
	go func() {
		io.ReadFull(r, make([]byte, 10000))
		r.Close()
		close(done)
	}()
	n, err = w.writeLines(lines)
	testwait.Recv(t, done, "the pipe's reader to take its 10,000 bytes")
	if !errors.Is(err, syscall.EPIPE) {
		t.Fatalf("closed pipe: writeLines = %d, %v; want EPIPE", n, err)
	}
	if n < 0 || n >= len(lines) {
		t.Errorf("closed pipe: %d of %d lines counted written", n, len(lines))
	}
	total := 0
	for _, l := range lines {
		total += len(l)
	}
	if total < 64<<10+10000 {
		t.Fatalf("the batch (%d bytes) does not overflow the pipe", total)
	}
	n2, err := w.writeLines(lines[:1])
	if n2 != 0 || !errors.Is(err, syscall.EPIPE) {
		t.Errorf("closed pipe, second batch: %d, %v", n2, err)
	}
}
