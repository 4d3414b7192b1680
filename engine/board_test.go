package engine

import (
	"backupmon/state"
	"fmt"
	"strings"
	"testing"
	"time"
)

// Tests of the dashboard's reads (board.go) and of a job's day grid
// (daygrid.go).

// brd drives one workspace through the engine's public commands.
type brd struct {
	t  *testing.T
	e  *Engine
	ws string
}

func newBoard(t *testing.T, zone string, at time.Time) *brd {
	t.Helper()
	e := pplOpen(t, t.TempDir(), at)
	return &brd{t: t, e: e, ws: pplWorkspace(t, e, "Board", zone)}
}

func (b *brd) client(name string) string {
	b.t.Helper()
	v, err := b.e.CreateClient(b.ws, ClientInput{Name: Some(name)})
	check(b.t, "create client "+name, err)
	return v.ID
}

// job makes a job every interval minutes with grace minutes, on every
// day unless days are given.
func (b *brd) job(client, name, vendor, host string, interval, grace int64, days ...string) string {
	b.t.Helper()
	sched := ScheduleInput{IntervalMinutes: Some(interval), GraceMinutes: Some(grace)}
	if len(days) > 0 {
		sched.ExpectedDays = Some(days)
	}
	v, err := b.e.CreateJob(b.ws, JobInput{ClientID: Some(client), Name: Some(name), Vendor: Some(vendor),
		Device:   Some(DeviceInput{Name: Some("device of " + name), Type: Some("server"), Hostname: Some(host)}),
		Schedule: Some(sched)})
	check(b.t, "create job "+name, err)
	return v.ID
}

func (b *brd) at(tm time.Time) { b.t.Helper(); pplClock(b.t, b.e, tm) }

// report records a result received now.
func (b *brd) report(job string, status uint8) {
	b.t.Helper()
	check(b.t, "import report", b.e.ImportReport(b.ws, job, ImportInput{ReceivedAt: b.e.Now(), Status: status, DurationSeconds: -1, SizeBytes: -1, Source: "api:test"}))
}

func (b *brd) page(job string) JobPage {
	b.t.Helper()
	p, err := b.e.BoardJob(b.ws, job)
	check(b.t, "board job", err)
	return p
}

// alert returns the id of the job's unresolved alert.
func (b *brd) alert(job string) string {
	b.t.Helper()
	p := b.page(job)
	if p.Job.Alert == nil {
		b.t.Fatalf("job %s has no unresolved alert", p.Job.Name)
	}
	return p.Job.Alert.ID
}

func (b *brd) act(alertID string, action AlertAction, until time.Time) {
	b.t.Helper()
	_, err := b.e.ChangeAlert(b.ws, alertID, action, until, "user:test@x.test", "")
	check(b.t, "alert action", err)
}

func (b *brd) queue() Queue {
	b.t.Helper()
	q, err := b.e.Queue(b.ws)
	check(b.t, "queue", err)
	return q
}

// queueString shows a queue as "Client[job job] Client[job]".
func queueString(q Queue) string {
	var parts []string
	for _, g := range q.Groups {
		var names []string
		for _, it := range g.Items {
			names = append(names, it.Job.Name)
		}
		parts = append(parts, g.ClientName+"["+strings.Join(names, " ")+"]")
	}
	return strings.Join(parts, " ")
}

func queueItems(q Queue) map[string]QueueItem {
	m := map[string]QueueItem{}
	for _, g := range q.Groups {
		for _, it := range g.Items {
			m[it.Job.Name] = it
		}
	}
	return m
}

// TestQueue: failed and missing jobs and jobs with an open alert appear,
// grouped by client; items and groups go worst first (open critical
// alert, open warning alert, the rest), then oldest; snoozed alerts leave
// their job out until the snooze ends; healthy jobs and resolved alerts
// never show.
func TestQueue(t *testing.T) {
	T0 := pplT0
	b := newBoard(t, "", T0)
	alpha, beta, gamma, delta, eps := b.client("Alpha"), b.client("Beta"), b.client("Gamma"), b.client("Delta"), b.client("Eps")
	mk := func(c, name string) string { return b.job(c, name, "veeam", name+".local", 1440, 60) }
	a1, a2, a3 := mk(alpha, "a1"), mk(alpha, "a2"), mk(alpha, "a3")
	b1, b2 := mk(beta, "b1"), mk(beta, "b2")
	g1 := mk(gamma, "g1")
	d1 := mk(delta, "d1")
	e1 := mk(eps, "e1")
	mk(eps, "w1") // waiting: never reported

	b.report(d1, ReportOK)
	b.at(T0.Add(1 * time.Hour))
	b.report(b2, ReportFailed)
	b.act(b.alert(b2), Acknowledge, time.Time{})
	b.at(T0.Add(2 * time.Hour))
	b.report(b1, ReportFailed)
	b.at(T0.Add(3 * time.Hour))
	b.report(a2, ReportWarn)
	b.at(T0.Add(4 * time.Hour))
	b.report(g1, ReportFailed)
	b.act(b.alert(g1), Snooze, T0.Add(6*time.Hour))
	b.report(e1, ReportWarn)
	b.act(b.alert(e1), Resolve, time.Time{})
	b.report(a1, ReportOK)
	b.at(T0.Add(5 * time.Hour))
	b.report(a3, ReportFailed)

	want := func(when, groups string, snoozed int) Queue {
		t.Helper()
		q := b.queue()
		if got := queueString(q); got != groups {
			t.Errorf("%s: queue %s, want %s", when, got, groups)
		}
		n := 0
		for _, g := range q.Groups {
			n += len(g.Items)
			for _, it := range g.Items {
				if it.Job.ClientID != g.ClientID || it.Job.ClientName != g.ClientName {
					t.Errorf("%s: item %s of client %s in group %s", when, it.Job.Name, it.Job.ClientName, g.ClientName)
				}
			}
		}
		if q.Items != n || q.Snoozed != snoozed {
			t.Errorf("%s: Items %d (%d listed), Snoozed %d; want %d, %d", when, q.Items, n, q.Snoozed, n, snoozed)
		}
		return q
	}
	since := func(q Queue, name string, at time.Time, rank int, alertStatus string) {
		t.Helper()
		it, ok := queueItems(q)[name]
		if !ok {
			t.Errorf("%s not in the queue", name)
			return
		}
		if it.Since != at.UnixMilli() || it.rank != rank {
			t.Errorf("%s: since %s rank %d, want %s rank %d", name, state.MsTime(it.Since), it.rank, at, rank)
		}
		got := ""
		if it.Job.Alert != nil {
			got = it.Job.Alert.Status + " " + it.Job.Alert.Severity
		}
		if got != alertStatus {
			t.Errorf("%s: alert %q, want %q", name, got, alertStatus)
		}
	}

	q := want("T0+5h", "Beta[b1 b2] Alpha[a3 a2]", 1)
	since(q, "b1", T0.Add(2*time.Hour), 0, "open critical")
	since(q, "b2", T0.Add(1*time.Hour), 2, "acknowledged critical")
	since(q, "a3", T0.Add(5*time.Hour), 0, "open critical")
	since(q, "a2", T0.Add(3*time.Hour), 1, "open warning")

	b.at(T0.Add(6*time.Hour - time.Millisecond))
	want("1 ms before the snooze ends", "Beta[b1 b2] Alpha[a3 a2]", 1)
	b.at(T0.Add(6 * time.Hour))
	q = want("the snooze ended", "Beta[b1 b2] Gamma[g1] Alpha[a3 a2]", 0)
	since(q, "g1", T0.Add(4*time.Hour), 0, "open critical")

	// d1 reported at T0, due T0+24h with 60 minutes of grace.
	b.at(T0.Add(25 * time.Hour))
	want("d1 at its due time plus grace", "Beta[b1 b2] Gamma[g1] Alpha[a3 a2]", 0)
	b.at(T0.Add(25*time.Hour + time.Millisecond))
	q = want("d1 missing", "Beta[b1 b2] Gamma[g1] Alpha[a3 a2] Delta[d1]", 0)
	since(q, "d1", T0.Add(25*time.Hour), 0, "open critical")
	if it := queueItems(q)["d1"]; it.Job.Status != state.StatusMissing {
		t.Errorf("d1 status %s", it.Job.Status)
	}

	// A resolved alert leaves the queue: by hand on a warning job, by an
	// ok report on a failed one.
	b.act(b.alert(a2), Resolve, time.Time{})
	b.report(b1, ReportOK)
	q = want("a2 and b1 resolved", "Gamma[g1] Alpha[a3] Delta[d1] Beta[b2]", 0)
	since(q, "b2", T0.Add(1*time.Hour), 2, "acknowledged critical")
	// Acknowledging d1's alert makes it rank with b2, after it (newer).
	b.act(b.alert(d1), Acknowledge, time.Time{})
	want("d1 acknowledged", "Gamma[g1] Alpha[a3] Beta[b2] Delta[d1]", 0)
	// Snoozing the worst of a group moves the group.
	b.act(b.alert(g1), Snooze, T0.Add(48*time.Hour))
	want("g1 snoozed again", "Alpha[a3] Beta[b2] Delta[d1]", 1)

	if _, err := b.e.Queue("nope"); err == nil {
		t.Errorf("queue of an unknown workspace")
	}
}

