package browser

import (
	"errors"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestProjectInstall checks the default path: Need returns the wrapper of
// the chromium unpacked into .tools/chromium (not a system browser), the
// stamp names the pinned version, the browser starts and says that
// version, and a second install does nothing.
func TestProjectInstall(t *testing.T) {
	if p := os.Getenv("MCPDIAG_CHROMIUM"); p != "" {
		t.Skipf("PROJECT INSTALL NOT TESTED: MCPDIAG_CHROMIUM=%s chooses another browser", p)
	}
	bin := Need(t)
	r, err := root()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(r, ".tools", "chromium")
	if want := filepath.Join(dir, "chromium"); bin != want {
		t.Fatalf("Need = %s, want the project's %s", bin, want)
	}
	stamp, err := os.ReadFile(filepath.Join(dir, "stamp"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(stamp), "\n")
	if len(lines) < 2 || lines[0] != "chromium "+Version() || !strings.HasPrefix(lines[1], "installed ") {
		t.Fatalf("stamp starts %q, want chromium %s and the installed version", lines, Version())
	}
	installed := strings.TrimPrefix(lines[1], "installed ")
	out, err := exec.Command(bin, "--headless", "--no-sandbox", "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("%s --version: %v\n%s", bin, err, out)
	}
	upstream, _, _ := strings.Cut(installed, "-")
	if !strings.Contains(string(out), "Chromium "+upstream) {
		t.Fatalf("%s --version = %q, want Chromium %s", bin, out, upstream)
	}
	t.Logf("%s: %s", bin, strings.TrimSpace(string(out)))

	log := filepath.Join(dir, "install.log")
	before, err := os.Stat(log)
	if err != nil {
		t.Fatal(err)
	}
	again, err := projectInstall()
	if err != nil || again != bin {
		t.Fatalf("second projectInstall = %q, %v; want %q", again, err, bin)
	}
	after, err := os.Stat(log)
	if err != nil {
		t.Fatal(err)
	}
	if !after.ModTime().Equal(before.ModTime()) || after.Size() != before.Size() {
		t.Fatalf("the second install ran again (its log was rewritten)")
	}
}

// TestOpenPage opens a file page in the browser Need gives and reads its
// DOM.
func TestOpenPage(t *testing.T) {
	page := filepath.Join(t.TempDir(), "p.html")
	if err := os.WriteFile(page, []byte(`<!doctype html><title>t</title><body data-ready="true"><p id="x">hello</p></body>`), 0o644); err != nil {
		t.Fatal(err)
	}
	p := Open(t, (&url.URL{Scheme: "file", Path: page}).String())
	if got := Eval[string](t, p, `document.getElementById("x").textContent`); got != "hello" {
		t.Fatalf("text = %q, want hello", got)
	}
	if c := p.Console(); len(c) != 0 {
		t.Fatalf("console: %q", c)
	}
}

func TestSimulatedInstalls(t *testing.T) {
	out := []byte(`NOTE: This is only a simulation!
Reading package lists...
The following NEW packages will be installed:
  chromium chromium-common libopus0
Inst chromium [148.0.7778.167-1~deb12u1] (156.0.8078.114-1~deb12u1 Debian-Security:12/oldstable-security [amd64]) []
Inst libopus0 (1.3.1-3 Debian:12.11/oldstable [amd64])
Inst libfoo:i386 (2.0-1 Debian:12.11/oldstable [i386])
Conf libopus0 (1.3.1-3 Debian:12.11/oldstable [amd64])
`)
	got := simulatedInstalls(out)
	want := []string{"chromium=156.0.8078.114-1~deb12u1", "libopus0=1.3.1-3", "libfoo:i386=2.0-1"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("simulatedInstalls = %q, want %q", got, want)
	}
}

func TestMadison(t *testing.T) {
	out := []byte("  chromium | 156.0.8078.114-1~deb12u1 | http://deb.debian.org/debian-security bookworm-security/main amd64 Packages\n" +
		"  chromium | 150.0.7871.100-1~deb12u1 | http://deb.debian.org/debian bookworm/main amd64 Packages\n")
	if got, want := madison(out), []string{"156.0.8078.114-1~deb12u1", "150.0.7871.100-1~deb12u1"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("madison = %q, want %q", got, want)
	}
}

// TestInstallFailureNamesStep: a version Debian does not have fails at the
// package lists step, in one line naming the step and the log, and leaves
// no stamp.
func TestInstallFailureNamesStep(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: this test runs apt-get update into a temporary folder")
	}
	in := &installer{dir: filepath.Join(t.TempDir(), "chromium"), pin: "1.0-not-in-debian", strict: true, version: "1.0-not-in-debian"}
	err := in.install()
	var se *StepError
	if !errors.As(err, &se) || se.Step != "package lists" {
		t.Fatalf("install = %v, want a StepError at step \"package lists\"", err)
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") || !strings.Contains(msg, in.logPath()) || !strings.Contains(msg, "chromium.version") {
		t.Fatalf("error is not one line naming the log and the pin file: %q", msg)
	}
	if b, rerr := os.ReadFile(in.logPath()); rerr != nil || !strings.Contains(string(b), "apt-get") {
		t.Fatalf("log %s: %v %q", in.logPath(), rerr, b)
	}
	if _, serr := os.Stat(in.stamp()); serr == nil {
		t.Fatalf("a failed install left a stamp")
	}
	t.Log(msg)
}

// TestChooseVersion: the pin wins while Debian has it; a pin from
// chromium.version that Debian dropped falls back to the newest version
// with a note naming both; an explicit MCPDIAG_CHROMIUM_VERSION never does.
func TestChooseVersion(t *testing.T) {
	newer := []string{"157.0.1-1~deb12u1", "156.0.8078.114-1~deb12u1"}
	for _, c := range []struct {
		name, pin string
		strict    bool
		available []string
		want      string
		note, err bool
	}{
		{"pin present", "156.0.8078.114-1~deb12u1", false, newer, "156.0.8078.114-1~deb12u1", false, false},
		{"pin gone", "155.0-1", false, newer, "157.0.1-1~deb12u1", true, false},
		{"explicit pin gone", "155.0-1", true, newer, "", false, true},
		{"explicit pin present", "156.0.8078.114-1~deb12u1", true, newer, "156.0.8078.114-1~deb12u1", false, false},
		{"no chromium at all", "155.0-1", false, nil, "", false, true},
	} {
		got, note, err := chooseVersion(c.pin, c.strict, c.available)
		if got != c.want || (note != "") != c.note || (err != nil) != c.err {
			t.Errorf("%s: chooseVersion = %q, note %q, err %v; want %q, note %v, err %v", c.name, got, note, err, c.want, c.note, c.err)
		}
		if c.note && (!strings.Contains(note, c.pin) || !strings.Contains(note, c.want) || !strings.Contains(note, "chromium.version")) {
			t.Errorf("%s: note %q does not name the pin, the version installed and the pin file", c.name, note)
		}
		if err != nil && (strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), c.pin)) {
			t.Errorf("%s: error %q is not one line naming the pin", c.name, err)
		}
	}
}
