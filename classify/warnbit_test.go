package classify

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/mcpdiag/mcpdiag/wire"
)

// legacyResult classifies the article's legacy response (a 2026-07-28
// tools/call result without resultType).
func legacyResult(t *testing.T) *Result {
	t.Helper()
	ex := &Exchange{ID: wire.IntID(1), Status: 200, Header: http.Header{"Content-Type": {"application/json"}}, BodyBytes: []byte(benchBodies[4])}
	r, err := (&Classifier{}).Classify(ex)
	if err != nil || r.Outcome != ToolSuccess {
		t.Fatalf("legacy: %s, %v", r.Outcome, err)
	}
	return r
}

// warningCodes returns r's warnings' codes through Warning.
func warningCodes(r *Result) []string {
	var codes []string
	for i := range r.NumWarnings() {
		codes = append(codes, r.Warning(i).Code)
	}
	return codes
}

// TestLegacyWarningInsideResult: a legacy result's missing-result-type
// warning is kept inside the Result (no extra evidence), read back by
// value without an allocation, and Warnings' slice is a copy whose change
// leaves the Result as it was. Before legacy18 the warning lived in extra
// (the verdict 192 bytes, TestSmallResponseAllocs).
func TestLegacyWarningInsideResult(t *testing.T) {
	r := legacyResult(t)
	if r.extra != nil {
		t.Errorf("the legacy verdict has extra evidence: %+v", *r.extra)
	}
	if r.NumWarnings() != 1 || r.Warning(0) != warnNoResultType || !r.HasWarning(WarnMissingResultType) {
		t.Fatalf("warnings %d: %+v", r.NumWarnings(), r.Warnings())
	}
	if Rule(r.Warning(0).Code) != r.Warning(0).Rule {
		t.Errorf("rule %q, want %q", r.Warning(0).Rule, Rule(r.Warning(0).Code))
	}
	var sink Warning
	if n := testing.AllocsPerRun(100, func() {
		for i := range r.NumWarnings() {
			sink = r.Warning(i)
		}
		_ = r.HasWarning(WarnMissingResultType)
	}); n != 0 {
		t.Errorf("reading the warnings: %v allocations, want 0", n)
	}
	_ = sink
	w := r.Warnings()
	w[0].Message = "changed"
	if r.Warning(0).Message != warnNoResultType.Message || warnNoResultType.Message == "changed" {
		t.Errorf("changing Warnings' slice changed the Result or the constant: %q", r.Warning(0).Message)
	}
	defer func() {
		if recover() == nil {
			t.Error("Warning(1) of a Result with one warning did not panic")
		}
	}()
	_ = r.Warning(1)
}

// TestWarningOrderWithAppended: warnings a caller appends after the one
// kept inside the Result (as client/setup.go does, by SetWarnings(append(
// Warnings(), w))) come after it, in the order appended, through every
// reader and in the JSON; SetWarnings replaces all of them (the kept one
// too); a setter on a copy leaves the original as it was.
func TestWarningOrderWithAppended(t *testing.T) {
	r := legacyResult(t)
	a := Warning{Code: "cursor-loop", Message: "a", Rule: "ra"}
	b := Warning{Code: "pagination-cut", Message: "b", Rule: "rb"}
	orig := *r
	r.SetWarnings(append(r.Warnings(), a))
	r.SetWarnings(append(r.Warnings(), b))
	want := []string{WarnMissingResultType, "cursor-loop", "pagination-cut"}
	if got := warningCodes(r); !slices.Equal(got, want) {
		t.Errorf("Warning: %v, want %v", got, want)
	}
	if got := r.Warnings(); len(got) != 3 || got[0] != warnNoResultType || got[1] != a || got[2] != b {
		t.Errorf("Warnings: %+v", got)
	}
	var j struct{ Warnings []Warning }
	raw, _ := json.Marshal(r)
	if err := json.Unmarshal(raw, &j); err != nil || len(j.Warnings) != 3 || j.Warnings[0] != warnNoResultType || j.Warnings[1] != a || j.Warnings[2] != b {
		t.Errorf("JSON warnings %+v (%v)", j.Warnings, err)
	}
	if got := warningCodes(&orig); !slices.Equal(got, []string{WarnMissingResultType}) {
		t.Errorf("the copy made before has %v", got)
	}
	// A copy keeps the warnings; its setter does not change r.
	cp := *r
	cp.SetWarnings([]Warning{b})
	if got := warningCodes(&cp); !slices.Equal(got, []string{"pagination-cut"}) {
		t.Errorf("SetWarnings on the copy: %v", got)
	}
	if got := warningCodes(r); !slices.Equal(got, want) {
		t.Errorf("the original after its copy's SetWarnings: %v, want %v", got, want)
	}
	r.SetWarnings(nil)
	if r.NumWarnings() != 0 || len(r.Warnings()) != 0 || r.HasWarning(WarnMissingResultType) {
		t.Errorf("after SetWarnings(nil): %+v", r.Warnings())
	}
	// A Result with no extra evidence: SetWarnings(nil) clears the kept one.
	r = legacyResult(t)
	r.SetWarnings(nil)
	if r.NumWarnings() != 0 || r.Warnings() != nil {
		t.Errorf("after SetWarnings(nil) on the verdict: %+v", r.Warnings())
	}
}

// TestWarningAfterAnother: the missing-result-type warning found after
// another is kept after it (in extra), and one found first is kept first
// with the later ones after it, as the general path finds them.
func TestWarningAfterAnother(t *testing.T) {
	for _, tc := range []struct {
		name, header, body string
		id                 wire.ID
		want               []string
	}{
		{"no content type first", "", benchBodies[4], wire.IntID(1), []string{WarnMissingContentType, WarnMissingResultType}},
		{"no id first", "application/json", benchBodies[4], wire.ID{}, []string{WarnIDNotChecked, WarnMissingResultType}},
		{"unknown block after", "application/json", `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"hologram"}]}}`, wire.IntID(1), []string{WarnMissingResultType, WarnUnknownContentBlock}},
	} {
		ex := &Exchange{ID: tc.id, Status: 200, Header: http.Header{}, BodyBytes: []byte(tc.body)}
		if tc.header != "" {
			ex.Header.Set("Content-Type", tc.header)
		}
		r, _ := (&Classifier{}).Classify(ex)
		if got := warningCodes(r); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
		checkWarningReaders(t, r)
	}
}