// TestQueueWithoutAlert: a job that needs attention without an alert
// (failed while paused, missing in a suspended workspace) ranks with the
// acknowledged ones, since its failure or its due time plus grace.
func TestQueueWithoutAlert(t *testing.T) {
	T0 := pplT0
	b := newBoard(t, "", T0)
	c := b.client("C")
	paused := b.job(c, "paused", "generic", "h", 1440, 60)
	late := b.job(c, "late", "generic", "h", 1440, 30)
	b.report(late, ReportOK)
	_, err := b.e.UpdateJob(b.ws, paused, JobInput{Paused: Some(true)})
	check(t, "pause", err)
	b.at(T0.Add(time.Hour))
	b.report(paused, ReportFailed)
	_, err = b.e.UpdateWorkspace(b.ws, WorkspaceInput{Status: Some("suspended")})
	check(t, "suspend", err)
	b.at(T0.Add(25 * time.Hour))
	q := b.queue()
	if got := queueString(q); got != "C[paused late]" {
		t.Fatalf("queue %s, want C[paused late]", got)
	}
	items := queueItems(q)
	if it := items["paused"]; it.Job.Alert != nil || it.Job.Status != state.StatusFailed || it.rank != 2 || it.Since != T0.Add(time.Hour).UnixMilli() {
		t.Errorf("paused job: status %s alert %v rank %d since %s", it.Job.Status, it.Job.Alert, it.rank, state.MsTime(it.Since))
	}
	if it := items["late"]; it.Job.Alert != nil || it.Job.Status != state.StatusMissing || it.rank != 2 || it.Since != T0.Add(24*time.Hour+30*time.Minute).UnixMilli() {
		t.Errorf("missing job: status %s alert %v rank %d since %s", it.Job.Status, it.Job.Alert, it.rank, state.MsTime(it.Since))
	}
}

// dayStates shows grid days as "MM-DD state/results".
func dayStates(grid []GridDay) []string {
	var out []string
	for _, d := range grid {
		out = append(out, fmt.Sprintf("%s %s/%d", d.Date[5:], d.State, d.Results))
	}
	return out
}

// checkGridShape checks a grid covers whole local days, from the first
// instant of each date (midnight, or the end of a gap where midnight does
// not exist) to the next one's, one after the other, the last holding now.
func checkGridShape(t *testing.T, grid []GridDay, loc *time.Location, now int64) {
	t.Helper()
	if len(grid) != gridDays {
		t.Fatalf("%d days, want %d", len(grid), gridDays)
	}
	date := func(ms int64) string { return state.MsTime(ms).In(loc).Format("2006-01-02") }
	for i, d := range grid {
		start := state.MsTime(d.Start).In(loc)
		if date(d.Start) != d.Date || date(d.End-1) != d.Date || date(d.Start-1) == d.Date || date(d.End) == d.Date || start.Day() != d.Day {
			t.Errorf("day %d: date %s day %d, [%s, %s)", i, d.Date, d.Day, start, state.MsTime(d.End).In(loc))
		}
		if i > 0 {
			if grid[i-1].End != d.Start {
				t.Errorf("day %d (%s) starts at %s, the day before ends at %s", i, d.Date, state.MsTime(d.Start), state.MsTime(grid[i-1].End))
			}
			y, m, dd := state.MsTime(grid[i-1].Start).In(loc).Date()
			if next := time.Date(y, m, dd+1, 12, 0, 0, 0, time.UTC).Format("2006-01-02"); next != d.Date {
				t.Errorf("day %d is %s, want %s", i, d.Date, next)
			}
		}
		if l := d.End - d.Start; l < 22*state.MsPerHour || l > 26*state.MsPerHour {
			t.Errorf("day %s lasts %d ms", d.Date, l)
		}
	}
	last := grid[len(grid)-1]
	if !(last.Start <= now && now < last.End) {
		t.Errorf("the last day %s [%s, %s) does not hold now %s", last.Date, state.MsTime(last.Start), state.MsTime(last.End), state.MsTime(now))
	}
}

func gridDay(t *testing.T, grid []GridDay, date string) GridDay {
	t.Helper()
	for _, d := range grid {
		if d.Date == date {
			return d
		}
	}
	t.Fatalf("no day %s in the grid (%s..%s)", date, grid[0].Date, grid[len(grid)-1].Date)
	return GridDay{}
}

func utc(s string) int64 {
	tm, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return tm.UnixMilli()
}

