package engine

import (
	"math/rand/v2"
	"testing"

	"backupmon/wal"
)

// healthScan is health computed the plain way, every job's status and
// results worked out at now: what health must equal when it takes them
// from the jobs' kept encodings (keptFigures).
func healthScan(w *workspace, now int64, days int, only *client) healthFigures {
	h := healthFigures{from: now - int64(days)*msPerDay, to: now, days: days}
	var all tally
	var rated, meeting int64
	add := func(c *client) {
		h.clients++
		needs := false
		for _, j := range c.jobList {
			st := w.jobStatus(j, now)
			h.counts.add(st)
			open := false
			if a := j.alert; a != nil {
				h.unresolved++
				if open = alertStatus(a, now) == alertOpen; open {
					h.open++
				}
			}
			if needsAttention(st, open) {
				needs = true
			}
			t := j.resultsSince(h.from)
			all.add(t)
			if t.total() > 0 {
				rated++
				if rate(t.ok, t.total()).meets(j.slaTarget) {
					meeting++
				}
			}
		}
		if needs {
			h.needing++
		}
	}
	if only != nil {
		add(only)
	} else {
		for _, c := range w.clientList {
			if c.status != "archived" {
				add(c)
			}
		}
	}
	h.success = rate(all.ok, all.total())
	h.reports = all.total()
	h.sla = rate(meeting, rated)
	return h
}

// clientFiguresScan is clientFigures computed the plain way.
func clientFiguresScan(w *workspace, c *client, now int64) ClientFigures {
	var f ClientFigures
	var all tally
	for _, j := range c.jobs {
		st := w.jobStatus(j, now)
		f.Jobs.add(st)
		open := j.alert != nil && alertStatus(j.alert, now) == alertOpen
		if open {
			f.OpenAlerts++
		}
		if needsAttention(st, open) {
			f.NeedsAttention = true
		}
		t := j.resultsSince(now - slaPeriodDays*msPerDay)
		all.add(t)
		if t.total() > 0 {
			if rate(t.ok, t.total()).meets(j.slaTarget) {
				f.JobsMeetingTarget++
			} else {
				f.JobsBelowTarget++
			}
		}
	}
	f.SuccessRate = rate(all.ok, all.total())
	f.Reports = all.total()
	return f
}

// TestHealthFromKeptFiguresMatchesAScan (and client figures) moves the clock in steps of a
// minute to two days over a workspace whose jobs report, miss, pause and
// resume, whose clients pause and are archived, and whose alerts are
// acknowledged and snoozed, and compares health at each step (for the
// workspace and for each client, with the kept figures and with other
// periods) with a plain scan. Jobs are also listed now and then, as /jobs
// does, which keeps their encodings.
func TestHealthFromKeptFiguresMatchesAScan(t *testing.T) {
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 7))
		x := newWorld(t, []string{"UTC", "Europe/Berlin", "America/New_York"}[seed%3])
		now := t0
		var clients []*client
		var jobs []*job
		for range 3 {
			clients = append(clients, x.client(now, "active"))
		}
		for i := range 12 {
			days := uint8(allDays)
			if i%4 == 3 {
				days = 0b0111110 // weekdays
			}
			jobs = append(jobs, x.job(clients[i%3], now, []int64{60, 720, 1440}[i%3], int64(r.IntN(180)), days))
		}
		for step := range 300 {
			now += []int64{msPerMinute, 7 * msPerMinute, msPerHour, 5 * msPerHour, 2 * msPerDay}[r.IntN(5)] + int64(r.IntN(60000))
			j := jobs[r.IntN(len(jobs))]
			switch r.IntN(13) {
			case 0, 1, 2, 3:
				x.report(j, now, []uint8{ReportOK, ReportOK, ReportOK, ReportWarn, ReportFailed}[r.IntN(5)])
			case 4:
				x.reportAt(j, now, now-int64(r.IntN(3*86400))*msPerSecond, ReportOK)
			case 5:
				until := int64(0)
				if r.IntN(2) == 0 {
					until = now + int64(1+r.IntN(72))*msPerHour
				}
				x.pause(j, now, !j.paused, until)
			case 6:
				c := clients[r.IntN(len(clients))]
				x.clientStatus(c, now, []string{"active", "active", "paused", "archived"}[r.IntN(4)])
			case 7:
				if j.alert != nil {
					action := []uint8{wal.AlertAcknowledge, wal.AlertSnooze}[r.IntN(2)]
					until := int64(0)
					if action == wal.AlertSnooze {
						until = now + int64(1+r.IntN(48))*msPerHour
					}
					x.alertAction(j.alert, now, action, until)
				}
			case 8:
				w := x.w
				for _, jj := range w.jobList {
					w.appendJob(nil, jj, now)
				}
			case 9:
				x.w.prune(now, 20*msPerDay) // retention drops results with no record
			}
			for _, days := range []int{slaPeriodDays, 1, 7, 90} {
				if got, want := x.w.health(now, days, nil), healthScan(x.w, now, days, nil); got != want {
					t.Fatalf("seed %d step %d, %d days: health %+v, scan %+v", seed, step, days, got, want)
				}
			}
			for _, c := range clients {
				if got, want := x.w.health(now, slaPeriodDays, c), healthScan(x.w, now, slaPeriodDays, c); got != want {
					t.Fatalf("seed %d step %d, client: health %+v, scan %+v", seed, step, got, want)
				}
				if got, want := x.w.clientFigures(c, now), clientFiguresScan(x.w, c, now); got != want {
					t.Fatalf("seed %d step %d: client figures %+v, scan %+v", seed, step, got, want)
				}
			}
		}
	}
}
