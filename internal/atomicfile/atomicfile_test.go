package atomicfile_test

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/internal/atomicfile"
)

// entries lists a directory's names.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

func TestCommitReplacesWhole(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.xml")
	if err := os.WriteFile(p, []byte("old"), 0o640); err != nil {
		t.Fatal(err)
	}
	f, err := atomicfile.Create(p, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("new, ")); err != nil {
		t.Fatal(err)
	}
	// Until Commit the old content is there, whole.
	if b, _ := os.ReadFile(p); string(b) != "old" {
		t.Errorf("before Commit: %q, want the old content", b)
	}
	if _, err := f.Write([]byte("complete")); err != nil {
		t.Fatal(err)
	}
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "new, complete" {
		t.Errorf("after Commit: %q", b)
	}
	if runtime.GOOS != "windows" {
		if st, _ := os.Stat(p); st.Mode().Perm() != 0o640 {
			t.Errorf("mode %v, want the replaced file's 0640", st.Mode().Perm())
		}
	}
	if es := entries(t, dir); len(es) != 1 {
		t.Errorf("files left: %v", es)
	}
	if err := f.Abort(); err != nil {
		t.Errorf("Abort after Commit: %v", err)
	}
	if _, err := f.Write([]byte("x")); err == nil {
		t.Error("a write after Commit succeeded")
	}
}

func TestAbortLeavesTheOldContent(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.har")
	if err := os.WriteFile(p, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := atomicfile.Create(p, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("half"))
	if err := f.Abort(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "old" {
		t.Errorf("after Abort: %q", b)
	}
	if es := entries(t, dir); len(es) != 1 {
		t.Errorf("files left: %v", es)
	}
}

func TestNewFileMode(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no Unix modes")
	}
	p := filepath.Join(t.TempDir(), "new.json")
	if err := atomicfile.WriteFile(p, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(p); err != nil || st.Mode().Perm() != 0o644 {
		t.Errorf("stat %v %v", st.Mode(), err)
	}
}

// TestFailuresSaySo: a target that is a directory, a directory that does
// not exist, and a rename that fails are errors that name the file, and
// leave nothing behind.
func TestFailuresSaySo(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := atomicfile.Create(sub, 0o644); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("a directory as target: %v", err)
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, "no", "such", "f"), nil, 0o644); err == nil {
		t.Error("a missing directory: no error")
	}
	// The target becomes a directory between Create and Commit: the rename
	// fails, and says so.
	p := filepath.Join(dir, "late")
	f, err := atomicfile.Create(p, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("data"))
	if err := os.Mkdir(p, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p, "keep"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	err = f.Commit()
	if err == nil || !strings.Contains(err.Error(), "not replaced") || !strings.Contains(err.Error(), p) {
		t.Errorf("a failed rename: %v", err)
	}
	for _, e := range entries(t, dir) {
		if strings.Contains(e, ".tmp-") {
			t.Errorf("temporary file left: %s", e)
		}
	}
}
