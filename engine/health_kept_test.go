package engine

import (
	"testing"

	"backupmon/state"
)

// clientFiguresScan is clientFigures computed the plain way.
func clientFiguresScan(w *workspace, c *state.Client, now int64) state.ClientFigures {
	var f state.ClientFigures
	var all state.Tally
	for _, j := range c.Jobs {
		st := w.JobStatus(j, now)
		f.Jobs.Add(st)
		open := j.Alert != nil && state.AlertStatus(j.Alert, now) == state.AlertOpen
		if open {
			f.OpenAlerts++
		}
		if state.NeedsAttention(st, open) {
			f.NeedsAttention = true
		}
		t := j.ResultsSince(now - state.SLAPeriodDays*state.MsPerDay)
		all.Add(t)
		if t.Total() > 0 {
			if state.RateOf(t.OK, t.Total()).Meets(j.SLATarget) {
				f.JobsMeetingTarget++
			} else {
				f.JobsBelowTarget++
			}
		}
	}
	f.SuccessRate = state.RateOf(all.OK, all.Total())
	f.Reports = all.Total()
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
		r, x, clients := randomWorld(t, seed, 7, "UTC", "Europe/Berlin", "America/New_York")
		now := t0
		var jobs []*state.Job
		for i := range 12 {
			days := uint8(state.AllDays)
			if i%4 == 3 {
				days = 0b0111110 // weekdays
			}
			jobs = append(jobs, x.job(clients[i%3], now, []int64{60, 720, 1440}[i%3], int64(r.IntN(180)), days))
		}
		for step := range 300 {
			now += []int64{state.MsPerMinute, 7 * state.MsPerMinute, state.MsPerHour, 5 * state.MsPerHour, 2 * state.MsPerDay}[r.IntN(5)] + int64(r.IntN(60000))
			j := jobs[r.IntN(len(jobs))]
			switch r.IntN(13) {
			case 0, 1, 2, 3:
				x.report(j, now, []uint8{ReportOK, ReportOK, ReportOK, ReportWarn, ReportFailed}[r.IntN(5)])
			case 4:
				x.reportAt(j, now, now-int64(r.IntN(3*86400))*state.MsPerSecond, ReportOK)
			case 5:
				until := int64(0)
				if r.IntN(2) == 0 {
					until = now + int64(1+r.IntN(72))*state.MsPerHour
				}
				x.pause(j, now, !j.Paused, until)
			case 6:
				c := clients[r.IntN(len(clients))]
				x.clientStatus(c, now, []string{"active", "active", "paused", "archived"}[r.IntN(4)])
			case 7:
				if j.Alert != nil {
					action := []uint8{state.AlertAcknowledge, state.AlertSnooze}[r.IntN(2)]
					until := int64(0)
					if action == state.AlertSnooze {
						until = now + int64(1+r.IntN(48))*state.MsPerHour
					}
					x.alertAction(j.Alert, now, action, until)
				}
			case 8:
				w := x.w
				for _, jj := range w.JobList {
					w.AppendJob(nil, jj, now)
				}
			case 9:
				x.w.Prune(now, 20*state.MsPerDay) // retention drops results with no record
			}
			for _, days := range []int{state.SLAPeriodDays, 1, 7, 90} {
				if got, want := x.w.Health(now, days, nil), x.w.HealthScan(now, days, nil); got != want {
					t.Fatalf("seed %d step %d, %d days: health %+v, scan %+v", seed, step, days, got, want)
				}
			}
			for _, c := range clients {
				if got, want := x.w.Health(now, state.SLAPeriodDays, c), x.w.HealthScan(now, state.SLAPeriodDays, c); got != want {
					t.Fatalf("seed %d step %d, client: health %+v, scan %+v", seed, step, got, want)
				}
				if got, want := x.w.ClientFigures(c, now), clientFiguresScan(x.w, c, now); got != want {
					t.Fatalf("seed %d step %d: client figures %+v, scan %+v", seed, step, got, want)
				}
			}
		}
	}
}
