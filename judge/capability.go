package judge

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/wire"
)

// capabilityRules are the rules about what a case could test: a scenario
// whose interaction needs a client capability tests only a client that
// declared it.
var capabilityRules = []Rule{
	{
		ID: "client.capability", Title: "the client declared the capability the scenario's interaction needs, so the interaction was exercised (a client that did not declare it is not tested on the case: neither passed nor failed)",
		Cite:   `MCP Lifecycle › Capability Negotiation: the client declares its capabilities (initialize's capabilities over 2025-11-25, _meta's clientCapabilities over 2026-07-28), and only negotiated capabilities are used: a server does not elicit from a client that declared no elicitation, and answers its call without it (a tool error, or -32021 MissingRequiredClientCapability); docs/scenarios.md names the capability each scenario's interaction needs`,
		Active: true,
		Applies: func(t *Trace) (bool, string) {
			if t.Case == nil || t.Case.NeedsCapability == "" {
				return false, "the scenario's interaction needs no client capability"
			}
			last := t.lastCall()
			if last == nil {
				return false, "no tools/call reached the server"
			}
			if names, _ := t.declared(last); names == nil && !t.refusedUnexercised() {
				return false, fmt.Sprintf("the records do not say which capabilities were declared for the last tools/call, %s: over 2026-07-28 its own _meta's clientCapabilities, over 2025-11-25 its session's initialize (records of an older mcpdiag, or no initialize)", last.Label())
			}
			return true, ""
		},
		Untested: func(t *Trace) string { return t.NotTested() },
		Check: func(t *Trace) (bool, string) {
			need, last := t.Case.NeedsCapability, t.lastCall()
			names, decl := t.declared(last)
			if slices.Contains(names, need) {
				ev := fmt.Sprintf("declared %s on %s (%s)", need, decl.Label(), declaredWords(decl, names))
				if x := t.interaction(); x != nil {
					ev += "; the interaction took place from " + x.Label()
				}
				return true, ev
			}
			x := t.interaction()
			return true, fmt.Sprintf("declared no %s on %s (%s), yet the interaction took place (%s): exercised", need, decl.Label(), declaredWords(decl, names), x.Label())
		},
	},
}

// declared returns the capability names in force for x, with the
// exchange that carried them; nil, nil when the records cannot say.
//
// Over 2026-07-28 a request declares for itself alone: the schema makes
// _meta's clientCapabilities required on every request, and a server must
// not infer capabilities from prior requests, so x's own declaration is
// the one in force, never an earlier request's (a tools/list's). A request
// whose recorded _meta has no clientCapabilities declared none (an empty
// slice, x itself); one whose record does not show its _meta is unknown.
// Over 2025-11-25 and earlier the session's initialize declares: the
// latest initialize up to x, in x's session when both name one.
func (t *Trace) declared(x *Exchange) ([]string, *Exchange) {
	if modern(x) || x.Protocol >= wire.Protocol2026 {
		switch {
		case x.ClientCapabilities != nil:
			return x.ClientCapabilities, x
		case x.NoCapabilities:
			return []string{}, x
		}
		return nil, nil
	}
	if x.ClientCapabilities != nil && (x.Method == "initialize" || x.MetaProtocol == "" && x.Protocol == "") {
		// An initialize declares for its session; a request of an
		// unknown revision that declares names them for itself.
		return x.ClientCapabilities, x
	}
	at := slices.Index(t.Exchanges, x)
	for i := at - 1; i >= 0; i-- {
		y := t.Exchanges[i]
		if y.Method != "initialize" || !y.IsRequest() || y.ClientCapabilities == nil {
			continue
		}
		if x.Session != "" && y.Session != "" && y.Session != x.Session {
			continue
		}
		return y.ClientCapabilities, y
	}
	return nil, nil
}

// declaration says what decl declared, for evidence: "POST 2 (…)
// declared elicitation", "… declared none", or "… carried no
// clientCapabilities in its _meta".
func declaration(decl *Exchange, names []string) string {
	if decl.ClientCapabilities == nil && decl.NoCapabilities {
		return decl.Label() + " carried no clientCapabilities in its _meta"
	}
	return decl.Label() + " declared " + capabilityList(names)
}

