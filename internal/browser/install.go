package browser

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
)

// pinnedVersion is the version of Debian's chromium package the tests
// install (chromium.version beside this file; MCPDIAG_CHROMIUM_VERSION
// overrides it).
//
//go:embed chromium.version
var pinnedVersion string

// Version returns the Debian version of the chromium package that Need
// asks for: MCPDIAG_CHROMIUM_VERSION, else the pin in chromium.version.
func Version() string {
	v, _ := versionAsked()
	return v
}

// versionAsked returns the version asked for and whether it was asked
// explicitly (MCPDIAG_CHROMIUM_VERSION), which makes it strict.
func versionAsked() (string, bool) {
	if v := strings.TrimSpace(os.Getenv("MCPDIAG_CHROMIUM_VERSION")); v != "" {
		return v, true
	}
	return strings.TrimSpace(pinnedVersion), false
}

// chooseVersion picks the chromium version to install from the versions
// Debian's lists offer (newest first, as apt-cache madison prints them).
// The pin wins when Debian still has it. Debian's archive keeps only the
// current chromium (each security update replaces the last), so a pin from
// chromium.version that is gone falls back to the newest one offered, with
// a note, rather than failing every clone made after the next update; a
// version asked for explicitly (strict) is never replaced.
func chooseVersion(pin string, strict bool, available []string) (version, note string, err error) {
	for _, v := range available {
		if v == pin {
			return pin, "", nil
		}
	}
	if strict || len(available) == 0 {
		have := "none"
		if len(available) > 0 {
			have = strings.Join(available, ", ")
		}
		return "", "", fmt.Errorf("chromium %s is not in Debian's package lists (they have: %s): write one of those into internal/browser/chromium.version, or set MCPDIAG_CHROMIUM_VERSION", pin, have)
	}
	return available[0], fmt.Sprintf("chromium %s (internal/browser/chromium.version) is no longer in Debian's package lists; installing %s, the newest they have, instead: write it into chromium.version to pin it", pin, available[0]), nil
}

// StepError is a failed step of the project install of Chromium: which
// step, what it ran, and where its log is.
type StepError struct {
	Step    string // "tools", "clean", "package lists", "resolve", "download", "unpack", "check", "stamp"
	Version string // the chromium version being installed
	Log     string // the install log
	Err     error
}

func (e *StepError) Error() string {
	return fmt.Sprintf("installing Debian's chromium %s into .tools/chromium failed at step %q: %v (the log is %s)", e.Version, e.Step, e.Err, e.Log)
}

func (e *StepError) Unwrap() error { return e.Err }

// installer installs Debian's chromium and the packages it needs that this
// machine lacks into dir (.tools/chromium), without root: apt-get download
// and dpkg -x, never dpkg -i.
type installer struct {
	dir     string   // .tools/chromium
	pin     string   // the chromium version asked for (the stamp is keyed on it)
	strict  bool     // the pin was asked for explicitly: never install another version
	version string   // the chromium version to install: the pin, or what chooseVersion fell back to
	aptOpts []string // -o options pointing apt at the project's package lists, when used
	log     bytes.Buffer
}

// wrapper is the script Need returns: it runs the unpacked browser with
// the unpacked libraries first on the library path.
func (in *installer) wrapper() string { return filepath.Join(in.dir, "chromium") }
func (in *installer) stamp() string   { return filepath.Join(in.dir, "stamp") }

// projectInstall returns the wrapper of the project's Chromium, installing
// it first unless the stamp says this version is installed already. It
// holds .tools/chromium.lock throughout, so two test binaries never install
// at once and the second finds the first's install.
func projectInstall() (string, error) {
	r, err := root()
	if err != nil {
		return "", err
	}
	tools := filepath.Join(r, ".tools")
	if err := os.MkdirAll(tools, 0o755); err != nil {
		return "", err
	}
	pin, strict := versionAsked()
	in := &installer{dir: filepath.Join(tools, "chromium"), pin: pin, strict: strict, version: pin}
	lock, err := os.OpenFile(filepath.Join(tools, "chromium.lock"), os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return "", err
	}
	defer lock.Close()
	deadline := time.Now().Add(10 * time.Minute)
	for syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		if time.Now().After(deadline) {
			return "", errors.New(".tools/chromium.lock is held by another run for 10 minutes")
		}
		time.Sleep(200 * time.Millisecond)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	if in.installed() {
		return in.wrapper(), nil
	}
	if err := in.install(); err != nil {
		return "", err
	}
	return in.wrapper(), nil
}

