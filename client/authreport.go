package client

import (
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/mcpdiag/mcpdiag/internal/visible"
)

// WriteAuthChain prints the authorization chain of a list of exchanges, step
// by step: the MCP answers that challenged, every exchange with the
// resource's metadata and the authorization server, and what each learned
// or which rule it broke. It prints nothing when there is no chain.
func WriteAuthChain(w io.Writer, exs []*Exchange) {
	var b strings.Builder
	writeAuthChain(&b, exs)
	_, _ = io.WriteString(w, b.String())
}

func writeAuthChain(b *strings.Builder, exs []*Exchange) {
	any := false
	for _, ex := range exs {
		if ex.Auth != nil && ex.Auth.Step != StepRequest {
			any = true
			break
		}
	}
	if !any {
		return
	}
	b.WriteString("  auth chain:\n")
	for _, ex := range exs {
		a := ex.Auth
		if a == nil || a.Step == StepRequest {
			continue
		}
		status := "---"
		if ex.Status != 0 {
			status = fmt.Sprint(ex.Status)
		}
		what := ""
		switch {
		case a.Step == StepChallenge:
			what = ex.Method
			if ex.Tool != "" {
				what += " " + ex.Tool
			}
			what = "POST " + what
			if ex.HTTPMethod != "" {
				what = ex.HTTPMethod + " " + strings.TrimPrefix(what, "POST ")
			}
		default:
			what = ex.HTTPMethod + " " + shortURL(ex.URL)
		}
		step := a.Step
		if a.StepUp > 0 {
			step += fmt.Sprintf(" (step-up %d)", a.StepUp)
		}
		fmt.Fprintf(b, "    #%-2d %-22s %-44s %s %6s", ex.Seq, step, trim(visible.String(what), 44), status, ex.Total.Round(time.Millisecond))
		switch {
		case a.Failure != "":
			fmt.Fprintf(b, "  ✗ %s\n", visible.String(a.Failure))
			if a.Rule != "" {
				fmt.Fprintf(b, "          rule: %s\n", visible.String(a.Rule))
			}
		case ex.Result != nil && ex.Result.Outcome != "" && !ex.Result.Outcome.Success() && a.Step != StepChallenge:
			fmt.Fprintf(b, "  %s\n", visible.String(strings.TrimPrefix(ex.Result.Reason, a.Step+": ")))
		case a.Note != "":
			fmt.Fprintf(b, "  %s\n", visible.String(a.Note))
		default:
			b.WriteString("\n")
		}
	}
}

// shortURL is a URL without its query (an authorization URL's query is
// long and says nothing the step's note does not).
func shortURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return s
	}
	if u.RawQuery != "" {
		u.RawQuery = ""
		return u.String() + "?…"
	}
	return u.String()
}
