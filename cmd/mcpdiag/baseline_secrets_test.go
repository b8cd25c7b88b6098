package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// baselineSecret is planted in every free string of the baseline
// TestBaselineMasksSecrets reads.
const baselineSecret = "XbaselinePw5e6f7a8b"

// plantStrings puts `password: "baselineSecret"` after every string of v
// but those the gates match on (the format, and outcome, layer, kind).
func plantStrings(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			switch k {
			case "format", "outcome", "layer", "kind":
				continue
			}
			x[k] = plantStrings(e)
		}
	case []any:
		for i, e := range x {
			x[i] = plantStrings(e)
		}
	case string:
		return x + ` password: "` + baselineSecret + `"`
	}
	return v
}

// TestBaselineMasksSecrets (audit10): report --baseline, in every format
// (text, --json, --html, --har), prints no credential of either file: the
// records (the planted line of TestReadersRedactOldRecords, whose failure
// rate fails every gate against the baseline, so that every gate message
// is printed) or the baseline (a real report --json with a credential
// after each of its strings, and one whose format names a credential,
// refused on stderr).
func TestBaselineMasksSecrets(t *testing.T) {
	in := plantedRecordFile(t)
	dir := t.TempDir()
	var o, e bytes.Buffer
	if code := run([]string{"report", "--json", filepath.Join("..", "..", "ui", "testdata", "records.jsonl")}, nil, &o, &e); code != 0 && code != 1 {
		t.Fatalf("report --json: exit %d: %s", code, e.String())
	}
	var m map[string]any
	if err := json.Unmarshal(o.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	planted, err := json.Marshal(plantStrings(m))
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(planted, []byte(baselineSecret)); n < 20 {
		t.Fatalf("the baseline holds the secret %d times: the test proves little", n)
	}
	base := filepath.Join(dir, "base.json")
	m["format"] = `mcpdiag-report/9 password: "` + baselineSecret + `"`
	badFormat, _ := json.Marshal(m)
	bad := filepath.Join(dir, "bad.json")
	for p, b := range map[string][]byte{base: planted, bad: badFormat} {
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	secrets := append([]string{baselineSecret}, oldRecordSecrets...)
	leaks := 0
	for _, tt := range []struct {
		name string
		args []string
		code int
	}{
		{"text", []string{"--max-rate-increase", "0", "--fail-on", "JSONRPC_ERROR", "--baseline", base}, 1},
		{"--json", []string{"--json", "--max-rate-increase", "0", "--fail-on", "JSONRPC_ERROR", "--baseline", base}, 1},
		{"bad format", []string{"--baseline", bad}, 2},
		{"bad format --json", []string{"--json", "--baseline", bad}, 2},
	} {
		html, har := filepath.Join(dir, tt.name+".html"), filepath.Join(dir, tt.name+".har")
		var o, e bytes.Buffer
		args := append(append([]string{"report", "--html", html, "--har", har}, tt.args...), in)
		if code := run(args, nil, &o, &e); code != tt.code {
			t.Fatalf("%s: exit %d, want %d\n%s%s", tt.name, code, tt.code, o.String(), e.String())
		}
		outs := map[string][]byte{"stdout": o.Bytes(), "stderr": e.Bytes()}
		if tt.code == 1 {
			if !strings.Contains(e.String(), "gate failed") || !strings.Contains(e.String(), "vs baseline") {
				t.Errorf("%s: no baseline gate failed: the test proves little\n%s", tt.name, e.String())
			}
			for _, p := range []string{html, har} {
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				outs[filepath.Ext(p)] = b
			}
		} else if !strings.Contains(e.String(), "--baseline") {
			t.Errorf("%s: stderr does not name the baseline\n%s", tt.name, e.String())
		}
		for name, b := range outs {
			for _, s := range secrets {
				if i := bytes.Index(b, []byte(s)); i >= 0 {
					leaks++
					t.Errorf("%s: %s leaks %s: …%s…", tt.name, name, s, b[max(0, i-100):i+len(s)])
				}
			}
		}
	}
	if leaks > 0 {
		t.Logf("%d leaks", leaks)
	}
}
