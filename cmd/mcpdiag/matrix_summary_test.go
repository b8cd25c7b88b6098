package main

import (
	"bytes"
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
)

// A client that fails the same rules in every case: the default output has
// one paragraph per rule with the number of runs, --verbose one per case
// and rule; progress goes only where it is asked for (a terminal), never
// into the table.
func TestMatrixFailuresPerRule(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("uses sh")
	}
	client := []string{"sh", "-c", `echo "outcome: TOOL_ERROR"`, "sh"}
	args := func(extra ...string) []string {
		return append(append([]string{"matrix", "--scenarios", "baseline,errors.tool_error", "--protocol", "2026-07-28"}, extra...), append([]string{"--"}, client...)...)
	}
	var out, errb bytes.Buffer
	if code := run(args(), nil, &out, &errb); code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", code, out.String(), errb.String())
	}
	text := out.String()
	if n := strings.Count(text, "FAIL client.ran in 2 runs: baseline (2026-07-28), errors.tool_error (2026-07-28)"); n != 1 {
		t.Errorf("want one paragraph for client.ran over both runs, got %d:\n%s", n, text)
	}
	if strings.Contains(text, "FAIL baseline (2026-07-28): ") {
		t.Errorf("the default output explains each case:\n%s", text)
	}
	if strings.Contains(errb.String(), "runs done") {
		t.Errorf("progress was drawn on a stderr that is not a terminal: %q", errb.String())
	}

	out.Reset()
	errb.Reset()
	if code := run(args("--verbose"), nil, &out, &errb); code != 1 {
		t.Fatalf("--verbose: exit %d", code)
	}
	for _, want := range []string{"FAIL baseline (2026-07-28): client.ran", "FAIL errors.tool_error (2026-07-28): client.ran"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("--verbose lacks %q:\n%s", want, out.String())
		}
	}

	// The progress line, as a terminal would get it.
	var progress bytes.Buffer
	var table bytes.Buffer
	o := matrixOptions{scenarios: []string{"baseline", "errors.tool_error"}, protocol: "2026-07-28", repeat: 1, maxRetries: 3,
		timeout: 30e9, startup: 30e9, seed: 1, progress: &progress}
	err := runMatrix(context.Background(), nil, &table, o, client, func(string) bool { return false })
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != 1 {
		t.Fatalf("runMatrix: %v, want exit 1 (a failing verdict)", err)
	}
	p := progress.String()
	for _, want := range []string{"matrix: 1/2 runs done, 1 failed", "matrix: 2/2 runs done, 2 failed"} {
		if !strings.Contains(p, want) {
			t.Errorf("progress lacks %q: %q", want, p)
		}
	}
	if !strings.HasSuffix(p, "\r\033[K") {
		t.Errorf("the progress line is not cleared at the end: %q", p)
	}
	if strings.Contains(table.String(), "runs done") {
		t.Error("progress went into the table")
	}
}