// TestDayGridWindow: 30 days ending today in the workspace's zone.
func TestDayGridWindow(t *testing.T) {
	for _, c := range []struct {
		zone, now, first, last string
		// optionally one day's bounds
		day, start, end string
	}{
		{"UTC", "2024-06-23T12:00:00Z", "2024-05-25", "2024-06-23", "", "", ""},
		{"UTC", "2024-06-23T00:00:00Z", "2024-05-25", "2024-06-23", "", "", ""},
		{"UTC", "2024-06-23T23:59:59.999Z", "2024-05-25", "2024-06-23", "", "", ""},
		// 22:00 the day before in New York.
		{"America/New_York", "2024-06-10T02:00:00Z", "2024-05-11", "2024-06-09", "", "", ""},
		// 00:15 the next day in Kathmandu (+05:45).
		{"Asia/Kathmandu", "2024-06-09T18:30:00Z", "2024-05-12", "2024-06-10", "", "", ""},
		// Across a month end and a leap day.
		{"Europe/London", "2024-03-10T12:00:00Z", "2024-02-10", "2024-03-10", "", "", ""},
		// Both DST changes of Europe/London in the window's reach.
		{"Europe/London", "2026-04-10T12:00:00Z", "2026-03-12", "2026-04-10", "2026-03-29", "2026-03-29T00:00:00Z", "2026-03-29T23:00:00Z"},
		{"Europe/London", "2026-11-10T12:00:00Z", "2026-10-12", "2026-11-10", "2026-10-25", "2026-10-24T23:00:00Z", "2026-10-26T00:00:00Z"},
		// Lord Howe moves by half an hour (7 April 2024).
		{"Australia/Lord_Howe", "2024-04-20T00:00:00Z", "2024-03-22", "2024-04-20", "2024-04-07", "2024-04-06T13:00:00Z", "2024-04-07T13:30:00Z"},
		// Havana skips midnight (10 March 2024: 00:00 is 01:00).
		{"America/Havana", "2024-03-20T12:00:00Z", "2024-02-20", "2024-03-20", "2024-03-10", "2024-03-10T05:00:00Z", "2024-03-11T04:00:00Z"},
	} {
		t.Run(c.zone+" "+c.now, func(t *testing.T) {
			x := newWorld(t, c.zone)
			j := x.job(x.client(t0, "active"), t0, 1440, 60, state.AllDays)
			now := utc(c.now)
			grid := x.w.dayGrid(j, now, gridDays)
			if grid[0].Date != c.first || grid[len(grid)-1].Date != c.last {
				t.Errorf("days %s..%s, want %s..%s", grid[0].Date, grid[len(grid)-1].Date, c.first, c.last)
			}
			checkGridShape(t, grid, x.w.Loc, now)
			if c.day != "" {
				if g := gridDay(t, grid, c.day); g.Start != utc(c.start) || g.End != utc(c.end) {
					t.Errorf("%s: [%s, %s), want [%s, %s)", c.day, state.MsTime(g.Start), state.MsTime(g.End), c.start, c.end)
				}
			}
		})
	}
}

// TestDayGridCurrentPause: "past pauses are not kept, so only the current
// one is left out" (dayGrid's comment): the days a job was overdue before
// its current pause stay missing, and the days inside the current pause
// are not missing, whether a report came during it or not.
func TestDayGridCurrentPause(t *testing.T) {
	d := func(s string) int64 { return utc("2024-" + s + ":00Z") } // "MM-DDTHH:MM"
	now := d("06-06T12:00")
	t.Run("paused while missing", func(t *testing.T) {
		x := newWorld(t, "UTC")
		j := x.job(x.client(t0, "active"), d("06-01T00:00"), 1440, 60, state.AllDays)
		x.report(j, d("06-01T06:00"), ReportOK)
		x.wantStatus(j, d("06-04T11:00"), state.StatusMissing) // since 06-02 07:00
		x.pause(j, d("06-04T12:00"), true, 0)
		x.wantStatus(j, now, state.StatusPaused)
		want := "06-01 ok/1, 06-02 missing/0, 06-03 missing/0, 06-04 missing/0, 06-05 none/0, 06-06 none/0"
		if got := strings.Join(dayStates(x.w.dayGrid(j, now, gridDays))[24:], ", "); got != want {
			t.Errorf("grid %s\nwant %s", got, want)
		}
	})
	t.Run("report during the pause", func(t *testing.T) {
		x := newWorld(t, "UTC")
		j := x.job(x.client(t0, "active"), d("06-01T00:00"), 1440, 60, state.AllDays)
		x.report(j, d("06-01T06:00"), ReportOK)
		x.pause(j, d("06-01T12:00"), true, 0)
		x.report(j, d("06-05T06:00"), ReportOK)
		x.wantStatus(j, now, state.StatusHealthy)
		want := "06-01 ok/1, 06-02 none/0, 06-03 none/0, 06-04 none/0, 06-05 ok/1, 06-06 none/0"
		if got := strings.Join(dayStates(x.w.dayGrid(j, now, gridDays))[24:], ", "); got != want {
			t.Errorf("grid %s\nwant %s", got, want)
		}
	})
}

// TestDayGridStates: each day shows its worst result; days without one
// are missing when the job was overdue in them, none otherwise and before
// the job existed.
func TestDayGridStates(t *testing.T) {
	x := newWorld(t, "UTC")
	d := func(s string) int64 { return utc("2024-" + s + ":00Z") } // "MM-DDTHH:MM"
	j := x.job(x.client(t0, "active"), d("06-03T01:00"), 1440, 60, state.AllDays)
	for _, r := range []struct {
		at     string
		status uint8
	}{
		{"06-03T06:00", ReportOK},
		{"06-04T06:00", ReportOK}, {"06-04T07:00", ReportFailed},
		{"06-05T06:00", ReportWarn},
		{"06-06T06:00", ReportOK}, {"06-06T08:00", ReportWarn},
		// Due 06-07 08:00, missing from 09:00 until the next report.
		{"06-10T06:00", ReportOK},
		{"06-11T05:00", ReportOK},
		{"06-12T05:30", ReportFailed},
		{"06-13T05:00", ReportOK},
		{"06-14T04:00", ReportOK}, {"06-14T23:30", ReportOK},
		// Due 06-15 23:30, grace to 06-16 00:30: never overdue, so 06-15
		// has no result and is not missing.
		{"06-16T00:15", ReportOK},
		{"06-17T00:00", ReportOK},
		{"06-18T00:00", ReportOK}, // exactly at its due time
		// Due 06-19 00:00: missing from 01:00 on.
	} {
		x.report(j, d(r.at), r.status)
	}
	now := d("06-22T12:00")
	x.wantStatus(j, now, state.StatusMissing)
	grid := x.w.dayGrid(j, now, gridDays)
	checkGridShape(t, grid, x.w.Loc, now)
	var want []string
	for day := 24; day <= 31; day++ {
		want = append(want, fmt.Sprintf("05-%02d none/0", day))
	}
	for day := 1; day <= 2; day++ {
		want = append(want, fmt.Sprintf("06-%02d none/0", day))
	}
	want = append(want,
		"06-03 ok/1", "06-04 failed/2", "06-05 warning/1", "06-06 warning/2",
		"06-07 missing/0", "06-08 missing/0", "06-09 missing/0",
		"06-10 ok/1", "06-11 ok/1", "06-12 failed/1", "06-13 ok/1", "06-14 ok/2",
		"06-15 none/0", "06-16 ok/1", "06-17 ok/1", "06-18 ok/1",
		"06-19 missing/0", "06-20 missing/0", "06-21 missing/0", "06-22 missing/0")
	if got := dayStates(grid); strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("grid:\n%s\nwant:\n%s", strings.Join(got, ", "), strings.Join(want, ", "))
	}
	// Just before the job turns missing, 06-19 is not yet missing.
	grid = x.w.dayGrid(j, d("06-19T01:00"), gridDays)
	if got := gridDay(t, grid, "2024-06-19"); got.State != DayNone {
		t.Errorf("06-19 at its due time plus grace: %s, want none", got.State)
	}
	grid = x.w.dayGrid(j, d("06-19T01:00")+1, gridDays)
	if got := gridDay(t, grid, "2024-06-19"); got.State != DayMissing {
		t.Errorf("06-19 1 ms after its due time plus grace: %s, want missing", got.State)
	}
	// A report ends the missing span at its receipt.
	x.report(j, d("06-22T12:00"), ReportOK)
	grid = x.w.dayGrid(j, d("06-23T12:00"), gridDays)
	if got := strings.Join(dayStates(grid)[25:], ", "); got != "06-19 missing/0, 06-20 missing/0, 06-21 missing/0, 06-22 ok/1, 06-23 none/0" {
		t.Errorf("after the report: %s", got)
	}
}

