package engine

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"backupmon/state"
)

// The /reports and /alerts pages walk indexes (result partitions by status
// and vendor, per-job results and alerts, the unresolved alerts). These
// tests page through every filter combination after random changes and
// compare each walk, page by page, with a plain filter-and-sort of
// everything in the workspace.

type listItem struct {
	ID string `json:"id"`
}

// pageAll pages a list with limit through list until hasMore is false and
// returns the ids in order.
func pageAll(t *testing.T, q RESTQuery, list func(b []byte, q *RESTQuery) ([]byte, bool, Position)) []string {
	t.Helper()
	var ids []string
	for range 10000 {
		b, more, pos := list(nil, &q)
		items := decode[[]listItem](t, b)
		if len(items) > q.Limit {
			t.Fatalf("page of %d items, limit %d", len(items), q.Limit)
		}
		for _, it := range items {
			ids = append(ids, it.ID)
		}
		if !more {
			return ids
		}
		if len(items) != q.Limit {
			t.Fatalf("hasMore with a page of %d items, limit %d", len(items), q.Limit)
		}
		q.After = &pos
	}
	t.Fatal("pages do not end")
	return nil
}

// filterCase is one combination of the filters of /reports or /alerts.
type filterCase struct {
	clientID, jobID string
	status, vendor  string
	severity        string
	window          bool
	from, to        int64
}

func (f filterCase) query(ep Endpoint, limit int) RESTQuery {
	q := RESTQuery{Endpoint: ep, Limit: limit, Status: f.status, Vendor: f.vendor, Severity: f.severity,
		HasWindow: f.window, From: f.from, To: f.to}
	if f.clientID != "" {
		q.ClientIDSet, q.ClientID = true, f.clientID
	}
	if f.jobID != "" {
		q.JobIDSet, q.JobID = true, f.jobID
	}
	return q
}

func randomFilter(r *rand.Rand, w *workspace, jobs []*state.Job, now int64, alerts bool) filterCase {
	var f filterCase
	pick := func() *state.Job { return jobs[r.IntN(len(jobs))] }
	switch r.IntN(4) {
	case 1:
		f.clientID = pick().Client.ID.String()
	case 2:
		f.jobID = pick().ID.String()
	case 3:
		f.clientID, f.jobID = pick().Client.ID.String(), pick().ID.String() // the job may not be the client's
	}
	if r.IntN(8) == 0 {
		f.jobID = "not-an-id"
	}
	if alerts {
		if r.IntN(2) == 0 {
			f.status = []string{"open", "acknowledged", "snoozed", "resolved", "unresolved"}[r.IntN(5)]
		}
		if r.IntN(3) == 0 {
			f.severity = []string{"critical", "warning"}[r.IntN(2)]
		}
	} else {
		if r.IntN(2) == 0 {
			f.status = []string{"ok", "warning", "failed"}[r.IntN(3)]
		}
		if r.IntN(2) == 0 {
			f.vendor = state.VendorOrder[r.IntN(4)]
		}
	}
	if r.IntN(2) == 0 {
		f.window = true
		f.to = now - int64(r.IntN(5))*state.MsPerDay
		f.from = f.to - int64(1+r.IntN(20))*state.MsPerDay
	}
	return f
}

// wantResults is /reports done the plain way.
func wantResults(w *workspace, f filterCase) []string {
	type item struct {
		at int64
		id state.ID
	}
	var all []item
	for _, j := range w.Jobs {
		if f.clientID != "" && j.Client.ID.String() != f.clientID || f.jobID != "" && j.ID.String() != f.jobID {
			continue
		}
		if f.vendor != "" && j.Vendor != f.vendor {
			continue
		}
		for _, r := range j.Results {
			if f.status != "" && state.ResultName(r.Status) != f.status {
				continue
			}
			if f.window && (r.ReceivedAt < f.from || r.ReceivedAt > f.to) {
				continue
			}
			all = append(all, item{r.ReceivedAt, r.ID})
		}
	}
	// Newest first.
	return idsInOrder(all, func(a, b item) bool { return !state.Before(a.at, a.id, b.at, b.id) }, func(it item) state.ID { return it.id })
}

// wantAlerts is /alerts done the plain way.
func wantAlerts(w *workspace, f filterCase, now int64) []string {
	var all []*state.Alert
	for _, a := range w.Alerts {
		j := a.Job
		if f.clientID != "" && j.Client.ID.String() != f.clientID || f.jobID != "" && j.ID.String() != f.jobID {
			continue
		}
		if f.severity != "" && state.SeverityName(a.Severity) != f.severity {
			continue
		}
		st := state.AlertStatus(a, now)
		if f.status == "unresolved" && st == state.AlertResolved || f.status != "" && f.status != "unresolved" && state.AlertStatusName(st) != f.status {
			continue
		}
		if f.window && (a.CreatedAt < f.from || a.CreatedAt > f.to) {
			continue
		}
		all = append(all, a)
	}
	// Newest first.
	return idsInOrder(all, func(a, b *state.Alert) bool { return !state.AlertBefore(a, b) }, func(a *state.Alert) state.ID { return a.ID })
}

