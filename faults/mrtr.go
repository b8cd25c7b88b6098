package faults

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/wire"
)

// mrtrState is what a scenario's requestState carries. It is signed with
// HMAC-SHA256 and bound to the scenario, the tool and the arguments.
type mrtrState struct {
	Scenario string `json:"s"`
	Tool     string `json:"t"`
	Args     string `json:"a"`
	Round    int    `json:"r"`
	Expires  int64  `json:"x"`
}

// DefaultStateTTL is how long a requestState stays valid.
const DefaultStateTTL = 10 * time.Minute

// signState encodes st as base64url(JSON) "." base64url(HMAC).
func signState(key []byte, st mrtrState) string {
	payload, _ := json.Marshal(st)
	mac := hmac.New(sha256.New, key)
	mac.Write(payload)
	return base64.RawURLEncoding.EncodeToString(payload) + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// Reasons a requestState is rejected.
var (
	errStateForged  = errors.New("requestState failed its integrity check (HMAC)")
	errStateBadForm = errors.New("requestState is not one this server issued")
	errStateExpired = errors.New("requestState expired")
	errStateOther   = errors.New("requestState belongs to another request")
)

// verifyState checks a requestState's signature, expiry and binding to the
// scenario, the tool and the arguments of req.
func verifyState(key []byte, s, scenario string, req *Request) (mrtrState, error) {
	var st mrtrState
	p, m, ok := bytes.Cut([]byte(s), []byte("."))
	if !ok {
		return st, errStateBadForm
	}
	payload, err1 := base64.RawURLEncoding.DecodeString(string(p))
	sum, err2 := base64.RawURLEncoding.DecodeString(string(m))
	if err1 != nil || err2 != nil {
		return st, errStateBadForm
	}
	mac := hmac.New(sha256.New, key)
	mac.Write(payload)
	if !hmac.Equal(sum, mac.Sum(nil)) {
		return st, errStateForged
	}
	if json.Unmarshal(payload, &st) != nil {
		return st, errStateBadForm
	}
	if time.Now().Unix() > st.Expires {
		return st, errStateExpired
	}
	if st.Scenario != scenario || st.Tool != req.Name || st.Args != argsDigest(req) {
		return st, errStateOther
	}
	return st, nil
}

func argsDigest(req *Request) string {
	return record.ArgsHash(req.Method, req.Name, req.Args)
}

// mrtrParams are the MRTR members of a retried request.
type mrtrParams struct {
	RequestState   *string                    `json:"requestState"`
	InputResponses map[string]json.RawMessage `json:"inputResponses"`
}

func readMRTR(req *Request) mrtrParams {
	var p mrtrParams
	if wire.Kind(req.Params) != '{' {
		return p
	}
	_ = wire.EachField(req.Params, func(k, v []byte) bool {
		switch {
		case wire.KeyIs(k, "requestState"):
			p.RequestState = nil
			if s, ok := wire.StringValue(v); ok {
				p.RequestState = &s
			}
		case wire.KeyIs(k, "inputResponses"):
			p.InputResponses = nil
			if wire.Kind(v) == '{' {
				p.InputResponses = map[string]json.RawMessage{}
				_ = wire.EachField(v, func(k, v []byte) bool {
					key, _ := wire.StringValue(k)
					p.InputResponses[key] = v
					return true
				})
			}
		}
		return true
	})
	return p
}

// inputRequired encodes an InputRequiredResult.
func inputRequired(requests map[string]any, state string) []byte {
	obj := map[string]any{"resultType": "input_required"}
	if len(requests) > 0 {
		obj["inputRequests"] = requests
	}
	if state != "" {
		obj["requestState"] = state
	}
	return mustJSON(obj)
}

// elicitResult is an ElicitResult from inputResponses.
type elicitResult struct {
	Action  string
	Content json.RawMessage // an object, or nil
}

// readElicitResult reads an ElicitResult: ok is false unless raw is an
// object whose action is accept, decline or cancel and whose content, when
// present, is an object or null.
func readElicitResult(raw []byte) (a elicitResult, ok bool) {
	if wire.Kind(raw) != '{' {
		return a, false
	}
	ok = true
	_ = wire.EachField(raw, func(k, v []byte) bool {
		switch {
		case wire.KeyIs(k, "action"):
			a.Action, _ = wire.StringValue(v)
		case wire.KeyIs(k, "content"):
			switch wire.Kind(v) {
			case '{':
				a.Content = v
			case 'n':
				a.Content = nil
			default:
				ok = false
			}
		}
		return true
	})
	return a, ok && (a.Action == "accept" || a.Action == "decline" || a.Action == "cancel")
}

// mrtrFlow is the part the elicitation scenarios share: check the client's
// capability, verify requestState, read the answer under key.
type mrtrFlow struct {
	env  *Env
	ttl  time.Duration
	mode string // "form" or "url"
}

// begin handles a request: it reports the round, the answer (nil when
// there is none yet) and whether the request was answered already (an
// error or a missing capability).
func (f mrtrFlow) begin(w http.ResponseWriter, r *http.Request, key string) (round int, ans *elicitResult, done bool) {
	req := RequestOf(r)
	el, hasEl := req.capability("elicitation")
	hasMode, members := false, 0
	if wire.Kind(el) == '{' {
		_ = wire.EachField(el, func(k, _ []byte) bool {
			members++
			hasMode = hasMode || wire.KeyIs(k, f.mode)
			return true
		})
	}
	declared := hasEl && (hasMode || (f.mode == "form" && members == 0))
	if !declared {
		data := `{"requiredCapabilities":{"elicitation":{"` + f.mode + `":{}}}}`
		f.env.Note(r, "the client did not declare elicitation.%s", f.mode)
		answer(w, http.StatusBadRequest, errorMessage(req.ID, -32021, "Server requires the elicitation capability ("+f.mode+" mode) for this request", json.RawMessage(data)))
		return 0, nil, true
	}
	p := readMRTR(req)
	if p.RequestState == nil {
		return 1, nil, false
	}
	st, err := verifyState(f.env.Key, *p.RequestState, f.env.ID, req)
	if err != nil {
		f.env.Note(r, "rejected requestState: %v", err)
		answer(w, http.StatusOK, errorMessage(req.ID, -32602, "Invalid params: "+err.Error(), nil))
		return 0, nil, true
	}
	raw, ok := p.InputResponses[key]
	if !ok {
		f.env.Note(r, "round %d: no answer under %q; asking again", st.Round+1, key)
		return st.Round + 1, nil, false
	}
	a, valid := readElicitResult(raw)
	if !valid {
		answer(w, http.StatusOK, errorMessage(req.ID, -32602, "Invalid params: inputResponses."+key+" is not an ElicitResult (action accept, decline or cancel)", nil))
		return 0, nil, true
	}
	f.env.Note(r, "round %d: the client answered %s", st.Round+1, a.Action)
	return st.Round + 1, &a, false
}

// ask answers with an input request under key, and a signed state.
func (f mrtrFlow) ask(w http.ResponseWriter, r *http.Request, round int, key string, params any) {
	req := RequestOf(r)
	st := signState(f.env.Key, mrtrState{Scenario: f.env.ID, Tool: req.Name, Args: argsDigest(req), Round: round, Expires: time.Now().Add(f.ttl).Unix()})
	ir := map[string]any{key: map[string]any{"method": "elicitation/create", "params": params}}
	req.issueState(st)
	answer(w, http.StatusOK, resultMessage(req.ID, inputRequired(ir, st)))
}

func (f mrtrFlow) finish(w http.ResponseWriter, r *http.Request, text string, isError bool) {
	answer(w, http.StatusOK, resultMessage(RequestOf(r).ID, textResult(text, isError, false)))
}

// ElicitationApproval answers the tool itself through MRTR: the first call
// gets input_required with a form elicitation (a reason field) and a signed
// requestState; the retry with inputResponses is checked (tampered or
// foreign state: -32602) and ends with success on accept, a tool error on
// decline or cancel. A client that did not declare form elicitation gets
// 400 -32021.
type ElicitationApproval struct {
	Rules
	Key              string `json:"key"`
	PromptMessage    string `json:"promptMessage"`
	ReasonFieldTitle string `json:"reasonFieldTitle"`
	ReasonMaxLength  int    `json:"reasonMaxLength"`
	RequireReason    bool   `json:"requireReason"`
	StateTTLSeconds  int    `json:"stateTtlSeconds"`
}

func checkKeyTTL(key string, ttl int) error {
	if key == "" {
		return fmt.Errorf("param key: empty: the inputRequests key is needed")
	}
	if ttl < 1 {
		return fmt.Errorf("param stateTtlSeconds: %d: want at least 1", ttl)
	}
	return nil
}

// Validate implements Scenario.
func (s *ElicitationApproval) Validate() error {
	if s.ReasonMaxLength < 1 {
		return fmt.Errorf("param reasonMaxLength: %d: want at least 1", s.ReasonMaxLength)
	}
	return checkKeyTTL(s.Key, s.StateTTLSeconds)
}

// Wrap implements Scenario.
func (s *ElicitationApproval) Wrap(_ http.Handler, env *Env) http.Handler {
	f := mrtrFlow{env: env, ttl: time.Duration(s.StateTTLSeconds) * time.Second, mode: "form"}
	schema := map[string]any{"type": "object", "properties": map[string]any{
		"reason": map[string]any{"type": "string", "title": s.ReasonFieldTitle, "maxLength": s.ReasonMaxLength}}}
	if s.RequireReason {
		schema["required"] = []string{"reason"}
	}
	params := map[string]any{"mode": "form", "message": s.PromptMessage, "requestedSchema": schema}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		round, a, done := f.begin(w, r, s.Key)
		switch {
		case done:
		case a == nil:
			f.ask(w, r, round, s.Key, params)
		case a.Action == "accept":
			var reason string
			if v, ok := wire.Field(a.Content, "reason"); ok {
				reason, _ = wire.StringValue(v)
			}
			if s.RequireReason && reason == "" || len([]rune(reason)) > s.ReasonMaxLength {
				env.Note(r, "the reason is missing or too long; asking again")
				f.ask(w, r, round, s.Key, params)
				return
			}
			f.finish(w, r, "approved: "+reason, false)
		default:
			f.finish(w, r, "not approved: the user chose "+a.Action, true)
		}
	})
}

