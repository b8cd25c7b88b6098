package probe_test

import (
	"os"
	"testing"

	"github.com/mcpdiag/mcpdiag/internal/testbin"
)

// TestMain removes the test programs testbin built.
func TestMain(m *testing.M) {
	code := m.Run()
	testbin.Clean()
	os.Exit(code)
}
