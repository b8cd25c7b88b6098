package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestErrorsNameTheUsersFile: every error of a File names the file the user
// named first; the temporary file's name, when the cause named it, comes
// only after, and the cause stays wrapped. Before, a file that could not be
// created said "atomicfile: open DIR/.x.html.tmp-123: no such file or
// directory", and a failed write or sync named only the temporary file.
func TestErrorsNameTheUsersFile(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		run  func(t *testing.T, path string) error
		is   error // the cause errors.Is must still find (nil: not checked)
	}{
		{"create in a missing directory", func(t *testing.T, path string) error {
			_, err := Create(filepath.Join(filepath.Dir(path), "missing", filepath.Base(path)), 0o600)
			return err
		}, fs.ErrNotExist},
		{"write", func(t *testing.T, path string) error {
			f := mustCreate(t, path)
			defer f.Abort()
			f.tmp.Close() // the write fails as one to a full disk would
			_, err := f.Write([]byte("x"))
			return err
		}, os.ErrClosed},
		{"commit", func(t *testing.T, path string) error {
			f := mustCreate(t, path)
			f.tmp.Close()
			return f.Commit()
		}, os.ErrClosed},
		{"rename", func(t *testing.T, path string) error {
			f := mustCreate(t, path)
			if err := os.Mkdir(path, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(path, "keep"), nil, 0o600); err != nil {
				t.Fatal(err)
			}
			return f.Commit()
		}, nil},
		{"WriteFile in a missing directory", func(t *testing.T, path string) error {
			return WriteFile(filepath.Join(filepath.Dir(path), "missing", filepath.Base(path)), []byte("x"), 0o600)
		}, fs.ErrNotExist},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "-")+".html")
			err := tt.run(t, path)
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			user := path
			if strings.Contains(tt.name, "missing") {
				user = filepath.Join(dir, "missing", filepath.Base(path))
			}
			if !strings.HasPrefix(msg, user+": ") {
				t.Errorf("%q does not start with the file the user named, %s", msg, user)
			}
			if i := strings.Index(msg, ".tmp-"); i >= 0 && i < len(user) {
				t.Errorf("%q names the temporary file before the user's", msg)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("%v: the cause %v is not wrapped", err, tt.is)
			}
		})
	}
}

func mustCreate(t *testing.T, path string) *File {
	t.Helper()
	f, err := Create(path, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	return f
}
