//go:build unix

package atomicfile_test

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/internal/atomicfile"
	"github.com/mcpdiag/mcpdiag/internal/testwait"
)

// TestNotARegularFileIsWrittenInPlace: a target that is no regular file
// (here a named pipe; /dev/stdout and /dev/stderr are character devices)
// is written in place, and stays what it was. Before, the temporary file
// was renamed over it: `mcpdiag matrix --junit /dev/stdout` (or --html) run
// as root replaced /dev/stdout with a regular file, printed nothing and
// exited 0 (found by newuser8 with --junit /dev/full, which became a
// 13 KB regular file holding the XML).
func TestNotARegularFileIsWrittenInPlace(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skip("no named pipe:", err)
	}
	got := make(chan string, 1)
	go func() {
		f, err := os.Open(p)
		if err != nil {
			got <- "open: " + err.Error()
			return
		}
		defer f.Close()
		b, err := io.ReadAll(f)
		if err != nil {
			got <- "read: " + err.Error()
			return
		}
		got <- string(b)
	}()
	if err := atomicfile.WriteFile(p, []byte("<testsuites/>\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-got:
		if s != "<testsuites/>\n" {
			t.Errorf("the pipe's reader got %q, want %q", s, "<testsuites/>\n")
		}
	case <-time.After(testwait.Bound):
		t.Fatalf("the pipe's reader got nothing in %s", testwait.Bound)
	}
	st, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("%s is %v after the write, want the named pipe it was", p, st.Mode())
	}
	if es := entries(t, dir); len(es) != 1 || es[0] != "pipe" {
		t.Errorf("the directory holds %v, want [pipe] (no temporary file)", es)
	}
}

// TestSymlinkIsFollowed: a symbolic link to a regular file keeps being the
// link; the file it names gets the new content, whole. Before, the link
// itself was replaced by a regular file and the file it named kept its old
// content (a CI step reading the link's target read the last run's XML).
func TestSymlinkIsFollowed(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "reports", "junit.xml")
	if err := os.MkdirAll(filepath.Dir(real), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(real, []byte("old"), 0o640); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "junit.xml")
	if err := os.Symlink(filepath.Join("reports", "junit.xml"), link); err != nil {
		t.Fatal(err)
	}
	if err := atomicfile.WriteFile(link, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := os.Lstat(link)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("%s is %v after the write, want the symbolic link it was", link, st.Mode())
	}
	b, err := os.ReadFile(real)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != "new" {
		t.Errorf("the link's target holds %q, want %q", b, "new")
	}
	if st, err := os.Stat(real); err != nil || st.Mode().Perm() != 0o640 {
		t.Errorf("the link's target: %v, %v; want mode 0640 kept", st, err)
	}
}