// TestDayGridCompletionTime: a result counts on the day it completed,
// even when it was received on another; results of the window's first
// minutes received just before it count too.
func TestDayGridCompletionTime(t *testing.T) {
	x := newWorld(t, "UTC")
	j := x.job(x.client(t0, "active"), utc("2024-05-01T00:00:00Z"), 1440, 60, state.AllDays)
	now := utc("2024-06-23T12:00:00Z") // the window starts 2024-05-25
	for day := 1; day <= 23; day++ {   // one a day, so no day is missing
		x.report(j, utc(fmt.Sprintf("2024-05-%02dT12:00:00Z", day)), ReportOK)
	}
	// Received at 23:57 on 05-24, completed 00:01 on 05-25 (a clock ahead).
	x.reportAt(j, utc("2024-05-24T23:57:00Z"), utc("2024-05-25T00:01:00Z"), ReportFailed)
	for day := 25; day <= 31; day++ {
		x.report(j, utc(fmt.Sprintf("2024-05-%02dT12:00:00Z", day)), ReportOK)
	}
	// Received 00:03 on 06-01, completed 23:58 on 05-31.
	x.reportAt(j, utc("2024-06-01T00:03:00Z"), utc("2024-05-31T23:58:00Z"), ReportWarn)
	for day := 1; day <= 22; day++ {
		x.report(j, utc(fmt.Sprintf("2024-06-%02dT12:00:00Z", day)), ReportOK)
	}
	grid := x.w.dayGrid(j, now, gridDays)
	for _, c := range []struct{ date, state string }{
		{"2024-05-25", "failed/2"}, {"2024-05-26", "ok/1"}, {"2024-05-31", "warning/2"}, {"2024-06-01", "ok/1"}, {"2024-06-22", "ok/1"}, {"2024-06-23", "none/0"},
	} {
		if g := gridDay(t, grid, c.date); fmt.Sprintf("%s/%d", g.State, g.Results) != c.state {
			t.Errorf("%s: %s/%d, want %s", c.date, g.State, g.Results, c.state)
		}
	}
	total := 0
	for _, g := range grid {
		total += g.Results
	}
	if total != 7+1+1+22 { // 05-25..05-31, the early one, the late one, 06-01..06-22
		t.Errorf("%d results in the grid", total)
	}
}

// TestDayGridBeforeFirstReport: a job that has not reported yet is
// waiting, never missing (jobStatus); the days before its first report
// must not turn missing once it arrives.
func TestDayGridBeforeFirstReport(t *testing.T) {
	x := newWorld(t, "UTC")
	created := utc("2024-06-03T06:00:00Z")
	j := x.job(x.client(t0, "active"), created, 1440, 60, state.AllDays)
	before := x.w.dayGrid(j, utc("2024-06-07T05:00:00Z"), gridDays)
	x.wantStatus(j, utc("2024-06-07T05:00:00Z"), state.StatusWaiting)
	for _, date := range []string{"2024-06-03", "2024-06-04", "2024-06-05", "2024-06-06", "2024-06-07"} {
		if g := gridDay(t, before, date); g.State != DayNone {
			t.Errorf("before the first report, %s: %s, want none", date, g.State)
		}
	}
	x.report(j, utc("2024-06-07T06:00:00Z"), ReportOK)
	after := x.w.dayGrid(j, utc("2024-06-07T07:00:00Z"), gridDays)
	for _, date := range []string{"2024-06-03", "2024-06-04", "2024-06-05", "2024-06-06"} {
		if g := gridDay(t, after, date); g.State != DayNone {
			t.Errorf("after the first report, %s: %s, want none (the job was waiting then, not missing)", date, g.State)
		}
	}
	if g := gridDay(t, after, "2024-06-07"); g.State != DayOK {
		t.Errorf("the first report's day: %s", g.State)
	}
}

