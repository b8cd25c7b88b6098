package report

import (
	"bytes"
	"maps"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/record"
)

// TestOlderHTTPSuccessRejudged: testdata/pre-15d740b.jsonl is what
// `mcpdiag proxy` built at 15d740b^ recorded in front of the fixture server
// for a 2025-11-25 session (curl): initialize, notifications/initialized,
// tools/list, the standalone GET event stream and the session DELETE. That
// version recorded the GET and the DELETE RESULT_SUCCESS in the application
// layer; the report counts them as this version records them, HTTP_SUCCESS
// in the transport layer, and says that it did. The POSTs of JSON-RPC
// methods keep their RESULT_SUCCESS, and so do a stdio record and a
// client's record.
func TestOlderHTTPSuccessRejudged(t *testing.T) {
	f, err := os.Open("testdata/pre-15d740b.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	acc := New(Options{})
	if _, err := ReadFile(f, "pre-15d740b.jsonl", func(b BadLine) { t.Errorf("bad line %s", b) }, acc); err != nil {
		t.Fatal(err)
	}
	// Records this version writes with RESULT_SUCCESS: a stdio exchange
	// (no HTTP method) and a POST of a JSON-RPC method.
	acc.Add(&record.Record{Kind: record.KindExchange, ID: "STDIO", Method: "tools/list", Outcome: classify.ResultSuccess, Layer: classify.LayerApplication})
	acc.Add(&record.Record{Kind: record.KindExchange, ID: "POST", HTTPMethod: "POST", Method: "prompts/list", Outcome: classify.ResultSuccess, Layer: classify.LayerApplication})
	s := acc.Summary()
	ex := s.Exchanges
	got := map[string]int64{}
	for _, c := range ex.ByOutcome {
		got[c.Outcome] = c.Count
	}
	if s.Rejudged != 2 || got["HTTP_SUCCESS"] != 2 || got["RESULT_SUCCESS"] != 4 || got["NOTIFICATION_ACCEPTED"] != 1 ||
		ex.ByLayer["transport"] != 3 || ex.ByLayer["application"] != 4 || ex.Failures != 0 {
		t.Errorf("rejudged %d, outcomes %v, layers %v, %d failed; want 2 rejudged, HTTP_SUCCESS 2, RESULT_SUCCESS 4, NOTIFICATION_ACCEPTED 1, transport 3, application 4, 0 failed",
			s.Rejudged, got, ex.ByLayer, ex.Failures)
	}
	var out bytes.Buffer
	if err := NewTextReporter(s).Report(&out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "2 exchange records of an older mcpdiag (before 2026-12-06) said RESULT_SUCCESS (application layer) for an exchange that is not a JSON-RPC request") {
		t.Errorf("the report does not say it re-judged older records:\n%s", out.String())
	}
}

// TestNoMethodName: the records without a JSON-RPC method (here the GET
// stream and the session DELETE of testdata/pre-15d740b.jsonl) are named
// "[no JSON-RPC method]" in the text report, not "[unknown method]": their
// exchanges carried none, and nothing failed to be read.
func TestNoMethodName(t *testing.T) {
	f, err := os.Open("testdata/pre-15d740b.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	acc := New(Options{})
	if _, err := ReadFile(f, "pre-15d740b.jsonl", func(b BadLine) { t.Errorf("bad line %s", b) }, acc); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := NewTextReporter(acc.Summary()).Report(&out); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	if !regexp.MustCompile(`\n +\[no JSON-RPC method\] +2 +0 `).MatchString(text) || strings.Contains(text, "unknown method") {
		t.Errorf("the by-tool row of the GET and the DELETE:\n%s", text)
	}
}

// TestClientAnswerNotRejudged: testdata/inspector-clientanswer.jsonl is what
// `mcpdiag proxy` recorded today in front of server-everything
// (streamableHttp) for the Inspector CLI 2.12.0 calling echo: among its
// records, the client's answer to a server request the proxy did not see
// (clientAnswer, a POST with no method, 202, RESULT_SUCCESS). The report
// counted it as a record "of an older mcpdiag" and re-judged it
// HTTP_SUCCESS, so its summary disagreed with the records of the version
// that wrote them; every outcome and layer is now counted as recorded.
func TestClientAnswerNotRejudged(t *testing.T) {
	f, err := os.Open("testdata/inspector-clientanswer.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	acc, col := New(Options{}), &collected{}
	if _, err := ReadFile(f, "inspector-clientanswer.jsonl", func(b BadLine) { t.Errorf("bad line %s", b) }, acc, col); err != nil {
		t.Fatal(err)
	}
	recs := col.recs
	answers := 0
	wantOutcomes, wantLayers := map[string]int64{}, map[string]int64{}
	for _, r := range recs {
		wantOutcomes[string(r.Outcome)]++
		wantLayers[string(r.Layer)]++
		if r.ClientAnswer && r.Method == "" && r.HTTPMethod == "POST" && r.Outcome == classify.ResultSuccess {
			answers++
		}
	}
	if answers != 1 {
		t.Fatalf("the testdata holds %d unpaired client answers recorded RESULT_SUCCESS, want 1", answers)
	}
	s := acc.Summary()
	got := map[string]int64{}
	for _, c := range s.Exchanges.ByOutcome {
		got[c.Outcome] = c.Count
	}
	if s.Rejudged != 0 || !maps.Equal(got, wantOutcomes) || !maps.Equal(s.Exchanges.ByLayer, wantLayers) {
		t.Errorf("rejudged %d, outcomes %v, layers %v; want 0 rejudged and the records' own %v, %v", s.Rejudged, got, s.Exchanges.ByLayer, wantOutcomes, wantLayers)
	}
	var out bytes.Buffer
	if err := NewTextReporter(s).Report(&out); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "older mcpdiag") {
		t.Errorf("the report calls a record of this version older:\n%s", out.String())
	}
}

// collected keeps a copy of every record it is given.
type collected struct{ recs []*record.Record }

func (c *collected) Add(r *record.Record) {
	cp := *r
	c.recs = append(c.recs, &cp)
}
