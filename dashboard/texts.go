package dashboard

import (
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

// For says how long ago ms was as a span: "2 d 8 h".
func (v *view) For(ms int64) string { return state.SpanText((v.Now - ms) / 60_000) }

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
	return s + ", and " + state.SpanText(grace) + " of grace has passed."
}