// installed reports whether the stamp names the version asked for and the
// wrapper and the browser it runs are there.
func (in *installer) installed() bool {
	b, err := os.ReadFile(in.stamp())
	if err != nil {
		return false
	}
	lines := strings.SplitN(string(b), "\n", 3)
	if len(lines) < 2 || lines[0] != "chromium "+in.pin || !strings.HasPrefix(lines[1], "installed ") {
		return false // another pin, or a stamp from before the installed line
	}
	for _, p := range []string{in.wrapper(), filepath.Join(in.dir, "root", "usr", "lib", "chromium", "chromium")} {
		if _, err := os.Stat(p); err != nil {
			return false
		}
	}
	return true
}

func (in *installer) logPath() string { return filepath.Join(in.dir, "install.log") }

func (in *installer) fail(step string, err error) error {
	return &StepError{Step: step, Version: in.version, Log: in.logPath(), Err: err}
}

// run runs a command in dir, logging it and its output.
func (in *installer) run(dir, name string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive", "LC_ALL=C")
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	fmt.Fprintf(&in.log, "$ (cd %s && %s %s)\n%s", dir, name, strings.Join(args, " "), out.Bytes())
	if err != nil {
		fmt.Fprintf(&in.log, "-> %v\n", err)
		err = fmt.Errorf("%s %s: %w", name, args[0], err)
	}
	fmt.Fprintln(&in.log)
	return out.Bytes(), err
}

func (in *installer) apt(tool string, args ...string) ([]byte, error) {
	return in.run(in.dir, tool, append(append([]string(nil), in.aptOpts...), args...)...)
}

// install does every step, the stamp last, and writes the log.
func (in *installer) install() (err error) {
	if err := os.MkdirAll(in.dir, 0o755); err != nil {
		return in.fail("clean", err)
	}
	defer func() {
		if werr := os.WriteFile(in.logPath(), in.log.Bytes(), 0o644); werr != nil && err == nil {
			err = in.fail("stamp", werr)
		}
	}()
	for _, tool := range []string{"apt-get", "apt-cache", "dpkg"} {
		if _, err := exec.LookPath(tool); err != nil {
			return in.fail("tools", fmt.Errorf("%s is not on PATH: the project install needs Debian's apt and dpkg (or set MCPDIAG_CHROMIUM=PATH, or MCPDIAG_BROWSER=off)", tool))
		}
	}
	fmt.Fprintf(&in.log, "Installing Debian's chromium %s and what it needs that this machine lacks into %s (apt-get download, dpkg -x; no root)\n\n", in.version, in.dir)
	// 1. Package lists: the machine's, or, when they do not have the pinned
	// version, the project's own, fetched with apt-get update into
	// .tools/chromium/apt (no root needed).
	if ok, err := in.hasVersion(); err != nil {
		return in.fail("package lists", err)
	} else if !ok {
		// The machine's lists may be old: the project's own, fresh.
		lists, cache := filepath.Join(in.dir, "apt", "lists"), filepath.Join(in.dir, "apt", "cache")
		for _, d := range []string{filepath.Join(lists, "partial"), filepath.Join(cache, "archives", "partial")} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				return in.fail("package lists", err)
			}
		}
		in.aptOpts = []string{"-o", "Dir::State::Lists=" + lists, "-o", "Dir::Cache=" + cache}
		if _, err := in.apt("apt-get", "update"); err != nil {
			return in.fail("package lists", err)
		}
		out, err := in.apt("apt-cache", "madison", "chromium")
		if err != nil {
			return in.fail("package lists", err)
		}
		v, note, err := chooseVersion(in.pin, in.strict, madison(out))
		if err != nil {
			return in.fail("package lists", err)
		}
		if note != "" {
			fmt.Fprintf(&in.log, "NOTE: %s\n", note)
			fmt.Fprintf(os.Stderr, "internal/browser: %s\n", note)
		}
		in.version = v
	}

	// A previous version's (or a half-done) install goes; the stamp first.
	_ = os.Remove(in.stamp())
	for _, sub := range []string{"root", "debs"} {
		if err := os.RemoveAll(filepath.Join(in.dir, sub)); err != nil {
			return in.fail("clean", err)
		}
	}

	// 2. Resolve: what apt would install for chromium here, so only the
	// packages this machine lacks (or has too old) are unpacked.
	pkgs := []string{"chromium=" + in.version, "chromium-common=" + in.version}
	out, err := in.apt("apt-get", "--simulate", "--no-install-recommends", "install", pkgs[0], pkgs[1])
	if err != nil {
		return in.fail("resolve", err)
	}
	for _, p := range simulatedInstalls(out) {
		if name, _, _ := strings.Cut(p, "="); name != "chromium" && name != "chromium-common" {
			pkgs = append(pkgs, p)
		}
	}

	// 3. Download the .deb files.
	debs := filepath.Join(in.dir, "debs")
	if err := os.MkdirAll(debs, 0o755); err != nil {
		return in.fail("download", err)
	}
	if _, err := in.run(debs, "apt-get", append(append(append([]string(nil), in.aptOpts...), "download"), pkgs...)...); err != nil {
		return in.fail("download", err)
	}
	files, err := filepath.Glob(filepath.Join(debs, "*.deb"))
	if err != nil || len(files) != len(pkgs) {
		return in.fail("download", fmt.Errorf("apt-get download left %d .deb files for %d packages", len(files), len(pkgs)))
	}

	// 4. Unpack them (no maintainer scripts run; nothing outside .tools).
	rootDir := filepath.Join(in.dir, "root")
	for _, f := range files {
		if _, err := in.run(in.dir, "dpkg", "-x", f, rootDir); err != nil {
			return in.fail("unpack", err)
		}
	}

	// The .deb files are not needed again (113 MB for chromium alone).
	if err := os.RemoveAll(debs); err != nil {
		return in.fail("unpack", err)
	}

	// 5. The wrapper, then check that the browser starts and is the version.
	if err := in.writeWrapper(rootDir); err != nil {
		return in.fail("unpack", err)
	}
	out, err = in.run(in.dir, in.wrapper(), "--headless", "--no-sandbox", "--version")
	if err != nil {
		return in.fail("check", err)
	}
	upstream, _, _ := strings.Cut(in.version, "-")
	if !strings.Contains(string(out), upstream) {
		return in.fail("check", fmt.Errorf("%s --version printed %q, not version %s", in.wrapper(), strings.TrimSpace(string(out)), upstream))
	}
	stamp := "chromium " + in.pin + "\ninstalled " + in.version + "\n" + strings.Join(pkgs, "\n") + "\n"
	if err := os.WriteFile(in.stamp(), []byte(stamp), 0o644); err != nil {
		return in.fail("stamp", err)
	}
	return nil
}

