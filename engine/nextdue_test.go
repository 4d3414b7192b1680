package engine

import (
	"backupmon/state"
	"testing"
	"time"
)

func mustZone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatalf("zone %s: %v", name, err)
	}
	return loc
}

func daysMask(days ...time.Weekday) uint8 {
	var m uint8
	for _, d := range days {
		m |= 1 << uint(d)
	}
	return m
}

var weekdays = daysMask(time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday)

// TestNextDue: base + interval, moved forward by whole local days (same
// local time of day) to the next expected weekday in the workspace's zone,
// across daylight-saving changes (decisions.md 4.4).
func TestNextDue(t *testing.T) {
	const day = 24 * 60
	for _, c := range []struct {
		name     string
		zone     string
		base     string // local wall clock of the report, in zone
		interval int64  // minutes
		days     uint8
		want     string // RFC 3339 instant
	}{
		// Plain cases.
		{"all days: base + interval", "UTC", "2024-06-07T23:30:00", day, state.AllDays, "2024-06-08T23:30:00Z"},
		{"no days set reads as all days", "UTC", "2024-06-07T23:30:00", day, 0, "2024-06-08T23:30:00Z"},
		{"already on an expected day", "UTC", "2024-06-03T10:00:00", 90, weekdays, "2024-06-03T11:30:00Z"},
		{"Friday 23:30 with mon–fri is due Monday 23:30", "Europe/Berlin", "2024-06-07T23:30:00", day, weekdays, "2024-06-10T21:30:00Z"},
		{"Friday 23:30 New York with mon–fri is due Monday 23:30 local", "America/New_York", "2024-06-07T23:30:00", day, weekdays, "2024-06-11T03:30:00Z"},
		// Weekday read in the workspace's zone, not UTC: Saturday 05:00
		// in Tokyo is Friday 20:00 UTC.
		{"weekday in the workspace's zone", "Asia/Tokyo", "2024-06-07T05:00:00", day, weekdays, "2024-06-09T20:00:00Z"},
		{"single day: Wednesday only", "UTC", "2024-06-05T06:00:00", day, daysMask(time.Wednesday), "2024-06-12T06:00:00Z"},
		{"single day: due on it", "UTC", "2024-06-04T06:00:00", day, daysMask(time.Wednesday), "2024-06-05T06:00:00Z"},
		{"single day with a 31-day interval", "UTC", "2024-06-05T06:00:00", 44640, daysMask(time.Monday), "2024-07-08T06:00:00Z"},
		{"Sunday only, from Monday", "UTC", "2024-06-03T00:00:00", 5, daysMask(time.Sunday), "2024-06-09T00:05:00Z"},

		// Europe/London, spring forward 2024-03-31 01:00 GMT → 02:00 BST.
		{"London spring: all days keep the elapsed time", "Europe/London", "2024-03-30T10:00:00", day, state.AllDays, "2024-03-31T10:00:00Z"}, // 11:00 BST
		{"London spring: Sunday skipped keeps 11:00 local", "Europe/London", "2024-03-30T10:00:00", day,
			state.AllDays &^ daysMask(time.Sunday), "2024-04-01T10:00:00Z"}, // Monday 11:00 BST
		{"London spring: due before the change, moved past it", "Europe/London", "2024-03-30T00:30:00", day,
			state.AllDays &^ daysMask(time.Sunday), "2024-03-31T23:30:00Z"}, // due Sun 00:30 GMT → Mon 00:30 BST
		{"London spring: weekend skipped over the change", "Europe/London", "2024-03-29T09:00:00", day, weekdays, "2024-04-01T08:00:00Z"}, // Mon 09:00 BST
		// Europe/London, fall back 2024-10-27 02:00 BST → 01:00 GMT.
		{"London autumn: all days keep the elapsed time", "Europe/London", "2024-10-26T12:00:00", day, state.AllDays, "2024-10-27T11:00:00Z"}, // 11:00 GMT
		{"London autumn: weekend skipped keeps 12:00 local", "Europe/London", "2024-10-25T12:00:00", day, weekdays, "2024-10-28T12:00:00Z"},   // due Sat 12:00 BST → Mon 12:00 GMT
		{"London autumn: Sunday skipped", "Europe/London", "2024-10-26T23:30:00", day,
			state.AllDays &^ daysMask(time.Sunday), "2024-10-28T22:30:00Z"}, // due Sun 22:30 GMT → Mon 22:30 GMT

		// America/New_York, spring forward 2024-03-10 02:00 EST → 03:00 EDT.
		{"New York spring: weekend skipped keeps 09:00 local", "America/New_York", "2024-03-08T09:00:00", day, weekdays, "2024-03-11T13:00:00Z"}, // Mon 09:00 EDT
		{"New York spring: Sunday skipped", "America/New_York", "2024-03-09T18:00:00", day,
			state.AllDays &^ daysMask(time.Sunday), "2024-03-11T23:00:00Z"}, // due Sun 19:00 EDT (24 h after 18:00 EST) → Mon 19:00 EDT
		{"New York spring: all days", "America/New_York", "2024-03-09T18:00:00", day, state.AllDays, "2024-03-10T23:00:00Z"}, // Sun 19:00 EDT
		// America/New_York, fall back 2024-11-03 02:00 EDT → 01:00 EST.
		{"New York autumn: weekend skipped keeps 23:30 local", "America/New_York", "2024-11-01T23:30:00", day, weekdays, "2024-11-05T04:30:00Z"}, // Mon 23:30 EST
		{"New York autumn: Sunday skipped", "America/New_York", "2024-11-02T08:00:00", day,
			state.AllDays &^ daysMask(time.Sunday), "2024-11-04T12:00:00Z"}, // due Sun 07:00 EST (24 h after 08:00 EDT) → Mon 07:00 EST
		{"New York autumn: short interval", "America/New_York", "2024-11-03T00:30:00", 120, state.AllDays, "2024-11-03T06:30:00Z"}, // 01:30 EST
	} {
		t.Run(c.name, func(t *testing.T) {
			loc := mustZone(t, c.zone)
			base, err := time.ParseInLocation("2006-01-02T15:04:05", c.base, loc)
			if err != nil {
				t.Fatal(err)
			}
			want, err := time.Parse(time.RFC3339, c.want)
			if err != nil {
				t.Fatal(err)
			}
			got := state.NextDue(base.UnixMilli(), c.interval, c.days, loc)
			if got != want.UnixMilli() {
				t.Errorf("nextDue(%s %s, %d min, days %07b) = %s (%s local); want %s (%s local)", c.base, c.zone, c.interval, c.days,
					state.MsTime(got).Format(time.RFC3339), state.MsTime(got).In(loc).Format("Mon 15:04 MST"),
					want.Format(time.RFC3339), want.In(loc).Format("Mon 15:04 MST"))
			}
		})
	}
}

