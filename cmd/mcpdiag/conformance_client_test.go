package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/conformance"
)

// TestConformanceClientCommand runs the hidden subcommand as the suite
// does: the scenario in the environment, the URL last.
func TestConformanceClientCommand(t *testing.T) {
	var calls []string
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/.well-known/oauth-protected-resource") {
			// Metadata that names no authorization server.
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"resource":%q,"authorization_servers":[]}`, srv.URL+"/auth/mcp")
			return
		}
		if r.Header.Get("Authorization") == "" && strings.Contains(r.URL.Path, "auth") {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+srv.URL+`/.well-known/oauth-protected-resource/auth/mcp"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		m, _ := readRPCRequest(r)
		w.Header().Set("Content-Type", "application/json")
		switch m.Method {
		case "tools/list":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"resultType":"complete","tools":[
				{"name":"valid_tool","inputSchema":{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}},"required":["region"]}},
				{"name":"invalid_space_in_name","inputSchema":{"type":"object","properties":{"value":{"type":"string","x-mcp-header":"My Region"}},"required":["value"]}}]}}`, m.ID)
		case "tools/call":
			calls = append(calls, m.Params.Name+" "+r.Header.Get("Mcp-Param-Region"))
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"resultType":"complete","content":[{"type":"text","text":"ok"}]}}`, m.ID)
		}
	}))
	t.Cleanup(srv.Close)

	t.Setenv(conformance.EnvScenario, "http-invalid-tool-headers")
	t.Setenv(conformance.EnvProtocol, "2026-07-28")
	t.Setenv(conformance.EnvContext, `{"name":"http-invalid-tool-headers"}`)
	var stdout, stderr bytes.Buffer
	if code := run([]string{"conformance-client", srv.URL + "/mcp"}, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	if strings.Join(calls, ",") != "valid_tool mcpdiag" {
		t.Errorf("calls %q: want only valid_tool, with its Mcp-Param-Region header", calls)
	}
	for _, want := range []string{`kept 1 tool(s) [valid_tool], excluded 1`, `tools/call valid_tool: TOOL_SUCCESS (application layer)`} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout.String())
		}
	}
	if !strings.Contains(stderr.String(), `warning: tool "invalid_space_in_name" excluded from tools/list: x-mcp-header "My Region" of property "value" contains a space`) {
		t.Errorf("stderr lacks the exclusion warning:\n%s", stderr.String())
	}

	// An auth scenario whose chain breaks: the listing ends at the 401,
	// exit 1, and the output names the step and the rule.
	t.Setenv(conformance.EnvScenario, "auth/metadata-default")
	stdout.Reset()
	stderr.Reset()
	if code := run([]string{"conformance-client", srv.URL + "/auth/mcp"}, strings.NewReader(""), &stdout, &stderr); code != 1 {
		t.Errorf("auth scenario: exit %d, want 1\n%s", code, stdout.String())
	}
	for _, want := range []string{"authorization failed at step resource-metadata: the protected resource metadata at " + srv.URL + "/.well-known/oauth-protected-resource/auth/mcp lists no authorization_servers",
		"rule: MCP 2026-07-28, authorization server discovery: the protected resource metadata MUST include authorization_servers"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("auth scenario output lacks %q:\n%s", want, stdout.String())
		}
	}
	if !strings.Contains(stderr.String(), "auth chain:") || !strings.Contains(stderr.String(), "resource-metadata") {
		t.Errorf("the chain is not on stderr:\n%s", stderr.String())
	}

	t.Setenv(conformance.EnvContext, `[not json`)
	if code := run([]string{"conformance-client", srv.URL}, strings.NewReader(""), &stdout, &stderr); code != 2 {
		t.Errorf("a context that is not JSON: exit %d, want 2", code)
	}

	var help bytes.Buffer
	run([]string{"--help"}, strings.NewReader(""), &help, &help)
	if strings.Contains(help.String(), "conformance-client") {
		t.Errorf("the adapter is listed in --help; it is hidden:\n%s", help.String())
	}
}

// TestConformanceClientSuite runs scripts/conformance-client.sh: the
// official conformance suite's client leg (--requirements 2026-07-28, and
// --suite core --spec-version 2025-11-25) against the adapter, with
// conformance/client-expected-failures.yml as the baseline. It installs the
// pinned suite and Node 22 into .tools/node on first use (cached after), so
// it needs node and npm; it fails, never skips, when they are present but
// the tools cannot be installed or the binary built.
func TestConformanceClientSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the conformance client leg (scripts/conformance-client.sh) did not run")
	}
	for _, tool := range []string{"node", "npm", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not on PATH: the conformance client leg (scripts/conformance-client.sh) did not run", tool)
		}
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	// Bounded by the test's own deadline (the script bounds the install and
	// each run too), leaving time to report.
	budget := 12 * time.Minute
	if dl, ok := t.Deadline(); ok {
		budget = min(budget, time.Until(dl)-30*time.Second)
	}
	ctx, cancel := context.WithTimeout(context.Background(), budget)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(root, "scripts", "conformance-client.sh"))
	cmd.Dir = root
	cmd.Env = os.Environ()
	cmd.WaitDelay = 10 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err = cmd.Run()
	elapsed := time.Since(start).Round(time.Second)
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Fatalf("scripts/conformance-client.sh did not finish within %s:\n%s", budget, out.String())
	case errors.As(err, &ee) && ee.ExitCode() == 2:
		t.Fatalf("scripts/conformance-client.sh could not set up (installing the pinned conformance suite and Node 22 into .tools/node, or building mcpdiag, failed):\n%s", out.String())
	case err != nil:
		t.Fatalf("the conformance client leg failed (%v): a scenario outside conformance/client-expected-failures.yml failed, or an entry there now passes:\n%s", err, out.String())
	}
	totals := regexp.MustCompile(`(?m)^Total: \d+ passed, \d+ failed.*$`).FindAllString(out.String(), -1)
	if len(totals) != 2 {
		t.Fatalf("want one Total line per run (2), got %d:\n%s", len(totals), out.String())
	}
	t.Logf("conformance client leg in %s: 2026-07-28 requirements %q; 2025-11-25 core %q", elapsed, totals[0], totals[1])
}
