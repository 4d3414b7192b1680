package main

// dashRoughFlow is dashE2ERough as a flow of TestDashboardBrowser.
var dashRoughFlow = struct {
	name string
	noJS bool
	run  func(*dashTab)
}{"RoughEdges", false, dashE2ERough}

// dashE2ERough: the layout a new user tripped on (issue 22), measured in
// Chromium at a desktop's 1366 px and a phone's 390 px, with screenshots
// of each kept as artefacts: the Jobs page's search box under 3 rem tall,
// alert summaries without a box's border, the queue's client tables with
// the same columns, and on the phone a header of one line whose Settings
// link is on screen and not covered, with the account menu opening; the
// API reference renders under its policy, from this server alone.
func dashE2ERough(b *dashTab) {
	t := b.t
	dir := dashArtifacts(t)
	b.loginNew("b-rough", dashJobs, "owner")

	for _, width := range []int64{1366, 390} {
		name := dashWidths[width]
		b.viewport(width)
		b.searchBox(name)
		if got := b.screenshot(dir, "rough-jobs-"+name+".png"); got != int(width) {
			t.Errorf("%s: the jobs screenshot is %d px wide, want %d", name, got, width)
		}

		b.open("/")
		if sw := dashEval[int](b, `document.documentElement.scrollWidth`); sw > int(width) {
			t.Errorf("%s: the queue is %d px wide: it scrolls sideways", name, sw)
		}
		if bw := dashEval[string](b, `getComputedStyle(document.querySelector('.summary')).borderTopWidth + ' ' + getComputedStyle(document.querySelector('.summary')).backgroundColor`); bw != "0px rgba(0, 0, 0, 0)" {
			t.Errorf("%s: an alert summary has the border and background %q, want none (it is text, not a field)", name, bw)
		}
		if width == 1366 {
			// Every client's table puts its columns at the same places.
			cols := dashEval[[]string](b, `[...document.querySelectorAll('.group table')].map(t => [...t.querySelectorAll('thead th')].map(th => Math.round(th.getBoundingClientRect().left) + ':' + Math.round(th.getBoundingClientRect().width)).join(' '))`)
			if len(cols) < 2 {
				t.Fatalf("%d client tables in the queue, want 2", len(cols))
			}
			for i := 1; i < len(cols); i++ {
				if cols[i] != cols[0] {
					t.Errorf("client table %d has columns at %s, the first at %s", i+1, cols[i], cols[0])
				}
			}
		} else {
			dashRoughHeader(b, name)
		}
		if got := b.screenshot(dir, "rough-queue-"+name+".png"); got != int(width) {
			t.Errorf("%s: the queue screenshot is %d px wide, want %d", name, got, width)
		}

		b.open("/no/such/page")
		if n := b.count(`header nav a[href="/settings/keys"]`); n != 1 {
			t.Errorf("%s: the 404 page has %d Settings links in its header, want 1", name, n)
		}
		if width == 390 {
			dashRoughHeader(b, name)
		}
	}

	// The API reference: Swagger UI renders the document under the page's
	// policy (a violation fails the flow), with nothing from elsewhere.
	b.viewport(1366)
	b.open("/api/v1/docs")
	b.waitFor("Swagger UI's rendering of the document", `document.querySelector('.swagger-ui .info .title') && document.querySelector('.swagger-ui .info .title').textContent.includes('backupmon') && document.querySelectorAll('.opblock').length > 0`)
	if n := b.count(`.opblock-tag-section`); n < 5 {
		t.Errorf("the API reference shows %d sections of operations", n)
	}
	if others := dashEval[[]string](b, `performance.getEntriesByType('resource').map(e => e.name).filter(u => !u.startsWith(location.origin))`); len(others) != 0 {
		t.Errorf("the API reference loaded from elsewhere: %v", others)
	}
	b.screenshot(dir, "rough-api-docs-desktop.png")
}

// dashRoughHeader checks the header of the page open on a phone (name
// starts the messages): one line of the 5 pages and the account button,
// with Settings reachable (dashHeaderOneLine), and the account menu
// opening with Log out.
func dashRoughHeader(b *dashTab, name string) {
	t := b.t
	dashHeaderOneLine(b, name, 6)
	b.click(`header.top .account > summary`)
	if !dashEval[bool](b, `(() => {
		const btn = [...document.querySelectorAll('.account-menu form[action="/logout"] button')][0];
		const r = btn.getBoundingClientRect();
		return r.width > 0 && r.right <= innerWidth && btn.textContent === 'Log out';
	})()`) {
		t.Errorf("%s: the account menu does not open with Log out\n%s", name, b.snapshot())
	}
	b.click(`header.top .account > summary`)
}
