package testbin

import (
	"os/exec"
	"strings"
	"testing"
)

// TestBuildOnce: a package is built once, the program runs, and a second
// ask gives the same program; a package that does not build is an error
// with go build's output, every time it is asked for.
func TestBuildOnce(t *testing.T) {
	t.Cleanup(Clean)
	bin := Build(t, "./testdata/hello")
	out, err := exec.Command(bin).Output()
	if err != nil || string(out) != "hello\n" {
		t.Fatalf("%s: %q, %v", bin, out, err)
	}
	if again := Build(t, "testdata/hello"); again != bin {
		t.Errorf("built again: %s, then %s", bin, again)
	}
	for range 2 {
		if _, err := build1("./testdata/no-such-package"); err == nil || !strings.Contains(err.Error(), "no-such-package") {
			t.Errorf("building a missing package: %v", err)
		}
	}
}
