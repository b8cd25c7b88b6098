package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/ui"
)

// embedded returns the records a static page carries as data.
func embedded(t *testing.T, page []byte) []*record.Record {
	t.Helper()
	open := []byte(`<script id="` + ui.RecordsElementID + `" type="application/x-ndjson">`)
	i := bytes.Index(page, open)
	if i < 0 {
		t.Fatal("the page has no records element")
	}
	data := page[i+len(open):]
	end := bytes.Index(data, []byte("</script>"))
	if end < 0 {
		t.Fatal("the records element is not closed")
	}
	var out []*record.Record
	for rec, err := range record.NewReader(bytes.NewReader(data[:end])).All() {
		if err != nil {
			t.Fatalf("embedded record: %v", err)
		}
		out = append(out, rec)
	}
	return out
}

func TestReportHTML(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join("..", "..", "ui", "testdata", "records.jsonl")
	want, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	var wantIDs []string
	for rec, err := range record.NewReader(bytes.NewReader(want)).All() {
		if err != nil {
			t.Fatal(err)
		}
		wantIDs = append(wantIDs, rec.ID)
	}
	out := filepath.Join(dir, "report.html")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"report", "--html", out, in}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "85 records") {
		t.Errorf("the text report is still printed; got %q", stdout.String())
	}
	page, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got := embedded(t, page)
	if len(got) != len(wantIDs) {
		t.Fatalf("the page embeds %d records, the input has %d", len(got), len(wantIDs))
	}
	for i, r := range got {
		if r.ID != wantIDs[i] {
			t.Errorf("record %d: id %s, want %s", i, r.ID, wantIDs[i])
		}
	}
	for _, banned := range []string{"http://", "https://", "<link", " src="} {
		// The records hold http:// URLs, escaped as data; the markup and
		// the module must fetch nothing.
		head, _, _ := bytes.Cut(page, []byte(`<script id="`+ui.RecordsElementID))
		if bytes.Contains(head, []byte(banned)) {
			t.Errorf("the page's markup holds %q", banned)
		}
	}

	t.Run("bad input", func(t *testing.T) {
		old := filepath.Join(dir, "old.html")
		if err := os.WriteFile(old, []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
		notRecords := writeFile(t, dir, "passwd", []byte("root:x:0:0:root:/root:/bin/bash\n"))
		cases := []struct {
			name string
			args []string
			err  string
		}{
			{"not a record file", []string{"report", "--html", old, notRecords}, "mcpdiag: " + notRecords + ": not a record file"},
			{"over an input", []string{"report", "--html", in, in}, "mcpdiag: --html " + in + " would overwrite an input"},
			{"same file as --har", []string{"report", "--html", old, "--har", old, in}, "mcpdiag: --har and --html name the same file"},
			{"missing directory", []string{"report", "--html", filepath.Join(dir, "no", "x.html"), in}, "mcpdiag: --html: "},
		}
		for _, c := range cases {
			checkUsageError(t, c.name, c.args, c.err)
		}
		if b, _ := os.ReadFile(old); string(b) != "old" {
			t.Errorf("a failed run replaced the old page: %q", b)
		}
		if b, _ := os.ReadFile(in); !bytes.Equal(b, want) {
			t.Error("the input was changed")
		}
	})
}