// TestDayGridDST: the days of Europe/London's changes are 25 and 23 hours
// long and results fall on their local date.
func TestDayGridDST(t *testing.T) {
	type res struct {
		at     string
		status uint8
	}
	type day struct {
		date, start, end string
		state            string
		results          int
	}
	for _, c := range []struct {
		name, created, now string
		results            []res
		days               []day
	}{
		{
			name: "autumn", created: "2026-10-01T00:00:00Z", now: "2026-10-27T12:00:00Z",
			results: []res{
				{"2026-10-24T22:30:00Z", ReportOK},     // 23:30 BST on the 24th
				{"2026-10-25T00:30:00Z", ReportOK},     // 01:30 BST on the 25th
				{"2026-10-25T01:30:00Z", ReportWarn},   // 01:30 GMT on the 25th
				{"2026-10-25T23:30:00Z", ReportFailed}, // 23:30 GMT on the 25th
				{"2026-10-26T00:00:00Z", ReportOK},     // midnight GMT: the 26th
				{"2026-10-26T00:30:00Z", ReportOK},
			},
			days: []day{
				{"2026-10-24", "2026-10-23T23:00:00Z", "2026-10-24T23:00:00Z", DayOK, 1},
				{"2026-10-25", "2026-10-24T23:00:00Z", "2026-10-26T00:00:00Z", DayFailed, 3},
				{"2026-10-26", "2026-10-26T00:00:00Z", "2026-10-27T00:00:00Z", DayOK, 2},
			},
		},
		{
			name: "spring", created: "2026-03-20T00:00:00Z", now: "2026-04-05T12:00:00Z",
			results: []res{
				{"2026-03-28T23:30:00Z", ReportOK},         // 23:30 GMT on the 28th
				{"2026-03-29T00:30:00Z", ReportWarn},       // 00:30 GMT on the 29th
				{"2026-03-29T22:59:59.999Z", ReportFailed}, // 23:59:59.999 BST on the 29th
				{"2026-03-29T23:00:00Z", ReportOK},         // midnight BST: the 30th
			},
			days: []day{
				{"2026-03-28", "2026-03-28T00:00:00Z", "2026-03-29T00:00:00Z", DayOK, 1},
				{"2026-03-29", "2026-03-29T00:00:00Z", "2026-03-29T23:00:00Z", DayFailed, 2},
				{"2026-03-30", "2026-03-29T23:00:00Z", "2026-03-30T23:00:00Z", DayOK, 1},
			},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			x := newWorld(t, "Europe/London")
			j := x.job(x.client(utc(c.created), "active"), utc(c.created), 1440, 60, state.AllDays)
			for _, r := range c.results {
				x.report(j, utc(r.at), r.status)
			}
			now := utc(c.now)
			grid := x.w.dayGrid(j, now, gridDays)
			checkGridShape(t, grid, x.w.Loc, now)
			for _, want := range c.days {
				g := gridDay(t, grid, want.date)
				if g.Start != utc(want.start) || g.End != utc(want.end) {
					t.Errorf("%s: [%s, %s), want [%s, %s)", want.date, state.MsTime(g.Start), state.MsTime(g.End), want.start, want.end)
				}
				if g.State != want.state || g.Results != want.results {
					t.Errorf("%s: %s with %d results, want %s with %d", want.date, g.State, g.Results, want.state, want.results)
				}
			}
			long := map[string]int64{"2026-10-25": 25, "2026-03-29": 23}
			for _, g := range grid {
				want := int64(24)
				if h, ok := long[g.Date]; ok {
					want = h
				}
				if g.End-g.Start != want*state.MsPerHour {
					t.Errorf("%s lasts %s, want %dh", g.Date, time.Duration(g.End-g.Start)*time.Millisecond, want)
				}
			}
		})
	}
}

// TestBoardJobPage: a job's page through the engine: the grid in the
// workspace's zone, results and alerts newest first.
func TestBoardJobPage(t *testing.T) {
	start := time.Date(2026, 10, 20, 12, 0, 0, 0, time.UTC)
	b := newBoard(t, "Europe/London", start)
	c := b.client("Client")
	j := b.job(c, "Nightly", "veeam", "srv1", 1440, 60)
	b.at(time.Date(2026, 10, 27, 12, 0, 0, 0, time.UTC))
	var list []ImportInput
	for _, s := range []struct {
		at     string
		status uint8
	}{
		{"2026-10-21T12:00:00Z", ReportOK}, {"2026-10-22T12:00:00Z", ReportOK}, {"2026-10-23T12:00:00Z", ReportOK},
		{"2026-10-24T12:00:00Z", ReportOK},
		{"2026-10-25T00:30:00Z", ReportOK},     // 01:30 BST
		{"2026-10-25T23:30:00Z", ReportFailed}, // 23:30 GMT
		{"2026-10-26T12:00:00Z", ReportOK},
		{"2026-10-27T11:00:00Z", ReportWarn},
	} {
		list = append(list, ImportInput{ReceivedAt: time.UnixMilli(utc(s.at)), Status: s.status, DurationSeconds: 60, SizeBytes: 1000, Source: "api:test"})
	}
	check(t, "import", b.e.ImportReports(b.ws, j, list))
	p := b.page(j)
	now := b.e.Now().UnixMilli()
	loc, err := time.LoadLocation("Europe/London")
	check(t, "zone", err)
	checkGridShape(t, p.Grid, loc, now)
	d25 := gridDay(t, p.Grid, "2026-10-25")
	if d25.End-d25.Start != 25*state.MsPerHour || d25.Results != 2 || d25.State != DayFailed {
		t.Errorf("2026-10-25: %+v, want 25 hours, 2 results, failed", d25)
	}
	for _, c := range []struct{ date, state string }{
		{"2026-10-19", DayNone}, {"2026-10-20", DayNone}, {"2026-10-21", DayOK}, {"2026-10-26", DayOK}, {"2026-10-27", DayWarning},
	} {
		if g := gridDay(t, p.Grid, c.date); g.State != c.state {
			t.Errorf("%s: %s, want %s", c.date, g.State, c.state)
		}
	}
	if len(p.Results) != len(list) {
		t.Fatalf("%d results", len(p.Results))
	}
	for i, r := range p.Results {
		in := list[len(list)-1-i]
		if r.ReceivedAt != in.ReceivedAt.UnixMilli() || r.CompletedAt != in.ReceivedAt.UnixMilli() || r.Status != state.ResultName(in.Status) ||
			r.SizeBytes != 1000 || r.DurationSeconds != 60 || r.ID == "" {
			t.Errorf("result %d: %+v, want the one received at %s", i, r, in.ReceivedAt)
		}
	}
	if len(p.Alerts) != 2 || p.Alerts[0].Type != "warning" || p.Alerts[0].Status != "open" || p.Alerts[1].Status != "resolved" ||
		p.Alerts[1].CreatedAt != utc("2026-10-25T23:30:00Z") || p.Alerts[1].ResolvedAt != utc("2026-10-26T12:00:00Z") {
		t.Errorf("alerts %+v", p.Alerts)
	}
	if p.Job.Alert == nil || p.Job.Alert.ID != p.Alerts[0].ID {
		t.Errorf("the job's alert %+v", p.Job.Alert)
	}
	if p.Job.Name != "Nightly" || p.Job.Status != state.StatusWarning || p.Job.Vendor != "veeam" || p.Job.VendorName != "Veeam Backup & Replication" ||
		p.Job.Hostname != "srv1" || p.Job.ClientName != "Client" || p.Job.LastReportAt != utc("2026-10-27T11:00:00Z") ||
		p.Job.NextExpectedAt != utc("2026-10-28T11:00:00Z") || p.Job.CreatedAt != start.UnixMilli() {
		t.Errorf("job %+v", p.Job)
	}
	// More than 50 results: the newest 50.
	list = list[:0]
	for i := range 60 {
		list = append(list, ImportInput{ReceivedAt: time.UnixMilli(now - int64(60-i)*state.MsPerMinute), Status: ReportOK, DurationSeconds: -1, SizeBytes: -1})
	}
	check(t, "import more", b.e.ImportReports(b.ws, j, list))
	p = b.page(j)
	if len(p.Results) != 50 || p.Results[0].ReceivedAt != now-state.MsPerMinute || p.Results[49].ReceivedAt != now-50*state.MsPerMinute {
		t.Errorf("%d results, newest %s", len(p.Results), state.MsTime(p.Results[0].ReceivedAt))
	}
	if _, err := b.e.BoardJob(b.ws, pplUnknownID().String()); err == nil {
		t.Errorf("page of an unknown job")
	} else {
		wantError(t, "unknown job", err, KindNotFound, "", "job not found")
	}
}

