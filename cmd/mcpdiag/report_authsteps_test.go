package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The records the built-in client writes today for an OAuth chain (the
// resource and authorization server metadata GETs, the registration and
// token POSTs, each with its auth step, RESULT_SUCCESS when the step
// succeeded) are this version's records: report counts them as they are and
// says nothing of "an older mcpdiag". Before outsider16 `mcpdiag call
// --record` against serve --scenario auth.oauth, then `mcpdiag report`, said
// "5 exchange records of an older mcpdiag (before 2026-12-06) said
// RESULT_SUCCESS …: counted as HTTP_SUCCESS", of records written a moment
// before by the same binary.
func TestReportCountsAuthStepsAsRecorded(t *testing.T) {
	u, _ := startServe(t, serveOptions{scenario: "auth.oauth", seed: 1})
	file := filepath.Join(t.TempDir(), "auth.jsonl")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"call", u, "echo", "--args", `{"text":"hi"}`, "--record", file}, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("call: exit %d: %s %s", code, stdout.String(), stderr.String())
	}
	stdout.Reset()
	stderr.Reset()
	if code := run([]string{"report", file}, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("report: exit %d: %s", code, stderr.String())
	}
	if strings.Contains(stdout.String(), "older mcpdiag") {
		t.Errorf("report calls this version's auth step records an older mcpdiag's:\n%s", stdout.String())
	}
	stdout.Reset()
	if code := run([]string{"report", "--json", file}, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("report --json: exit %d: %s", code, stderr.String())
	}
	var sum struct {
		Rejudged  int64 `json:"rejudged"`
		Exchanges struct {
			ByOutcome []struct {
				Outcome string `json:"outcome"`
				Count   int64  `json:"count"`
			} `json:"byOutcome"`
		} `json:"exchanges"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &sum); err != nil {
		t.Fatalf("report --json: %v\n%s", err, stdout.String())
	}
	// What the records say, counted as they say it: the steps that
	// succeeded (at least the two metadata GETs and the token POST) and
	// tools/list are RESULT_SUCCESS; nothing is re-judged.
	got := map[string]int64{}
	for _, c := range sum.Exchanges.ByOutcome {
		got[c.Outcome] = c.Count
	}
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	recs := decodeRecords(t, raw)
	var steps, success int64
	for _, r := range recs {
		if r.Kind == "exchange" && r.Auth != nil {
			steps++
		}
		if r.Kind == "exchange" && r.Outcome == "RESULT_SUCCESS" {
			success++
		}
	}
	if sum.Rejudged != 0 || got["HTTP_SUCCESS"] != 0 || got["RESULT_SUCCESS"] != success || steps < 3 {
		t.Errorf("rejudged %d, outcomes %v, %d auth step records, %d RESULT_SUCCESS records; want none re-judged and RESULT_SUCCESS %d", sum.Rejudged, got, steps, success, success)
	}
}
