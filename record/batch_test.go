//go:build linux

package record

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/internal/testwait"
)

// TestFileWriterWriteLines: several lines in one write, all whole in the
// file; after a cut line the next batch starts on a new line.
func TestFileWriterWriteLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.jsonl")
	w, err := OpenFile(path, FileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	lines := [][]byte{[]byte("{\"a\":1}\n"), []byte("{\"b\":2}\n"), []byte("{\"c\":3}\n")}
	if n, err := w.writeLines(lines); n != 3 || err != nil {
		t.Fatalf("writeLines = %d, %v", n, err)
	}
	w.broken = true // as after a write cut part-way
	if n, err := w.writeLines(lines[:2]); n != 2 || err != nil {
		t.Fatalf("writeLines = %d, %v", n, err)
	}
	w.Close()
	got, _ := os.ReadFile(path)
	if want := "{\"a\":1}\n{\"b\":2}\n{\"c\":3}\n\n{\"a\":1}\n{\"b\":2}\n"; string(got) != want {
		t.Errorf("file %q, want %q", got, want)
	}
}

// TestAsyncBatchAccountingUnderAFileSizeLimit: the writer goroutine batches
// the queued records into single writes; when the file size limit cuts a
// batch, every record is still counted once, as written or as lost, and
// the records counted written are exactly the whole lines in the file. It
// runs in a child process that sets RLIMIT_FSIZE (SIGXFSZ ignored, as the
// CLI does).
func TestAsyncBatchAccountingUnderAFileSizeLimit(t *testing.T) {
	if path := os.Getenv("RECORD_FSIZE_CHILD"); path != "" {
		signal.Ignore(syscall.SIGXFSZ)
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: 100 << 10, Max: 100 << 10}); err != nil {
			fmt.Println("setrlimit:", err)
			os.Exit(3)
		}
		w, err := OpenFile(path, FileOptions{})
		if err != nil {
			fmt.Println(err)
			os.Exit(3)
		}
		a := NewAsync(w, AsyncOptions{QueueSize: 64})
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Go(func() {
				for i := range 60 {
					a.Write(&Record{Kind: KindExchange, Method: "tools/call", Reason: fmt.Sprintf("g%d i%d %s", g, i, strings.Repeat("x", 400))})
				}
			})
		}
		wg.Wait()
		a.Close()
		st := a.Stats()
		fmt.Printf("written=%d lost=%d\n", st.Written, st.Lost())
		os.Exit(0)
	}
	path := filepath.Join(t.TempDir(), "r.jsonl")
	cmd := exec.Command(os.Args[0], "-test.run", "^TestAsyncBatchAccountingUnderAFileSizeLimit$")
	cmd.Env = append(os.Environ(), "RECORD_FSIZE_CHILD="+path)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	var written, lost int64
	if _, err := fmt.Sscanf(string(out), "written=%d lost=%d", &written, &lost); err != nil {
		t.Fatalf("child said %q", out)
	}
	if written+lost != 480 || lost == 0 || written == 0 {
		t.Fatalf("written %d + lost %d, want 480 with some of each", written, lost)
	}
	data, _ := os.ReadFile(path)
	whole := int64(0)
	for _, l := range bytes.SplitAfter(data, []byte("\n")) {
		if len(l) > 0 && l[len(l)-1] == '\n' && json.Valid(l) {
			whole++
		}
	}
	if whole != written {
		t.Errorf("%d whole lines in the file, %d counted written (%d lost)", whole, written, lost)
	}
}

// TestFileWriterWriteLinesKeepsNoBuffer: a batch is written from the lines'
// own buffers (one writev(2)), so writing one allocates next to nothing and
// leaves no buffer of the batch's size behind. Copied into a buffer the
// FileWriter kept, a batch of 48 lines of 1 KiB allocated 48 KiB, live
// until the next batch (40-72 KB of live heap under load at 8 clients).
func TestFileWriterWriteLinesKeepsNoBuffer(t *testing.T) {
	lines := make([][]byte, 48)
	for i := range lines {
		lines[i] = fmt.Appendf(nil, "{\"i\":%d,\"pad\":%q}\n", i, strings.Repeat("p", 1000))
	}
	least := ^uint64(0)
	for range 3 {
		path := filepath.Join(t.TempDir(), "r.jsonl")
		w, err := OpenFile(path, FileOptions{Sync: SyncNever})
		if err != nil {
			t.Fatal(err)
		}
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		n, err := w.writeLines(lines)
		runtime.ReadMemStats(&m1)
		if n != len(lines) || err != nil {
			t.Fatalf("writeLines = %d, %v", n, err)
		}
		least = min(least, m1.TotalAlloc-m0.TotalAlloc)
		w.Close()
		if got, _ := os.ReadFile(path); !bytes.Equal(got, bytes.Join(lines, nil)) {
			t.Fatalf("the file holds %d bytes, not the %d of the lines", len(got), len(bytes.Join(lines, nil)))
		}
	}
	if least > 4<<10 {
		t.Errorf("writeLines of 48 KiB of lines allocated %d bytes, want at most 4 KiB", least)
	}
}

// TestFileWriterWriteLinesToSlowPipe: a batch larger than a pipe's buffer,
// written to a pipe whose reader is slow, arrives whole and in order: the
// writev is continued after each short write and each wait for room.
func TestFileWriterWriteLinesToSlowPipe(t *testing.T) {
	r, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	w, err := OpenFile(fmt.Sprintf("/proc/self/fd/%d", pw.Fd()), FileOptions{})
	pw.Close()
	if err != nil {
		t.Fatal(err)
	}
	var lines [][]byte
	for i := range 64 {
		lines = append(lines, fmt.Appendf(nil, "{\"i\":%d,\"pad\":%q}\n", i, strings.Repeat(string(rune('a'+i%26)), 3000+i*37)))
	}
	want := bytes.Repeat(bytes.Join(lines, nil), 2)
	got := make(chan []byte)
	go func() {
		var b []byte
		buf := make([]byte, 4096)
		for {
			n, err := r.Read(buf)
			b = append(b, buf[:n]...)
			if err != nil {
				got <- b
				return
			}
			time.Sleep(50 * time.Microsecond)
		}
	}()
	for range 2 {
		if n, err := w.writeLines(lines); n != len(lines) || err != nil {
			t.Fatalf("writeLines = %d, %v", n, err)
		}
	}
	w.Close()
	if b := testwait.Recv(t, got, "the pipe's reader to reach the end"); !bytes.Equal(b, want) {
		t.Errorf("the pipe's reader got %d bytes, not the %d written in order", len(b), len(want))
	}
}
