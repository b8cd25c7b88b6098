package matrix

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// CheckCommand checks that a client command (Options.Command) can be run
// before any scenario does: a program named by a path must exist, a bare
// name must be on $PATH. Run checks it too.
func CheckCommand(command []string) error {
	if len(command) == 0 {
		return errors.New("an empty command")
	}
	name := command[0]
	if strings.ContainsRune(name, os.PathSeparator) {
		if _, err := os.Stat(name); err != nil {
			return fmt.Errorf("client command: %v", err)
		}
		return nil
	}
	if _, err := exec.LookPath(name); err != nil {
		return fmt.Errorf("client command %q: %v", name, err)
	}
	return nil
}
