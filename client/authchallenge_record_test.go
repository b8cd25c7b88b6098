package client_test

import (
	"testing"

	"github.com/mcpdiag/mcpdiag/client"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/retry"
)

// TestChallengeFactsAgreeWithRecord: the words record.ChallengeAnswered
// (and so report and the page) reads are the ones the client writes.
func TestChallengeFactsAgreeWithRecord(t *testing.T) {
	if record.AuthStepChallenge != client.StepChallenge || record.ActionReauthorize != string(retry.Reauthorize) {
		t.Errorf("record reads step %q and action %q; the client writes %q and %q",
			record.AuthStepChallenge, record.ActionReauthorize, client.StepChallenge, retry.Reauthorize)
	}
}