// hasVersion reports whether the package lists apt uses know chromium at
// the pinned version.
func (in *installer) hasVersion() (bool, error) {
	out, err := in.apt("apt-cache", "madison", "chromium")
	if err != nil {
		return false, err
	}
	for _, v := range madison(out) {
		if v == in.version {
			return true, nil
		}
	}
	return false, nil
}

// madison returns the versions in apt-cache madison's output.
func madison(out []byte) []string {
	var vs []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Split(sc.Text(), "|")
		if len(f) >= 2 {
			vs = append(vs, strings.TrimSpace(f[1]))
		}
	}
	return vs
}

// simulatedInstalls returns name=version for each "Inst" line of
// apt-get --simulate install: "Inst NAME [OLD] (VERSION ARCHIVE [ARCH])".
func simulatedInstalls(out []byte) []string {
	var pkgs []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "Inst ") {
			continue
		}
		f := strings.Fields(line)
		_, after, ok := strings.Cut(line, "(")
		if len(f) < 2 || !ok {
			continue
		}
		v := strings.Fields(after)
		if len(v) == 0 {
			continue
		}
		pkgs = append(pkgs, f[1]+"="+v[0])
	}
	return pkgs
}

// writeWrapper writes .tools/chromium/chromium: a shell script that puts
// every unpacked directory holding shared libraries first on
// LD_LIBRARY_PATH and execs the unpacked browser (exec, so the process a
// test starts is the browser). Paths are relative to the script, so the
// checkout may move.
func (in *installer) writeWrapper(rootDir string) error {
	seen := map[string]bool{}
	err := filepath.WalkDir(rootDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && (strings.HasSuffix(d.Name(), ".so") || strings.Contains(d.Name(), ".so.")) {
			rel, err := filepath.Rel(in.dir, filepath.Dir(p))
			if err != nil {
				return err
			}
			seen[rel] = true
		}
		return nil
	})
	if err != nil {
		return err
	}
	var dirs []string
	for d := range seen {
		dirs = append(dirs, `$d/`+d)
	}
	sort.Strings(dirs)
	script := "#!/bin/sh\n" +
		"# Written by internal/browser: Debian's chromium " + in.version + " unpacked into .tools/chromium/root.\n" +
		"d=$(cd \"$(dirname \"$0\")\" && pwd)\n" +
		"LD_LIBRARY_PATH=\"" + strings.Join(dirs, ":") + "${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}\"\n" +
		"export LD_LIBRARY_PATH\n" +
		"exec \"$d/root/usr/lib/chromium/chromium\" \"$@\"\n"
	return os.WriteFile(in.wrapper(), []byte(script), 0o755)
}