// TestNextDueProperties checks, over a year of bases in several zones, the
// rules that hold whatever the date: the due time is on an expected day, no
// earlier than base + interval, not a whole week later, and when it moved,
// it kept the local time of day of base + interval (unless that time does
// not exist on the new day, in a spring-forward gap).
func TestNextDueProperties(t *testing.T) {
	for _, zone := range []string{"UTC", "Europe/London", "America/New_York", "Australia/Lord_Howe", "Asia/Kathmandu",
		"Pacific/Apia", "America/Santiago", "America/Havana", "Asia/Beirut", "America/Asuncion"} {
		loc := mustZone(t, zone)
		start := time.Date(2024, 1, 1, 0, 0, 0, 0, loc).UnixMilli()
		for i := int64(0); i < 2000; i++ {
			base := start + i*(4*state.MsPerHour+7*state.MsPerMinute+13*state.MsPerSecond)
			interval := []int64{5, 60, 24 * 60, 36 * 60, 7 * 24 * 60, 44640}[i%6]
			days := uint8(i*37%127) + 1
			got := state.NextDue(base, interval, days, loc)
			plain := base + interval*state.MsPerMinute
			gl := state.MsTime(got).In(loc)
			if days&(1<<uint(gl.Weekday())) == 0 {
				t.Fatalf("%s: nextDue(%s, %d, %07b) = %s, a %s", zone, state.MsTime(base), interval, days, gl, gl.Weekday())
			}
			if got < plain || got > plain+8*state.MsPerDay {
				t.Fatalf("%s: nextDue(%s, %d, %07b) = %s, plain %s", zone, state.MsTime(base), interval, days, gl, state.MsTime(plain).In(loc))
			}
			if got == plain {
				continue
			}
			pl := state.MsTime(plain).In(loc)
			if gl.Hour() != pl.Hour() || gl.Minute() != pl.Minute() || gl.Second() != pl.Second() {
				// Only a time that does not exist that day may move, and
				// then to later on the same day, by the gap.
				y, m, d := gl.Date()
				if wall := time.Date(y, m, d, pl.Hour(), pl.Minute(), pl.Second(), 0, loc); wall.Hour() == pl.Hour() && wall.Minute() == pl.Minute() {
					t.Fatalf("%s: nextDue(%s, %d, %07b) = %s; plain %s: local time of day not kept", zone, state.MsTime(base), interval, days, gl, pl)
				}
				if gl.Hour()*60+gl.Minute() < pl.Hour()*60+pl.Minute() {
					t.Fatalf("%s: nextDue(%s, %d, %07b) = %s; plain %s: moved to before the gap", zone, state.MsTime(base), interval, days, gl, pl)
				}
			}
			// No expected day was skipped on the way.
			for d := 1; ; d++ {
				y, m, dd := pl.Date()
				n := time.Date(y, m, dd+d, 12, 0, 0, 0, loc)
				if n.YearDay() == gl.YearDay() && n.Year() == gl.Year() {
					break
				}
				if days&(1<<uint(n.Weekday())) != 0 {
					t.Fatalf("%s: nextDue(%s, %d, %07b) = %s skips expected %s", zone, state.MsTime(base), interval, days, gl, n.Weekday())
				}
				if d > 8 {
					t.Fatalf("%s: nextDue(%s, %d, %07b) = %s is more than a week on", zone, state.MsTime(base), interval, days, gl)
				}
			}
		}
	}
}

