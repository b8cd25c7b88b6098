package probe_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/internal/testbin"
	"github.com/mcpdiag/mcpdiag/judge"
	"github.com/mcpdiag/mcpdiag/probe"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/report"
)

// hangLimit is the probe's limit per answer in the tests where a server
// never answers (or answers late), so that the limit must pass: short, since
// each hang waits it out, but long enough that every answer the server does
// give arrives within it on a loaded machine (1 s did not, at load 20: "no
// answer line within 1s" for an answer the server gave).
const hangLimit = 4 * time.Second

// stdioServer builds probe/testdata/stdioserver (go-sdk v1.8.0 over stdio)
// once per test binary.
func stdioServer(t *testing.T) string {
	t.Helper()
	return testbin.Build(t, "./testdata/stdioserver")
}

func runStdio(t *testing.T, argv ...string) *probe.Report {
	t.Helper()
	return runStdioEra(t, "", argv...)
}

func runStdioEra(t *testing.T, protocol string, argv ...string) *probe.Report {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rep, err := probe.Run(ctx, probe.Options{Command: argv, Protocol: protocol, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatalf("probe.Run: %v", err)
	}
	return rep
}

// TestProbeStdio: the probe over stdio against a go-sdk v1.8.0 server, in
// each era it speaks (it answers server/discover with 2026-07-28 listed, so
// auto picks 2026-07-28; --protocol 2025-11-25 initializes): every rule
// that applies passes (a notification no line answers included), the
// HTTP-only rules are n/a (stdio has no Origin or protocol header),
// result-type applies on 2026-07-28 only, the destructive tool never runs,
// every probe's record has its probe member, the era and no HTTP status,
// no initialize is sent on 2026-07-28, and the server is stopped at the
// end. (go-sdk answers a 2026-07-28 request without the era's _meta
// "invalid during session initialization": the listing itself shows the
// _meta is sent.)
func TestProbeStdio(t *testing.T) {
	for _, tc := range []struct {
		protocol, era string
	}{
		{"2025-11-25", "2025-11-25"},
		{"auto", "2026-07-28"},
		{"2026-07-28", "2026-07-28"},
	} {
		t.Run(tc.protocol, func(t *testing.T) { testProbeStdio(t, tc.protocol, tc.era) })
	}
}

func testProbeStdio(t *testing.T, protocol, era string) {
	bin := stdioServer(t)
	ran := filepath.Join(t.TempDir(), "ran")
	rep := runStdioEra(t, protocol, bin, "-ran", ran)
	t.Logf("era %s (%s)\n%s", rep.Protocol, rep.EraReason, checks(rep.Checks))
	resultType := judge.NotApplicable
	if era == "2026-07-28" {
		resultType = judge.Pass
	}
	want := map[string]judge.Verdict{
		"probe.answered": judge.Pass, "probe.answer-shape": judge.Pass, "probe.result-type": resultType,
		"probe.invalid-arguments": judge.Pass, "probe.is-error-missing": judge.Pass, "probe.unknown-tool": judge.Pass,
		"probe.malformed-call": judge.Pass, "probe.id-type": judge.Pass,
		"probe.origin": judge.NotApplicable, "probe.protocol-version": judge.NotApplicable, "probe.notification-202": judge.Pass,
		"probe.protocol-version-missing": judge.NotApplicable, "probe.accept": judge.NotApplicable,
	}
	if len(rep.Checks) != len(want) {
		t.Errorf("%d checks, want %d", len(rep.Checks), len(want))
	}
	for _, c := range rep.Checks {
		if c.Verdict != want[c.Rule] {
			t.Errorf("%s %s (%s), want %s", c.Rule, c.Verdict, c.Evidence, want[c.Rule])
		}
	}
	// The records, encoded and read back as a --record file would be, are
	// judged the same (the stdio answers have no HTTP status in the file).
	again := map[string]judge.Verdict{}
	for _, c := range rejudge(t, rep.Records) {
		again[c.Rule] = c.Verdict
	}
	for _, c := range rep.Checks {
		if again[c.Rule] != c.Verdict {
			t.Errorf("%s: %s in the run, %s judged from the records", c.Rule, c.Verdict, again[c.Rule])
		}
	}
	if rep.Protocol != era || !strings.HasPrefix(rep.URL, "stdio:") {
		t.Errorf("protocol %q url %q, want era %s", rep.Protocol, rep.URL, era)
	}
	probes := 0
	for _, r := range rep.Records {
		if r.Status != 0 {
			t.Errorf("a stdio record has HTTP status %d", r.Status)
		}
		if r.Probe != nil && r.ProtocolVersion != era {
			t.Errorf("probe %d %s: protocol %q, want %s", r.Probe.Index, r.Probe.Kind, r.ProtocolVersion, era)
		}
		if r.Method == "initialize" && era == "2026-07-28" {
			t.Errorf("initialize sent on 2026-07-28")
		}

		if r.Probe != nil {
			probes++
			want := record.ProbeAnswerResponse
			if r.Probe.Kind == string(probe.Notification) {
				want = record.ProbeAnswerSilent
				// A notification no line answered is accepted: it was
				// EMPTY_RESPONSE (transport) with id-not-checked, the
				// classifier's words for a request answered 202.
				if r.Outcome != classify.NotificationAccepted || len(r.Warnings) != 0 {
					t.Errorf("notification probe: %s %v, want NOTIFICATION_ACCEPTED without warnings", r.Outcome, r.Warnings)
				}
			}
			if r.Probe.Answer != want {
				t.Errorf("probe %d %s: answer %q, want %q", r.Probe.Index, r.Probe.Kind, r.Probe.Answer, want)
			}
		}
	}
	if probes != len(rep.Probes) || probes == 0 {
		t.Errorf("%d probe records, %d probes", probes, len(rep.Probes))
	}
	for _, p := range rep.Probes {
		if p.Kind == probe.ForeignOrigin || p.Kind == probe.BadProtocolVersion {
			t.Errorf("HTTP-only probe %s sent over stdio", p.Kind)
		}
	}
	if b, _ := os.ReadFile(ran); strings.Contains(string(b), "drop_table") {
		t.Errorf("drop_table ran: %q", b)
	}
	if rep.Stopped != "exited after stdin closed" {
		t.Errorf("server stopped: %q", rep.Stopped)
	}
}

// TestProbeStdioEra: over stdio the probe asks server/discover first
// (basic/transports/stdio §Backward Compatibility) unless --protocol
// 2025-11-25: a server that speaks 2025-11-25 only (go-sdk narrowed to it:
// UnsupportedProtocolVersion, supported 2025-11-25) is initialized on
// 2025-11-25 in auto mode, and refused with --protocol 2026-07-28, which
// does not fall back.
func TestProbeStdioEra(t *testing.T) {
	rep := runStdioEra(t, "auto", stdioServer(t), "-legacy")
	t.Logf("era %s (%s)\n%s", rep.Protocol, rep.EraReason, checks(rep.Checks))
	if rep.Protocol != "2025-11-25" || !strings.Contains(rep.EraReason, "UnsupportedProtocolVersion, supported 2025-11-25") {
		t.Errorf("era %s (%s), want 2025-11-25 after UnsupportedProtocolVersion", rep.Protocol, rep.EraReason)
	}
	var methods []string
	for _, r := range rep.Records {
		if r.Probe == nil {
			methods = append(methods, r.Method)
		}
	}
	if len(methods) < 3 || methods[0] != "server/discover" || methods[1] != "initialize" || methods[2] != "tools/list" {
		t.Errorf("the run's first requests %v, want server/discover, initialize, tools/list", methods)
	}
	// The refused server/discover is the era probe the probe fell back
	// from: marked so (report counts it apart, as the HTTP client's), not
	// a failure of the run. It was counted a failure ("exchanges: …, 1
	// failed"), and server-everything's -32601 to it warned
	// status-mismatch "came with HTTP 200; the spec requires 404" over
	// stdio, which has no HTTP.
	disc := rep.Records[0]
	if disc.Method != "server/discover" || !disc.EraFallback || disc.Decision == nil || disc.Decision.Action != "renegotiate" {
		t.Errorf("server/discover record: method %s, eraFallback %v, decision %+v; want the era fallback, renegotiate", disc.Method, disc.EraFallback, disc.Decision)
	}
	acc := report.New(report.Options{})
	for _, r := range rep.Records {
		acc.Add(r)
	}
	acc.Close()
	if sum := acc.Summary(); sum.Exchanges.Failures != 0 || sum.Exchanges.EraFallbacks != 1 {
		t.Errorf("report: %d failures, %d era fallbacks; want 0 and 1", sum.Exchanges.Failures, sum.Exchanges.EraFallbacks)
	}
	for _, c := range rep.Checks {
		if c.Verdict == judge.Fail {
			t.Errorf("%s failed: %s", c.Rule, c.Evidence)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, err := probe.Run(ctx, probe.Options{Command: []string{stdioServer(t), "-legacy"}, Protocol: "2026-07-28", Timeout: 10 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "no fallback to initialize") || !strings.Contains(err.Error(), "supported 2025-11-25") {
		t.Errorf("--protocol 2026-07-28 against a 2025-11-25 server: err %v, want the refusal", err)
	}
}

// TestProbeStdioServerRequests: a server that writes a request (roots/list)
// on stdout at each tools/call. On 2025-11-25 the probe answers it (no
// roots), as over HTTP; on 2026-07-28, where the server MUST NOT write
// requests and the client MUST NOT write responses on stdio, it writes
// nothing back and the record carries the server-request-on-stream warning.
func TestProbeStdioServerRequests(t *testing.T) {
	for _, era := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(era, func(t *testing.T) {
			answers := filepath.Join(t.TempDir(), "answers")
			rep := runStdioEra(t, era, stdioServer(t), "-ask", answers)
			t.Logf("era %s\n%s", rep.Protocol, checks(rep.Checks))
			says := map[string]string{"2025-11-25": "asked the client", "2026-07-28": "got server requests first, which 2026-07-28 forbids"}[era]
			for _, c := range rep.Checks {
				if c.Verdict == judge.Fail {
					t.Errorf("%s failed: %s", c.Rule, c.Evidence)
				}
				if c.Rule == "probe.answered" && !strings.Contains(c.Evidence, says) {
					t.Errorf("probe.answered evidence %q does not say %q", c.Evidence, says)
				}
			}
			calls, warned := 0, 0
			for _, r := range rep.Records {
				if r.Probe == nil || r.Method != "tools/call" {
					continue
				}
				calls++
				for _, w := range r.Warnings {
					if w.Code == "server-request-on-stream" && strings.Contains(w.Message, "roots/list") {
						warned++
					}
				}
			}
			b, _ := os.ReadFile(answers)
			got := strings.Count(string(b), `"result":{"roots":[]}`)
			switch era {
			case "2025-11-25":
				if calls == 0 || got != calls || warned != 0 {
					t.Errorf("%d tools/call probes, %d answers to roots/list (want one each), %d warnings:\n%s", calls, got, warned, b)
				}
			default:
				if calls == 0 || len(b) != 0 || warned != calls {
					t.Errorf("%d tools/call probes, %d warned (want each), the server got %q (want nothing)", calls, warned, b)
				}
			}
		})
	}
}

// TestProbeStdioNotification: over stdio a notification gets no line (MCP
// basic §Notifications): a server that answers one with a line fails
// probe.notification-202 with the line; one that reads nothing after it
// (the request after it, ping on 2025-11-25 and server/discover on
// 2026-07-28, which has no ping, gets no answer) fails probe.answered, not
// the notification rule. Either way no other rule fails, and the run's
// records judged again give the same verdicts.
func TestProbeStdioNotification(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		protocol, mode, rule, says, answer string
	}{
		{"2025-11-25", "answer", "probe.notification-202", `a line answered it (JSONRPC_ERROR`, record.ProbeAnswerResponse},
		{"2025-11-25", "hang", "probe.answered", "the ping sent after it got no answer either", record.ProbeAnswerNone},
		{"2026-07-28", "answer", "probe.notification-202", `a line answered it (JSONRPC_ERROR`, record.ProbeAnswerResponse},
		{"2026-07-28", "hang", "probe.answered", "the server/discover sent after it got no answer either", record.ProbeAnswerNone},
		// It exits on reading it: the write of the notification or the
		// wait for the answer after it fails, either way no answer.
		{"2025-11-25", "exit", "probe.answered", "notification: no answer", record.ProbeAnswerNone},
	} {
		t.Run(tc.protocol+"/"+tc.mode, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			rep, err := probe.Run(ctx, probe.Options{Command: []string{stdioServer(t), "-notification", tc.mode}, Protocol: tc.protocol, Timeout: hangLimit})
			if err != nil {
				t.Fatalf("probe.Run: %v", err)
			}
			t.Logf("%s", checks(rep.Checks))
			for _, c := range rep.Checks {
				switch {
				case c.Rule == tc.rule && (c.Verdict != judge.Fail || !strings.Contains(c.Evidence, tc.says)):
					t.Errorf("%s %s %q, want a failure saying %q", c.Rule, c.Verdict, c.Evidence, tc.says)
				case c.Rule != tc.rule && c.Verdict == judge.Fail:
					t.Errorf("%s failed: %s", c.Rule, c.Evidence)
				}
			}
			n := 0
			for _, r := range rep.Records {
				if strings.Contains(r.Reason, "HTTP") {
					t.Errorf("a stdio record's reason speaks of HTTP: %q", r.Reason)
				}
				if r.Probe != nil && r.Probe.Kind == string(probe.Notification) {
					n++
					if r.Probe.Answer != tc.answer {
						t.Errorf("notification probe: answer %q, want %q", r.Probe.Answer, tc.answer)
					}
				}
			}
			if n != 1 {
				t.Errorf("%d notification probe records, want 1", n)
			}
			// The same verdicts (the run words the n/a of the HTTP-only
			// rules its own way) and the same evidence of the failure.
			again := map[string]judge.Check{}
			for _, c := range rejudge(t, rep.Records) {
				again[c.Rule] = c
			}
			for _, c := range rep.Checks {
				if a := again[c.Rule]; a.Verdict != c.Verdict || c.Verdict == judge.Fail && a.Evidence != c.Evidence {
					t.Errorf("%s: %s %q in the run, %s %q judged from the records", c.Rule, c.Verdict, c.Evidence, a.Verdict, a.Evidence)
				}
			}
		})
	}
}

// rejudge encodes the records as --record writes them, decodes them and
// judges them again.
func rejudge(t *testing.T, recs []*record.Record) []judge.Check {
	t.Helper()
	var lines [][]byte
	var enc record.Encoder
	for _, r := range recs {
		b, err := enc.Encode(r)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, b)
	}
	return judgeLines(t, lines)
}

