package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// readmeBlock returns the first fenced block of kind lang (sh, text) in the
// README that follows the line containing after.
func readmeBlock(t *testing.T, readme, after, lang string) string {
	t.Helper()
	i := strings.Index(readme, after)
	if i < 0 {
		t.Fatalf("the README has no %q", after)
	}
	rest := readme[i:]
	j := strings.Index(rest, "```"+lang+"\n")
	if j < 0 {
		t.Fatalf("no ```%s block after %q", lang, after)
	}
	rest = rest[j+len(lang)+4:]
	return rest[:strings.Index(rest, "```")]
}

// TestReadmeCallExample runs the README's `mcpdiag call` example as it
// stands (the serve line's scenario and params, the call line's tool and
// arguments) against `mcpdiag serve` and holds its output to the README's,
// with only what varies between runs masked: durations, the backoff draw
// and the record id.
func TestReadmeCallExample(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(data)
	cmds := readmeBlock(t, readme, "## `mcpdiag call`", "sh")
	serveLine := regexp.MustCompile(`mcpdiag serve --scenario (\S+) --params '([^']*)'`).FindStringSubmatch(cmds)
	callLine := regexp.MustCompile(`mcpdiag call http://127\.0\.0\.1:8080/mcp (\S+) --args '([^']*)'`).FindStringSubmatch(cmds)
	if serveLine == nil || callLine == nil {
		t.Fatalf("the README's call example is not a serve line and a call line:\n%s", cmds)
	}
	want := readmeBlock(t, readme, "## `mcpdiag call`", "text")

	u, _ := startServe(t, serveOptions{scenario: serveLine[1], params: serveLine[2], seed: 1})
	var out, errb bytes.Buffer
	if code := run([]string{"call", u, callLine[1], "--args", callLine[2]}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s%s", code, out.String(), errb.String())
	}
	mask := func(s string) string {
		s = regexp.MustCompile(`\b\d+(\.\d+)?(ms|µs|s)\b`).ReplaceAllString(s, "D")
		s = regexp.MustCompile(`\b0?D`).ReplaceAllString(s, "D")
		s = regexp.MustCompile(`call [0-9A-Z]{26}`).ReplaceAllString(s, "call ID")
		return regexp.MustCompile(` +`).ReplaceAllString(s, " ")
	}
	if got := mask(out.String()); got != mask(want) {
		t.Errorf("the README's call example prints, masked:\n%s\nthe command prints:\n%s\n(unmasked:\n%s)", mask(want), got, out.String())
	}
}

// TestReadmeClassifyExample: the request body the README's classify
// example posts exists in the repository and is the tools/call its headers
// name.
func TestReadmeClassifyExample(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	cmds := readmeBlock(t, string(data), "## `mcpdiag classify`", "sh")
	file := regexp.MustCompile(`-d @(\S+)`).FindStringSubmatch(cmds)
	method := regexp.MustCompile(`'Mcp-Method: ([^']+)'`).FindStringSubmatch(cmds)
	name := regexp.MustCompile(`'Mcp-Name: ([^']+)'`).FindStringSubmatch(cmds)
	if file == nil || method == nil || name == nil {
		t.Fatalf("the classify example names no body file, Mcp-Method or Mcp-Name:\n%s", cmds)
	}
	body, err := os.ReadFile(filepath.Join("../..", file[1]))
	if err != nil {
		t.Fatalf("the classify example posts %s: %v", file[1], err)
	}
	var req struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  string          `json:"method"`
		Params  struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatalf("%s: %v", file[1], err)
	}
	if req.JSONRPC != "2.0" || string(req.ID) != "1" || req.Method != method[1] || req.Params.Name != name[1] {
		t.Errorf("%s is %s %q id %s; the headers say %s %q and the example passes --id 1", file[1], req.Method, req.Params.Name, req.ID, method[1], name[1])
	}
}
