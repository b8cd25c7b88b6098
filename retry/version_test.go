package retry_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/retry"
)

func TestPickVersion(t *testing.T) {
	for _, tc := range []struct {
		supported, client []string
		want              string
		ok                bool
	}{
		{[]string{"2026-07-28", "2025-11-25"}, retry.ClientVersions, "2026-07-28", true},
		{[]string{"2025-11-25", "2026-07-28"}, retry.ClientVersions, "2026-07-28", true}, // order of the server's list does not matter
		{[]string{"2025-11-25", "2024-11-05"}, retry.ClientVersions, "2025-11-25", true},
		{[]string{"2025-11-25"}, []string{"2025-11-25", "2026-07-28"}, "2025-11-25", true}, // nor the client's
		{[]string{"2024-11-05", "2025-03-26"}, retry.ClientVersions, "", false},
		{nil, retry.ClientVersions, "", false},
		{[]string{"2026-07-28"}, nil, "", false},
	} {
		got, ok := retry.PickVersion(tc.supported, tc.client)
		if got != tc.want || ok != tc.ok {
			t.Errorf("PickVersion(%v, %v) = %q, %v; want %q, %v", tc.supported, tc.client, got, ok, tc.want, tc.ok)
		}
	}
}

func TestUnsupportedVersion(t *testing.T) {
	r := withRPC(httpErr(400), -32022, "Unsupported protocol version", `{"supported":["2026-07-28", 7, "", "2025-11-25"],"requested":"1900-01-01"}`)
	supported, requested, ok := retry.UnsupportedVersion(r)
	if !ok || !slices.Equal(supported, []string{"2026-07-28", "2025-11-25"}) || requested != "1900-01-01" {
		t.Errorf("got %v %q %v", supported, requested, ok)
	}
	for _, data := range []string{"", `[]`, `{"supported":[]}`, `{"supported":"2026-07-28"}`, `not json`} {
		r := withRPC(httpErr(400), -32022, "x", data)
		if _, _, ok := retry.UnsupportedVersion(r); ok {
			t.Errorf("data %q: ok", data)
		}
	}
	if _, _, ok := retry.UnsupportedVersion(nil); ok {
		t.Error("nil result: ok")
	}
}

// TestRenegotiate follows -32022 from the server's list to the decision.
func TestRenegotiate(t *testing.T) {
	p := retry.DefaultPolicy()
	for _, tc := range []struct {
		name  string
		data  string
		facts retry.Facts
		want  want
	}{
		{"falls back to 2025-11-25", `{"supported":["2025-11-25","2024-11-05"],"requested":"2026-07-28"}`, retry.Facts{},
			want{action: retry.Renegotiate, version: "2025-11-25", reason: "(2025-11-25 starts with initialize)"}},
		{"requested version is never picked again", `{"supported":["2026-07-28","2025-11-25"],"requested":"2026-07-28"}`, retry.Facts{},
			want{action: retry.Renegotiate, version: "2025-11-25"}},
		{"requested defaults to the request's protocol", `{"supported":["2026-07-28","2025-11-25"]}`, retry.Facts{},
			want{action: retry.Renegotiate, version: "2025-11-25", reason: "refused 2026-07-28"}},
		{"an unknown requested version keeps the newest", `{"supported":["2026-07-28","2025-11-25"],"requested":"1900-01-01"}`, retry.Facts{},
			want{action: retry.Renegotiate, version: "2026-07-28"}},
		{"nothing in common", `{"supported":["2024-11-05"],"requested":"2026-07-28"}`, retry.Facts{},
			want{action: retry.Fail, reason: "no version in common: the server supports 2024-11-05, the client speaks 2026-07-28, 2025-11-25"}},
		{"client pinned to one version", `{"supported":["2025-11-25"]}`, retry.Facts{Versions: []string{"2026-07-28"}},
			want{action: retry.Fail, reason: "no version in common"}},
		{"already renegotiated", `{"supported":["2025-11-25"]}`, retry.Facts{Renegotiations: 1},
			want{action: retry.Fail, reason: "renegotiate was already tried 1 time (limit 1)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := withRPC(httpErr(400), -32022, "Unsupported protocol version", tc.data)
			check(t, p.Decide(r, tc.facts), tc.want)
		})
	}
}

// TestRenegotiateThenCount shows the loop: Count moves the facts to the new
// version, so a second refusal is judged in that era.
func TestRenegotiateThenCount(t *testing.T) {
	p := retry.DefaultPolicy()
	var f retry.Facts
	d := p.Decide(withRPC(httpErr(400), -32022, "no", `{"supported":["2025-11-25"]}`), f)
	f.Count(d)
	if f.Protocol != classify.Protocol2025 || f.Renegotiations != 1 {
		t.Fatalf("facts after %s: %+v", d, f)
	}
	f.SessionHeld = true
	if d := p.Decide(httpErr(404), f); d.Action != retry.Reinitialize || !strings.Contains(d.Reason, "2025-11-25 session") {
		t.Errorf("404 after renegotiating to 2025-11-25: %s", d)
	}
}
