package serve_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/faults"
	"github.com/mcpdiag/mcpdiag/serve"
)

// TestParseConfigRefusesBadInput: every kind of bad config file is refused
// in one line that names the problem.
func TestParseConfigRefusesBadInput(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"empty", "  \n", "empty: want a JSON object"},
		{"not JSON", "{\n  \"scenario\": baseline\n}", "line 2, column 15: not JSON: invalid character 'b'"},
		{"not an object", `["baseline"]`, "want a JSON object, got array"},
		{"unknown member", `{"scenarios":"baseline"}`, `unknown field "scenarios" (want scenario, params or seed)`},
		{"seed of the wrong type", `{"seed":"9"}`, "seed: want a non-negative integer, got string"},
		{"negative seed", `{"seed":-1}`, "seed: want a non-negative integer, got number -1"},
		{"scenario of the wrong type", `{"scenario":7}`, `scenario: want "a+b" or a list of {"id":…,"params":{…}}, got 7`},
		{"params beside a list", `{"scenario":[{"id":"baseline"}],"params":{}}`, "a scenario list carries its own params"},
		{"two objects", `{"seed":1} {"seed":2}`, "line 1, column 12: more after the JSON object"},
		{"not closed", `{"seed":1`, "the JSON object is not closed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := serve.ParseConfig([]byte(tc.in))
			if err == nil {
				t.Fatalf("ParseConfig(%q) = %+v, want an error", tc.in, c)
			}
			if !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q: want one line containing %q", err, tc.want)
			}
		})
	}
}

// TestConfigSelection: the scenarios of /mcp from the command line and the
// config, and what is refused when both say something.
func TestConfigSelection(t *testing.T) {
	parse := func(s string) *serve.Config {
		t.Helper()
		c, err := serve.ParseConfig([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	for _, tc := range []struct {
		name    string
		config  *serve.Config
		spec    string
		params  string
		want    string // the selection's String, or the error
		wantErr bool
	}{
		{name: "nothing: healthy", want: ""},
		{name: "flags only", spec: "errors.http_status_sequence", params: `{"statusCodes":[500]}`, want: "errors.http_status_sequence"},
		{name: "a list", config: parse(`{"scenario":[{"id":"baseline","params":{"delay":{"ms":1}}},{"id":"errors.tool_error"}]}`), want: "baseline+errors.tool_error"},
		{name: "a spec with params", config: parse(`{"scenario":"errors.http_status_sequence","params":{"statusCodes":[503]}}`), want: "errors.http_status_sequence"},
		{name: "flag params replace the config's", config: parse(`{"scenario":"errors.http_status_sequence","params":{"statusCodes":"x"}}`), params: `{"statusCodes":[500]}`, want: "errors.http_status_sequence"},
		{name: "config params for a flag scenario", config: parse(`{"params":{"statusCodes":[500]}}`), spec: "errors.http_status_sequence", want: "errors.http_status_sequence"},
		{name: "both name scenarios", config: parse(`{"scenario":"baseline"}`), spec: "baseline", want: "both name scenarios", wantErr: true},
		{name: "flag params with a list", config: parse(`{"scenario":[{"id":"baseline"}]}`), params: `{}`, want: "a scenario list carries its own params", wantErr: true},
		{name: "an unknown scenario in a list", config: parse(`{"scenario":[{"id":"nope"}]}`), want: `unknown scenario "nope"`, wantErr: true},
		{name: "a bad param in the config", config: parse(`{"scenario":"errors.tool_error","params":{"errorMessage":1}}`), want: "errors.tool_error: param errorMessage", wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var params json.RawMessage
			if tc.params != "" {
				params = json.RawMessage(tc.params)
			}
			sel, err := tc.config.Selection(tc.spec, params)
			switch {
			case tc.wantErr:
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("Selection: %v, %v; want the error %q", sel, err, tc.want)
				}
			case err != nil:
				t.Fatalf("Selection: %v", err)
			case sel.String() != tc.want:
				t.Errorf("Selection %q, want %q", sel.String(), tc.want)
			}
			if tc.name == "flag params replace the config's" && err == nil {
				if got := sel[0].Scenario.(*faults.StatusSequence).StatusCodes; len(got) != 1 || got[0] != 500 {
					t.Errorf("status codes %v, want the flag's [500]", got)
				}
			}
		})
	}
}

// TestConfigSeed: the command line's seed wins when it was given, even 0.
func TestConfigSeed(t *testing.T) {
	c := &serve.Config{Seed: 9}
	for _, tc := range []struct {
		c    *serve.Config
		seed uint64
		set  bool
		want uint64
	}{{c, 0, false, 9}, {c, 4, true, 4}, {c, 0, true, 0}, {nil, 0, false, 0}, {&serve.Config{}, 3, false, 3}} {
		if got := tc.c.SeedOr(tc.seed, tc.set); got != tc.want {
			t.Errorf("%+v.SeedOr(%d, %v) = %d, want %d", tc.c, tc.seed, tc.set, got, tc.want)
		}
	}
}

// TestReadConfigNamesTheFile: a missing file and a bad one are both named.
func TestReadConfigNamesTheFile(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"scenarios":1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{filepath.Join(dir, "missing.json"), bad} {
		if _, err := serve.ReadConfig(path); err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("ReadConfig(%s): %v, want an error naming the file", path, err)
		}
	}
}

// FuzzParseConfig: any input either parses into a config whose scenario is
// absent, a string or a list, or is refused in one line; never a panic.
func FuzzParseConfig(f *testing.F) {
	for _, s := range []string{`{}`, `{"scenario":"baseline","seed":3}`, `{"scenario":[{"id":"baseline"}]}`, `{"seed":-1}`, "{\n\"x\":1}", `[]`, ``} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := serve.ParseConfig(b)
		if err != nil {
			if c != nil || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q with config %v: want one line and no config", err, c)
			}
			return
		}
		if s := c.Scenario; len(s) > 0 && s[0] != '"' && s[0] != '[' {
			t.Fatalf("accepted scenario %s", s)
		}
		if s := c.Scenario; len(s) > 0 && s[0] == '[' && len(c.Params) > 0 {
			t.Fatalf("accepted params beside a list")
		}
	})
}

func TestWithAuthServer(t *testing.T) {
	for _, tc := range []struct {
		spec, want string
		wantErr    bool
	}{
		{"", "auth.oauth", false},
		{"errors.tool_error", "auth.oauth+errors.tool_error", false},
		{"auth.oauth", "the scenario auth.oauth already puts /mcp behind an authorization server", true},
		{"errors.tool_error+auth.step_up", "the scenario auth.step_up already puts /mcp behind an authorization server", true},
	} {
		sel, err := faults.Select(tc.spec, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := serve.WithAuthServer(sel)
		switch {
		case tc.wantErr:
			if err == nil || err.Error() != tc.want {
				t.Errorf("%q: %v, %v; want the error %q", tc.spec, got, err, tc.want)
			}
		case err != nil || got.String() != tc.want:
			t.Errorf("%q: %q, %v; want %q", tc.spec, got.String(), err, tc.want)
		}
	}
}
