package report

import (
	"slices"
	"time"

	"github.com/mcpdiag/mcpdiag/record"
)

// ChallengeAnswerWindow is how long after an authorization challenge
// recorded by a proxy or server (record.Record.BearerChallenge) the
// client's answer may start for the challenge to count as answered (see
// Accumulator.AddChallenge): long enough for a person to log in in a
// browser, short of a later run of the same client.
const ChallengeAnswerWindow = 5 * time.Minute

// maxHeldChallenges bounds the challenges held while their client's answer
// is awaited; past it the oldest is counted as a failure.
const maxHeldChallenges = 1024

// maxTokensSeen bounds the tokens remembered with when each was first
// sent (see tokenBefore); past it one is forgotten for each new one.
const maxTokensSeen = 1 << 16

// maxRecentAnswers bounds the requests remembered for a challenge recorded
// after its answer (see recallAnswer).
const maxRecentAnswers = 256

// ChallengeLink names an authorization challenge a proxy or server
// recorded and the exchange by which its client answered it (linked by
// mcpdiag report when it reads the records; see Section.ChallengeLinks).
type ChallengeLink struct {
	// ID is the challenge's exchange record (401, or 403
	// insufficient_scope, with a Bearer challenge).
	ID string `json:"id"`
	// AnsweredBy is the exchange record of the client's request that
	// carried the new token and was not refused.
	AnsweredBy string `json:"answeredBy"`
	// Method and Tool are the request's.
	Method string `json:"method"`
	// Tool is the request's tool (or prompt) name, when it has one.
	Tool string `json:"tool,omitempty"`
	// Status is the challenge's HTTP status.
	Status int `json:"status"`
}

// heldChallenge is a challenge whose client's next such request has not
// been seen yet.
type heldChallenge struct {
	f      record.ChallengeFacts
	o      obs
	status int
	// chain holds the challenges this one's request answered with a new
	// token: the server refused it again with a challenge of its own (a
	// step-up), so they are answered when this one is, and fail with it.
	chain []heldChallenge
}

// recentAnswer is a request already counted, remembered for a challenge
// recorded after it.
type recentAnswer struct {
	f    record.ChallengeFacts
	used bool // it answered a challenge already
}

// linkChallenges settles the challenges exchange record r decides, and
// reports whether r itself is held (a challenge whose answer is awaited:
// it is counted when it is settled). o is r's observation.
//
// The rule (docs/decisions.md, "An answered challenge in a proxy's
// records"): a challenge is answered when the same client's next request
// of the same JSON-RPC method, tool and arguments in the same input (the same
// recording process, client name, User-Agent and session when both have
// one; record.ChallengeFacts)
// that started after the challenge's answer came, and within
// ChallengeAnswerWindow, carried a Bearer token other than the one the
// challenge's request carried and was not refused (its status is neither
// 401 nor 403, and it got one). A next request without a new token, one
// refused without a challenge, or none leaves the challenge a failure; a
// next request with a new token refused with a challenge of its own (a
// step-up, a token that expired) carries the first challenge along: both
// are answered when it is.
func (a *Accumulator) linkChallenges(r *record.Record, o obs) bool {
	f := r.ChallengeFacts()
	if !f.Linkable() {
		return false
	}
	a.seeToken(f)
	a.expireChallenges(f)
	var chain []heldChallenge
	if i := a.nextHeldFor(f); i >= 0 {
		h := a.held[i]
		a.held = slices.Delete(a.held, i, i+1)
		switch {
		case !f.Answers(h.f) || f.Status == 0 || a.tokenBefore(f, h.f):
			a.failChallenge(h)
		case f.Refused() && f.Challenge && o.apart() == notApart:
			chain = h.chain
			h.chain = nil
			chain = append(chain, h)
		case f.Refused():
			a.failChallenge(h)
		default:
			a.answerChallenge(h, f.ID)
			a.rememberAnswer(f, true)
			return false
		}
	}
	if f.Challenge && o.apart() == notApart {
		c := heldChallenge{f: f, o: o, status: r.Status, chain: chain}
		a.rememberAnswer(f, len(chain) > 0)
		if by, ok := a.recallAnswer(f); ok {
			if by != "" {
				a.answerChallenge(c, by)
			} else {
				a.failChallenge(c)
			}
			return true
		}
		if len(a.held) >= maxHeldChallenges {
			a.failChallenge(a.held[0])
			a.held = slices.Delete(a.held, 0, 1)
		}
		a.held = append(a.held, c)
		return true
	}
	for _, h := range chain {
		// r carried the chain along but is not held itself (it cannot
		// be: the branch above holds every challenge that can fail):
		// unreachable, kept so that no challenge is ever lost.
		a.failChallenge(h)
	}
	a.rememberAnswer(f, false)
	return false
}

// nextHeldFor returns the index of the earliest held challenge whose
// client's next such request f is (record.ChallengeFacts.SameRequest), or
// -1.
func (a *Accumulator) nextHeldFor(f record.ChallengeFacts) int {
	best := -1
	for i := range a.held {
		h := &a.held[i].f
		if !f.SameRequest(*h) {
			continue
		}
		if best < 0 || h.Start.Before(a.held[best].f.Start) {
			best = i
		}
	}
	return best
}

// expireChallenges counts as failures the held challenges that started
// more than ChallengeAnswerWindow before f: no answer came in time.
func (a *Accumulator) expireChallenges(f record.ChallengeFacts) {
	if f.Start.IsZero() || len(a.held) == 0 {
		return
	}
	kept := a.held[:0]
	for _, h := range a.held {
		if !h.f.Start.IsZero() && f.Start.Sub(h.f.Start) > ChallengeAnswerWindow {
			a.failChallenge(h)
			continue
		}
		kept = append(kept, h)
	}
	clear(a.held[len(kept):])
	a.held = kept
}