// ElicitationDecline asks for a confirmation a careful client should
// decline (a destructive action). The result says which action the client
// took and whether it was the expected one; isError is true when it was
// not.
type ElicitationDecline struct {
	Rules
	Key             string `json:"key"`
	PromptMessage   string `json:"promptMessage"`
	ConfirmMaxLen   int    `json:"confirmMaxLength"`
	Expect          string `json:"expect"`
	StateTTLSeconds int    `json:"stateTtlSeconds"`
}

// Validate implements Scenario.
func (s *ElicitationDecline) Validate() error {
	switch s.Expect {
	case "accept", "decline", "cancel":
	default:
		return fmt.Errorf("param expect: %q: want accept, decline or cancel", s.Expect)
	}
	if s.ConfirmMaxLen < 1 {
		return fmt.Errorf("param confirmMaxLength: %d: want at least 1", s.ConfirmMaxLen)
	}
	return checkKeyTTL(s.Key, s.StateTTLSeconds)
}

// Wrap implements Scenario.
func (s *ElicitationDecline) Wrap(_ http.Handler, env *Env) http.Handler {
	f := mrtrFlow{env: env, ttl: time.Duration(s.StateTTLSeconds) * time.Second, mode: "form"}
	params := map[string]any{"mode": "form", "message": s.PromptMessage, "requestedSchema": map[string]any{
		"type": "object", "properties": map[string]any{"confirm": map[string]any{"type": "string", "title": "Type DELETE to confirm", "maxLength": s.ConfirmMaxLen}}}}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		round, a, done := f.begin(w, r, s.Key)
		switch {
		case done:
		case a == nil:
			f.ask(w, r, round, s.Key, params)
		default:
			ok := a.Action == s.Expect
			text, _ := json.Marshal(map[string]any{"action": a.Action, "expected": s.Expect, "asExpected": ok})
			f.finish(w, r, string(text), !ok)
		}
	})
}

