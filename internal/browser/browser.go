// Package browser runs mcpdiag's page tests in a real headless Chromium,
// driven with chromedp.
//
// The browser is Debian's chromium package at the version pinned in
// chromium.version, installed by the test itself, without root, into the
// project's git-ignored .tools/chromium: apt-get download of chromium,
// chromium-common and whatever else apt would install for them on this
// machine, dpkg -x of each into .tools/chromium/root, and a wrapper script
// .tools/chromium/chromium that puts the unpacked libraries first on
// LD_LIBRARY_PATH. It runs once, under the lock .tools/chromium.lock; a
// stamp with the version makes the next run install nothing. The install's
// log is .tools/chromium/install.log.
//
// MCPDIAG_CHROMIUM=PATH uses another browser instead (for example the
// system's /usr/bin/chromium); MCPDIAG_BROWSER=off skips the browser tests
// knowingly, saying so. Anything else that leaves no browser fails the
// test, naming the install step that failed.
//
// Every page is opened in a fresh browser with its own profile, with the
// network limited to loopback (host resolver rules map every other name to
// nothing), and the page's console and network requests are recorded so a
// test can assert that there was no error and no request off the page's
// own origin.
package browser

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

var (
	once    sync.Once
	path    string
	pathErr error
	skip    bool
)

// Need returns the path of the Chromium binary the tests run, installing
// the project's (see the package doc) when it is not installed yet. It
// skips the test, saying why, only when MCPDIAG_BROWSER=off; it fails the
// test when no browser can be had, naming the install step that failed and
// its log.
func Need(t testing.TB) string {
	t.Helper()
	once.Do(func() { path, skip, pathErr = find() })
	if skip {
		t.Skipf("BROWSER TESTS DID NOT RUN: %v", pathErr)
	}
	if pathErr != nil {
		t.Fatalf("browser tests: %v", pathErr)
	}
	return path
}

func find() (string, bool, error) {
	if os.Getenv("MCPDIAG_BROWSER") == "off" {
		return "", true, errors.New("MCPDIAG_BROWSER=off skips them on purpose")
	}
	if p := os.Getenv("MCPDIAG_CHROMIUM"); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", false, fmt.Errorf("MCPDIAG_CHROMIUM=%s: %v", p, err)
		}
		return p, false, nil
	}
	p, err := projectInstall()
	return p, false, err
}

// root is the module's root directory (the one holding go.mod).
func root() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// Page is one browser tab on one page, with what it logged and requested.
type Page struct {
	// Ctx is the chromedp context of the tab; its deadline bounds the test.
	Ctx context.Context

	mu       sync.Mutex
	console  []string
	requests []string
}

// Open starts a fresh headless browser, navigates to url and waits for
// the page's body to carry data-ready. The browser ends with the test.
func Open(t *testing.T, url string) *Page {
	t.Helper()
	bin := Need(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin),
		chromedp.NoSandbox, // in a container Chromium's sandbox needs user namespaces (and, unpacked, a setuid helper)
		chromedp.DisableGPU,
		chromedp.WindowSize(1400, 900),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost"),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-domain-reliability", true),
		chromedp.Flag("no-pings", true),
	)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(acancel)
	bctx, bcancel := chromedp.NewContext(actx)
	t.Cleanup(bcancel)
	p := &Page{Ctx: bctx}
	if err := chromedp.Listen(bctx, p.event); err != nil {
		t.Fatalf("starting Chromium (%s): %v", bin, err)
	}
	if _, err := chromedp.Call(bctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatalf("Network.enable: %v", err)
	}
	if _, err := chromedp.Call(bctx, runtime.Enable, cdp.Empty{}); err != nil {
		t.Fatalf("Runtime.enable: %v", err)
	}
	if _, err := chromedp.Call(bctx, cdplog.Enable, cdp.Empty{}); err != nil {
		t.Fatalf("Log.enable: %v", err)
	}
	if err := chromedp.Do(bctx, chromedp.Navigate(url), chromedp.WaitReady(`body[data-ready="true"]`)); err != nil {
		t.Fatalf("opening %s: %v (console: %q)", url, err, p.Console())
	}
	return p
}

func (p *Page) event(ev any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch e := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		if e.Type == "error" || e.Type == "warning" || e.Type == "assert" {
			var parts []string
			for _, a := range e.Args {
				if a.Value != nil {
					parts = append(parts, string(a.Value))
				} else {
					parts = append(parts, a.Description)
				}
			}
			p.console = append(p.console, string(e.Type)+": "+strings.Join(parts, " "))
		}
	case *runtime.EventExceptionThrown:
		d := e.ExceptionDetails
		msg := d.Text
		if d.Exception != nil {
			msg += " " + d.Exception.Description
		}
		p.console = append(p.console, fmt.Sprintf("exception at %d:%d: %s", d.LineNumber, d.ColumnNumber, msg))
	case *network.EventRequestWillBeSent:
		p.requests = append(p.requests, e.Request.URL)
	case *cdplog.EventEntryAdded:
		if e.Entry != nil && (e.Entry.Level == cdplog.EntryLevelError || e.Entry.Level == cdplog.EntryLevelWarning) {
			p.console = append(p.console, fmt.Sprintf("log %s (%s): %s %s", e.Entry.Level, e.Entry.Source, e.Entry.Text, e.Entry.URL))
		}
	case *network.EventLoadingFailed:
		p.console = append(p.console, fmt.Sprintf("network: loading failed (%s): %s", e.Type, e.ErrorText))
	}
}

// Console returns the console errors and warnings, uncaught exceptions and
// failed loads seen so far (a refusal by the Content-Security-Policy is a
// console error).
func (p *Page) Console() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.console...)
}

// Requests returns the URL of every request the page sent so far.
func (p *Page) Requests() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.requests...)
}

// Eval evaluates a JavaScript expression and decodes its value into v.
func Eval[T any](t *testing.T, p *Page, expr string) T {
	t.Helper()
	v, err := chromedp.Run(p.Ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

// WaitFor polls a JavaScript predicate until it is true (bounded by the
// page's deadline) and fails the test naming what it waited for.
func WaitFor(t *testing.T, p *Page, what, expr string) {
	t.Helper()
	if _, err := chromedp.Run(p.Ctx, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(30*time.Second))); err != nil {
		t.Fatalf("waiting for %s (%s): %v", what, expr, err)
	}
}

// Screenshot saves a PNG of the page as name in dir.
func Screenshot(t *testing.T, p *Page, dir, name string) string {
	t.Helper()
	b, err := chromedp.Run(p.Ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	out := filepath.Join(dir, name)
	if err := os.WriteFile(out, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// EvalPromise evaluates a JavaScript expression whose value is a promise
// and decodes what it resolves to into v.
func EvalPromise[T any](t *testing.T, p *Page, expr string) T {
	t.Helper()
	v, err := chromedp.Run(p.Ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

// Keys types keys into the focused element as a user would: real key
// events through the browser's input pipeline (kb names the special keys).
func Keys(t *testing.T, p *Page, keys string) {
	t.Helper()
	if err := chromedp.Do(p.Ctx, chromedp.KeyEvent(keys)); err != nil {
		t.Fatalf("typing %q: %v", keys, err)
	}
}
