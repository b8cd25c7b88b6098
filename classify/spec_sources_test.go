package classify_test

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"os"
	"regexp"
	"testing"
)

// TestVendoredSpecIsTheNamedCommit holds testdata/spec to its SOURCES file:
// each vendored schema has the git blob id SOURCES names for it, so the
// oracle of the differential test is the official file, byte for byte,
// and an edit to it (or an update that forgets SOURCES) fails here.
func TestVendoredSpecIsTheNamedCommit(t *testing.T) {
	t.Parallel()
	sources, err := os.ReadFile(specPath(t, "SOURCES"))
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile(`(?m)^\s+schema/(\S+)\s+(\S+)\s+([0-9a-f]{40}) \((\d+) bytes`)
	rows := row.FindAllSubmatch(sources, -1)
	if len(rows) != 2 {
		t.Fatalf("SOURCES names %d schema files, want the 2 revisions' schema.json:\n%s", len(rows), sources)
	}
	for _, m := range rows {
		data, err := os.ReadFile(specPath(t, string(m[2])))
		if err != nil {
			t.Fatal(err)
		}
		h := sha1.New()
		fmt.Fprintf(h, "blob %d\x00", len(data))
		h.Write(data)
		if got := hex.EncodeToString(h.Sum(nil)); got != string(m[3]) || fmt.Sprint(len(data)) != string(m[4]) {
			t.Errorf("%s: blob %s, %d bytes; SOURCES says %s, %s bytes (schema/%s)", m[2], got, len(data), m[3], m[4], m[1])
		}
	}
}
