package dashboard

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"backupmon/engine"
	"backupmon/state"
)

// Texts the pages write from figures: spans of time in days, hours and
// minutes, and the missing alerts' summaries with their due time in the
// workspace's zone.

// spanText says a span of whole minutes with its two largest units, as a
// person reads it: "45 min", "3 h 5 min", "2 d 8 h" (3,366 minutes); a
// unit that is zero is left out ("2 d", "3 h").
func spanText(m int64) string {
	if m < 0 {
		m = 0
	}
	d, h, mi := m/1440, m%1440/60, m%60
	switch {
	case d > 0 && h > 0:
		return fmt.Sprintf("%d d %d h", d, h)
	case d > 0:
		return fmt.Sprintf("%d d", d)
	case h > 0 && mi > 0:
		return fmt.Sprintf("%d h %d min", h, mi)
	case h > 0:
		return fmt.Sprintf("%d h", h)
	}
	return fmt.Sprintf("%d min", mi)
}

// missedText says how many expected runs a job missed: "1 expected run
// missed", "3 expected runs missed", "999+ expected runs missed".
func missedText(o state.Overdue) string {
	more := ""
	if o.More {
		more = "+"
	}
	if o.Missed == 1 {
		return "1 expected run missed"
	}
	return strconv.Itoa(o.Missed) + more + " expected runs missed"
}

// For says how long ago ms was as a span: "2 d 8 h".
func (v *view) For(ms int64) string { return spanText((v.Now - ms) / 60_000) }

// initials returns the first letters of the first two words of name, in
// upper case ("Demo Owner" → "DO"), or "?" for none.
func initials(name string) string {
	var out []rune
	for _, w := range strings.Fields(name) {
		r, _ := utf8.DecodeRuneInString(w)
		out = append(out, unicode.ToUpper(r))
		if len(out) == 2 {
			break
		}
	}
	if len(out) == 0 {
		return "?"
	}
	return string(out)
}

// Local returns ms in the workspace's zone with the zone's abbreviation:
// "Tue 24 Nov 03:19 CET".
func (v *view) Local(ms int64) string {
	loc := v.loc
	if loc == nil {
		loc = time.UTC
	}
	return time.UnixMilli(ms).In(loc).Format("Mon 2 Jan 15:04 MST")
}

// missingSummary matches the summary the engine writes on a missing alert
// (engine/timers.go): its due time in UTC and its grace in minutes.
var missingSummary = regexp.MustCompile(`^No backup report received: one was due at (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z) and (\d+) minutes of grace have passed$`)

// Summary returns an alert's summary as the pages show it: a missing
// alert's with its due time in the workspace's zone and its grace as a
// span ("… due at Tue 24 Nov 03:19 CET, and 1 h of grace has passed");
// any other as recorded. The REST and admin APIs keep the recorded text.
func (v *view) Summary(a engine.BoardAlert) string {
	if a.Type != "missing" {
		return a.Summary
	}
	m := missingSummary.FindStringSubmatch(a.Summary)
	if m == nil {
		return a.Summary
	}
	due, err := time.Parse(time.RFC3339Nano, m[1])
	grace, err2 := strconv.ParseInt(m[2], 10, 64)
	if err != nil || err2 != nil {
		return a.Summary
	}
	s := "No backup report received: one was due at " + v.Local(due.UnixMilli())
	if grace == 0 {
		return s + "."
	}
	return s + ", and " + spanText(grace) + " of grace has passed."
}
