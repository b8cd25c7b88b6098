package record_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/record"
)

// Every flag has a doc; Add keeps the set sorted without repeats; Pending
// is exactly SD or UX.
func TestFlags(t *testing.T) {
	for _, f := range record.AllFlags() {
		if record.FlagDoc(f) == "" {
			t.Errorf("flag %s has no doc", f)
		}
	}
	var fs record.Flags
	fs.Add(record.FlagFI, record.FlagDC, record.FlagFI, "")
	if !slices.Equal(fs, record.Flags{record.FlagDC, record.FlagFI}) {
		t.Errorf("Add: %v, want [DC FI]", fs)
	}
	for _, f := range record.AllFlags() {
		want := f == record.FlagSD || f == record.FlagUX
		if got := (record.Flags{f}).Pending(); got != want {
			t.Errorf("Flags{%s}.Pending() = %v, want %v", f, got, want)
		}
	}
	if (record.Flags{}).Pending() || record.Flags(nil).Pending() {
		t.Error("no flags is pending")
	}
}

// The typed members of version 2 survive the encoder and the reader, and a
// version-2 record is judged by its flags, never by its note.
func TestFactsRoundTrip(t *testing.T) {
	draw := 0.25
	rec := &record.Record{
		Kind: record.KindExchange, Note: "the proxy shut down; sseArrivals=[[1,2]]",
		Flags:       record.Flags{record.FlagFI},
		Fault:       &record.Fault{Selection: "a+b", Endpoint: "/s/a/mcp?password=hunter2", Seed: 1 << 62, Fired: []string{"a"}, Decisions: []record.FaultDecision{{Scenario: "a", Matched: true, N: 1, Fired: true, Why: "always", Draw: &draw, DelayMs: []int64{5}}}, Count: &record.FaultCount{Post: 2}},
		Params:      &record.Params{MetaProtocolVersion: "2026-07-28", RequestState: "sha256:1", InputResponses: []string{"q"}},
		SSEArrivals: []record.Arrival{{End: 120, At: 1500 * time.Microsecond}, {End: 250, At: 3 * time.Millisecond}},
	}
	line, err := record.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"v":2`, `"flags":["FI"]`, `"seed":"4611686018427387904"`, `"sseArrivals":[[120,1.5],[250,3]]`, `"meta":[]`} {
		if !strings.Contains(string(line), want) {
			t.Errorf("line lacks %s:\n%s", want, line)
		}
	}
	if strings.Contains(string(line), "hunter2") {
		t.Errorf("the endpoint's query was not redacted:\n%s", line)
	}
	got, err := record.Decode(line)
	if err != nil {
		t.Fatal(err)
	}
	if got.Flags.Pending() || !slices.Equal(got.Flags, record.Flags{record.FlagFI}) {
		t.Errorf("flags %v: a version-2 note is not read", got.Flags)
	}
	if got.Fault == nil || got.Fault.Seed != 1<<62 || got.Fault.FiredString() != "a" || *got.Fault.Decisions[0].Draw != draw || got.Fault.Count.Post != 2 {
		t.Errorf("fault %+v", got.Fault)
	}
	if got.Params == nil || got.Params.RequestState != "sha256:1" || got.Params.MetaProtocolVersion != "2026-07-28" {
		t.Errorf("params %+v", got.Params)
	}
	if !slices.Equal(got.SSEArrivals, rec.SSEArrivals) {
		t.Errorf("arrivals %v, want %v", got.SSEArrivals, rec.SSEArrivals)
	}
	if got.Note != rec.Note {
		t.Errorf("note %q changed", got.Note)
	}
}

// Version-1 lines are upgraded: the flags their notes said in words, the
// arrivals of a note, and the "serve" member of a server line.
func TestUpgradeV1(t *testing.T) {
	tests := []struct {
		name, line string
		flags      record.Flags
		pending    bool
		check      func(t *testing.T, r *record.Record)
	}{
		{"proxy shutdown", `{"v":1,"kind":"exchange","network":{"error":"the proxy shut down before the response ended","phase":"before-response","requestSent":true}}`,
			record.Flags{record.FlagSD}, true, nil},
		{"proxy shutdown mid-body", `{"v":1,"kind":"exchange","status":200,"note":"the proxy shut down after 12 response bytes; the upstream request was cancelled"}`,
			record.Flags{record.FlagSD}, true, nil},
		{"stdio server exit", `{"v":1,"kind":"exchange","network":{"error":"the server process exited (exit status 3) before responding","phase":"before-response","requestSent":true}}`,
			record.Flags{record.FlagUX}, true, nil},
		{"stdio server ended", `{"v":1,"kind":"exchange","network":{"error":"the server ended: EOF","phase":"before-response","requestSent":true}}`,
			record.Flags{record.FlagUX}, true, nil},
		{"stdio server request", `{"v":1,"kind":"exchange","network":{"error":"the client never answered this server request before the server ended","phase":"before-response","requestSent":true}}`,
			record.Flags{record.FlagUX}, true, nil},
		{"upstream refused", `{"v":1,"kind":"exchange","status":502,"note":"proxy-generated: mcpdiag proxy answered 502 itself because the upstream failed before responding (UF, Proxy-Status error=connection_refused)"}`,
			record.Flags{record.FlagUF}, false, nil},
		{"upstream dropped", `{"v":1,"kind":"exchange","note":"the upstream closed the connection before any response (UC, connection_terminated); the proxy dropped the client's connection the same way"}`,
			record.Flags{record.FlagUC}, false, nil},
		{"reset, client gone, fault", `{"v":1,"kind":"exchange","scenario":"http.reset","note":"upstream reset after the response started (UR): EOF; the client received the cut response (3 bytes); client disconnected (DC) after 3 response bytes; the upstream request was cancelled; fault injected (FI): http.reset (seed 42)"}`,
			record.Flags{record.FlagDC, record.FlagFI, record.FlagUR}, false, func(t *testing.T, r *record.Record) {
				if r.Fault == nil || r.Fault.Seed != 42 || r.Fault.FiredString() != "http.reset" {
					t.Errorf("fault %+v", r.Fault)
				}
			}},
		{"arrivals in the note", `{"v":1,"kind":"exchange","note":"client left; sseArrivals=[[120,1.5],[250,3]]"}`,
			nil, false, func(t *testing.T, r *record.Record) {
				if len(r.SSEArrivals) != 2 || r.SSEArrivals[1].End != 250 || r.Note != "client left" {
					t.Errorf("arrivals %v, note %q", r.SSEArrivals, r.Note)
				}
			}},
		{"arrivals spliced", `{"v":1,"kind":"exchange","sseArrivals":[[7,0.5]]}`,
			nil, false, func(t *testing.T, r *record.Record) {
				if len(r.SSEArrivals) != 1 || r.SSEArrivals[0].At != 500*time.Microsecond {
					t.Errorf("arrivals %v", r.SSEArrivals)
				}
			}},
		{"server line", `{"v":1,"kind":"server","scenario":"http.reset","httpMethod":"POST","note":"connection taken over and closed: no HTTP response; fired: http.reset","serve":{"endpoint":"/s/http.reset/mcp","seed":"18446744073709551615","count":{"post":2,"method":1,"tool":1},"counters":{"posts":2,"methods":{"tools/call":1},"tools":{"echo":1}},"meta":["io.modelcontextprotocol/protocolVersion"],"metaProtocolVersion":"2026-07-28","capabilities":"sha256:ab","requestState":"sha256:1","inputResponses":["q"],"issuedState":"sha256:2","retryAfter":"3","fired":"http.reset","faults":[{"scenario":"http.reset","layer":0,"matched":true,"n":2,"fired":true,"why":"always"}],"hijacked":true}}`,
			record.Flags{record.FlagFI, record.FlagHJ}, false, func(t *testing.T, r *record.Record) {
				f := r.Fault
				if f == nil || f.Seed != 18446744073709551615 || f.Endpoint != "/s/http.reset/mcp" || f.Selection != "http.reset" || f.FiredString() != "http.reset" ||
					f.Count.Post != 2 || f.Counters.Tools["echo"] != 1 || f.IssuedState != "sha256:2" || len(f.Decisions) != 1 || !f.Decisions[0].Fired {
					t.Errorf("fault %+v", f)
				}
				p := r.Params
				if p == nil || p.MetaProtocolVersion != "2026-07-28" || p.Capabilities != "sha256:ab" || p.RequestState != "sha256:1" || !slices.Equal(p.InputResponses, []string{"q"}) {
					t.Errorf("params %+v", p)
				}
				if r.RetryAfter != "3" || r.Kind != record.KindServer {
					t.Errorf("retryAfter %q kind %q", r.RetryAfter, r.Kind)
				}
			}},
		{"aborted server line", `{"v":1,"kind":"server","note":"response aborted mid-body","serve":{"fired":"","faults":[],"aborted":true}}`,
			record.Flags{record.FlagAB}, false, nil},
		{"no version", `{"kind":"exchange","note":"client disconnected (DC) before the response; the upstream request was cancelled"}`,
			record.Flags{record.FlagDC}, false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := record.Decode([]byte(tt.line))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(r.Flags, tt.flags) {
				t.Errorf("flags %v, want %v", r.Flags, tt.flags)
			}
			if r.Flags.Pending() != tt.pending {
				t.Errorf("pending %v, want %v", r.Flags.Pending(), tt.pending)
			}
			if tt.check != nil {
				tt.check(t, r)
			}
			if r.V > 1 {
				t.Errorf("v %d: an upgraded record keeps its version", r.V)
			}
		})
	}
}

// A record of the current version is not upgraded: what its note says in
// words is not a fact.
func TestNoUpgradeV2(t *testing.T) {
	r, err := record.Decode([]byte(`{"v":2,"kind":"exchange","note":"the proxy shut down (DC) (FI) never answered","network":{"error":"the server ended"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Flags) != 0 || r.Fault != nil {
		t.Errorf("flags %v fault %v read from a version-2 note", r.Flags, r.Fault)
	}
}
