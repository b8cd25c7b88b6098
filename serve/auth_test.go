package serve_test

import (
	"testing"

	"github.com/mcpdiag/mcpdiag/client"
	"github.com/mcpdiag/mcpdiag/faults"
)

// checkAuthStep holds an OAuth entry's promise about the chain: an
// AUTH_FAILED call names e.AuthStep as the step that failed; a successful
// one went through an exchange of that step that did its part.
func checkAuthStep(t *testing.T, call *client.Call, e faults.Entry) {
	t.Helper()
	if call.Outcome == client.AuthFailed {
		if call.Auth == nil || call.Auth.Step != e.AuthStep {
			t.Errorf("AUTH_FAILED at %+v, want step %s", call.Auth, e.AuthStep)
		}
		return
	}
	if call.Auth != nil {
		t.Errorf("a %s call with an auth failure %+v", call.Outcome, call.Auth)
	}
	for _, ex := range call.Exchanges {
		if ex.Auth != nil && (ex.Auth.Step == e.AuthStep || e.AuthStep == client.StepStepUp && ex.Auth.StepUp > 0) && ex.Auth.Failure == "" {
			return
		}
	}
	t.Errorf("no %s exchange in the chain", e.AuthStep)
	for _, ex := range call.Exchanges {
		if ex.Auth != nil {
			t.Logf("  #%d %s %d %s %s", ex.Seq, ex.Auth.Step, ex.Status, ex.Auth.Note, ex.Auth.Failure)
		}
	}
}
