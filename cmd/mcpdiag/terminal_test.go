package main

import (
	"io"
	"os"
	"strings"
	"testing"
)

// TestStdinThatIsNoTerminal: `call` prompts for elicitation answers only on
// a terminal. /dev/null is a character device but no terminal (a call run
// with </dev/null in CI must not prompt); a pipe and a string are not
// terminals either.
func TestStdinThatIsNoTerminal(t *testing.T) {
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	for name, in := range map[string]io.Reader{os.DevNull: null, "a pipe": r, "a string": strings.NewReader("")} {
		if isTerminal(in) {
			t.Errorf("%s is taken for a terminal", name)
		}
	}
}