// TestBoardJobsFilters: status, vendor, client and search filters, paging
// and the total.
func TestBoardJobsFilters(t *testing.T) {
	b := newBoard(t, "", pplT0)
	acme, globex := b.client("Acme"), b.client("Globex")
	sql := b.job(acme, "Nightly SQL", "veeam", "sql01.acme.local", 1440, 60)
	fs := b.job(acme, "File share", "datto", "fs01", 1440, 60)
	ex := b.job(globex, "Exchange", "veeam", "mail.globex", 1440, 60)
	lt := b.job(globex, "Laptop", "generic", "LT-ACME-7", 1440, 60)
	b.job(globex, "acme archive", "generic", "arc", 1440, 60) // waiting
	b.report(sql, ReportFailed)
	b.report(fs, ReportOK)
	b.report(ex, ReportWarn)
	b.report(lt, ReportOK)
	for _, c := range []struct {
		name  string
		f     JobFilter
		want  string
		total int
	}{
		{"all", JobFilter{}, "acme archive, Exchange, File share, Laptop, Nightly SQL", 5},
		{"failed", JobFilter{Status: state.StatusFailed}, "Nightly SQL", 1},
		{"healthy", JobFilter{Status: state.StatusHealthy}, "File share, Laptop", 2},
		{"warning", JobFilter{Status: state.StatusWarning}, "Exchange", 1},
		{"waiting", JobFilter{Status: state.StatusWaiting}, "acme archive", 1},
		{"missing", JobFilter{Status: state.StatusMissing}, "", 0},
		{"unknown status", JobFilter{Status: "bogus"}, "", 0},
		{"vendor", JobFilter{Vendor: "veeam"}, "Exchange, Nightly SQL", 2},
		{"unknown vendor", JobFilter{Vendor: "nobody"}, "", 0},
		{"client", JobFilter{ClientID: acme}, "File share, Nightly SQL", 2},
		{"unknown client", JobFilter{ClientID: pplUnknownID().String()}, "", 0},
		{"bad client id", JobFilter{ClientID: "x"}, "", 0},
		{"search name, client or hostname", JobFilter{Search: "ACME"}, "acme archive, File share, Laptop, Nightly SQL", 4},
		{"search hostname", JobFilter{Search: "sql01"}, "Nightly SQL", 1},
		{"search name", JobFilter{Search: "exch"}, "Exchange", 1},
		{"search client", JobFilter{Search: "globex"}, "acme archive, Exchange, Laptop", 3},
		{"search nothing", JobFilter{Search: "zzz"}, "", 0},
		{"search is not the vendor", JobFilter{Search: "veeam"}, "", 0},
		{"client and vendor", JobFilter{ClientID: globex, Vendor: "generic"}, "acme archive, Laptop", 2},
		{"client and status", JobFilter{ClientID: acme, Status: state.StatusHealthy}, "File share", 1},
		{"vendor and search", JobFilter{Vendor: "veeam", Search: "acme"}, "Nightly SQL", 1},
		{"limit", JobFilter{Limit: 2}, "acme archive, Exchange", 5},
		{"offset and limit", JobFilter{Offset: 2, Limit: 2}, "File share, Laptop", 5},
		{"last page", JobFilter{Offset: 4, Limit: 2}, "Nightly SQL", 5},
		{"past the end", JobFilter{Offset: 10, Limit: 2}, "", 5},
		{"offset without limit", JobFilter{Offset: 3}, "Laptop, Nightly SQL", 5},
		{"filter with paging", JobFilter{Vendor: "veeam", Offset: 1, Limit: 1}, "Nightly SQL", 2},
		{"search with paging", JobFilter{Search: "acme", Limit: 3}, "acme archive, File share, Laptop", 4},
	} {
		t.Run(c.name, func(t *testing.T) {
			jobs, total, err := b.e.BoardJobs(b.ws, c.f)
			check(t, "board jobs", err)
			var names []string
			for _, j := range jobs {
				names = append(names, j.Name)
			}
			if got := strings.Join(names, ", "); got != c.want || total != c.total {
				t.Errorf("%q (total %d), want %q (total %d)", got, total, c.want, c.total)
			}
		})
	}
	jobs, _, _ := b.e.BoardJobs(b.ws, JobFilter{Search: "sql01"})
	if len(jobs) == 1 {
		j := jobs[0]
		if j.ID != sql || j.ClientID != acme || j.ClientName != "Acme" || j.Status != state.StatusFailed || j.LastResult != "failed" ||
			j.Vendor != "veeam" || j.Hostname != "sql01.acme.local" || j.Alert == nil || j.Alert.Severity != "critical" ||
			j.IntervalMinutes != 1440 || j.GraceMinutes != 60 || len(j.ExpectedDays) != 7 {
			t.Errorf("job %+v", j)
		}
	}
	// The status filter follows the clock: the jobs go missing after their
	// due time plus grace.
	b.at(pplT0.Add(25*time.Hour + time.Millisecond))
	if jobs, total, _ := b.e.BoardJobs(b.ws, JobFilter{Status: state.StatusMissing}); total != 4 || len(jobs) != 4 {
		t.Errorf("%d missing jobs (%d listed), want 4", total, len(jobs))
	}
	if _, _, err := b.e.BoardJobs("nope", JobFilter{}); err == nil {
		t.Errorf("jobs of an unknown workspace")
	}
}

