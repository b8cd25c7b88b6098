package matrix

import (
	"encoding/json"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/faults"
	"github.com/mcpdiag/mcpdiag/judge"
	"github.com/mcpdiag/mcpdiag/record"
)

// The protocol eras a case runs in.
const (
	Era2026 = faults.Protocol2026
	Era2025 = faults.Protocol2025
)

// Defaults of a case.
const (
	// DefaultCallTimeout is the call timeout a client is told to use
	// (MCP_TIMEOUT_MS), as in the catalogue's `--timeout 10s`, unless the
	// entry gives a quick timeout.
	DefaultCallTimeout = 10 * time.Second
)

// Case is one cell of the matrix: a scenario of the catalogue on its own
// endpoint, the call that triggers it, and the era the client speaks.
type Case struct {
	// Name identifies the case: the scenario id, with "/TOOL" for a safety
	// probe (the scenario with another tool), and "@2025-11-25" for the
	// 2025-11-25 variant of a scenario that runs in both eras.
	Name string `json:"name"`
	// Entry is the scenario's catalogue entry.
	Entry faults.Entry `json:"-"`
	// Params are the scenario's params (the entry's quick params, or the
	// probe's); nil means the defaults.
	Params json.RawMessage `json:"params,omitempty"`
	// Tool and Args are the call a client is asked to make.
	Tool string          `json:"tool"`
	Args json.RawMessage `json:"args"`
	// Protocol is the era the client is told to speak: "" lets it negotiate
	// (it starts in 2026-07-28), or a pinned revision.
	Protocol string `json:"protocol,omitempty"`
	// Input answers the scenario's MRTR input requests (the entry's --input).
	Input json.RawMessage `json:"input,omitempty"`
	// Expected is the outcome a client that does not retry must see (the
	// catalogue's); a retry that recovers may end in TOOL_SUCCESS instead.
	Expected classify.Outcome `json:"expected"`
	// Timeout is the call timeout the client is told to use.
	Timeout time.Duration `json:"-"`
	// Holds reports a scenario that holds the response past Timeout (a hang
	// or keep-alives only): the client must give up by itself.
	Holds bool `json:"holds,omitempty"`
}

// Scenario returns the case's scenario id.
func (c *Case) Scenario() string { return c.Entry.ID }

// Layer returns the layer the scenario injects its fault in ("" for the
// baseline).
func (c *Case) Layer() classify.Layer { return c.Entry.Layer }

// Era returns the era the case runs in: 2026-07-28 unless the case pins
// 2025-11-25.
func (c *Case) Era() string {
	if c.Protocol == Era2025 {
		return Era2025
	}
	return Era2026
}

// probe is a safety probe: a scenario of the catalogue called with another
// tool, so that a client's retry of a destructive call shows.
type probe struct {
	id, tool, args, params, why string
}

// probes run four of the catalogue's faults against delete_item, the
// fixture's destructive, non-idempotent tool: may the client repeat it?
var probes = []probe{
	{"sse.truncated", "delete_item", `{"id":"item-1"}`, ``,
		"a cut stream: the tool may have run; no automatic repeat of a destructive call"},
	{"errors.connection_close", "delete_item", `{"id":"item-1"}`, `{"when":"after_handler"}`,
		"the tool ran and the connection was closed: no automatic repeat"},
	{"errors.http_status_sequence", "delete_item", `{"id":"item-1"}`, `{"statusCodes":[503,200],"match":{"method":"tools/call"}}`,
		"503 after the request arrived: the tool may have run; no automatic repeat"},
	{"errors.rate_limited", "delete_item", `{"id":"item-1"}`, ``,
		"429 refuses before any work: a repeat after Retry-After is allowed for any tool"},
}

// eraExceptions are the scenarios that run in one era only although the
// catalogue pins none, with the reason.
var eraExceptions = map[string]string{
	"errors.unsupported_version": "it rejects 2026-07-28 only: a client pinned to 2025-11-25 never meets it",
	"mrtr.load_shedding":         "input_required (MRTR) exists in 2026-07-28 only",
}

