package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/faults"
	"github.com/mcpdiag/mcpdiag/record"
)

// callRun is one `mcpdiag call … --record FILE` run: its exit code, its
// human report and the records it wrote.
type callRun struct {
	code      int
	human     string
	exchanges []*record.Record
	call      *record.Record
	file      string
}

func runCallRecorded(t *testing.T, args ...string) callRun {
	t.Helper()
	file := filepath.Join(t.TempDir(), "calls.jsonl")
	var stdout, stderr bytes.Buffer
	code := run(append(args, "--record", file), strings.NewReader(""), &stdout, &stderr)
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("exit %d, no record file: %v (%s)", code, err, stderr.String())
	}
	r := callRun{code: code, human: stdout.String(), file: file}
	for rec, err := range record.NewReader(bytes.NewReader(data)).All() {
		if err != nil {
			t.Fatalf("record line: %v", err)
		}
		switch rec.Kind {
		case record.KindExchange:
			r.exchanges = append(r.exchanges, rec)
		case record.KindCall:
			if r.call != nil {
				t.Fatalf("two call lines in %s", data)
			}
			r.call = rec
		}
	}
	if r.call == nil {
		t.Fatalf("no call line (exit %d): %s %s", code, stdout.String(), stderr.String())
	}
	return r
}

// humanOutcome is the outcome the human report names on its first line.
func humanOutcome(t *testing.T, human string) classify.Outcome {
	t.Helper()
	first, _, _ := strings.Cut(human, "\n")
	name, _, ok := strings.Cut(first, " (")
	if !ok {
		t.Fatalf("human report starts %q", first)
	}
	return classify.Outcome(name)
}

// checkCallLine holds the call line to the property the three views of a
// call share: the human report's outcome, the exit code and the call line's
// verdict are one, and that verdict, the request id and the arguments hash
// are the tools/call's — never those of a set-up exchange or of an answer
// to a server request posted after the tools/call's response.
func checkCallLine(t *testing.T, r callRun, tool string) {
	t.Helper()
	c := r.call
	if got := humanOutcome(t, r.human); c.Outcome != got {
		t.Errorf("call line outcome %s, the human report says %s", c.Outcome, got)
	}
	if want := exitFor(c.Outcome); r.code != want && c.Outcome != classify.InputRoundsExceeded && c.Outcome != classify.ToolExcluded {
		t.Errorf("exit %d for a call line %s (want %d)", r.code, c.Outcome, want)
	}
	// The counters the human report prints are the call line's.
	if m := regexp.MustCompile(`, (\d+) retr(?:y|ies), (\d+) input round\(s\)`).FindStringSubmatch(r.human); m == nil {
		t.Errorf("no exchanges line in the human report:\n%s", r.human)
	} else if m[2] != strconv.Itoa(c.InputRounds) {
		t.Errorf("the human report says %s input round(s), the call line inputRounds %d", m[2], c.InputRounds)
	}
	if c.Tool != tool || c.Method != "tools/call" {
		t.Errorf("call line names %s %q, want tools/call %q", c.Method, c.Tool, tool)
	}
	if c.Outcome == classify.AuthFailed {
		// The chain's verdict, not an exchange's: the call line names the
		// step that failed and why.
		if c.Auth == nil || c.Auth.Step == "" || c.Auth.Failure == "" {
			t.Errorf("an AUTH_FAILED call line without its step: %+v", c.Auth)
		}
		return
	}
	var first, last *record.Record
	for _, ex := range r.exchanges {
		if ex.Method == "tools/call" {
			if first == nil {
				first = ex
			}
			last = ex
		}
	}
	if first == nil {
		// The call stopped before tools/call: its verdict is the last
		// exchange's.
		if n := len(r.exchanges); n > 0 && c.Outcome != r.exchanges[n-1].Outcome {
			t.Errorf("no tools/call sent; call line %s, last exchange %s", c.Outcome, r.exchanges[n-1].Outcome)
		}
		return
	}
	if c.ArgsHash != first.ArgsHash {
		t.Errorf("call line argsHash %s; the first tools/call has argsHash %s", c.ArgsHash, first.ArgsHash)
	}
	if c.Outcome == classify.InputRoundsExceeded || c.Outcome == classify.ToolExcluded {
		return
	}
	// The ids are one attempt's, the one whose verdict the line carries:
	// responseId is read against id.
	if !c.JSONRPC.ID.Equal(last.JSONRPC.ID) || !c.JSONRPC.ResponseID.Equal(last.JSONRPC.ResponseID) {
		t.Errorf("call line id %s responseId %s; the last tools/call (seq %d) has id %s responseId %s",
			c.JSONRPC.ID, c.JSONRPC.ResponseID, last.Seq, last.JSONRPC.ID, last.JSONRPC.ResponseID)
	}
	if c.Outcome != last.Outcome || c.Layer != last.Layer || c.Status != last.Status || c.ContentType != last.ContentType ||
		c.ResultType != last.ResultType || !sameBool(c.IsError, last.IsError) || !sameInt(c.JSONRPC.ErrorCode, last.JSONRPC.ErrorCode) {
		t.Errorf("call line %s/%s status %d %q resultType %q; the last tools/call (seq %d) %s/%s status %d %q resultType %q",
			c.Outcome, c.Layer, c.Status, c.ContentType, c.ResultType, last.Seq, last.Outcome, last.Layer, last.Status, last.ContentType, last.ResultType)
	}
}

