package matrix_test

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/judge"
	"github.com/mcpdiag/mcpdiag/matrix"
)

// authRules are the rules that judge a client's OAuth chain.
var authRules = []string{"auth.no-token-elsewhere", "auth.pkce", "auth.bounded-step-up", "auth.no-token-in-url"}

// TestAuthRulesPassTheBuiltinClient: the built-in client, on every auth.*
// case in both eras, passes every rule, and each auth rule is really
// exercised (pass, not n/a) where the chain meets its situation.
func TestAuthRulesPassTheBuiltinClient(t *testing.T) {
	t.Parallel()
	// The chain is a dozen exchanges: under -race on a loaded machine
	// (load 18, 2 CPUs) it took more than the call's 10s, and the rules
	// here are about the chain, not that limit (whose report
	// TestBuiltinClientOutOfTimeSaysSo holds). No auth.* case holds its
	// answer.
	cases := selectCases(t, "", "auth.*")
	for i := range cases {
		if cases[i].Holds {
			t.Fatalf("%s holds its answer: its limit is part of the case", cases[i].Name)
		}
		cases[i].Timeout = 40 * time.Second
	}
	rep := run(t, matrix.Options{Cases: cases})
	for rule, where := range failedRules(rep) {
		t.Errorf("%s failed in %v", rule, where)
	}
	exercised := map[string][]string{
		"auth.no-token-elsewhere": {"auth.oauth", "auth.oauth@2025-11-25", "auth.token_expired", "auth.step_up", "auth.scope_loop", "auth.token_error"},
		"auth.pkce":               {"auth.oauth", "auth.token_expired", "auth.step_up@2025-11-25", "auth.scope_loop", "auth.token_error"},
		"auth.bounded-step-up":    {"auth.step_up", "auth.step_up@2025-11-25", "auth.scope_loop", "auth.scope_loop@2025-11-25"},
		"auth.no-token-in-url":    {"auth.oauth", "auth.token_expired", "auth.token_expired@2025-11-25", "auth.wrong_issuer", "auth.registration_refused"},
	}
	for rule, cases := range exercised {
		for _, name := range cases {
			if ch := checkOf(t, rep, name, rule); ch.Verdict != judge.Pass {
				t.Errorf("%s: %s is %s (%s), want pass", name, rule, ch.Verdict, ch.Evidence)
			}
		}
	}
	// Where there is no authorization server the rules do not apply.
	for _, name := range []string{"auth.token_lifecycle", "auth.insufficient_scope", "auth.no_resource_metadata"} {
		for _, rule := range authRules {
			if ch := checkOf(t, rep, name, rule); ch.Verdict != judge.NotApplicable {
				t.Errorf("%s: %s is %s (%s), want n/a", name, rule, ch.Verdict, ch.Evidence)
			}
		}
	}
	if ch := checkOf(t, rep, "auth.token_expired", "auth.no-token-in-url"); !strings.Contains(ch.Evidence, "1 refresh token(s), in the body") {
		t.Errorf("auth.token_expired: the refresh is not in the evidence: %s", ch.Evidence)
	}
	if ch := checkOf(t, rep, "auth.scope_loop", "auth.bounded-step-up"); !strings.Contains(ch.Evidence, "at most 1 step-up round(s)") {
		t.Errorf("auth.scope_loop: the built-in client's one step-up round is not in the evidence: %s", ch.Evidence)
	}
}

// TestAuthRulesFailBadClients: each OAuth mode of the test client breaks
// one auth rule and fails exactly that rule, with evidence, where the chain
// meets it; its well-behaved mode passes every rule on every 2026-07-28
// auth.* case.
func TestAuthRulesFailBadClients(t *testing.T) {
	t.Parallel()
	bin := badClient(t)
	globs := []string{"auth.*"}
	t.Run("good", func(t *testing.T) {
		t.Parallel()
		rep := run(t, matrix.Options{Cases: selectCases(t, matrix.Era2026, globs...), Command: []string{bin}})
		for rule, where := range failedRules(rep) {
			t.Errorf("%s failed in %v", rule, where)
		}
		for _, name := range []string{"auth.oauth", "auth.token_expired", "auth.step_up", "auth.scope_loop"} {
			for _, rule := range authRules {
				ch := checkOf(t, rep, name, rule)
				if ch.Verdict == judge.Fail || rule == "auth.bounded-step-up" && strings.Contains(name, "step") && ch.Verdict != judge.Pass {
					t.Errorf("%s: %s is %s (%s)", name, rule, ch.Verdict, ch.Evidence)
				}
			}
		}
	})
	tests := []struct {
		mode  string
		rule  string
		cases []string // where it must fail
		words []string // the evidence names them
	}{
		{"no-resource", "auth.no-token-elsewhere", []string{"auth.oauth", "auth.token_expired", "auth.step_up", "auth.token_error"},
			[]string{"authorize", "sent no resource parameter", "/s/auth."}},
		{"token-elsewhere", "auth.no-token-elsewhere", []string{"auth.oauth", "auth.token_expired", "auth.step_up"},
			[]string{"as-metadata", "carried, in its Authorization header, an access token issued for", "/s/auth."}},
		{"pkce-plain", "auth.pkce", []string{"auth.oauth", "auth.token_expired", "auth.step_up", "auth.scope_loop", "auth.token_error"},
			[]string{"authorize", "code_challenge_method plain, not S256"}},
		{"step-up-loop", "auth.bounded-step-up", []string{"auth.scope_loop"},
			[]string{"tools/call delete_item was sent again 3 times after 403 insufficient_scope", "the bound is 2", "authorization requests after the first 403"}},
		{"token-in-url", "auth.no-token-in-url", []string{"auth.token_expired"},
			[]string{"refresh", "carried refresh_token in its URL"}},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			t.Parallel()
			rep := run(t, matrix.Options{Cases: selectCases(t, matrix.Era2026, globs...), Command: []string{bin, "-bad=" + tt.mode},
				Limits: matrix.Limits{RunTimeout: 8 * time.Second}})
			failed := checkOnlyRuleFails(t, rep, tt.rule, tt.cases, tt.words)
			if !slices.Contains(failed[tt.rule], tt.cases[0]) {
				t.Errorf("%s did not fail in %s", tt.rule, tt.cases[0])
			}
			var table bytes.Buffer
			if err := rep.WriteTable(&table, false); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(table.String(), "FAIL "+tt.cases[0]) || !strings.Contains(table.String(), tt.rule) {
				t.Errorf("the table does not explain the failure:\n%s", table.String())
			}
		})
	}
}
