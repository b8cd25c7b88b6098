package faults_test

import (
	"bytes"
	"flag"
	"os"
	"testing"

	"github.com/mcpdiag/mcpdiag/faults"
)

var update = flag.Bool("update", false, "rewrite generated files (docs/scenarios.md)")

const scenariosDoc = "../docs/scenarios.md"

// TestScenariosDoc checks that docs/scenarios.md is what the catalogue
// generates; -update rewrites it.
func TestScenariosDoc(t *testing.T) {
	var b bytes.Buffer
	if err := faults.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(scenariosDoc, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(scenariosDoc)
	if err != nil {
		t.Fatalf("%v (run go test ./faults -run TestScenariosDoc -update)", err)
	}
	if !bytes.Equal(got, b.Bytes()) {
		t.Errorf("%s is out of date: run go test ./faults -run TestScenariosDoc -update", scenariosDoc)
	}
}
