package main

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestMatrixOfOwnCall: `mcpdiag call`, run as the client command of
// `mcpdiag matrix` as a user would run it (OAuth on, the era MCP_PROTOCOL
// pins), passes every rule on the scenarios whose 401 or 403 names no
// authorization server. Its chain runs, stops at resource-metadata, and it
// prints AUTH_FAILED: the authorization chain that the server's 401 (or
// 403) started failed, which is what happened. Before, client.classification
// failed it in those six runs ("printed AUTH_FAILED; expected HTTP_ERROR"):
// the matrix called mcpdiag's own verdict wrong.
func TestMatrixOfOwnCall(t *testing.T) {
	t.Parallel()
	bin := testBinary(t)
	client := `exec "$0" call "$1" "$MCP_TOOL" --args "$MCP_ARGS" --protocol "${MCP_PROTOCOL:-auto}" --timeout "${MCP_TIMEOUT_MS}ms"`
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "matrix", "--scenarios", "baseline,errors.http_status_per_method,auth.token_lifecycle,auth.insufficient_scope",
		"--", "sh", "-c", client, bin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	if out := stdout.String(); err != nil || !strings.Contains(out, "8 runs: 8 passed, 0 not tested, 0 failed") {
		t.Errorf("%v, want every run passed:\n%s\nstderr:\n%s", err, out, stderr.String())
	}
}