// ElicitationURL asks for a URL-mode elicitation (the user completes a step
// out of band). Accept means consent; the server then decides from
// requestState whether the step is done, asking PendingRounds more times
// before it is.
type ElicitationURL struct {
	Rules
	Key             string `json:"key"`
	URL             string `json:"url"`
	PromptMessage   string `json:"promptMessage"`
	PendingRounds   int    `json:"pendingRounds"`
	StateTTLSeconds int    `json:"stateTtlSeconds"`
}

// Validate implements Scenario.
func (s *ElicitationURL) Validate() error {
	if s.URL == "" {
		return fmt.Errorf("param url: empty")
	}
	if s.PendingRounds < 0 || s.PendingRounds > 100 {
		return fmt.Errorf("param pendingRounds: %d: want 0 to 100", s.PendingRounds)
	}
	return checkKeyTTL(s.Key, s.StateTTLSeconds)
}

// Wrap implements Scenario.
func (s *ElicitationURL) Wrap(_ http.Handler, env *Env) http.Handler {
	f := mrtrFlow{env: env, ttl: time.Duration(s.StateTTLSeconds) * time.Second, mode: "url"}
	params := map[string]any{"mode": "url", "message": s.PromptMessage, "url": s.URL}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		round, a, done := f.begin(w, r, s.Key)
		switch {
		case done:
		case a == nil:
			f.ask(w, r, round, s.Key, params)
		case a.Action != "accept":
			f.finish(w, r, "the user chose "+a.Action+"; nothing was done", true)
		case round-1 <= s.PendingRounds:
			env.Note(r, "the out-of-band step is still pending")
			f.ask(w, r, round, s.Key, params)
		default:
			f.finish(w, r, "the out-of-band step is complete", false)
		}
	})
}