// TestNextDueGaps: a due time moved onto a day where its local time does
// not exist (spring forward) or exists twice (fall back) lands on that day,
// at the normalised time, still on an expected day.
func TestNextDueGaps(t *testing.T) {
	ny := mustZone(t, "America/New_York")
	// Saturday 02:30 EST; Sunday only: Sunday 2024-03-10 02:30 does not
	// exist in New York; it is read with the offset before the change,
	// 02:30 EST = 03:30 EDT. (time.Date alone answers 01:30 EST, an hour
	// early.)
	base := time.Date(2024, 3, 8, 2, 30, 0, 0, ny).UnixMilli()
	got := state.MsTime(state.NextDue(base, 24*60, daysMask(time.Sunday), ny)).In(ny)
	if got.Weekday() != time.Sunday || got.Day() != 10 || got.Hour() != 3 || got.Minute() != 30 {
		t.Errorf("into the spring gap: %s, want Sunday 10 March 03:30 EDT", got)
	}
	// Saturday 01:30 EDT; Sunday only: Sunday 2024-11-03 01:30 happens
	// twice; either is on Sunday at 01:30.
	base = time.Date(2024, 11, 1, 1, 30, 0, 0, ny).UnixMilli()
	got = state.MsTime(state.NextDue(base, 24*60, daysMask(time.Sunday), ny)).In(ny)
	if got.Weekday() != time.Sunday || got.Day() != 3 || got.Hour() != 1 || got.Minute() != 30 {
		t.Errorf("into the autumn overlap: %s, want Sunday 3 November 01:30", got)
	}
}
