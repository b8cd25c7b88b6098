// Package testbin builds the Go programs tests run as real processes (a
// bad server, a stdio server, a bad client under testdata/) once per test
// binary, into a temporary directory that Clean removes.
package testbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

type build struct {
	once sync.Once
	bin  string
	err  error
}

var (
	mu     sync.Mutex
	builds = map[string]*build{} // absolute package directory → its build
	dirs   []string
)

// Build builds the main package in dir (a path relative to the test's
// working directory, such as "./testdata/badserver") the first time it is
// asked for, and returns the program's path; it fails tb if the build
// failed, with go build's output, every time it is asked for after that.
func Build(tb testing.TB, dir string) string {
	tb.Helper()
	bin, err := build1(dir)
	if err != nil {
		tb.Fatalf("go build %s: %v", dir, err)
	}
	return bin
}

func build1(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	mu.Lock()
	b := builds[abs]
	if b == nil {
		b = &build{}
		builds[abs] = b
	}
	mu.Unlock()
	b.once.Do(func() {
		tmp, err := os.MkdirTemp("", "mcpdiag-"+filepath.Base(abs)+"-")
		if err != nil {
			b.err = err
			return
		}
		mu.Lock()
		dirs = append(dirs, tmp)
		mu.Unlock()
		b.bin = filepath.Join(tmp, filepath.Base(abs))
		if out, err := exec.Command("go", "build", "-o", b.bin, abs).CombinedOutput(); err != nil {
			b.err = fmt.Errorf("%w\n%s", err, out)
		}
	})
	return b.bin, b.err
}

// Clean removes every program Build built; a TestMain calls it after
// m.Run.
func Clean() {
	mu.Lock()
	defer mu.Unlock()
	for _, d := range dirs {
		os.RemoveAll(d)
	}
	dirs = nil
}
