package client

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/internal/visible"
)

// authChainRan reports whether the listing went through the authorization
// chain.
func authChainRan(l *Listing) bool {
	for _, ex := range l.Exchanges {
		if ex.Auth != nil && ex.Auth.Step != StepRequest {
			return true
		}
	}
	return false
}

// WriteAuthRun prints what `mcpdiag auth` prints for a listing: the
// verdict of the authorization chain (AUTH_FAILED at a step with the rule
// it broke, authorized, not authorized, or no authorization needed), each
// step of the chain as one paragraph (what was sent where, the answer,
// what it learned), the token it got (never the token itself) and whether
// the server accepted it. Addresses are shown without their query. The
// text quotes servers: pass it through the records' redactor.
func (l *Listing) WriteAuthRun(w io.Writer, url string) error {
	var b strings.Builder
	l.writeAuthRun(&b, url)
	_, err := io.WriteString(w, b.String())
	return err
}

func (l *Listing) writeAuthRun(b *strings.Builder, url string) {
	switch {
	case l.Auth != nil:
		fmt.Fprintf(b, "%s at step %s — %s\n", AuthFailed, l.Auth.Step, url)
		fmt.Fprintf(b, "  what:      %s\n", visible.String(l.Auth.Reason))
		if l.Auth.Rule != "" {
			fmt.Fprintf(b, "  rule:      %s\n", visible.String(l.Auth.Rule))
		}
	case !authChainRan(l) && l.OK:
		fmt.Fprintf(b, "no authorization needed — %s\n", url)
		fmt.Fprintf(b, "  what:      tools/list was answered without a token (%s): there is no chain to run\n", l.Protocol)
		return
	case l.OK:
		fmt.Fprintf(b, "authorized — %s\n", url)
	default:
		what := "the listing failed"
		if l.Final != nil {
			what = fmt.Sprintf("%s (%s layer): %s", l.Final.Outcome, l.Final.Outcome.Layer(), l.Final.Reason)
		}
		fmt.Fprintf(b, "not authorized — %s\n  what:      %s\n", url, visible.String(what))
	}
	writeAuthSteps(b, url, l.Exchanges)
	if tok := lastTokenExchange(l.Exchanges); tok != nil && l.Auth == nil {
		a := tok.Auth
		fmt.Fprintf(b, "  token:     from %s for %s", visible.String(a.Issuer), visible.String(a.Resource))
		if a.Granted != "" {
			fmt.Fprintf(b, ", scope %q", a.Granted)
		}
		fmt.Fprintf(b, "; grant %s, client %s", a.Grant, visible.String(a.ClientID))
		if a.Registration != "" {
			fmt.Fprintf(b, " (%s)", visible.String(a.Registration))
		}
		b.WriteString(" — the token itself is never printed\n")
	}
	if l.OK {
		fmt.Fprintf(b, "  check:     tools/list answered with the token (%s): %d tool(s)\n", l.Protocol, len(l.Tools))
	}
}

// lastTokenExchange is the last token or refresh exchange that got a token.
func lastTokenExchange(exs []*Exchange) *Exchange {
	var out *Exchange
	for _, ex := range exs {
		if ex.Auth != nil && (ex.Auth.Step == StepToken || ex.Auth.Step == StepRefresh) && ex.Auth.Failure == "" &&
			ex.Result != nil && ex.Result.Outcome.Success() {
			out = ex
		}
	}
	return out
}

// AuthExitCode is the exit status of `mcpdiag auth` for the listing: 0 when
// the chain got a token the server accepted (or none was needed),
// ExitTransport for AUTH_FAILED or another transport failure, ExitProtocol
// for a protocol failure after the token was accepted.
func (l *Listing) AuthExitCode() int {
	switch {
	case l.Auth != nil:
		return ExitTransport
	case l.OK:
		return 0
	case l.Final != nil && l.Final.Outcome.Layer() == classify.LayerProtocol:
		return ExitProtocol
	}
	return ExitTransport
}

// writeAuthSteps prints the chain one step a paragraph: what was sent where,
// the answer, and what the step learned or which rule the answer broke.
// Addresses are shown without their query (an authorization request's
// holds the state).
func writeAuthSteps(b *strings.Builder, url string, exs []*Exchange) {
	n := 0
	for _, ex := range exs {
		a := ex.Auth
		if a == nil || a.Step == StepRequest {
			continue
		}
		n++
		step := a.Step
		if a.StepUp > 0 {
			step += fmt.Sprintf(" (step-up %d)", a.StepUp)
		}
		method := ex.HTTPMethod
		if method == "" {
			method = "POST"
		}
		target := withoutQuery(ex.URL)
		if a.Step == StepChallenge {
			if target == "" {
				target = withoutQuery(url)
			}
			target += " (" + ex.Method
			if ex.Tool != "" {
				target += " " + ex.Tool
			}
			target += ")"
		}
		answer := "no answer"
		if ex.Status != 0 {
			answer = fmt.Sprintf("%d %s", ex.Status, http.StatusText(ex.Status))
		}
		fmt.Fprintf(b, "  %2d. %-20s %s %s → %s (%s)\n", n, step, method, visible.String(target), answer, ex.Total.Round(time.Millisecond))
		switch {
		case a.Failure != "":
			fmt.Fprintf(b, "      ✗ %s\n", visible.String(a.Failure))
			if a.Rule != "" {
				fmt.Fprintf(b, "      rule: %s\n", visible.String(a.Rule))
			}
		case ex.Result != nil && ex.Result.Outcome != "" && !ex.Result.Outcome.Success() && a.Step != StepChallenge:
			fmt.Fprintf(b, "      %s\n", visible.String(ex.Result.Reason))
		case a.Note != "":
			fmt.Fprintf(b, "      %s\n", visible.String(a.Note))
		}
	}
}

// withoutQuery is an address without its query ("?…" marks one was there).
func withoutQuery(s string) string {
	if i := strings.IndexByte(s, '?'); i >= 0 {
		return s[:i] + "?…"
	}
	return s
}