// answerChallenge counts h (and the challenges it carries) as answered by
// the exchange by.
func (a *Accumulator) answerChallenge(h heldChallenge, by string) {
	for _, c := range h.chain {
		a.answerChallenge(c, by)
	}
	h.o.challenge = true
	l := ChallengeLink{ID: h.f.ID, AnsweredBy: by, Method: h.f.Method, Tool: h.f.Tool, Status: h.status}
	a.exchanges.challengeLink(l)
	if l.ID != "" && a.opts.KeepLinks {
		a.challengeLinks = append(a.challengeLinks, l)
	}
	a.exchanges.add(h.o)
}

// failChallenge counts h (and the challenges it carries) as what they are:
// failures.
func (a *Accumulator) failChallenge(h heldChallenge) {
	for _, c := range h.chain {
		a.failChallenge(c)
	}
	a.exchanges.add(h.o)
}

// rememberAnswer keeps f for recallAnswer: the latest maxRecentAnswers
// requests.
func (a *Accumulator) rememberAnswer(f record.ChallengeFacts, used bool) {
	q := recentAnswer{f: f, used: used}
	if len(a.answers) < maxRecentAnswers {
		a.answers = append(a.answers, q)
		return
	}
	a.answers[a.answersOldest] = q
	a.answersOldest = (a.answersOldest + 1) % maxRecentAnswers
}

// recallAnswer finds challenge c's next such request among the requests
// already counted and not taken by another challenge, when the client's
// answer was recorded before it (a proxy writes each record when its
// exchange ends, and may write the challenge's after the answer's). ok
// reports that one was found; by is the answer's id when it answered c
// (then it answers nothing else), "" when it did not (no new token,
// refused, no status). A refused request recorded before the challenge it
// answered with a new token (a step-up's, written out of order) is taken
// as a refusal: the challenge fails.
func (a *Accumulator) recallAnswer(c record.ChallengeFacts) (by string, ok bool) {
	next := -1
	for k := range a.answers {
		q := &a.answers[k].f
		if a.answers[k].used || !q.SameRequest(c) || !c.Start.IsZero() && !q.Start.IsZero() && q.Start.Sub(c.Start) > ChallengeAnswerWindow {
			continue
		}
		if next < 0 || q.Start.Before(a.answers[next].f.Start) {
			next = k
		}
	}
	if next < 0 {
		return "", false
	}
	q := &a.answers[next]
	if !q.f.Answers(c) || q.f.Refused() || q.f.Status == 0 || a.tokenBefore(q.f, c) {
		return "", true
	}
	q.used = true
	return q.f.ID, true
}

// seeToken remembers when f's Bearer token was first sent in f's
// recording process, for tokenBefore.
func (a *Accumulator) seeToken(f record.ChallengeFacts) {
	if f.Bearer == "" || f.Start.IsZero() {
		return
	}
	k := tokenKey{run: f.Run, bearer: f.Bearer}
	if first, ok := a.tokensSeen[k]; ok {
		if f.Start.Before(first) {
			a.tokensSeen[k] = f.Start
		}
		return
	}
	if a.tokensSeen == nil {
		a.tokensSeen = map[tokenKey]time.Time{}
	}
	if len(a.tokensSeen) >= maxTokensSeen {
		for old := range a.tokensSeen {
			delete(a.tokensSeen, old)
			break
		}
	}
	a.tokensSeen[k] = f.Start
}

// tokenBefore reports whether answer f's token was sent before challenge c
// started (by any request of its recording process in this input): a
// token the client had already, as another instance of the same client
// with a cached token has, does not answer c; a client that answers a
// challenge sends the token it obtained after it (outsider20: a client
// that gave up on its 401 was counted answered by another instance's
// cached token). A record written after the answer was linked is not
// looked back at: records come in the order exchanges end.
func (a *Accumulator) tokenBefore(f, c record.ChallengeFacts) bool {
	first, ok := a.tokensSeen[tokenKey{run: f.Run, bearer: f.Bearer}]
	return ok && !c.Start.IsZero() && first.Before(c.Start)
}

// tokenKey names a Bearer token as one recording process recorded it
// (masked the same way each time within it).
type tokenKey struct{ run, bearer string }

// EndInput ends one input (a record file): the challenges and the refused
// probes still held are counted as failures (no answer, no initialize
// came in it), and its requests are forgotten, so that no challenge or
// era fallback is linked to a request of another input. Read calls it at
// the end of each input; Close counts what is still held too.
func (a *Accumulator) EndInput() {
	a.flushChallenges()
	a.flushProbes()
	a.flushResumes()
	clear(a.recent)
	a.recent = a.recent[:0]
	a.recentOldest = 0
	clear(a.tokensSeen)
	clear(a.answers)
	a.answers = a.answers[:0]
	a.answersOldest = 0
}

// flushChallenges counts every challenge still held as a failure.
func (a *Accumulator) flushChallenges() {
	for _, h := range a.held {
		a.failChallenge(h)
	}
	clear(a.held)
	a.held = a.held[:0]
}

// TakeChallengeLinks returns the challenges counted as answered by
// linking since the last call (see linkChallenges; none without
// Options.KeepLinks), in the order they were
// settled, and forgets them. A challenge the client marks itself
// (record.Record.ChallengeAnswered) is not among them; neither is one
// still held, which a later record may settle. A page over the same
// records shows these rows as not failed, as the Summary counts them
// (package ui).
func (a *Accumulator) TakeChallengeLinks() []ChallengeLink {
	ls := a.challengeLinks
	a.challengeLinks = nil
	return ls
}
