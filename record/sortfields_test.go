package record

import (
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// readHeadersSortFunc is readHeaders as it was before sortFields: every
// record's fields sorted by slices.SortFunc (BenchmarkReadHeaders' A).
func readHeadersSortFunc(fs []headerField, h http.Header) []headerField {
	start := len(fs)
	for name, vs := range h {
		fs = append(fs, headerField{name: name, rule: classifyHeader(name), values: vs})
	}
	slices.SortFunc(fs[start:], func(a, b headerField) int { return strings.Compare(a.name, b.name) })
	return fs
}

// TestSortFields: sortFields orders header fields by name as
// slices.SortFunc does, for 0 to 20 fields (both of its ways), names in
// any case, sharing prefixes, and already in order or reversed.
func TestSortFields(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pool := []string{"Accept", "Accept-Encoding", "Authorization", "Content-Length", "Content-Type", "Date",
		"Mcp-Session-Id", "Mcp-Protocol-Version", "User-Agent", "X-Api-Key", "X-a", "X-A", "x", "", "Ü", "Traceparent",
		"Tracestate", "Cookie", "Set-Cookie", "Server", "Via", "Vary", "Etag", "Age"}
	for n := 0; n <= 20; n++ {
		for round := range 50 {
			h := http.Header{}
			for _, i := range rng.Perm(len(pool))[:n] {
				h[pool[i]] = []string{pool[i]}
			}
			got := readHeaders([]headerField{{name: "kept"}}, h)
			want := readHeadersSortFunc([]headerField{{name: "kept"}}, h)
			if round == 0 && n > 1 {
				// In order already, and reversed.
				slices.SortFunc(got[1:], func(a, b headerField) int { return strings.Compare(a.name, b.name) })
				slices.Reverse(got[1:])
				sortFields(got[1:])
			}
			if len(got) != len(want) || got[0].name != "kept" {
				t.Fatalf("%d fields: %d read, want %d after the one kept", n, len(got)-1, n)
			}
			for i := range got {
				if got[i].name != want[i].name || got[i].rule != want[i].rule || !slices.Equal(got[i].values, want[i].values) {
					t.Fatalf("%d fields: field %d is %q, want %q (all: %v)", n, i, got[i].name, want[i].name, names(got))
				}
			}
		}
	}
}

func names(fs []headerField) []string {
	var s []string
	for _, f := range fs {
		s = append(s, f.name)
	}
	return s
}

// BenchmarkReadHeaders: the proxy's JSON record's two header maps read by
// readHeaders, and by readHeadersSortFunc (as before sortFields) in the
// same loop ("ab": the two alternate under one CPU profile, which gives
// each its share, as docs/benchmarks.md record2 compares code).
func BenchmarkReadHeaders(b *testing.B) {
	rec := benchProxyJSONRecord()
	var req, resp []headerField
	run := func(name string, read func([]headerField, http.Header) []headerField) {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				req = read(req[:0], rec.RequestHeaders)
				resp = read(resp[:0], rec.ResponseHeaders)
			}
		})
	}
	run("insertion", readHeaders)
	run("sortfunc", readHeadersSortFunc)
	b.Run("ab", func(b *testing.B) {
		for b.Loop() {
			req = readHeaders(req[:0], rec.RequestHeaders)
			resp = readHeaders(resp[:0], rec.ResponseHeaders)
			req = readHeadersSortFunc(req[:0], rec.RequestHeaders)
			resp = readHeadersSortFunc(resp[:0], rec.ResponseHeaders)
		}
	})
}
