package client

import (
	"fmt"
	"net/http"

	"github.com/mcpdiag/mcpdiag/record"
)

// Records turns the call into record lines: one exchange record per HTTP
// exchange and one call summary, linked by call id. base carries what the
// caller knows (Client, Scenario, AttemptOf); URL and the era come from the
// call. Records hold raw headers: the record encoder redacts them.
//
// The summary is the tools/call's: its arguments hash is the first
// tools/call's, its verdict, id and responseId those of the exchange that
// ended the call (Final) — never those of a later exchange such as the 202
// to the answer of a 2025-11-25 elicitation/create, so the call line, the
// human report and the exit code agree, and responseId is read against the
// request it answered.
func (call *Call) Records(base record.Record, url string) (exchanges []*record.Record, summary *record.Record) {
	base.ProtocolVersion = call.Protocol
	base.URL = url
	base.Method = "tools/call"
	rc := record.NewCall(base)
	for _, ex := range call.Exchanges {
		r := &record.Record{
			Kind:            record.KindExchange,
			Time:            ex.Start,
			ProtocolVersion: ex.Protocol,
			HTTPMethod:      httpMethod(ex),
			URL:             url,
			RetryOrigin:     record.RetryOrigin(ex.Origin),
			RequestHeaders:  ex.RequestHeader,
			ResponseHeaders: ex.ResponseHeader,
			Status:          ex.Status,
			Session:         ex.RequestHeader.Get("Mcp-Session-Id"),
		}
		if ex.URL != "" {
			r.URL = ex.URL // a followed same-origin redirect went elsewhere
		}
		if r.ProtocolVersion == "" {
			r.ProtocolVersion = call.Protocol
		}
		if ex.Auth != nil {
			r.Auth = ex.Auth.record()
		}
		if ex.isAuthStep() {
			// An exchange with the authorization server or the resource's
			// metadata: no JSON-RPC, no body kept (bodies hold tokens,
			// codes and secrets), the step in auth.
			r.URL = ex.URL
			r.ProtocolVersion = ""
			r.SetResult(ex.Result)
		} else {
			r.SetRequest(ex.RequestBody)
			if r.Method == "" {
				r.Method = ex.Method
			}
			r.SetResult(ex.Result)
		}
		r.Timings = record.Timings{
			Headers:    record.Duration(ex.ToHeaders),
			FirstEvent: record.Duration(ex.ToFirstByte),
			Total:      record.Duration(ex.Total),
		}
		if len(ex.Result.Response()) > 0 && !ex.isAuthStep() {
			r.ResponseBody = &record.Body{Text: string(ex.Result.Response())}
		}
		if ex.Decision != nil {
			r.Decision = decision(ex.Decision.Action, ex.Decision.Delay.Milliseconds(), ex.Decision.Reason)
		}
		r.EraFallback = ex.EraFallback
		if ex.ClientAnswer {
			// As the recorder records the same POST through mcpdiag
			// proxy: the server request's method, the answer's id.
			r.ClientAnswer, r.AnswerRefused, r.Method, r.Status = true, ex.AnswerRefused, ex.Method, ex.Status
		}
		rc.Add(r)
		if call.Final != nil && ex.Result == call.Final {
			rc.Terminal(r)
		}
		exchanges = append(exchanges, r)
	}
	summary = rc.Summary()
	summary.Tool = call.Tool
	if call.Outcome == InputRoundsExceeded || call.Outcome == ToolExcluded || call.Outcome == AuthFailed {
		summary.Outcome, summary.Layer = call.Outcome, call.Layer()
	}
	if call.Final != nil && summary.Outcome == "" {
		summary.SetResult(call.Final)
	}
	summary.Decision = decision(call.Decision.Action, call.Decision.Delay.Milliseconds(), call.Decision.Reason)
	if f := call.Auth; f != nil {
		summary.Outcome, summary.Layer = AuthFailed, call.Layer()
		summary.Reason = "authorization failed at step " + f.Step + ": " + f.Reason
		summary.Auth = &record.Auth{Step: f.Step, Failure: f.Reason, Rule: f.Rule}
	}
	summary.Note = fmt.Sprintf("era %s (%s); tool safety %s (%s)", orNone(call.Protocol), call.EraReason, call.Safety, call.SafetySource)
	if len(call.Unanswered) > 0 {
		summary.Note += fmt.Sprintf("; unanswered input requests: %v", call.Unanswered)
	}
	return exchanges, summary
}

func decision[A ~string](action A, delayMs int64, reason string) *record.Decision {
	return &record.Decision{Action: string(action), DelayMs: delayMs, Reason: reason}
}

func orNone(s string) string {
	if s == "" {
		return "undecided"
	}
	return s
}

func httpMethod(ex *Exchange) string {
	if ex.HTTPMethod != "" {
		return ex.HTTPMethod
	}
	return http.MethodPost
}

// isAuthStep reports whether the exchange is one of the authorization
// chain's own (to the metadata or the authorization server), not an MCP
// request.
func (ex *Exchange) isAuthStep() bool {
	return ex.Auth != nil && ex.Auth.Step != StepRequest && ex.Auth.Step != StepChallenge
}

// record is the record member of an AuthInfo.
func (a *AuthInfo) record() *record.Auth {
	return &record.Auth{Step: a.Step, StepUp: a.StepUp, Issuer: a.Issuer, Resource: a.Resource, Scope: a.Scope, Granted: a.Granted,
		Grant: a.Grant, ClientAuth: a.ClientAuth, Registration: a.Registration, ClientID: a.ClientID, PKCE: a.PKCE, Via: a.Via,
		Error: a.Error, ErrorDescription: a.ErrorDescription, Failure: a.Failure, Rule: a.Rule,
		TokenResource: a.TokenResource, TokenIssuer: a.TokenIssuer, Note: a.Note}
}
