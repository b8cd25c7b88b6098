package execerr

import (
	"bytes"
	"debug/elf"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

// TestExplain starts real files with os/exec, as the proxy and probe do,
// and holds Explain's answer: the missing interpreter named (a #! line's,
// one ending in a CR, one relative to the process's directory), a missing
// #! line named; the error unchanged where the program itself is missing,
// the interpreter exists, or the error is not ENOENT/ENOEXEC.
func TestExplain(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the kernel's ENOENT for a missing interpreter is Linux's")
	}
	dir := t.TempDir()
	script := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	bad := script("bad", "#!/nonexistent/python3 -u\nprint(1)\n")
	blank := script("blank", "#! \t/nonexistent/sh\n")
	crlf := script("crlf", "#!/bin/sh\r\necho hi\r\n")
	script("rel", "#!interp\n")
	noLine := script("noline", "echo hi\n")
	good := script("good", "#!/bin/sh\nexit 0\n")
	tests := []struct {
		name, path, dir string
		want            string // the error's text, "" for unchanged
		interp, source  string
	}{
		{"missing interpreter", bad, "", bad + ` exists, but the interpreter its #! line names, /nonexistent/python3, does not: fork/exec ` + bad + `: no such file or directory`, "/nonexistent/python3", "#! line"},
		{"blanks after #!", blank, "", "", "/nonexistent/sh", "#! line"},
		{"CRLF", crlf, "", crlf + " exists, but the interpreter its #! line names, /bin/sh\r, does not; it ends in a carriage return: the script has Windows (CRLF) line ends: fork/exec " + crlf + ": no such file or directory", "/bin/sh\r", "#! line"},
		{"relative interpreter, in dir", "./rel", dir, "", "interp", "#! line"},
		{"no #! line", noLine, "", noLine + " is not a program this system runs and has no #! line naming an interpreter (a script needs one, such as #!/bin/sh): fork/exec " + noLine + ": exec format error", "", ""},
	}
	for _, tc := range tests {
		cmd := exec.Command(tc.path)
		cmd.Dir = tc.dir
		err := cmd.Start()
		if err == nil {
			cmd.Wait()
			t.Fatalf("%s: %s started", tc.name, tc.path)
		}
		got := Explain(tc.path, tc.dir, err)
		var ie *InterpreterError
		if !errors.As(got, &ie) || ie.Interpreter != tc.interp || ie.Source != tc.source || ie.Path != tc.path || !errors.Is(got, err) {
			t.Errorf("%s: Explain = %#v; want an InterpreterError of %q from its %q wrapping %v", tc.name, got, tc.interp, tc.source, err)
			continue
		}
		if tc.want != "" && got.Error() != tc.want {
			t.Errorf("%s: Explain says\n%s\nwant\n%s", tc.name, got, tc.want)
		}
	}

	// Unchanged: the program itself missing, a script whose interpreter
	// exists (the relative one, read from another directory), other errors.
	cmd := exec.Command(good)
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v", good, err)
	}
	gone := filepath.Join(dir, "gone")
	for _, tc := range []struct {
		path, dir string
		err       error
	}{
		{gone, "", &os.PathError{Op: "fork/exec", Path: gone, Err: syscall.ENOENT}},
		{"./rel", "", &os.PathError{Op: "fork/exec", Path: "./rel", Err: syscall.ENOENT}},
		{good, "", &os.PathError{Op: "fork/exec", Path: good, Err: syscall.ENOENT}},
		{bad, "", &os.PathError{Op: "fork/exec", Path: bad, Err: syscall.EACCES}},
		{bad, "", nil},
	} {
		if got := Explain(tc.path, tc.dir, tc.err); got != tc.err {
			t.Errorf("Explain(%q, %q, %v) = %v; want the error unchanged", tc.path, tc.dir, tc.err, got)
		}
	}
}

// TestExplainELFLoader: a real dynamically linked program (a copy of
// /bin/true) whose ELF header names a dynamic loader that does not exist
// fails with ENOENT; Explain names the loader.
func TestExplainELFLoader(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Linux's ELF loader")
	}
	src, err := exec.LookPath("true")
	if err != nil {
		t.Skip("no true on $PATH")
	}
	b, err := os.ReadFile(src)
	if err != nil {
		t.Skip(err)
	}
	loader := elfInterpreter(src)
	if loader == "" || !bytes.Contains(b, []byte(loader+"\x00")) {
		t.Skipf("%s names no dynamic loader", src)
	}
	f, err := elf.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	var off uint64
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			off = p.Off
		}
	}
	f.Close()
	gone := "/nonexistent/ld.so"
	if len(gone) > len(loader) {
		t.Skipf("the loader's name %q is too short to overwrite", loader)
	}
	copy(b[off:], gone+strings.Repeat("\x00", len(loader)-len(gone)))
	prog := filepath.Join(t.TempDir(), "prog")
	if err := os.WriteFile(prog, b, 0o755); err != nil {
		t.Fatal(err)
	}
	err = exec.Command(prog).Start()
	want := prog + ` exists, but the dynamic loader its ELF header names, /nonexistent/ld.so, does not: fork/exec ` + prog + `: no such file or directory`
	if got := Explain(prog, "", err); got == nil || got.Error() != want {
		t.Errorf("Explain = %v; want %s", got, want)
	}
}