// LoadShedding answers input_required with only a requestState, Rounds
// times, as a server shedding load does; the retry carrying the last state
// reaches the server (with the state removed).
type LoadShedding struct {
	Rules
	Rounds          int `json:"rounds"`
	StateTTLSeconds int `json:"stateTtlSeconds"`
}

// Validate implements Scenario.
func (s *LoadShedding) Validate() error {
	if s.Rounds < 1 || s.Rounds > 100 {
		return fmt.Errorf("param rounds: %d: want 1 to 100", s.Rounds)
	}
	return checkKeyTTL("-", s.StateTTLSeconds)
}

// Wrap implements Scenario.
func (s *LoadShedding) Wrap(next http.Handler, env *Env) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req := RequestOf(r)
		p := readMRTR(req)
		round := 1
		if p.RequestState != nil {
			st, err := verifyState(env.Key, *p.RequestState, env.ID, req)
			if err != nil {
				env.Note(r, "rejected requestState: %v", err)
				answer(w, http.StatusOK, errorMessage(req.ID, -32602, "Invalid params: "+err.Error(), nil))
				return
			}
			if st.Round >= s.Rounds {
				env.Note(r, "round %d: let through", st.Round+1)
				stripRequestState(r, req)
				next.ServeHTTP(w, r)
				return
			}
			round = st.Round + 1
		}
		st := signState(env.Key, mrtrState{Scenario: env.ID, Tool: req.Name, Args: argsDigest(req), Round: round,
			Expires: time.Now().Add(time.Duration(s.StateTTLSeconds) * time.Second).Unix()})
		env.Note(r, "shed load: round %d of %d", round, s.Rounds)
		req.issueState(st)
		answer(w, http.StatusOK, resultMessage(req.ID, inputRequired(nil, st)))
	})
}

// stripRequestState removes params.requestState from the body the server
// sees: the state was this scenario's, not the server's.
func stripRequestState(r *http.Request, req *Request) {
	if body, ok := withoutParam(req.Body, "requestState"); ok {
		setBody(r, body)
	}
}
