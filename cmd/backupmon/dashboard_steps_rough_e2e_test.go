package main

// Steps of the layout checks of the dashboard's browser suite
// (TestDashboardBrowser, dashboard_e2e_test.go), shared by RoughEdges
// (dashboard_rough_e2e_test.go) and a technician's first day
// (dashboard_day_e2e_test.go): a window of a desktop's or a phone's width,
// the Jobs page's search box, and the header on one line.

import (
	"github.com/chromedp/chromedp"
)

// dashWidths names the widths the layout is checked at: a desktop's and a
// phone's.
var dashWidths = map[int64]string{1366: "desktop", 390: "phone"}

// viewport emulates a desktop window of width px, or a phone (mobile and
// touch, 844 px tall) when width is 390.
func (b *dashTab) viewport(width int64) {
	b.t.Helper()
	if width == 390 {
		b.do("emulate a phone", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile, chromedp.EmulateTouch))
	} else {
		b.do("a desktop window", chromedp.EmulateViewport(width, 900))
	}
}

// searchBox opens the Jobs page; it fails the test (its messages start
// with name) unless the search box is under 3 rem tall.
func (b *dashTab) searchBox(name string) {
	b.t.Helper()
	b.open("/jobs")
	rem := dashEval[float64](b, `parseFloat(getComputedStyle(document.documentElement).fontSize)`)
	if h := dashEval[float64](b, `document.querySelector('.filters input[type=search]').getBoundingClientRect().height`); h <= 0 || h >= 3*rem {
		b.t.Errorf("%s: the search box is %.1f px tall, want under 3 rem (%.0f px)", name, h, 3*rem)
	}
}

// dashHeaderOneLine checks the header of the page open (name starts the
// messages): want links and buttons visible in it (the 5 pages, and the
// account button where the width shows it) on one row, the header no
// taller than one line, and Settings on screen with nothing covering its
// middle.
func dashHeaderOneLine(b *dashTab, name string, want int) {
	t := b.t
	t.Helper()
	rows := dashEval[[]float64](b, `[...document.querySelectorAll('header.top nav a, header.top .account > summary')].filter(e => e.getClientRects().length).map(e => Math.round(e.getBoundingClientRect().top + e.getBoundingClientRect().height / 2))`)
	if len(rows) != want {
		t.Errorf("%s: %d visible links and buttons in the header, want %d", name, len(rows), want)
	}
	for _, y := range rows {
		if y != rows[0] {
			t.Errorf("%s: the header's links and account button sit on more than one line (middles at %v)", name, rows)
			break
		}
	}
	if h := dashEval[float64](b, `document.querySelector('header.top').getBoundingClientRect().height`); h > 56 {
		t.Errorf("%s: the header is %.0f px tall, want one line (at most 56 px)", name, h)
	}
	if !dashEval[bool](b, `(() => {
		const a = document.querySelector('header.top nav a[href="/settings/keys"]');
		const r = a.getBoundingClientRect();
		return r.width > 0 && r.left >= 0 && r.right <= innerWidth && r.top >= 0 &&
			document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2) === a;
	})()`) {
		t.Errorf("%s: the Settings link is not on screen, or something covers it\n%s", name, b.snapshot())
	}
}
