package matrix_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/judge"
	"github.com/mcpdiag/mcpdiag/matrix"
)

// TestClientWithoutCapabilityNotTested: a client that declares no
// elicitation capability (badclient -bad no-elicitation: clientCapabilities
// {} on its call) gets 400 -32021 on each elicitation scenario, as a server
// must answer it, and prints HTTP_ERROR. Its runs are "not tested" (the
// interaction was never exercised), neither passed nor failed, in the
// table, the summary, the JSON and JUnit, and the matrix does not fail on
// them; its baseline run still passes. Before, those rows failed
// client.classification ("printed HTTP_ERROR; expected TOOL_SUCCESS"),
// and over 2025-11-25 (the TypeScript SDK's client, interop) they passed.
// The same client declaring elicitation passes them, and one that
// declares it and breaks the round (reuse-id) still fails.
func TestClientWithoutCapabilityNotTested(t *testing.T) {
	t.Parallel()
	bin := badClient(t)
	cases := selectCases(t, matrix.Era2026, "elicitation.*", "baseline")
	if len(cases) != 4 {
		t.Fatalf("%d cases, want elicitation.approval, .decline, .url_mode and baseline", len(cases))
	}
	rep := run(t, matrix.Options{Cases: cases, Command: []string{bin, "-bad=no-elicitation"}})
	for _, c := range rep.Cases {
		name := c.Case.Name
		capCheck := checkOf(t, rep, name, "client.capability")
		class := checkOf(t, rep, name, "client.classification")
		if name == "baseline" {
			if c.Verdict() != judge.Pass || capCheck.Verdict != judge.NotApplicable {
				t.Errorf("baseline: verdict %s, client.capability %s (%s); want pass, n/a", c.Verdict(), capCheck.Verdict, capCheck.Evidence)
			}
			continue
		}
		if c.Verdict() != judge.NotTested || c.Runs[0].Verdict() != judge.NotTested {
			t.Errorf("%s: verdict %s, want not tested; checks %+v", name, c.Verdict(), c.Checks())
		}
		for _, w := range []string{"the client declared no elicitation capability", "POST 1 (tools/call", "declared none",
			"HTTP 400", "JSON-RPC error -32021", "the interaction was not exercised"} {
			if capCheck.Verdict != judge.NotTested || !strings.Contains(capCheck.Evidence, w) {
				t.Errorf("%s: client.capability %s: %s; want not tested naming %q", name, capCheck.Verdict, capCheck.Evidence, w)
			}
		}
		if class.Verdict != judge.Pass || !strings.Contains(class.Evidence, "printed HTTP_ERROR; expected HTTP_ERROR: the client declared no elicitation capability") {
			t.Errorf("%s: client.classification %s: %s", name, class.Verdict, class.Evidence)
		}
		for _, ch := range c.Checks() {
			if ch.Verdict == judge.Fail {
				t.Errorf("%s: %s failed: %s", name, ch.Rule, ch.Evidence)
			}
		}
	}
	if rep.Failed() {
		t.Errorf("the matrix failed on runs that were not tested: %+v", rep.Totals())
	}
	if tot := rep.Totals(); tot.NotTestedRuns != 3 || tot.FailedRuns != 0 || tot.PassedRuns() != 1 || tot.NotTested != 3 {
		t.Errorf("totals %+v, want 1 passed, 3 not tested, 0 failed", tot)
	}

	var text bytes.Buffer
	if err := rep.WriteText(&text, matrix.TextOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"4 runs: 1 passed, 3 not tested, 0 failed.", ", 3 not tested.\n", "elicitation.approval           TOOL_SUCCESS  HTTP_ERROR        1 0       not tested\n",
		"NOT TESTED in 3 runs: elicitation.approval (2026-07-28), elicitation.decline (2026-07-28), elicitation.url_mode (2026-07-28)\n",
		"first:    elicitation.approval (2026-07-28): the client declared no elicitation capability"} {
		if !strings.Contains(text.String(), w) {
			t.Errorf("the table does not say %q:\n%s", w, text.String())
		}
	}
	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	notTested := 0
	for _, line := range bytes.Split(bytes.TrimSpace(js.Bytes()), []byte("\n")) {
		var c struct {
			Case      string `json:"case"`
			Verdict   string `json:"verdict"`
			NotTested int    `json:"notTestedRuns"`
			Why       string `json:"notTested"`
			Runs      []struct {
				Verdict string `json:"verdict"`
			} `json:"runs"`
		}
		if err := json.Unmarshal(line, &c); err != nil {
			t.Fatal(err)
		}
		if c.Verdict == "not tested" {
			notTested++
			if c.NotTested != 1 || c.Runs[0].Verdict != "not tested" || !strings.Contains(c.Why, "declared no elicitation") {
				t.Errorf("JSON %s", line)
			}
		}
	}
	if notTested != 3 {
		t.Errorf("the JSON says %d cases not tested, want 3:\n%s", notTested, js.String())
	}
	var junit bytes.Buffer
	if err := rep.WriteJUnit(&junit); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(junit.String(), `<skipped message="not tested: the client declared no elicitation capability`); n != 3 {
		t.Errorf("JUnit has %d skipped not-tested checks, want 3:\n%s", n, junit.String())
	}

	// Declared: tested, and passed.
	good := run(t, matrix.Options{Cases: selectCases(t, matrix.Era2026, "elicitation.*"), Command: []string{bin}})
	for _, c := range good.Cases {
		ch := checkOf(t, good, c.Case.Name, "client.capability")
		if c.Verdict() != judge.Pass || ch.Verdict != judge.Pass || !strings.Contains(ch.Evidence, "declared elicitation on POST 2 (tools/call") ||
			!strings.Contains(ch.Evidence, "the interaction took place from POST 1 (tools/call") {
			t.Errorf("%s (declared): verdict %s, client.capability %s: %s", c.Case.Name, c.Verdict(), ch.Verdict, ch.Evidence)
		}
	}
	// Declared, and the round broken: still a failure.
	bad := run(t, matrix.Options{Cases: selectCases(t, matrix.Era2026, "elicitation.approval"), Command: []string{bin, "-bad=reuse-id"}})
	if v := bad.Cases[0].Verdict(); v != judge.Fail || !bad.Failed() {
		t.Errorf("reuse-id on elicitation.approval: %s, want fail", v)
	}
}

