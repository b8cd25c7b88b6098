package matrix

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunRefusesAMissingCommand: a client command that cannot be found is
// refused before the fault server starts or any scenario runs, naming it.
func TestRunRefusesAMissingCommand(t *testing.T) {
	for _, name := range []string{"mcpdiag-no-such-client", filepath.Join(t.TempDir(), "missing-client")} {
		rep, err := Run(context.Background(), Options{Command: []string{name, "--flag"}})
		if rep != nil || err == nil || !strings.Contains(err.Error(), "client command") || !strings.Contains(err.Error(), filepath.Base(name)) {
			t.Errorf("Run with %s: %v, %v; want no report and an error naming the command", name, rep, err)
		}
	}
}
