package client

import (
	"fmt"
	"os/exec"
	"runtime"
)

// SystemBrowser opens u in the user's browser with the system's opener
// (open on macOS, the URL handler on Windows, xdg-open elsewhere), without
// waiting for it: an AuthOptions.OpenBrowser for AuthorizeBrowser.
func SystemBrowser(u string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", u)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", u)
	default:
		cmd = exec.Command("xdg-open", u)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", cmd.Path, err)
	}
	go func() { _ = cmd.Wait() }()
	return nil
}
