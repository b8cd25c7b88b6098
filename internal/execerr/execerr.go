// Package execerr says why a program could not be started where the
// operating system's answer names the wrong file or no cause. A script
// whose #! line names an interpreter that does not exist, and a program
// whose ELF header names a dynamic loader that does not exist, both fail
// with ENOENT, which os/exec reports as "fork/exec ./script: no such file or
// directory" although ./script is there; a file that is neither a program
// nor a script with a #! line fails with ENOEXEC, "exec format error".
// Explain adds the missing file's name, or the missing #! line, to such an
// error.
package execerr

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
)

// headSize is how much of a file the kernel reads to find its #! line
// (Linux's BINPRM_BUF_SIZE): an interpreter named past it is not read.
const headSize = 256

// InterpreterError is a start error whose cause is a file the started
// program needs, not the program: the interpreter its #! line names, or
// the dynamic loader its ELF header names, does not exist; or it is
// neither a program nor a script with a #! line.
type InterpreterError struct {
	Path        string // the program as started
	Interpreter string // the missing interpreter or loader ("" when the #! line is missing)
	Source      string // where Interpreter is named: "#! line" or "ELF header"
	Err         error  // the start error, as os/exec returned it
}

// Error names the program, the missing file and where it is named, then
// the start error.
func (e *InterpreterError) Error() string {
	if e.Interpreter == "" {
		return fmt.Sprintf("%s is not a program this system runs and has no #! line naming an interpreter (a script needs one, such as #!/bin/sh): %v", e.Path, e.Err)
	}
	what := "interpreter"
	if e.Source == "ELF header" {
		what = "dynamic loader"
	}
	hint := ""
	if bytes.HasSuffix([]byte(e.Interpreter), []byte("\r")) {
		hint = "; it ends in a carriage return: the script has Windows (CRLF) line ends"
	}
	return fmt.Sprintf("%s exists, but the %s its %s names, %s, does not%s: %v", e.Path, what, e.Source, e.Interpreter, hint, e.Err)
}

// Unwrap returns the start error.
func (e *InterpreterError) Unwrap() error { return e.Err }

// Explain returns err, the error of starting the program at path (relative
// paths, and relative interpreters, are read from dir when it is not
// empty, as the started process would), as an *InterpreterError when the
// cause is the program's interpreter or loader, not the program: ENOENT
// while path exists and names a missing interpreter, or ENOEXEC while path
// has no #! line. Any other error is returned unchanged.
func Explain(path, dir string, err error) error {
	if err == nil || path == "" {
		return err
	}
	noEnt, noExec := errors.Is(err, syscall.ENOENT), errors.Is(err, syscall.ENOEXEC)
	if !noEnt && !noExec {
		return err
	}
	file := inDir(dir, path)
	if fi, serr := os.Stat(file); serr != nil || !fi.Mode().IsRegular() {
		return err
	}
	head, rerr := readHead(file)
	if rerr != nil {
		return err
	}
	if interp, ok := shebang(head); ok {
		if noEnt && interp != "" && missing(inDir(dir, interp)) {
			return &InterpreterError{Path: path, Interpreter: interp, Source: "#! line", Err: err}
		}
		return err
	}
	if bytes.HasPrefix(head, []byte(elf.ELFMAG)) {
		if loader := elfInterpreter(file); noEnt && loader != "" && missing(inDir(dir, loader)) {
			return &InterpreterError{Path: path, Interpreter: loader, Source: "ELF header", Err: err}
		}
		return err
	}
	if noExec {
		return &InterpreterError{Path: path, Err: err}
	}
	return err
}

// inDir is p as a process started in dir reads it.
func inDir(dir, p string) string {
	if dir == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}

func missing(p string) bool {
	_, err := os.Stat(p)
	return errors.Is(err, os.ErrNotExist)
}

func readHead(file string) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, headSize)
	n, err := io.ReadFull(f, b)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return b[:n], nil
}

// shebang returns the interpreter a #! line names, as the kernel reads it:
// blanks (space, tab) after #! skipped, then up to a blank, a newline or a
// NUL; a carriage return is part of the name. ok is false without #!.
func shebang(head []byte) (interp string, ok bool) {
	rest, ok := bytes.CutPrefix(head, []byte("#!"))
	if !ok {
		return "", false
	}
	rest = bytes.TrimLeft(rest, " \t")
	if i := bytes.IndexAny(rest, " \t\n\x00"); i >= 0 {
		rest = rest[:i]
	}
	return string(rest), true
}

// elfInterpreter returns the program interpreter (PT_INTERP) file names,
// "" for none or an unreadable header.
func elfInterpreter(file string) string {
	f, err := elf.Open(file)
	if err != nil {
		return ""
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type != elf.PT_INTERP {
			continue
		}
		b, err := io.ReadAll(io.LimitReader(p.Open(), 4096))
		if err != nil {
			return ""
		}
		return string(bytes.TrimRight(b, "\x00"))
	}
	return ""
}