func TestListsMatchAPlainScan(t *testing.T) {
	for seed := range uint64(8) {
		r, x, clients := randomWorld(t, seed, 11, "Europe/Berlin")
		now := t0
		var jobs []*state.Job
		for i := range 10 {
			j := x.job(clients[i%3], now, 1440, 60, state.AllDays)
			x.apply(&state.JobUpdated{ID: j.ID, Fields: state.JobVendor, Vendor: state.VendorOrder[i%4], At: now})
			jobs = append(jobs, j)
		}
		check := func(step int) {
			for range 6 {
				f := randomFilter(r, x.w, jobs, now, false)
				limit := 1 + r.IntN(7)
				got := pageAll(t, f.query(EndpointReports, limit), x.w.listResults)
				if want := wantResults(x.w, f); !slices.Equal(got, want) {
					t.Fatalf("seed %d step %d: /reports %+v limit %d:\n got %v\nwant %v", seed, step, f, limit, got, want)
				}
				f = randomFilter(r, x.w, jobs, now, true)
				got = pageAll(t, f.query(EndpointAlerts, limit), func(b []byte, q *RESTQuery) ([]byte, bool, Position) {
					return x.w.listAlerts(b, q, now)
				})
				if want := wantAlerts(x.w, f, now); !slices.Equal(got, want) {
					t.Fatalf("seed %d step %d: /alerts %+v limit %d:\n got %v\nwant %v", seed, step, f, limit, got, want)
				}
			}
		}
		for step := range 400 {
			// Several results may share a millisecond: ids break the tie.
			now += []int64{0, 1, state.MsPerMinute, state.MsPerHour, 9 * state.MsPerHour}[r.IntN(5)]
			j := jobs[r.IntN(len(jobs))]
			switch r.IntN(20) {
			case 0:
				x.apply(&state.JobUpdated{ID: j.ID, Fields: state.JobVendor, Vendor: state.VendorOrder[r.IntN(4)], At: now})
			case 1:
				if a := j.Alert; a != nil {
					action := []uint8{state.AlertAcknowledge, state.AlertSnooze, state.AlertResolve}[r.IntN(3)]
					x.alertAction(a, now, action, now+int64(1+r.IntN(30))*state.MsPerHour)
				}
			case 2:
				x.w.Prune(now, 20*state.MsPerDay)
			case 3:
				x.w.RebuildIndexes() // as after a snapshot load
			case 4:
				if len(jobs) > 4 {
					x.apply(&state.JobDeleted{ID: j.ID, At: now})
					jobs = slices.DeleteFunc(jobs, func(o *state.Job) bool { return o == j })
				}
			default:
				at := now
				if r.IntN(8) == 0 {
					// Received before results already there, as after the
					// clock went back: the job's later results move up.
					at -= int64(r.IntN(48)) * state.MsPerHour
				}
				x.report(j, at, []uint8{ReportOK, ReportOK, ReportWarn, ReportFailed}[r.IntN(4)])
			}
			if step%10 == 0 {
				check(step)
			}
		}
		check(400)
	}
}

// wantJobs is /jobs done the plain way at now.
func wantJobs(w *workspace, q RESTQuery, now int64) []string {
	var all []*state.Job
	for _, j := range w.Jobs {
		if q.ClientIDSet && j.Client.ID.String() != q.ClientID ||
			q.Vendor != "" && j.Vendor != q.Vendor ||
			q.LastResult != "" && state.ResultName(j.LastResult) != q.LastResult ||
			q.Search != "" && !containsFold(j.Key, q.Search) ||
			q.Status != "" && w.JobStatus(j, now) != q.Status {
			continue
		}
		all = append(all, j)
	}
	return idsInOrder(all, state.JobBefore, func(j *state.Job) state.ID { return j.ID })
}