// judgeLines decodes record lines (a --record file's) and judges them as
// a probe run.
func judgeLines(t *testing.T, lines [][]byte) []judge.Check {
	t.Helper()
	var recs []*record.Record
	for _, l := range lines {
		r, err := record.Decode(l)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	tr := judge.NewTrace("file", recs, nil)
	tr.Probe = true
	return judge.Judge(tr)
}

// TestProbeStdioNoise: a line on stdout that is not JSON-RPC is a finding
// of probe.answer-shape, with the line in its record.
func TestProbeStdioNoise(t *testing.T) {
	rep := runStdio(t, stdioServer(t), "-noise")
	t.Logf("%s", checks(rep.Checks))
	for _, c := range rep.Checks {
		if c.Rule == "probe.answer-shape" && (c.Verdict != judge.Fail || !strings.Contains(c.Evidence, "MALFORMED_JSON") ||
			!strings.Contains(c.Evidence, `not JSON-RPC on stdout: probe 0: "stdioserver: debug: about to answer"`)) {
			t.Errorf("probe.answer-shape %s: %s, want a MALFORMED_JSON finding", c.Verdict, c.Evidence)
		}
		if c.Rule != "probe.answer-shape" && c.Verdict == judge.Fail {
			t.Errorf("%s failed: %s", c.Rule, c.Evidence)
		}
	}
	found := false
	for _, r := range rep.Records {
		if r.Probe != nil && r.ResponseBody != nil && strings.Contains(r.ResponseBody.Text, "stdioserver: debug: about to answer") {
			found = true
		}
	}
	if !found {
		t.Errorf("no probe record holds the noise line")
	}
}

// TestProbeStdioServerThatDies: a command that exits at once cannot be
// listed; the error says so.
func TestProbeStdioServerThatDies(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := probe.Run(ctx, probe.Options{Command: []string{"sh", "-c", "echo oops >&2; exit 3"}, Timeout: 5 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "initialize") || !strings.Contains(err.Error(), "oops") {
		t.Fatalf("err %v, want the initialize failure with the stderr", err)
	}
}

// TestProbeStdioBanner: a server that prints a banner on stdout before any
// message works with the probe (the probe skips the line), but clients
// that read stdout as JSON-RPC fail on it: the report says so in a listing
// warning (stdout-noise, with the line), where before the line was read and
// said nowhere. A command whose stdout holds only the banner cannot be
// listed, and the error quotes the banner instead of saying only "no answer
// line".
func TestProbeStdioBanner(t *testing.T) {
	const banner = "my-server v2 listening on stdio"
	rep := runStdio(t, stdioServer(t), "-banner", banner)
	if !slices.ContainsFunc(rep.ListingWarnings, func(w string) bool {
		return strings.HasPrefix(w, probe.StdoutNoise+":") && strings.Contains(w, strconv.Quote(banner))
	}) {
		t.Errorf("listing warnings %q, want a %s warning quoting the banner", rep.ListingWarnings, probe.StdoutNoise)
	}
	for _, c := range rep.Checks {
		if c.Verdict == judge.Fail {
			t.Errorf("%s failed: %s", c.Rule, c.Evidence)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := probe.Run(ctx, probe.Options{Command: []string{"sh", "-c", "echo '" + banner + "'; sleep 20"}, Timeout: 500 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "1 line(s) that are not JSON-RPC: "+strconv.Quote(banner)) {
		t.Fatalf("err %v, want the failure to quote the banner", err)
	}
}

// TestProbeStdioLateAnswer: the server answers the first lookup only after
// the probe's limit, so that request is recorded unanswered, and its
// answer comes while the probe waits for the next request's. That late
// line is the earlier request's answer, not a wrong id in the next one's:
// the next request is judged on its own answer, and the late one is said.
// (It was taken as the next request's answer: "INVALID_ENVELOPE: the
// response id 3 does not match the request id 4".)
func TestProbeStdioLateAnswer(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rep, err := probe.Run(ctx, probe.Options{Command: []string{stdioServer(t), "-late", (hangLimit + 2*time.Second).String()}, Protocol: "2025-11-25", Timeout: hangLimit})
	if err != nil {
		t.Fatalf("probe.Run: %v", err)
	}
	late, timedOut := 0, 0
	for i, r := range rep.Records {
		t.Logf("record %d: %s %s id %s: %s %s | %s", i, r.Method, r.Tool, r.JSONRPC.ID, r.Outcome, r.Reason, r.Note)
		if r.Outcome == classify.InvalidEnvelope && strings.Contains(r.Reason, "does not match the request id") {
			t.Errorf("record %d (%s, id %s) took another request's late answer as its own: %s", i, r.Method, r.JSONRPC.ID, r.Reason)
		}
		if r.Network != nil && strings.Contains(r.Reason, "no answer line") {
			timedOut++
		}
		if strings.Contains(r.Note, "a late answer") {
			late++
		}
	}
	if timedOut != 1 || late != 1 {
		t.Errorf("%d request(s) unanswered within the limit and %d late answer(s) said, want 1 and 1", timedOut, late)
	}
	// Every other record is what a server that answers in time gets:
	// the same method, id (with its JSON type) and outcome.
	ontime, err := probe.Run(ctx, probe.Options{Command: []string{stdioServer(t)}, Protocol: "2025-11-25", Timeout: 10 * time.Second})
	if err != nil {
		t.Fatalf("probe.Run: %v", err)
	}
	if len(ontime.Records) != len(rep.Records) {
		t.Fatalf("%d records on time, %d with the late answer", len(ontime.Records), len(rep.Records))
	}
	for i, r := range rep.Records {
		o := ontime.Records[i]
		if r.Network != nil {
			continue
		}
		if r.Method != o.Method || r.JSONRPC.ID.String() != o.JSONRPC.ID.String() || r.Outcome != o.Outcome {
			t.Errorf("record %d: %s id %s %s with the late answer, %s id %s %s on time", i, r.Method, r.JSONRPC.ID, r.Outcome, o.Method, o.JSONRPC.ID, o.Outcome)
		}
	}
}
