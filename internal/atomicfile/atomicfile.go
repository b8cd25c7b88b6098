// Package atomicfile writes a file whole or not at all: the bytes go to a
// temporary file in the target's directory, which is renamed into place
// only when everything was written. A reader (or a CI step after an
// interrupted run) sees the old content or the new one, never a truncated
// file.
package atomicfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// File is a file being written. Writes go to a temporary file; Commit
// renames it into place, Abort removes it.
type File struct {
	path string
	// target is where the temporary file is renamed to: path, or the
	// file a symbolic link at path names (the link stays).
	target string
	tmp    *os.File
	perm   os.FileMode
	done   bool
	// direct reports a target that is no regular file (a device such as
	// /dev/stdout, a named pipe): written in place, as the shell's > does.
	direct bool
}

// Create starts writing path. The temporary file is created at once in the
// same directory (so that the rename stays on one file system and a
// directory that cannot be written to is refused before any work). The
// committed file has mode perm, or the mode of the file it replaces. A
// symbolic link is followed: the file it names is replaced, the link
// stays. A path that exists and is no regular file (/dev/stdout, a
// terminal, a named pipe) is opened and written in place: renamed over,
// it would be replaced by a regular file that nobody reads (a device
// node in /dev, as root), and nothing reaches the reader.
func Create(path string, perm os.FileMode) (*File, error) {
	target := path
	if st, err := os.Stat(path); err == nil {
		if st.IsDir() {
			return nil, fmt.Errorf("%s is a directory", path)
		}
		if !st.Mode().IsRegular() {
			f, err := os.OpenFile(path, os.O_WRONLY, 0)
			if err != nil {
				return nil, err
			}
			return &File{path: path, target: path, tmp: f, direct: true}, nil
		}
		perm = st.Mode().Perm()
		if real, err := filepath.EvalSymlinks(path); err == nil {
			target = real
		}
	}
	dir, base := filepath.Split(target)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return nil, named(path, "creating its temporary file in "+dir, err)
	}
	return &File{path: path, target: target, tmp: tmp, perm: perm}, nil
}

// Name returns the target path.
func (f *File) Name() string { return f.path }

// Write writes to the temporary file.
func (f *File) Write(p []byte) (int, error) {
	if f.done {
		return 0, fmt.Errorf("%s: write after Commit or Abort", f.path)
	}
	n, err := f.tmp.Write(p)
	if err != nil {
		err = named(f.path, "writing", err)
	}
	return n, err
}

// named returns err as an error of the file the user named, path, that
// says what was being done (doing) and ends with the temporary file's
// name when err named one: an *os.PathError of the temporary file (its Op
// and Path) gives way to path, its cause kept (errors.Is still finds it).
func named(path, doing string, err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) && pe.Path != path {
		return fmt.Errorf("%s: %s: %w (temporary file %s)", path, doing, pe.Err, pe.Path)
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return fmt.Errorf("%s: %s: %w (renaming the temporary file %s)", path, doing, le.Err, le.Old)
	}
	return fmt.Errorf("%s: %s: %w", path, doing, err)
}

// Commit flushes the temporary file to disk and renames it into place. On
// any failure the temporary file is removed, the target is left as it was,
// and the error names the step that failed.
func (f *File) Commit() error {
	if f.done {
		return fmt.Errorf("%s: already committed or aborted", f.path)
	}
	f.done = true
	if f.direct {
		if err := f.tmp.Close(); err != nil {
			return named(f.path, "writing", err)
		}
		return nil
	}
	name := f.tmp.Name()
	err := f.tmp.Chmod(f.perm)
	if err == nil {
		err = f.tmp.Sync()
	}
	if cerr := f.tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(name)
		return named(f.path, "writing", err)
	}
	if err := os.Rename(name, f.target); err != nil {
		os.Remove(name)
		return named(f.path, "not replaced (the rename failed)", err)
	}
	return nil
}

// Abort removes the temporary file and leaves the target as it was (a
// target written in place keeps what was written). It is a no-op after
// Commit, so that it can be deferred.
func (f *File) Abort() error {
	if f.done {
		return nil
	}
	f.done = true
	if f.direct {
		return f.tmp.Close()
	}
	return errors.Join(f.tmp.Close(), os.Remove(f.tmp.Name()))
}

// WriteFile writes data to path whole: the old content stays until the new
// one is complete.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	f, err := Create(path, perm)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Abort()
		return err
	}
	return f.Commit()
}
