package probe_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/fixture"
	"github.com/mcpdiag/mcpdiag/judge"
	"github.com/mcpdiag/mcpdiag/probe"
	"github.com/mcpdiag/mcpdiag/record"
)

// TestInterruptedRunSaysSo: a run interrupted (its context ended: Ctrl-C,
// a deadline) while its second probe was in flight. Two wrong answers
// before: the probe in flight, cut by the interrupt, was judged unanswered
// (probe.answered FAIL, severity must: "no answer (NETWORK_ERROR: …
// context canceled)"), a verdict on the server for what the user did; and
// every tool whose planned probes were never sent read "tool X: no
// argument probe", as if its schema gave none, under a summary that read
// like a complete run. Now the probe in flight is written but not judged,
// the report says the run was interrupted and how far it got
// (Report.Interrupted, a line under the head, the summary, the JSON), and
// each tool line says how many of its planned probes were judged.
func TestInterruptedRunSaysSo(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var calls atomic.Int32
	fx := fixture.New(fixture.Options{})
	var written atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		var m struct {
			Method string `json:"method"`
		}
		_ = json.Unmarshal(body, &m)
		if m.Method == "tools/call" && calls.Add(1) == 2 {
			// The second probe: the run is interrupted while it waits.
			cancel()
			select {
			case <-r.Context().Done():
			case <-time.After(10 * time.Second):
			}
			return
		}
		fx.ServeHTTP(w, r)
	}))
	defer ts.Close()
	rep, err := probe.Run(ctx, probe.Options{URL: ts.URL, Protocol: "2026-07-28", Timeout: 20 * time.Second,
		OnRecord: func(r *record.Record) { written.Add(1) }})
	if err == nil || !strings.HasPrefix(err.Error(), "stopped during probe 2 of ") {
		t.Fatalf("probe.Run: %v, want stopped during probe 2", err)
	}
	if rep.Interrupted != err.Error() || len(rep.Probes) != 1 {
		t.Fatalf("interrupted %q, %d probes; want %q, 1", rep.Interrupted, len(rep.Probes), err.Error())
	}
	if int(written.Load()) != len(rep.Records)+1 {
		t.Errorf("%d records written, %d judged: the probe in flight is written and not judged", written.Load(), len(rep.Records))
	}
	for _, c := range rep.Checks {
		if c.Verdict == judge.Fail {
			t.Errorf("FAIL %s: %s (the healthy fixture fails nothing; the interrupt is not the server's doing)", c.Rule, c.Evidence)
		}
	}
	var text strings.Builder
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	out := text.String()
	if strings.Contains(out, ": no argument probe\n") {
		t.Errorf("a tool whose probes were not judged reads \"no argument probe\":\n%s", out)
	}
	var first, none bool
	for _, tp := range rep.Tools {
		if !tp.Allowed || tp.Probes == 0 {
			continue
		}
		switch judged := tp.Arguments + tp.NotObject; {
		case judged == 1:
			first = true
			if want := "  tool " + tp.Name + ": 1 of its "; tp.Probes > 1 && !strings.Contains(out, want) {
				t.Errorf("text lacks %q:\n%s", want, out)
			}
		case judged == 0:
			none = true
			if want := "  tool " + tp.Name + ": none of its "; !strings.Contains(out, want) {
				t.Errorf("text lacks %q for %s (%d planned):\n%s", want, tp.Name, tp.Probes, out)
			}
		}
	}
	if !first || !none {
		t.Fatalf("want one tool with one probe judged and one with none; tools %+v", rep.Tools)
	}
	for _, want := range []string{
		"\n  interrupted: " + err.Error() + "; the verdicts judge only the 1 probe answered before, and a rule whose probes were not is n/a\n",
		"; --fail-on should: no failure at or above it. Interrupted (" + err.Error() + "): not a complete probe.\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	j, _ := json.Marshal(rep)
	if !strings.Contains(string(j), `"interrupted":"stopped during probe 2 of `) {
		t.Errorf("JSON lacks interrupted: %s", j)
	}
}
