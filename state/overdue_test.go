package state

import (
	"testing"
	"time"
)

// OverdueOf: the due time passed and the expected runs whose grace has
// passed since, every day or on chosen weekdays; nothing while on time or
// not monitored.
func TestOverdueOf(t *testing.T) {
	berlin, _ := time.LoadLocation("Europe/Berlin")
	w := &Workspace{Loc: berlin}
	// The last report: Monday 23 November 2026, 03:19 Berlin time.
	base := time.Date(2026, 11, 23, 3, 19, 0, 0, berlin).UnixMilli()
	job := func(interval, grace int64, days uint8) *Job {
		return &Job{Client: &Client{Status: "active"}, DueBase: base, IntervalMinutes: interval, GraceMinutes: grace, ExpectedDays: days}
	}
	due := base + 1440*MsPerMinute // Tuesday 03:19
	at := func(d time.Duration) int64 { return due + d.Milliseconds() }
	weekdays := uint8(0x3e) // mon..fri (bit 0 is Sunday)
	for _, tc := range []struct {
		name string
		j    *Job
		now  int64
		want Overdue
	}{
		{"before the due time", job(1440, 60, AllDays), at(-time.Minute), Overdue{}},
		{"at the due time", job(1440, 60, AllDays), at(0), Overdue{}},
		{"within the grace", job(1440, 60, AllDays), at(30 * time.Minute), Overdue{Since: due, Minutes: 30}},
		{"grace just passed", job(1440, 60, AllDays), at(61 * time.Minute), Overdue{Since: due, Minutes: 61, Missed: 1}},
		{"2 d 8 h 6 min, no grace", job(1440, 0, AllDays), at(3366 * time.Minute), Overdue{Since: due, Minutes: 3366, Missed: 3}},
		{"2 d 8 h 6 min, 1 d grace", job(1440, 1440, AllDays), at(3366 * time.Minute), Overdue{Since: due, Minutes: 3366, Missed: 2}},
		{"exactly at a later due time's grace end", job(1440, 0, AllDays), at(48 * time.Hour), Overdue{Since: due, Minutes: 2880, Missed: 2}},
		{"every 5 min for 30 days", job(5, 0, AllDays), at(30 * 24 * time.Hour), Overdue{Since: base + 5*MsPerMinute, Minutes: 43200 + 1435, Missed: MaxMissedRuns, More: true}},
		{"every 5 min for an hour", job(5, 0, AllDays), base + 65*MsPerMinute, Overdue{Since: base + 5*MsPerMinute, Minutes: 60, Missed: 12}},
		// Tuesday 03:19 missed; Wednesday, Thursday, Friday too; none at
		// the weekend; Monday 03:19 passed by Monday 10:00.
		{"weekdays over a weekend", job(1440, 0, weekdays), at(6*24*time.Hour + 7*time.Hour), Overdue{Since: due, Minutes: (6*24 + 7) * 60, Missed: 5}},
		{"weekdays, every 5 min", job(5, 0, weekdays), at(30 * 24 * time.Hour), Overdue{Since: base + 5*MsPerMinute, Minutes: 43200 + 1435, Missed: MaxMissedRuns, More: true}},
		{"paused", func() *Job { j := job(1440, 0, AllDays); j.Paused = true; return j }(), at(3 * 24 * time.Hour), Overdue{}},
		{"client paused", func() *Job { j := job(1440, 0, AllDays); j.Client.Status = "paused"; return j }(), at(3 * 24 * time.Hour), Overdue{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := w.OverdueOf(tc.j, tc.now); got != tc.want {
				t.Errorf("OverdueOf = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestSpanText(t *testing.T) {
	for _, tc := range []struct {
		minutes int64
		want    string
	}{
		{0, "0 min"}, {1, "1 min"}, {59, "59 min"}, {60, "1 h"}, {61, "1 h 1 min"}, {185, "3 h 5 min"},
		{1439, "23 h 59 min"}, {1440, "1 d"}, {2880, "2 d"}, {3366, "2 d 8 h"}, {1441, "1 d"}, {-5, "0 min"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			if got := SpanText(tc.minutes); got != tc.want {
				t.Errorf("SpanText(%d) = %q, want %q", tc.minutes, got, tc.want)
			}
		})
	}
}

func TestMissedText(t *testing.T) {
	for _, tc := range []struct {
		o    Overdue
		want string
	}{
		{Overdue{Missed: 1}, "1 expected run missed"},
		{Overdue{Missed: 3}, "3 expected runs missed"},
		{Overdue{Missed: MaxMissedRuns, More: true}, "999+ expected runs missed"},
	} {
		if got := tc.o.MissedText(); got != tc.want {
			t.Errorf("(%+v).MissedText() = %q, want %q", tc.o, got, tc.want)
		}
	}
}