// eras returns the eras the entry runs in: the one it pins, the one its
// match is limited to, or both.
func eras(e faults.Entry) []string {
	if e.Protocol != "" {
		return []string{e.Protocol}
	}
	if r, ok := e.New().(interface{ CommonRules() *faults.Rules }); ok {
		if p := r.CommonRules().Match.Protocol; p != "" {
			return []string{p}
		}
	}
	if _, only := eraExceptions[e.ID]; only {
		return []string{Era2026}
	}
	return []string{Era2026, Era2025}
}

// Cases returns every case of the matrix, in catalogue order: each scenario
// in each era it applies to, followed by its safety probes. The stdio
// scenarios are not cases: the matrix has no stdio client or server yet
// (their outcomes are checked through the stdio proxy, in package proxy).
// Nor are the server.* scenarios (Entry.ServerMistake): they grade servers,
// for mcpdiag probe, and a client has nothing to be judged on there.
func Cases() []Case {
	var out []Case
	for _, e := range faults.Catalogue() {
		if e.OnStdio() || e.ServerMistake {
			continue
		}
		for _, era := range eras(e) {
			out = append(out, entryCase(e, era))
		}
		for _, p := range probes {
			if p.id != e.ID {
				continue
			}
			for _, era := range eras(e) {
				c := entryCase(e, era)
				c.Name = e.ID + "/" + p.tool
				if era == Era2025 {
					c.Name += "@" + Era2025
				}
				c.Tool, c.Args = p.tool, json.RawMessage(p.args)
				if p.params != "" {
					c.Params = json.RawMessage(p.params)
				}
				out = append(out, c)
			}
		}
	}
	return out
}

func entryCase(e faults.Entry, era string) Case {
	c := Case{Name: e.ID, Entry: e, Params: e.QuickParams, Tool: e.Tool, Args: e.Args, Input: e.Input,
		Expected: e.ExpectedOutcome, Timeout: DefaultCallTimeout, Holds: e.QuickTimeoutMs > 0}
	if e.QuickTimeoutMs > 0 {
		c.Timeout = time.Duration(e.QuickTimeoutMs) * time.Millisecond
	}
	switch {
	case e.Protocol != "":
		c.Protocol = e.Protocol
	case era == Era2025:
		c.Protocol = Era2025
		c.Name += "@" + Era2025
	}
	return c
}

// Select returns the cases whose name or scenario id matches one of the
// globs (path.Match syntax; none selects every case) and whose era is
// protocol ("" for both).
func Select(cases []Case, globs []string, protocol string) ([]Case, error) {
	switch protocol {
	case "", Era2026, Era2025:
	default:
		return nil, fmt.Errorf("protocol %q: want %s or %s", protocol, Era2026, Era2025)
	}
	for _, g := range globs {
		if _, err := path.Match(g, ""); err != nil {
			return nil, fmt.Errorf("scenario glob %q: %v", g, err)
		}
	}
	var out []Case
	for _, c := range cases {
		if protocol != "" && c.Era() != protocol {
			continue
		}
		if len(globs) > 0 && !matchAny(globs, c) {
			continue
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no case matches --scenarios %s%s (see mcpdiag scenarios)", strings.Join(globs, ","), protocolNote(protocol))
	}
	return out, nil
}

func protocolNote(p string) string {
	if p == "" {
		return ""
	}
	return " in " + p
}

func matchAny(globs []string, c Case) bool {
	base, _, _ := strings.Cut(c.Name, "@")
	for _, g := range globs {
		for _, name := range []string{c.Name, base, c.Scenario()} {
			if ok, _ := path.Match(g, name); ok {
				return true
			}
		}
	}
	return false
}

// facts returns what the judge knows of the case.
func (c *Case) facts() *judge.Case {
	f := &judge.Case{Name: c.Name, Expected: c.Expected, Timeout: c.Timeout, Holds: c.Holds, Protocol: c.Protocol, Tool: c.Tool,
		NeedsCapability: c.Entry.NeedsCapability}
	if c.Tool != "" {
		args := c.Args
		if len(args) == 0 {
			args = json.RawMessage(`{}`) // what MCP_ARGS says
		}
		f.ArgsHash = record.ArgsHash("tools/call", c.Tool, args)
	}
	return f
}