// declaredWords names what decl declared, for evidence: the names, "none"
// for an empty declaration, or that its _meta carried no
// clientCapabilities.
func declaredWords(decl *Exchange, names []string) string {
	if decl.ClientCapabilities == nil && decl.NoCapabilities {
		return "no clientCapabilities in its _meta"
	}
	return capabilityList(names)
}

// interaction returns the first exchange that shows a scenario's
// interaction taking place: an answer that asked for input
// (input_required, a requestState issued), a server request on an
// answer's stream, a client's answer to one, or an MRTR round; nil when
// none does.
func (t *Trace) interaction() *Exchange {
	for _, x := range t.Exchanges {
		if x.IssuedAny || x.Outcome == classify.InputRequired || x.ServerRequests > 0 || x.ClientAnswer || x.IsRequest() && x.Round() {
			return x
		}
	}
	return nil
}

// NotTested says why the run did not test its case, "" when it did (or
// the records cannot say): the case's interaction needs a client capability
// (Case.NeedsCapability) that the declaration in force for the last
// tools/call lacks, and no exchange shows the interaction. The server then
// answered without it, as a server must answer a client that cannot take
// part; the client's reading of that answer is still judged
// (client.classification), but the scenario was not exercised. When the
// records do not show the declaration, a -32021 answer to the last
// tools/call with no interaction is not tested too: every declaration the
// records leave possible gives that verdict (one without the capability,
// or one with it that the server refused).
func (t *Trace) NotTested() string {
	if t.Case == nil || t.Case.NeedsCapability == "" {
		return ""
	}
	last := t.lastCall()
	if last == nil {
		return ""
	}
	need := t.Case.NeedsCapability
	names, decl := t.declared(last)
	if names == nil && t.refusedUnexercised() {
		// Whatever the client declared, the case was not exercised: a
		// declaration without the capability is not tested, and one
		// with it that the server refused with -32021 is not either.
		return fmt.Sprintf("the records do not show which capabilities the client declared for the last tools/call, %s, but the server answered it %s, MissingRequiredClientCapability, and no exchange shows the interaction: not exercised, whatever was declared",
			last.Label(), answerWords(last))
	}
	if names == nil || t.interaction() != nil {
		return ""
	}
	if slices.Contains(names, need) {
		if !missingCapability(last) {
			return ""
		}
		// The name alone does not say which of its modes the client can
		// take part in ({"elicitation":{}} is form only): the scenario's
		// server, which reads the whole declaration, refused the call
		// with -32021, so what the interaction needs was not declared.
		return fmt.Sprintf("the client declared %s (%s), but not what the scenario's interaction needs of it: the server answered the last tools/call, %s, %s, MissingRequiredClientCapability, as a server must answer a client that cannot take part; the interaction was not exercised",
			need, declaration(decl, names), last.Label(), answerWords(last))
	}
	return fmt.Sprintf("the client declared no %s capability (%s); the server answered the last tools/call, %s, %s, as a server must answer a client that cannot take part; the interaction was not exercised",
		need, declaration(decl, names), last.Label(), answerWords(last))
}

// refusedUnexercised reports that the server answered the last tools/call
// with -32021 MissingRequiredClientCapability and no exchange shows the
// interaction: the case was not exercised, whatever the client declared.
func (t *Trace) refusedUnexercised() bool {
	last := t.lastCall()
	return last != nil && missingCapability(last) && t.interaction() == nil
}

// capabilityList names declared capabilities for evidence: "none" for an
// empty declaration.
func capabilityList(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// answerWords says what the server answered x, for evidence.
func answerWords(x *Exchange) string {
	switch {
	case answered(x) && x.Outcome == classify.ToolError:
		return "with a tool error (isError: true)"
	case x.Failed && x.ErrorCode != nil:
		return fmt.Sprintf("with %s (JSON-RPC error %d)", x.What, *x.ErrorCode)
	case x.Failed:
		return "with " + x.What
	case x.Outcome != "":
		return fmt.Sprintf("with HTTP %d, %s", x.Status, x.Outcome)
	}
	return fmt.Sprintf("with HTTP %d", x.Status)
}

// missingCapability reports whether the server answered x with JSON-RPC
// error -32021 MissingRequiredClientCapability.
func missingCapability(x *Exchange) bool {
	return x.ErrorCode != nil && *x.ErrorCode == -32021
}

// clientNames returns the capability names in force for the last
// tools/call (nil when no request says).
func (t *Trace) clientNames() []string {
	names, _ := t.declared(t.lastCall())
	return names
}