// TestClientWithoutModeNotTested: a client that declares elicitation as {}
// (form mode only; badclient -bad form-only) gets 400 -32021 on
// elicitation.url_mode, as a server must answer it, and prints
// HTTP_ERROR: that run is not tested, not failed, and the form scenarios
// it can take part in pass. Before, client.capability saw the name
// "elicitation" declared and client.classification failed the run
// ("printed HTTP_ERROR; expected TOOL_SUCCESS"), exit 1.
func TestClientWithoutModeNotTested(t *testing.T) {
	t.Parallel()
	bin := badClient(t)
	rep := run(t, matrix.Options{Cases: selectCases(t, matrix.Era2026, "elicitation.*"), Command: []string{bin, "-bad=form-only"}})
	for _, c := range rep.Cases {
		name := c.Case.Name
		capCheck := checkOf(t, rep, name, "client.capability")
		class := checkOf(t, rep, name, "client.classification")
		if name != "elicitation.url_mode" {
			if c.Verdict() != judge.Pass || capCheck.Verdict != judge.Pass || !strings.Contains(capCheck.Evidence, "declared elicitation on POST ") {
				t.Errorf("%s: verdict %s, client.capability %s (%s); want pass", name, c.Verdict(), capCheck.Verdict, capCheck.Evidence)
			}
			continue
		}
		if c.Verdict() != judge.NotTested {
			t.Errorf("%s: verdict %s, want not tested; checks %+v", name, c.Verdict(), c.Checks())
		}
		for _, w := range []string{"the client declared elicitation (POST 1 (tools/call", "declared elicitation), but not what the scenario's interaction needs",
			"JSON-RPC error -32021", "the interaction was not exercised"} {
			if capCheck.Verdict != judge.NotTested || !strings.Contains(capCheck.Evidence, w) {
				t.Errorf("%s: client.capability %s: %s; want not tested naming %q", name, capCheck.Verdict, capCheck.Evidence, w)
			}
		}
		if class.Verdict != judge.Pass || !strings.Contains(class.Evidence, "printed HTTP_ERROR; expected HTTP_ERROR: the client declared elicitation but not what the scenario's interaction needs of it") {
			t.Errorf("%s: client.classification %s: %s", name, class.Verdict, class.Evidence)
		}
	}
	if tot := rep.Totals(); rep.Failed() || tot.NotTestedRuns != 1 || tot.FailedRuns != 0 || tot.PassedRuns() != 2 {
		t.Errorf("totals %+v, want 2 passed, 1 not tested, 0 failed", tot)
	}
}