// TestBoardAlerts: status filters (with ended snoozes read as open),
// newest first, paging and the total; BoardAlertsByID.
func TestBoardAlerts(t *testing.T) {
	T0 := pplT0
	b := newBoard(t, "", T0)
	c := b.client("Client")
	var jobs []string
	for i := 1; i <= 5; i++ {
		jobs = append(jobs, b.job(c, fmt.Sprintf("j%d", i), "generic", "h", 1440, 60))
	}
	b.at(T0.Add(1 * time.Hour))
	b.report(jobs[0], ReportFailed)
	a1 := b.alert(jobs[0])
	b.at(T0.Add(2 * time.Hour))
	b.report(jobs[1], ReportWarn)
	a2 := b.alert(jobs[1])
	b.act(a2, Acknowledge, time.Time{})
	b.at(T0.Add(3 * time.Hour))
	b.report(jobs[2], ReportFailed)
	a3 := b.alert(jobs[2])
	b.act(a3, Snooze, T0.Add(10*time.Hour))
	b.at(T0.Add(4 * time.Hour))
	b.report(jobs[3], ReportFailed)
	a4 := b.alert(jobs[3])
	b.at(T0.Add(4*time.Hour + 30*time.Minute))
	b.report(jobs[3], ReportOK)
	b.at(T0.Add(5 * time.Hour))
	b.report(jobs[4], ReportFailed)
	a5 := b.alert(jobs[4])
	b.act(a5, Snooze, T0.Add(5*time.Hour+30*time.Minute))
	b.at(T0.Add(6 * time.Hour))

	name := map[string]string{a1: "a1", a2: "a2", a3: "a3", a4: "a4", a5: "a5"}
	show := func(list []BoardAlert) string {
		var out []string
		for _, a := range list {
			out = append(out, name[a.ID])
		}
		return strings.Join(out, " ")
	}
	for _, c := range []struct {
		status        string
		offset, limit int
		want          string
		total         int
	}{
		{AlertsAll, 0, 10, "a5 a4 a3 a2 a1", 5},
		{"open", 0, 10, "a5 a1", 2},
		{"acknowledged", 0, 10, "a2", 1},
		{"snoozed", 0, 10, "a3", 1},
		{"resolved", 0, 10, "a4", 1},
		{AlertsUnresolved, 0, 10, "a5 a3 a2 a1", 4},
		{"bogus", 0, 10, "", 0},
		{AlertsAll, 1, 2, "a4 a3", 5},
		{AlertsAll, 4, 10, "a1", 5},
		{AlertsAll, 5, 10, "", 5},
		{AlertsAll, 0, 0, "", 5},
		{AlertsUnresolved, 2, 1, "a2", 4},
		{"open", 1, 1, "a1", 2},
	} {
		t.Run(fmt.Sprintf("%s %d+%d", c.status, c.offset, c.limit), func(t *testing.T) {
			list, total, err := b.e.BoardAlerts(b.ws, c.status, c.offset, c.limit)
			check(t, "board alerts", err)
			if got := show(list); got != c.want || total != c.total {
				t.Errorf("%q (total %d), want %q (total %d)", got, total, c.want, c.total)
			}
		})
	}
	all, _, _ := b.e.BoardAlerts(b.ws, AlertsAll, 0, 10)
	byName := map[string]BoardAlert{}
	for _, a := range all {
		byName[name[a.ID]] = a
	}
	if a := byName["a1"]; a.JobID != jobs[0] || a.JobName != "j1" || a.ClientID != c || a.ClientName != "Client" || a.Type != "failed" ||
		a.Severity != "critical" || a.Status != "open" || a.Summary == "" || a.CreatedAt != T0.Add(time.Hour).UnixMilli() ||
		a.AcknowledgedAt != 0 || a.SnoozedUntil != 0 || a.ResolvedAt != 0 || a.NextRunAt != T0.Add(25*time.Hour).UnixMilli() {
		t.Errorf("a1 %+v", a)
	}
	if a := byName["a2"]; a.Type != "warning" || a.Severity != "warning" || a.Status != "acknowledged" || a.AcknowledgedAt != T0.Add(2*time.Hour).UnixMilli() {
		t.Errorf("a2 %+v", a)
	}
	if a := byName["a3"]; a.Status != "snoozed" || a.SnoozedUntil != T0.Add(10*time.Hour).UnixMilli() {
		t.Errorf("a3 %+v", a)
	}
	if a := byName["a4"]; a.Status != "resolved" || a.ResolvedAt != T0.Add(4*time.Hour+30*time.Minute).UnixMilli() {
		t.Errorf("a4 %+v", a)
	}
	if a := byName["a5"]; a.Status != "open" || a.SnoozedUntil != 0 {
		t.Errorf("a5 (its snooze ended) %+v", a)
	}

	// By id: in the order given, unknown ids skipped.
	list, err := b.e.BoardAlertsByID(b.ws, []string{a3, "bogus", a1, pplUnknownID().String(), strings.ToUpper(a4), a2})
	check(t, "by id", err)
	if got := show(list); got != "a3 a1 a4 a2" {
		t.Errorf("by id: %q, want a3 a1 a4 a2", got)
	}
	if list[0] != byName["a3"] {
		t.Errorf("by id a3 %+v, want %+v", list[0], byName["a3"])
	}
	list, err = b.e.BoardAlertsByID(b.ws, nil)
	if err != nil || len(list) != 0 {
		t.Errorf("by no id: %v %v", list, err)
	}
	// An alert of another workspace is not found.
	other := pplWorkspace(t, b.e, "Other", "")
	list, err = b.e.BoardAlertsByID(other, []string{a1})
	if err != nil || len(list) != 0 {
		t.Errorf("another workspace's alert: %v %v", list, err)
	}
	if _, err := b.e.BoardAlertsByID("nope", []string{a1}); err == nil {
		t.Errorf("alerts by id of an unknown workspace")
	}
	if _, _, err := b.e.BoardAlerts("nope", AlertsAll, 0, 10); err == nil {
		t.Errorf("alerts of an unknown workspace")
	}
}

// TestBoardKeys: newest first (ids break ties), scopes for REST keys only.
func TestBoardKeys(t *testing.T) {
	T0 := pplT0
	b := newBoard(t, "", T0)
	mk := func(in KeyInput) KeyView {
		t.Helper()
		k, err := b.e.CreateKey(b.ws, in)
		check(t, "create key "+in.Name.V, err)
		return k
	}
	report := mk(KeyInput{Name: Some("report"), Type: Some("report")})
	b.at(T0.Add(time.Minute))
	rest := mk(KeyInput{Name: Some("rest"), Type: Some("rest"), Scopes: Some([]string{"alerts:read", "jobs:read"})})
	b.at(T0.Add(2 * time.Minute))
	assistant := mk(KeyInput{Name: Some("assistant"), Type: Some("assistant"), Access: Some("read-write"), ExpiresAt: Some(T0.Add(48 * time.Hour))})
	b.at(T0.Add(3 * time.Minute))
	same1 := mk(KeyInput{Name: Some("same1"), Type: Some("rest")})
	same2 := mk(KeyInput{Name: Some("same2"), Type: Some("assistant")})

	keys, err := b.e.BoardKeys(b.ws)
	check(t, "board keys", err)
	var names []string
	for _, k := range keys {
		names = append(names, k.Name)
	}
	if got := strings.Join(names, " "); got != "same2 same1 assistant rest report" {
		t.Fatalf("keys %q, want same2 same1 assistant rest report", got)
	}
	want := []struct {
		v         KeyView
		typ       string
		rw        bool
		scopes    string
		createdAt time.Time
		expiresAt int64
	}{
		{same2, "assistant", false, "<nil>", T0.Add(3 * time.Minute), 0},
		{same1, "rest", false, "[workspace:read clients:read jobs:read reports:read alerts:read health:read]", T0.Add(3 * time.Minute), 0},
		{assistant, "assistant", true, "<nil>", T0.Add(2 * time.Minute), T0.Add(48 * time.Hour).UnixMilli()},
		{rest, "rest", false, "[workspace:read jobs:read alerts:read]", T0.Add(time.Minute), 0},
		{report, "report", false, "<nil>", T0, 0},
	}
	for i, w := range want {
		k := keys[i]
		scopes := "<nil>"
		if k.Scopes != nil {
			scopes = fmt.Sprint(k.Scopes)
		}
		if k.ID != w.v.ID || k.Type != w.typ || k.ReadWrite != w.rw || scopes != w.scopes || k.CreatedAt != w.createdAt.UnixMilli() ||
			k.ExpiresAt != w.expiresAt || k.LastUsedAt != 0 || len(k.Prefix) != 16 || !strings.HasPrefix(w.v.Key, k.Prefix) {
			t.Errorf("key %d: %+v, want %s %s rw %v scopes %s created %s", i, k, w.v.ID, w.typ, w.rw, w.scopes, w.createdAt)
		}
	}
	// A use shows; a revoked key goes.
	c := b.client("C")
	j := b.job(c, "J", "generic", "h", 60, 0)
	b.at(T0.Add(time.Hour))
	if r := b.e.Report(HashKey([]byte(report.Key)), &ReportInput{JobID: j, Status: ReportOK, SizeBytes: -1, DurationSeconds: -1}); r.Outcome != ReportRecorded {
		t.Fatalf("report outcome %d", r.Outcome)
	}
	check(t, "revoke", b.e.RevokeKey(b.ws, same1.ID, ""))
	keys, _ = b.e.BoardKeys(b.ws)
	names = names[:0]
	for _, k := range keys {
		names = append(names, k.Name)
		if k.Name == "report" && k.LastUsedAt != T0.Add(time.Hour).UnixMilli() {
			t.Errorf("report key last used %s", state.MsTime(k.LastUsedAt))
		}
	}
	if got := strings.Join(names, " "); got != "same2 assistant rest report" {
		t.Errorf("after revoking: %q", got)
	}
	other := pplWorkspace(t, b.e, "Empty", "")
	if keys, err := b.e.BoardKeys(other); err != nil || len(keys) != 0 {
		t.Errorf("keys of a workspace without keys: %v %v", keys, err)
	}
}

