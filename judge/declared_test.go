package judge_test

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/judge"
	"github.com/mcpdiag/mcpdiag/wire"
)

// TestDeclarationIsTheRequestsOwn: the capabilities in force for a
// 2026-07-28 tools/call are its own _meta's clientCapabilities (the schema
// requires them on every request; a server must not infer capabilities
// from prior requests), never an earlier request's; over 2025-11-25 they
// are the session's initialize's. The traces are the real records of
// client.capability.txtar, changed one fact at a time. Before, a
// tools/call that carried no clientCapabilities took the declaration of
// the tools/list before it: badclient -bad list-declares was "not tested"
// with evidence naming POST 1 (tools/list) as declaring elicitation, and
// the same call answered with a tool error instead of -32021 passed
// ("declared elicitation on POST 1 (tools/list, id 1)").
func TestDeclarationIsTheRequestsOwn(t *testing.T) {
	data, err := os.ReadFile("testdata/client.capability.txtar")
	if err != nil {
		t.Fatal(err)
	}
	g := parseTxtar(data)
	const callOwn = "POST 2 (tools/call approve, id 2) carried no clientCapabilities in its _meta"
	const answered = "the server answered the last tools/call, POST 2 (tools/call approve, id 2), with HTTP 400, HTTP_ERROR (JSON-RPC error -32021)"
	tests := []struct {
		name, trace string
		change      func(t *testing.T, recs []map[string]any) []map[string]any
		verdict     judge.Verdict
		want        []string
	}{
		{"list-declares as recorded", "badclient-list-declares", nil, judge.NotTested,
			[]string{"the client declared no elicitation capability (" + callOwn + ")", answered}},
		{"without the tools/list's declaration", "badclient-list-declares", func(t *testing.T, recs []map[string]any) []map[string]any {
			setCaps(t, recs, "tools/list", nil)
			return recs
		}, judge.NotTested, []string{"the client declared no elicitation capability (" + callOwn + ")", answered}},
		{"with more declared on tools/list", "badclient-list-declares", func(t *testing.T, recs []map[string]any) []map[string]any {
			setCaps(t, recs, "tools/list", []string{"elicitation", "roots", "sampling"})
			return recs
		}, judge.NotTested, []string{"the client declared no elicitation capability (" + callOwn + ")", answered}},
		{"the call answered with a tool error", "badclient-list-declares", func(t *testing.T, recs []map[string]any) []map[string]any {
			r := find(t, recs, "tools/call")
			r["status"], r["outcome"], r["isError"] = 200, "TOOL_ERROR", true
			r["jsonrpc"] = map[string]any{"id": 2, "errorCode": nil}
			return recs
		}, judge.NotTested, []string{"the client declared no elicitation capability (" + callOwn + ")",
			"POST 2 (tools/call approve, id 2), with a tool error (isError: true)"}},
		{"the call declares {}", "badclient-list-declares", func(t *testing.T, recs []map[string]any) []map[string]any {
			setCaps(t, recs, "tools/call", []string{})
			return recs
		}, judge.NotTested, []string{"the client declared no elicitation capability (POST 2 (tools/call approve, id 2) declared none)", answered}},
		{"a record that does not show the call's _meta, answered -32021", "badclient-list-declares", func(t *testing.T, recs []map[string]any) []map[string]any {
			delete(find(t, recs, "tools/call"), "params")
			return recs
		}, judge.NotTested, []string{"the records do not show which capabilities the client declared for the last tools/call, POST 2 (tools/call approve, id 2), but the server answered it with HTTP 400, HTTP_ERROR (JSON-RPC error -32021), MissingRequiredClientCapability, and no exchange shows the interaction: not exercised, whatever was declared"}},
		{"a record that does not show the call's _meta, answered with a tool error", "badclient-list-declares", func(t *testing.T, recs []map[string]any) []map[string]any {
			r := find(t, recs, "tools/call")
			delete(r, "params")
			r["status"], r["outcome"], r["isError"] = 200, "TOOL_ERROR", true
			r["jsonrpc"] = map[string]any{"id": 2, "errorCode": nil}
			return recs
		}, judge.NotApplicable, []string{"the records do not say which capabilities were declared for the last tools/call, POST 2 (tools/call approve, id 2)"}},
		{"MRTR chain as recorded", "builtin-approval", nil, judge.Pass,
			[]string{"declared elicitation on POST 3 (tools/call approve, id 3) (elicitation); the interaction took place from POST 2 (tools/call approve, id 2)"}},
		{"MRTR chain, the tools/list declaring nothing", "builtin-approval", func(t *testing.T, recs []map[string]any) []map[string]any {
			setCaps(t, recs, "tools/list", []string{})
			return recs
		}, judge.Pass, []string{"declared elicitation on POST 3 (tools/call approve, id 3) (elicitation); the interaction took place from POST 2 (tools/call approve, id 2)"}},
		{"2025-11-25: the session's initialize", "ts-client-approval", nil, judge.NotTested,
			[]string{"the client declared no elicitation capability (POST 1 (initialize, id 0) declared none)"}},
		{"2025-11-25: a 2026-07-28 declaration in between is not the session's", "ts-client-approval", func(t *testing.T, recs []map[string]any) []map[string]any {
			// A 2026-07-28 tools/list declaring elicitation, after
			// the initialize and before the 2025-11-25 tools/call.
			list := find(t, goldenRecords(t, g, "badclient-list-declares"), "tools/list")
			at := slices.IndexFunc(recs, func(r map[string]any) bool { return r["method"] == "tools/call" })
			return slices.Insert(recs, at, list)
		}, judge.NotTested, []string{"the client declared no elicitation capability (POST 1 (initialize, id 0) declared none)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			recs := goldenRecords(t, g, tt.trace)
			if tt.change != nil {
				recs = tt.change(t, recs)
			}
			var b bytes.Buffer
			for _, r := range recs {
				line, err := json.Marshal(r)
				if err != nil {
					t.Fatal(err)
				}
				b.Write(append(line, '\n'))
			}
			changed := golden{comment: g.comment}
			for _, f := range g.files {
				if f.name == tt.trace+".jsonl" {
					f.data = b.Bytes()
				}
				changed.files = append(changed.files, f)
			}
			var got *judge.Check
			for _, c := range judgeTrace(t, changed, tt.trace) {
				if c.Rule == "client.capability" {
					got = &c
				}
				if c.Rule == "client.classification" && strings.Contains(tt.name, "does not show") && strings.Contains(c.Evidence, "declared no") {
					// The records do not show the declaration: no
					// evidence may say what it was.
					t.Errorf("client.classification %s: %s", c.Verdict, c.Evidence)
				}
			}
			if got == nil {
				t.Fatal("no client.capability check")
			}
			if got.Verdict != tt.verdict {
				t.Errorf("client.capability %s: %s; want %s", got.Verdict, got.Evidence, tt.verdict)
			}
			for _, w := range tt.want {
				if !strings.Contains(got.Evidence, w) {
					t.Errorf("evidence %q\nlacks %q", got.Evidence, w)
				}
			}
			if tt.trace == "badclient-list-declares" && strings.Contains(got.Evidence, "tools/list") {
				t.Errorf("evidence names the tools/list: %s", got.Evidence)
			}
		})
	}
}