// elicitationNotTested runs badclient -bad mode on the three 2026-07-28
// elicitation scenarios and holds that each run is not tested, its
// client.capability naming each of evidence, and the totals 3 not tested,
// 0 failed; it returns the report for a test's own checks.
func elicitationNotTested(t *testing.T, mode string, evidence ...string) *matrix.Report {
	t.Helper()
	bin := badClient(t)
	rep := run(t, matrix.Options{Cases: selectCases(t, matrix.Era2026, "elicitation.*"), Command: []string{bin, "-bad=" + mode}})
	if len(rep.Cases) != 3 {
		t.Fatalf("%d cases, want the three elicitation scenarios", len(rep.Cases))
	}
	for _, c := range rep.Cases {
		name := c.Case.Name
		capCheck := checkOf(t, rep, name, "client.capability")
		if c.Verdict() != judge.NotTested {
			t.Errorf("%s: verdict %s, want not tested; checks %+v", name, c.Verdict(), c.Checks())
		}
		for _, w := range append(evidence, "HTTP 400", "JSON-RPC error -32021", "the interaction was not exercised") {
			if capCheck.Verdict != judge.NotTested || !strings.Contains(capCheck.Evidence, w) {
				t.Errorf("%s: client.capability %s: %s; want not tested naming %q", name, capCheck.Verdict, capCheck.Evidence, w)
			}
		}
	}
	if tot := rep.Totals(); rep.Failed() || tot.NotTestedRuns != 3 || tot.FailedRuns != 0 {
		t.Errorf("totals %+v, want 3 not tested, 0 failed", tot)
	}
	return rep
}

// TestDeclarationOnTheListIsNotTheCalls: a 2026-07-28 client that declares
// elicitation on its tools/list and carries no clientCapabilities in its
// tools/call's _meta (badclient -bad list-declares) gets 400 -32021 on each
// elicitation scenario: the server reads the call's own declaration, as
// it must (no capability is inferred from a prior request). The run is
// not tested, and the evidence names the tools/call, not the tools/list.
// Before, the judge took the tools/list's declaration for the call's:
// "the client declared elicitation (POST 1 (tools/list, id 1) declared
// elicitation), but not what the scenario's interaction needs of it".
func TestDeclarationOnTheListIsNotTheCalls(t *testing.T) {
	t.Parallel()
	rep := elicitationNotTested(t, "list-declares",
		"the client declared no elicitation capability (POST 2 (tools/call ", ") carried no clientCapabilities in its _meta); the server answered the last tools/call, POST 2 (tools/call ")
	for _, c := range rep.Cases {
		name := c.Case.Name
		capCheck := checkOf(t, rep, name, "client.capability")
		class := checkOf(t, rep, name, "client.classification")
		if strings.Contains(capCheck.Evidence, "tools/list") {
			t.Errorf("%s: the evidence names the tools/list: %s", name, capCheck.Evidence)
		}
		if class.Verdict != judge.Pass || !strings.Contains(class.Evidence, "printed HTTP_ERROR; expected HTTP_ERROR: the client declared no elicitation capability") {
			t.Errorf("%s: client.classification %s: %s", name, class.Verdict, class.Evidence)
		}
	}
}

// TestMalformedDeclarationNotTested: a client whose tools/call carries
// _meta clientCapabilities that is no object (null; badclient -bad
// caps-null) declared no capability a server can read, and the server
// answers -32021: not tested, as a client declaring none. Before, the
// record left the names out as for a record that does not show them, the
// judge read "the records do not say" and client.capability was n/a: the
// three elicitation cases passed though the interaction never ran
// (outsider18, with null, "elicitation" and [] from a Python client).
func TestMalformedDeclarationNotTested(t *testing.T) {
	t.Parallel()
	elicitationNotTested(t, "caps-null",
		"the client declared no elicitation capability (POST 1 (tools/call ", ") declared none); the server answered the last tools/call, POST 1 (tools/call ")
}

// TestClientSkippingTheRoundFails: a client that declares elicitation, gets
// input_required on its tools/call and prints TOOL_SUCCESS without
// answering (badclient -bad skip-round: no MRTR round) fails
// client.classification on every elicitation scenario: the server's
// answer to its last tools/call asked for input, so the truth is
// INPUT_REQUIRED. Before, Want was the scenario's TOOL_SUCCESS (its fault
// fired on that call) and the runs passed.
func TestClientSkippingTheRoundFails(t *testing.T) {
	t.Parallel()
	bin := badClient(t)
	rep := run(t, matrix.Options{Cases: selectCases(t, matrix.Era2026, "elicitation.*"), Command: []string{bin, "-bad=skip-round"}})
	if len(rep.Cases) != 3 {
		t.Fatalf("%d cases, want the three elicitation scenarios", len(rep.Cases))
	}
	for _, c := range rep.Cases {
		class := checkOf(t, rep, c.Case.Name, "client.classification")
		if c.Verdict() != judge.Fail || class.Verdict != judge.Fail || !strings.HasPrefix(class.Evidence, "printed TOOL_SUCCESS; expected INPUT_REQUIRED: the server answered the last tools/call, POST 1 (tools/call ") ||
			!strings.HasSuffix(class.Evidence, "with input_required, and no round answered it (the scenario's TOOL_SUCCESS needs the rounds)") {
			t.Errorf("%s: verdict %s, client.classification %s: %s; want a failure expecting INPUT_REQUIRED", c.Case.Name, c.Verdict(), class.Verdict, class.Evidence)
		}
	}
}
