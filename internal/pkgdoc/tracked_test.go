package pkgdoc

import (
	"os/exec"
	"path"
	"strings"
	"testing"
)

// TestNoTrackedMachineLocalPath fails when the repository tracks something
// that belongs to one machine: a file under .tools (the test command's
// installs, git-ignored) or a symlink whose target is absolute or leaves the
// repository. 56df3f4 committed a helper's `.tools -> /tmp/alone/fresh/.tools`
// (the ignore rule /.tools/ matched only a directory): in a fresh clone the
// link dangles and the install into .tools/node fails.
func TestNoTrackedMachineLocalPath(t *testing.T) {
	out, err := exec.Command("git", "-C", "../..", "ls-files", "-s", "-z").Output()
	if err != nil {
		t.Skipf("not a git checkout (git ls-files: %v): nothing to check", err)
	}
	n := 0
	for _, e := range strings.Split(string(out), "\x00") {
		if e == "" {
			continue
		}
		n++
		meta, name, ok := strings.Cut(e, "\t")
		if !ok {
			t.Fatalf("git ls-files -s: unexpected entry %q", e)
		}
		if name == ".tools" || strings.HasPrefix(name, ".tools/") {
			t.Errorf("%s is tracked: .tools holds this machine's installs (git-ignored); git rm --cached it", name)
		}
		if !strings.HasPrefix(meta, "120000 ") {
			continue
		}
		fields := strings.Fields(meta)
		target, err := exec.Command("git", "-C", "../..", "cat-file", "blob", fields[1]).Output()
		if err != nil {
			t.Fatalf("reading the symlink %s: %v", name, err)
		}
		to := string(target)
		if path.IsAbs(to) || strings.HasPrefix(path.Clean(path.Join(path.Dir(name), to)), "..") {
			t.Errorf("%s is a tracked symlink to %s, outside the repository", name, to)
		}
	}
	if n < 100 {
		t.Fatalf("git ls-files listed %d files: the listing is wrong", n)
	}
}