// TestBoardAlertNextRunAt: an alert's NextRunAt is its job's next expected run
// strictly after now, even for a job long overdue; 0 when the job is not
// monitored.
func TestBoardAlertNextRunAt(t *testing.T) {
	T0 := pplT0 // a Monday, 09:00 UTC
	b := newBoard(t, "", T0)
	c := b.client("C")
	daily := b.job(c, "daily", "generic", "h", 1440, 60)
	b.report(daily, ReportFailed)
	next := func(job string) int64 {
		t.Helper()
		p := b.page(job)
		if p.Job.Alert == nil {
			t.Fatalf("%s has no alert", p.Job.Name)
		}
		list, err := b.e.BoardAlertsByID(b.ws, []string{p.Job.Alert.ID})
		check(t, "by id", err)
		if len(list) != 1 || list[0].NextRunAt != p.Job.Alert.NextRunAt {
			t.Fatalf("alert by id %+v, job's %+v", list, p.Job.Alert)
		}
		return p.Job.Alert.NextRunAt
	}
	for _, c := range []struct {
		name string
		at   time.Time
		want time.Time
	}{
		{"before the due time", T0.Add(time.Hour), T0.Add(24 * time.Hour)},
		{"1 ms before the due time", T0.Add(24*time.Hour - time.Millisecond), T0.Add(24 * time.Hour)},
		{"at the due time", T0.Add(24 * time.Hour), T0.Add(48 * time.Hour)},
		{"overdue, missing", T0.Add(3*24*time.Hour + 2*time.Hour), T0.Add(4 * 24 * time.Hour)},
		{"overdue by 40 days", T0.Add(40*24*time.Hour + time.Minute), T0.Add(41 * 24 * time.Hour)},
	} {
		t.Run("daily "+c.name, func(t *testing.T) {
			b.at(c.at)
			if got := next(daily); got != c.want.UnixMilli() {
				t.Errorf("NextRunAt %s, want %s", state.MsTime(got), c.want)
			}
		})
	}

	// A weekday job that failed on a Friday: due the Monday after.
	b2 := newBoard(t, "Europe/London", T0.Add(4*24*time.Hour)) // Friday 09:00 (GMT in January)
	c2 := b2.client("C")
	wk := b2.job(c2, "weekdays", "generic", "h", 1440, 60, "mon", "tue", "wed", "thu", "fri")
	b2.report(wk, ReportFailed)
	for _, c := range []struct {
		name string
		at   time.Time
		want time.Time
	}{
		{"the weekend", T0.Add(5*24*time.Hour + time.Hour), T0.Add(7 * 24 * time.Hour)},
		{"overdue since Monday", T0.Add(8*24*time.Hour + time.Hour), T0.Add(9 * 24 * time.Hour)},
		{"overdue into the next weekend", T0.Add(12*24*time.Hour + time.Hour), T0.Add(14 * 24 * time.Hour)},
	} {
		t.Run("weekdays "+c.name, func(t *testing.T) {
			b2.at(c.at)
			p := b2.page(wk)
			if p.Job.Alert == nil || p.Job.Alert.NextRunAt != c.want.UnixMilli() {
				t.Errorf("alert %+v, want NextRunAt %s", p.Job.Alert, c.want)
			}
		})
	}

	// Paused: no next run; resumed: the next run after now.
	b.at(T0.Add(41 * 24 * time.Hour))
	_, err := b.e.UpdateJob(b.ws, daily, JobInput{Paused: Some(true)})
	check(t, "pause", err)
	if got := next(daily); got != 0 {
		t.Errorf("paused job's NextRunAt %s, want 0", state.MsTime(got))
	}
	_, err = b.e.UpdateJob(b.ws, daily, JobInput{Paused: Some(false)})
	check(t, "resume", err)
	if got := next(daily); got <= b.e.Now().UnixMilli() {
		t.Errorf("resumed job's NextRunAt %s, not after now %s", state.MsTime(got), b.e.Now())
	}
}

// TestBoardAlertNextRunAtLongOverdue: a 5-minute job overdue for days:
// its alert's next run is still after now, on its 5-minute grid.
func TestBoardAlertNextRunAtLongOverdue(t *testing.T) {
	T0 := pplT0
	for _, days := range []int{1, 4, 30} {
		t.Run(fmt.Sprintf("5-minute job overdue %d days", days), func(t *testing.T) {
			b3 := newBoard(t, "", T0)
			c3 := b3.client("C")
			j := b3.job(c3, "often", "generic", "h", 5, 0)
			b3.report(j, ReportFailed)
			now := T0.Add(time.Duration(days)*24*time.Hour + 2*time.Minute)
			b3.at(now)
			p := b3.page(j)
			want := T0.Add(time.Duration(days)*24*time.Hour + 5*time.Minute).UnixMilli()
			if p.Job.Alert == nil {
				t.Fatalf("no alert")
			}
			if got := p.Job.Alert.NextRunAt; got != want {
				t.Errorf("NextRunAt %s, want %s (after now %s)", state.MsTime(got), state.MsTime(want), now)
			}
		})
	}
}