// goldenRecords returns trace name's record lines of g as JSON objects.
func goldenRecords(t *testing.T, g golden, name string) []map[string]any {
	t.Helper()
	data, ok := g.file(name + ".jsonl")
	if !ok {
		t.Fatalf("no trace %s", name)
	}
	var out []map[string]any
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var r map[string]any
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// find returns the first record of method.
func find(t *testing.T, recs []map[string]any, method string) map[string]any {
	t.Helper()
	for _, r := range recs {
		if r["method"] == method {
			return r
		}
	}
	t.Fatalf("no %s record", method)
	return nil
}

// setCaps makes the first request of method declare names (nil: no
// clientCapabilities in its _meta), in the record's names and its params
// facts alike.
func setCaps(t *testing.T, recs []map[string]any, method string, names []string) {
	t.Helper()
	r := find(t, recs, method)
	p, _ := r["params"].(map[string]any)
	if p == nil {
		t.Fatalf("the %s record has no params facts", method)
	}
	var meta []any
	for _, k := range p["meta"].([]any) {
		if k != wire.MetaClientCapabilities {
			meta = append(meta, k)
		}
	}
	delete(r, "clientCapabilities")
	delete(p, "capabilities")
	if names != nil {
		r["clientCapabilities"] = names
		p["capabilities"] = "sha256:0000000000000000"
		meta = append(meta, wire.MetaClientCapabilities)
	}
	slices.SortFunc(meta, func(a, b any) int { return strings.Compare(a.(string), b.(string)) })
	p["meta"] = meta
}
