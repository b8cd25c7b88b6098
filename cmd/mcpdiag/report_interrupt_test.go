package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/internal/testwait"
)

// TestReportSurvivesInterruptOnPipe: in `mcpdiag proxy --record - |
// mcpdiag report` a terminal's Ctrl-C reaches both processes. The writer
// stops and closes the pipe; report must summarise what it read. Before,
// report died with the signal and printed nothing: every record of the run
// was lost to the user (found by newuser7 with SIGINT to such a pipeline's
// process group). Here the test is the writer: it writes more than a pipe
// holds (so report is reading), signals report, then ends the pipe, and
// report prints the summary of every record and exits 0.
func TestReportSurvivesInterruptOnPipe(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("uses SIGINT and a pipe")
	}
	bin := testBinary(t)
	line, err := os.ReadFile("../../ui/testdata/ids.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	const copies = 40 // 40 × 4 records × ~1.9 KB: over a pipe's 64 KiB
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "report")
	var stdout bytes.Buffer
	cmd.Stdin, cmd.Stdout = pr, &stdout
	errPipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pr.Close()
	lines := make(chan string, 16)
	var stderr strings.Builder // read only after lines is closed
	go func() {
		defer close(lines)
		br := bufio.NewReader(errPipe)
		for {
			l, err := br.ReadString('\n')
			if l != "" {
				stderr.WriteString(l)
				lines <- l
			}
			if err != nil {
				return
			}
		}
	}()
	for i := 0; i < copies; i++ {
		if _, err := pw.Write(line); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	// Every write returned: report has read all but a pipe's worth, so it
	// is past its start-up and holds the interrupt.
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	// Before, report died here and the pipe's reader was gone; now it
	// says it goes on, and the writer ends the pipe.
	select {
	case l, ok := <-lines:
		if !ok {
			t.Fatal("report ended at the interrupt without a word")
		}
		if want := "mcpdiag report: interrupt: summarising the records read when stdin ends (again to stop at once)\n"; l != want {
			t.Errorf("stderr %q, want %q", l, want)
		}
	case <-time.After(testwait.Bound):
		_ = cmd.Process.Kill()
		t.Fatalf("report said nothing for %s after the interrupt", testwait.Bound)
	}
	pw.Close()
	done := make(chan error, 1)
	go func() {
		for range lines { // stderr to its end, then Wait
		}
		done <- cmd.Wait()
	}()
	select {
	case err = <-done:
	case <-time.After(testwait.Bound):
		_ = cmd.Process.Kill()
		t.Fatalf("report did not end within %s after its input did", testwait.Bound)
	}
	if err != nil {
		t.Fatalf("report: %v (want exit 0)\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	if want := "mcpdiag report: stdin, 160 records\n"; !strings.HasPrefix(stdout.String(), want) {
		t.Errorf("stdout does not start %q:\n%s", want, stdout.String())
	}
	if want := "mcpdiag report: interrupt: summarising the records read when stdin ends (again to stop at once)\n"; stderr.String() != want {
		t.Errorf("stderr %q, want only %q", stderr.String(), want)
	}
}
