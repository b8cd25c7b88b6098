package report

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// FuzzReport feeds arbitrary record files through the accumulator, the
// renderers, the gates and the HAR writer (the record reader has its own
// fuzz target, record.FuzzReader). Whatever the input: the counts add up,
// both renderers work, the JSON summary reads back as a baseline, a run
// compared with itself passes the baseline gates, and the HAR is valid.
func FuzzReport(f *testing.F) {
	data, _ := mixedFile(f)
	f.Add(string(data))
	f.Add(`{"kind":"exchange","callId":"c","seq":2,"outcome":"TOOL_ERROR","timings":{"totalMs":1e300}}` + "\n" +
		`{"kind":"exchange","callId":"c","seq":1,"time":"2026-01-01T00:00:00Z","timings":{"totalMs":-3}}` + "\n" +
		`{"kind":"call","id":"c","outcome":"","layer":"weird"}` + "\n{bad\n" +
		`{"kind":"dropped","dropped":-4}` + "\n" + `{"kind":"server","tool":"\u0000"}` + "\n" +
		`{"kind":"server","serve":{"faults":[{"scenario":"a","fired":true},{"scenario":"a","fired":true},{"scenario":""}]}}`)
	f.Add(`{"kind":"exchange","url":"http://x/?a=%zz&b","requestHeaders":{"A":["1","2"]},"status":999,"jsonrpc":{"id":"s"}}`)
	// A cut exchange (SD), one also interrupted, an answered challenge, an
	// unanswered one, and an orphan call of a cut exchange.
	f.Add(`{"kind":"exchange","id":"a","outcome":"NETWORK_ERROR","flags":["SD"],"timings":{"totalMs":9}}` + "\n" +
		`{"kind":"exchange","id":"b","outcome":"NETWORK_ERROR","flags":["SD"],"warnings":[{"code":"matrix-run-interrupted"}]}` + "\n" +
		`{"kind":"exchange","id":"c","outcome":"HTTP_ERROR","status":401,"auth":{"step":"challenge"},"decision":{"action":"reauthorize"}}` + "\n" +
		`{"kind":"exchange","id":"d","outcome":"HTTP_ERROR","status":401,"auth":{"step":"challenge"},"decision":{"action":"fail"}}` + "\n" +
		`{"kind":"exchange","id":"e","callId":"k","seq":1,"outcome":"STREAM_INCOMPLETE","flags":["SD"]}`)
	// Designed answers (a GET and a DELETE answered 405, a GET 302), one
	// also cut by shutdown, and a POST answered 405 (judged).
	f.Add(`{"kind":"exchange","id":"a","outcome":"HTTP_ERROR","httpMethod":"GET","status":405,"jsonrpc":{"id":null}}` + "\n" +
		`{"kind":"exchange","id":"b","outcome":"HTTP_ERROR","httpMethod":"DELETE","status":405}` + "\n" +
		`{"kind":"exchange","id":"c","outcome":"HTTP_ERROR","httpMethod":"GET","status":302,"flags":["SD"]}` + "\n" +
		`{"kind":"exchange","id":"d","outcome":"HTTP_ERROR","httpMethod":"POST","status":405,"method":"tools/list","jsonrpc":{"id":1}}`)
	// A proxy's challenges: answered, refused again with a step-up and
	// answered, never answered (another client's request follows).
	f.Add(`{"kind":"exchange","id":"c","conn":"r-1","client":"x@1","httpMethod":"POST","method":"tools/list","status":401,"outcome":"HTTP_ERROR","time":"2026-01-01T00:00:00Z","responseHeaders":{"Www-Authenticate":["Bearer scope=\"a\""]}}` + "\n" +
		`{"kind":"exchange","id":"s","conn":"r-2","client":"x@1","httpMethod":"POST","method":"tools/list","status":403,"outcome":"HTTP_ERROR","time":"2026-01-01T00:00:01Z","requestHeaders":{"Authorization":["Bearer [redacted:len=3:h=00000001]"]},"responseHeaders":{"Www-Authenticate":["Bearer error=\"insufficient_scope\""]}}` + "\n" +
		`{"kind":"exchange","id":"a","conn":"r-3","client":"x@1","httpMethod":"POST","method":"tools/list","status":200,"outcome":"RESULT_SUCCESS","time":"2026-01-01T00:00:02Z","requestHeaders":{"Authorization":["Bearer [redacted:len=3:h=00000002]"]}}` + "\n" +
		`{"kind":"exchange","id":"d","conn":"r-4","client":"x@1","httpMethod":"POST","method":"tools/call","tool":"t","status":401,"outcome":"HTTP_ERROR","time":"2026-01-01T00:00:03Z","responseHeaders":{"Www-Authenticate":["Bearer"]}}` + "\n" +
		`{"kind":"exchange","id":"e","conn":"r-5","client":"y@1","httpMethod":"POST","method":"tools/call","tool":"t","status":200,"outcome":"TOOL_SUCCESS","time":"2026-01-01T00:00:04Z","requestHeaders":{"Authorization":["Bearer [redacted:len=3:h=00000003]"]}}`)
	// 2024-11-05 HTTP+SSE: a POST initialize answered 404 and its legacy
	// GET (the GET read first, then after), a request whose answer never
	// came on the stream, one the shutdown left unanswered, an ambiguous
	// one and one answered there.
	legacyGET := `{"kind":"exchange","id":"g","conn":"r-2","httpMethod":"GET","url":"http://h/sse","status":200,"outcome":"HTTP_SUCCESS","time":"2026-01-01T00:00:01Z","requestHeaders":{"Accept":["text/event-stream"],"User-Agent":["node"]}}`
	legacy404 := `{"kind":"exchange","id":"i","conn":"r-1","httpMethod":"POST","url":"http://h/sse","method":"initialize","status":404,"outcome":"HTTP_ERROR","time":"2026-01-01T00:00:00Z","requestHeaders":{"User-Agent":["node"]}}`
	f.Add(legacyGET + "\n" + legacy404 + "\n" + legacy404 + "\n" + legacyGET + "\n" +
		`{"kind":"exchange","id":"u","conn":"r-3","httpMethod":"POST","method":"tools/call","tool":"t","status":202,"outcome":"REQUEST_ACCEPTED","answeredOn":"stream","streamAnswer":{"seen":false,"notSeen":"stream-ended"}}` + "\n" +
		`{"kind":"exchange","id":"v","conn":"r-3","httpMethod":"POST","method":"tools/call","tool":"t","status":202,"outcome":"REQUEST_ACCEPTED","answeredOn":"stream","streamAnswer":{"seen":false,"notSeen":"shutdown"}}` + "\n" +
		`{"kind":"exchange","id":"w","conn":"r-3","httpMethod":"POST","method":"tools/call","tool":"t","status":202,"outcome":"REQUEST_ACCEPTED","answeredOn":"stream","streamAnswer":{"seen":false,"notSeen":"ambiguous"}}` + "\n" +
		`{"kind":"exchange","id":"x","conn":"r-3","httpMethod":"POST","method":"tools/call","tool":"t","status":202,"outcome":"TOOL_SUCCESS","contentType":"text/plain","responseBytes":8,"answeredOn":"stream","streamAnswer":{"seen":true,"bytes":40},"responseBody":{"text":"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}"}}`)
	for _, s := range []string{shutdownFile, challengesFile, designedFile, legacyFile} {
		if b, err := os.ReadFile(s); err == nil {
			f.Add(string(b))
		}
	}
	f.Fuzz(func(t *testing.T, in string) {
		acc := New(Options{Top: 3, Examples: 2, ExactSamples: 4, MaxTools: 3, MaxOutcomes: 3, MaxOpenCalls: 2})
		var har bytes.Buffer
		h := NewHARWriter(&har, HAROptions{})
		if _, err := Read(strings.NewReader(in), "fuzz", nil, acc, h); err != nil {
			t.Fatal(err)
		}
		acc.Close()
		if err := h.Close(); err != nil {
			t.Fatal(err)
		}
		s := acc.Summary()
		for _, sec := range []*Section{s.Calls, s.Exchanges, s.Server} {
			var byOutcome, byLayer, byTool, failures int64
			for _, c := range sec.ByOutcome {
				byOutcome += c.Count
			}
			for _, n := range sec.ByLayer {
				byLayer += n
			}
			for _, ts := range sec.ByTool {
				byTool += ts.Total
				failures += ts.Failures
			}
			if byOutcome != sec.Total || byLayer != sec.Total || byTool != sec.Total || failures != sec.Failures || sec.Failures > sec.Total {
				t.Fatalf("%s: total %d, by outcome %d, by layer %d, by tool %d; failures %d vs %d", sec.Kind, sec.Total, byOutcome, byLayer, byTool, sec.Failures, failures)
			}
			// Each record counted apart once, for one reason: the
			// outcomes' shares add up to the section's, and the records
			// left to judge hold the failures.
			var apart [6]int64
			for _, c := range sec.ByOutcome {
				apart[0] += c.Probes
				apart[1] += c.EraFallbacks
				apart[2] += c.Interrupted
				apart[3] += c.CutByShutdown
				apart[4] += c.AuthChallenges
				apart[5] += c.DesignedAnswers
				if c.judged() < 0 {
					t.Fatalf("%s: %s: count %d, %d judged", sec.Kind, c.Outcome, c.Count, c.judged())
				}
			}
			if want := [6]int64{sec.Probes, sec.EraFallbacks, sec.Interrupted, sec.CutByShutdown, sec.AuthChallenges, sec.DesignedAnswers}; apart != want {
				t.Fatalf("%s: the outcomes count apart %v (probes, era fallbacks, interrupted, cut by shutdown, auth challenges, designed answers), the section %v", sec.Kind, apart, want)
			}
			if sec.ChallengesLinked > sec.AuthChallenges || int64(len(sec.ChallengeLinks)) > min(sec.ChallengesLinked, 3) {
				t.Fatalf("%s: %d challenges linked, %d named, of %d answered", sec.Kind, sec.ChallengesLinked, len(sec.ChallengeLinks), sec.AuthChallenges)
			}
			var unanswered int64
			for _, c := range sec.ByOutcome {
				unanswered += c.Unanswered
			}
			if unanswered != sec.Unanswered || sec.Unanswered > sec.Failures || sec.LegacyFallbacks > sec.EraFallbacks {
				t.Fatalf("%s: %d unanswered by outcome, %d in the section, %d failures; %d legacy fallbacks of %d era fallbacks",
					sec.Kind, unanswered, sec.Unanswered, sec.Failures, sec.LegacyFallbacks, sec.EraFallbacks)
			}
			if sec.judged() < sec.Failures {
				t.Fatalf("%s: %d failures of %d judged (total %d)", sec.Kind, sec.Failures, sec.judged(), sec.Total)
			}
			if l := sec.Latency; l.Samples > 0 && !(l.MinMs <= l.P50Ms && l.P50Ms <= l.P95Ms && l.P95Ms <= l.P99Ms && l.P99Ms <= l.MaxMs) {
				t.Fatalf("%s: latency out of order %+v", sec.Kind, l)
			}
		}
		var fired int64
		for _, f := range s.Server.Faults {
			if f.Fired > f.Lines || f.Lines > s.Server.Total {
				t.Fatalf("scenario %s fired on %d of %d lines (%d server lines)", f.Scenario, f.Fired, f.Lines, s.Server.Total)
			}
			fired = max(fired, f.Fired)
		}
		if s.Server.FaultLines > s.Server.Total || s.Server.FaultLines < fired {
			t.Fatalf("a fault fired on %d of %d server lines; one scenario alone on %d", s.Server.FaultLines, s.Server.Total, fired)
		}
		if got := int64(len(checkHAR(t, har.Bytes()))); got != s.Exchanges.Total {
			t.Fatalf("%d HAR entries for %d exchanges", got, s.Exchanges.Total)
		}
		var text, js bytes.Buffer
		if err := NewTextReporter(s).Report(&text); err != nil {
			t.Fatal(err)
		}
		if err := NewJSONReporter(s).Report(&js); err != nil {
			t.Fatal(err)
		}
		base, err := ReadSummary(&js)
		if err != nil {
			t.Fatalf("the JSON summary does not read back: %v", err)
		}
		if s.Primary().Total > 0 {
			rep, err := (&Gates{Baseline: base}).Check(s)
			if err != nil || !rep.Passed {
				t.Fatalf("a run compared with itself: %v %+v", err, rep)
			}
		}
	})
}