func sameBool(a, b *bool) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
func sameInt(a, b *int64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

// TestCallRecordElicitation2025 is defect 9 end to end: on 2025-11-25 the
// elicitation scenario asks on the tools/call stream, the client answers
// "decline" (--input) with a POST that gets 202 after the tool result, which
// is isError. The human report says TOOL_ERROR and exits 1; the call line
// must say so too, so that `report --fail-on TOOL_ERROR` fails.
func TestCallRecordElicitation2025(t *testing.T) {
	main, _ := startServe(t, serveOptions{seed: 1})
	u := strings.TrimSuffix(main, "/mcp") + "/s/elicitation.approval/mcp"
	in := filepath.Join(t.TempDir(), "input.json")
	if err := os.WriteFile(in, []byte(`{"elicitation/create":{"action":"decline"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runCallRecorded(t, "call", u, "approve", "--protocol", "2025-11-25", "--input", in, "--retries", "0", "--timeout", "10s")
	if r.code != 1 || humanOutcome(t, r.human) != classify.ToolError {
		t.Fatalf("exit %d, report %s", r.code, r.human)
	}
	// The scenario is what it claims: the last POST is the client's answer
	// to elicitation/create, after the tools/call.
	if n := len(r.exchanges); n < 2 || r.exchanges[n-1].Method != "elicitation/create" || !r.exchanges[n-1].ClientAnswer || r.exchanges[n-2].Method != "tools/call" {
		t.Fatalf("want a tools/call then the answer to elicitation/create last, got %s", r.human)
	}
	checkCallLine(t, r, "approve")
	if r.call.Outcome != classify.ToolError || r.call.Layer != classify.LayerApplication || r.call.Status != 200 {
		t.Errorf("call line %s/%s status %d, want TOOL_ERROR/application 200", r.call.Outcome, r.call.Layer, r.call.Status)
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"report", "--fail-on", "TOOL_ERROR", r.file}, strings.NewReader(""), &stdout, &stderr); code != 1 {
		t.Errorf("report --fail-on TOOL_ERROR exit %d, want 1:\n%s%s", code, stdout.String(), stderr.String())
	}
}

// TestCallRecordEveryScenario applies the property of checkCallLine to
// every scenario of `mcpdiag serve` in each era it serves: whatever the
// fault, the record says what the report says, about the tools/call.
func TestCallRecordEveryScenario(t *testing.T) {
	main, _ := startServe(t, serveOptions{seed: 1})
	base := strings.TrimSuffix(main, "/mcp")
	for _, e := range faults.Catalogue() {
		if e.OnStdio() {
			continue // not served over HTTP
		}
		eras := []string{"2026-07-28", "2025-11-25"}
		if e.Protocol != "" {
			eras = []string{e.Protocol}
		}
		for _, era := range eras {
			t.Run(e.ID+"/"+era, func(t *testing.T) {
				t.Parallel()
				checkCallLine(t, runCallRecorded(t, append(entryCall(t, base, e), "--protocol", era)...), e.Tool)
			})
		}
	}
}