// TestJobListsMatchAPlainScan pages /jobs with random filters after random
// reports, pauses (with and without an end), client pauses and archives,
// vendor, name, schedule and time-zone changes, deletions, reloads and
// clock moves (forward by a minute to days, and now and then back), and
// compares each walk with a plain scan of every job's status at that time:
// the status lists must follow the clock (a job turning missing, a pause
// ending) with no record to tell them.
func TestJobListsMatchAPlainScan(t *testing.T) {
	for seed := range uint64(40) {
		r, x, clients := randomWorld(t, seed, 13, "Europe/Berlin", "America/New_York", "Asia/Kolkata")
		now := t0
		var jobs []*state.Job
		newJob := func() {
			days := uint8(state.AllDays)
			if r.IntN(3) == 0 {
				days = 0b0111110 // weekdays
			}
			j := x.job(clients[r.IntN(3)], now, []int64{60, 720, 1440}[r.IntN(3)], int64(r.IntN(120)), days)
			x.apply(&state.JobUpdated{ID: j.ID, Fields: state.JobName | state.JobVendor, Name: fmt.Sprintf("Job %c%d", 'a'+r.IntN(26), r.IntN(100)),
				Vendor: state.VendorOrder[r.IntN(3)], At: now})
			jobs = append(jobs, j)
		}
		for range 12 {
			newJob()
		}
		check := func(step int) {
			for range 8 {
				q := RESTQuery{Endpoint: EndpointJobs, Limit: 1 + r.IntN(6)}
				if r.IntN(4) == 0 {
					q.ClientIDSet, q.ClientID = true, clients[r.IntN(3)].ID.String()
				}
				if r.IntN(2) == 0 {
					q.Status = state.StatusOrder[r.IntN(len(state.StatusOrder))]
				}
				if r.IntN(3) == 0 {
					q.Vendor = state.VendorOrder[r.IntN(3)]
				}
				if r.IntN(3) == 0 {
					q.LastResult = []string{"none", "ok", "warning", "failed"}[r.IntN(4)]
				}
				if r.IntN(5) == 0 {
					q.Search = FoldSearch(fmt.Sprintf("%c", 'a'+r.IntN(26)))
				}
				got := pageAll(t, q, func(b []byte, q *RESTQuery) ([]byte, bool, Position) { return x.w.listJobs(b, q, now) })
				if want := wantJobs(x.w, q, now); !slices.Equal(got, want) {
					t.Fatalf("seed %d step %d: /jobs status %q vendor %q last %q client %v search %q limit %d:\n got %v\nwant %v",
						seed, step, q.Status, q.Vendor, q.LastResult, q.ClientIDSet, q.Search, q.Limit, got, want)
				}
			}
		}
		for step := range 500 {
			now += []int64{0, state.MsPerMinute, 17 * state.MsPerMinute, state.MsPerHour, 7 * state.MsPerHour, 2 * state.MsPerDay}[r.IntN(6)] + int64(r.IntN(60000))
			if r.IntN(40) == 0 {
				now -= int64(r.IntN(3)) * state.MsPerDay // the development clock set back
			}
			j := jobs[r.IntN(len(jobs))]
			switch r.IntN(24) {
			case 0, 1:
				until := int64(0)
				if r.IntN(2) == 0 {
					until = now + int64(1+r.IntN(60))*state.MsPerHour
				}
				x.pause(j, now, !j.Paused, until)
			case 2:
				x.clientStatus(clients[r.IntN(3)], now, []string{"active", "active", "paused", "archived"}[r.IntN(4)])
			case 3:
				x.apply(&state.JobUpdated{ID: j.ID, Fields: state.JobVendor, Vendor: state.VendorOrder[r.IntN(3)], At: now})
			case 4:
				x.apply(&state.JobUpdated{ID: j.ID, Fields: state.JobName, Name: fmt.Sprintf("Job %c%d", 'a'+r.IntN(26), r.IntN(100)), At: now})
			case 5:
				x.apply(&state.JobUpdated{ID: j.ID, Fields: state.JobSchedule, IntervalMinutes: []int64{30, 240, 1440}[r.IntN(3)],
					GraceMinutes: int64(r.IntN(90)), ExpectedDays: []uint8{state.AllDays, 0b0111110, 0b1000001}[r.IntN(3)], At: now})
			case 6:
				x.apply(&state.WorkspaceUpdated{Fields: state.WorkspaceTimeZone, TimeZone: []string{"UTC", "Europe/Berlin", "Pacific/Auckland"}[r.IntN(3)], At: now})
			case 7:
				if len(jobs) > 6 {
					x.apply(&state.JobDeleted{ID: j.ID, At: now})
					jobs = slices.DeleteFunc(jobs, func(o *state.Job) bool { return o == j })
				} else {
					newJob()
				}
			case 8:
				newJob()
			case 9:
				x.w.RebuildIndexes() // as after a snapshot load
			case 10:
				x.reportAt(j, now, now-int64(r.IntN(3*86400))*state.MsPerSecond, ReportOK) // maybe superseded
			default:
				x.report(j, now, []uint8{ReportOK, ReportOK, ReportWarn, ReportFailed}[r.IntN(4)])
			}
			if r.IntN(3) == 0 {
				check(step)
			}
		}
	}
}
