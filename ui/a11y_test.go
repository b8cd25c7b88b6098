package ui

import (
	"fmt"
	"math"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp/kb"
	"github.com/mcpdiag/mcpdiag/internal/browser"
)

// luminance is WCAG 2's relative luminance of a #rrggbb colour.
func luminance(hex string) float64 {
	var c [3]float64
	for i := range 3 {
		v, _ := strconv.ParseUint(hex[1+2*i:3+2*i], 16, 8)
		x := float64(v) / 255
		if x <= 0.03928 {
			c[i] = x / 12.92
		} else {
			c[i] = math.Pow((x+0.055)/1.055, 2.4)
		}
	}
	return 0.2126*c[0] + 0.7152*c[1] + 0.0722*c[2]
}

func contrast(a, b string) float64 {
	la, lb := luminance(a), luminance(b)
	if la < lb {
		la, lb = lb, la
	}
	return (la + 0.05) / (lb + 0.05)
}

// Text on the layer colours (white on the badges and the matrix cells)
// and the muted text meet WCAG AA for normal text (4.5:1).
func TestColourContrast(t *testing.T) {
	vars := map[string]string{}
	for _, m := range regexp.MustCompile(`--([a-z]+): (#[0-9a-f]{6})`).FindAllStringSubmatch(appCSS, -1) {
		vars[m[1]] = m[2]
	}
	pairs := [][2]string{{"#ffffff", "transport"}, {"#ffffff", "protocol"}, {"#ffffff", "interaction"}, {"#ffffff", "application"},
		{"#ffffff", "none"}, {"#ffffff", "unknown"}, {"muted", "bg"}, {"muted", "head"}, {"fg", "sel"}, {"transport", "bg"}}
	for _, p := range pairs {
		fg, bg := p[0], p[1]
		if !strings.HasPrefix(fg, "#") {
			fg = vars[fg]
		}
		if bg = vars[bg]; bg == "" || fg == "" {
			t.Fatalf("colour %v not in app.css (%v)", p, vars)
		}
		if r := contrast(fg, bg); r < 4.5 {
			t.Errorf("%s on %s: contrast %.2f:1, want at least 4.5:1", p[0], p[1], r)
		}
	}
}

// Keyboard only: Tab reaches the records, the arrow keys select rows and
// the detail follows; every control and chart has an accessible name.
func TestPageKeyboardAndLabels(t *testing.T) {
	recs := fixture(t)
	p := browser.Open(t, (&url.URL{Scheme: "file", Path: writePage(t, recs)}).String())
	unnamed := browser.Eval[[]string](t, p, `[...document.querySelectorAll('select, input, button, svg[role="img"], [tabindex="0"]')]
	  .filter((el) => !((el.labels && el.labels.length) || el.getAttribute('aria-label') || (el.tagName === 'BUTTON' && el.textContent.trim())))
	  .map((el) => el.outerHTML.slice(0, 80))`)
	if len(unnamed) > 0 {
		t.Errorf("controls without an accessible name:\n%s", strings.Join(unnamed, "\n"))
	}
	reached := false
	for range 20 {
		browser.Keys(t, p, kb.Tab)
		if browser.Eval[bool](t, p, `document.activeElement && document.activeElement.id === 'list'`) {
			reached = true
			break
		}
	}
	if !reached {
		t.Fatal("Tab never reaches the records")
	}
	browser.Keys(t, p, kb.ArrowDown)
	browser.Keys(t, p, kb.ArrowDown)
	browser.WaitFor(t, p, "the second row selected", `document.querySelector('#rows tr.selected') !== null && document.querySelector('#rows tr.selected').dataset.index === '1'`)
	id := browser.Eval[string](t, p, `document.querySelector('#rows tr.selected').dataset.id`)
	browser.WaitFor(t, p, "its detail", fmt.Sprintf(`document.getElementById('detail').textContent.includes(%q)`, id))
	if got := browser.Eval[string](t, p, `document.getElementById('list').getAttribute('aria-activedescendant') || ''`); got == "" || got != browser.Eval[string](t, p, `document.querySelector('#rows tr.selected').id`) {
		t.Errorf("aria-activedescendant %q does not name the selected row", got)
	}
	browser.Keys(t, p, "/")
	if !browser.Eval[bool](t, p, `document.activeElement.id === 'f-text'`) {
		t.Error("/ does not focus the search")
	}
	browser.Keys(t, p, kb.Escape)
	if !browser.Eval[bool](t, p, `document.activeElement.id === 'list'`) {
		t.Error("Esc does not leave the search for the records")
	}
	checkClean(t, p, "file://")
}
