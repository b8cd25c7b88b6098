package record

import (
	"slices"

	"github.com/mcpdiag/mcpdiag/classify"
)

// Warning codes that a producer other than the classifier adds to a
// record, defined here so that every reader (report, the page, judge) tests
// the same typed fact, never a message's prose.
const (
	// WarnRunInterrupted marks each record of a matrix run that the
	// matrix's stop (an interrupt, a context that ended) cut short: the
	// record is what went over the wire, but the run was not judged, and a
	// failure in it may be the stop's doing (a killed client, a cut
	// connection), not the client's or the server's.
	WarnRunInterrupted = "matrix-run-interrupted"
	// WarnCallInterrupted marks each record of a call that `mcpdiag call`
	// was stopped in (Ctrl-C): its verdict is the stop's cut, not the
	// server's answer.
	WarnCallInterrupted = "call-interrupted"
	// WarnLineLate marks a matrix server log line logged after its run was
	// judged (the request reached the server after the run's wait): in no
	// verdict.
	WarnLineLate = "matrix-line-late"
)

// InterruptedWarnings are the codes that mark a record of a run or call
// an interrupt cut short (Record.Interrupted).
var InterruptedWarnings = []string{WarnRunInterrupted, WarnCallInterrupted}

// HasWarning reports whether r carries a warning with the code.
func (r *Record) HasWarning(code string) bool {
	for i := range r.Warnings {
		if r.Warnings[i].Code == code {
			return true
		}
	}
	return false
}

// RunInterrupted reports whether r is a record of a matrix run that the
// matrix's stop cut short (it carries WarnRunInterrupted).
func (r *Record) RunInterrupted() bool { return r.HasWarning(WarnRunInterrupted) }

// Interrupted reports whether r is a record of a matrix run or of a call
// that an interrupt cut short (it carries one of InterruptedWarnings): what
// went over the wire, in no verdict.
func (r *Record) Interrupted() bool {
	for _, c := range InterruptedWarnings {
		if r.HasWarning(c) {
			return true
		}
	}
	return false
}

// CutByShutdown reports whether r is the record of an exchange that the
// recording proxy's or server's own shutdown cut (the flag FlagSD) with an
// outcome the cut made (CutOutcomes): the request was still waiting for
// (the end of) its answer when mcpdiag proxy or mcpdiag serve was stopped,
// so what failed there is the stop's doing, not the server's under
// diagnosis. An SD record with another outcome holds what the server said
// before the stop (a 500's head and part of its body, then a hang:
// HTTP_ERROR), a failure of the server's own, judged as any other.
//
// A 2024-11-05 HTTP+SSE request whose answer the proxy still awaited on the
// GET stream when it shut down (UnansweredOnStream AnswerShutdown) is cut
// by shutdown too: its REQUEST_ACCEPTED record has no SD flag, but the stop
// is what left it without an answer.
func (r *Record) CutByShutdown() bool {
	return r.Flags.Has(FlagSD) && slices.Contains(CutOutcomes, r.Outcome) || r.UnansweredOnStream() == AnswerShutdown
}

// AnswerUnknown is what UnansweredOnStream returns for a request whose
// answer was not seen on the stream when the record does not say why.
const AnswerUnknown = "unknown"

// UnansweredOnStream returns why the answer of r, the record of a request
// POSTed over the 2024-11-05 HTTP+SSE transport and accepted 202
// (REQUEST_ACCEPTED, with a StreamAnswer), was awaited on the session's GET
// stream and never seen there (StreamAnswer.NotSeen: AnswerStreamEnded,
// AnswerTimeout, AnswerEvicted, AnswerShutdown, AnswerAmbiguous, or
// AnswerUnknown when it is empty), or "" when the answer was seen or r is
// no such record. The request then went unanswered, as a streamable HTTP
// request whose stream ended first (STREAM_INCOMPLETE): report counts it
// failed, or cut by shutdown (CutByShutdown) when the proxy's stop cut the
// wait. A REQUEST_ACCEPTED record without a StreamAnswer (a recorder that
// does not pair answers) says nothing of its answer: "".
func (r *Record) UnansweredOnStream() string {
	if r.Kind != KindExchange || r.Outcome != classify.RequestAccepted || r.StreamAnswer == nil || r.StreamAnswer.Seen {
		return ""
	}
	if r.StreamAnswer.NotSeen == "" {
		return AnswerUnknown
	}
	return r.StreamAnswer.NotSeen
}

// CutOutcomes are the outcomes a shutdown's cut makes of an exchange:
// no answer, or a body or stream cut before its end.
var CutOutcomes = []classify.Outcome{classify.NetworkError, classify.StreamIncomplete}

// The auth step and the decision action that mark a challenge the client
// answered (Record.ChallengeAnswered): client.StepChallenge and
// retry.Reauthorize, as the client writes them.
const (
	// AuthStepChallenge is Auth.Step on an MCP exchange answered 401 or
	// 403 with a Bearer challenge.
	AuthStepChallenge = "challenge"
	// ActionReauthorize is Decision.Action when the client got a token
	// for the challenge and re-sent the request with it.
	ActionReauthorize = "reauthorize"
)

// ChallengeAnswered reports whether r is the record of an exchange the
// server answered with an authorization challenge (401 or 403 with
// WWW-Authenticate: Auth.Step "challenge") that the client answered: its
// authorization chain got a token and the request was sent again with it
// (Decision.Action "reauthorize"). The 401 is then a step of the
// authorization flow the spec designs, not a failure; whether the re-sent
// request succeeded is its own record's verdict.
func (r *Record) ChallengeAnswered() bool {
	return r.Kind == KindExchange && r.Auth != nil && r.Auth.Step == AuthStepChallenge &&
		r.Decision != nil && r.Decision.Action == ActionReauthorize
}
