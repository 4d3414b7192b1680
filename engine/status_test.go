package engine

import (
	"testing"
	"time"

	"backupmon/wal"
)

// These tests build a workspace's state the way replay does, by applying
// log records with apply, and check the rules of decisions.md 3 and 4.4–4.7
// on it at chosen times.

type noHooks struct{}

func (noHooks) keyAdded(*workspace, *apiKey)      {}
func (noHooks) keyRemoved(*workspace, *apiKey)    {}
func (noHooks) ingestAdded(*workspace, *job)      {}
func (noHooks) ingestRemoved(string)              {}
func (noHooks) userAdded(*workspace, *user)       {}
func (noHooks) userRemoved(string)                {}
func (noHooks) sessionAdded(*workspace, *session) {}
func (noHooks) sessionRemoved([32]byte)           {}

type world struct {
	t   *testing.T
	w   *workspace
	ids *idGen
}

// t0 is Monday 3 June 2024, 00:00 UTC.
var t0 = time.Date(2024, 6, 3, 0, 0, 0, 0, time.UTC).UnixMilli()

func newWorld(t *testing.T, zone string) *world {
	t.Helper()
	ids := newIDGen()
	w, err := newWorkspace(&wal.WorkspaceCreated{Header: wal.Header{Workspace: ids.next(t0), Seq: 1},
		Name: "W", TimeZone: zone, Plan: "pro", Status: "active", CreatedAt: t0})
	if err != nil {
		t.Fatal(err)
	}
	return &world{t: t, w: w, ids: ids}
}

func (x *world) apply(rec wal.Entry) {
	x.t.Helper()
	rec.Head().Workspace = x.w.id
	rec.Head().Seq = x.w.seq + 1
	if err := x.w.apply(rec, noHooks{}); err != nil {
		x.t.Fatal(err)
	}
}

func (x *world) client(at int64, status string) *client {
	id := x.ids.next(at)
	x.apply(&wal.ClientCreated{ID: id, Name: "C", Status: status, CreatedAt: at})
	return x.w.clients[id]
}

func (x *world) clientStatus(c *client, at int64, status string) {
	x.apply(&wal.ClientUpdated{ID: c.id, Fields: wal.ClientStatus, Status: status, At: at})
}

// job adds a job created at at, every interval minutes with grace minutes.
func (x *world) job(c *client, at, interval, grace int64, days uint8) *job {
	id := x.ids.next(at)
	x.apply(&wal.JobCreated{ID: id, ClientID: c.id, DeviceID: x.ids.next(at), Name: "J", Vendor: "generic",
		DeviceName: "D", DeviceType: "server", Hostname: "h", IntervalMinutes: interval, GraceMinutes: grace,
		ExpectedDays: days, SLATarget: 95, CreatedAt: at})
	return x.w.jobs[id]
}

// report decides a report received at at as the live path does, applies its
// record and returns it.
func (x *world) report(j *job, at int64, status uint8) *wal.Report {
	x.t.Helper()
	rec := x.w.decideReport(j, &ReportInput{Status: status, SizeBytes: -1, DurationSeconds: -1}, at, "api:test")
	x.apply(rec)
	return rec
}

// reportAt is report with a completion time (a Report API timestamp).
func (x *world) reportAt(j *job, at, completed int64, status uint8) *wal.Report {
	x.t.Helper()
	rec := x.w.decideReport(j, &ReportInput{Status: status, SizeBytes: -1, DurationSeconds: -1, TimestampMs: completed}, at, "api:test")
	x.apply(rec)
	return rec
}

func (x *world) pause(j *job, at int64, paused bool, until int64) {
	x.apply(&wal.JobUpdated{ID: j.id, Fields: wal.JobPaused, Paused: paused, PausedUntil: until, At: at})
}

func (x *world) alertAction(a *alert, at int64, action uint8, until int64) {
	x.apply(&wal.AlertChanged{AlertID: a.id, ActivityID: x.ids.next(at), Action: action, Until: until, At: at, Actor: "admin"})
}

func (x *world) wantStatus(j *job, at int64, want string) {
	x.t.Helper()
	if got := x.w.jobStatus(j, at); got != want {
		x.t.Errorf("status at %s: %s, want %s", msTime(at).Format(time.RFC3339Nano), got, want)
	}
	if got := x.jobOf(j, at).Status; got != want {
		x.t.Errorf("jobView status at %s: %s, want %s", msTime(at).Format(time.RFC3339Nano), got, want)
	}
}

func (x *world) wantLate(j *job, at, dueAt, minutes int64) {
	x.t.Helper()
	due, m, ok := x.w.lateness(j, at)
	v := x.jobOf(j, at).Late
	if dueAt == 0 {
		if ok || v != nil {
			x.t.Errorf("late at %s: due %s, %d minutes; want not late", msTime(at), msTime(due), m)
		}
		return
	}
	if !ok || due != dueAt || m != minutes || v == nil || int64(v.DueAt) != dueAt || v.Minutes != minutes {
		x.t.Errorf("late at %s: %v due %s, %d minutes (view %+v); want due %s, %d minutes", msTime(at), ok, msTime(due), m, v, msTime(dueAt), minutes)
	}
}

const (
	minute = msPerMinute
	hour   = msPerHour
	day    = msPerDay
)

func TestWaitingJobNeverMissing(t *testing.T) {
	x := newWorld(t, "UTC")
	j := x.job(x.client(t0, "active"), t0, 60, 30, allDays)
	x.wantStatus(j, t0, StatusWaiting)
	x.wantStatus(j, t0+365*day, StatusWaiting)
	if got := x.jobOf(j, t0).LastResult; got != "none" {
		t.Errorf("lastResult %s, want none", got)
	}
	// A new job counts from its creation; it is late, though waiting.
	if got := j.nextExpectedAt(t0, x.w.loc); got != t0+60*minute {
		t.Errorf("nextExpectedAt %s, want creation + 60 min", msTime(got))
	}
	x.wantLate(j, t0+60*minute, 0, 0)
	x.wantLate(j, t0+60*minute+1, t0+60*minute, 0)
	x.wantLate(j, t0+75*minute+59999, t0+60*minute, 15)
	// The first report decides the status.
	x.report(j, t0+2*hour, ReportWarn)
	x.wantStatus(j, t0+2*hour, StatusWarning)
}

func TestMissingExactlyAfterDuePlusGrace(t *testing.T) {
	for _, st := range []struct {
		report uint8
		status string
		last   string
	}{{ReportOK, StatusHealthy, "ok"}, {ReportWarn, StatusWarning, "warning"}, {ReportFailed, StatusFailed, "failed"}} {
		t.Run(st.status, func(t *testing.T) {
			x := newWorld(t, "UTC")
			j := x.job(x.client(t0, "active"), t0, 60, 30, allDays)
			r := t0 + 10*minute
			x.report(j, r, st.report)
			due := r + 60*minute
			if got := j.nextExpectedAt(r, x.w.loc); got != due {
				t.Fatalf("nextExpectedAt %s, want receipt + 60 min", msTime(got))
			}
			x.wantStatus(j, r, st.status)
			x.wantLate(j, due, 0, 0)
			x.wantLate(j, due+1, due, 0)
			x.wantStatus(j, due+1, st.status) // late, in the grace period
			x.wantLate(j, due+29*minute+1, due, 29)
			x.wantStatus(j, due+30*minute, st.status)
			x.wantStatus(j, due+30*minute+1, StatusMissing)
			x.wantLate(j, due+30*minute+1, due, 30)
			x.wantStatus(j, due+400*day, StatusMissing)
			// lastResult keeps the last known result while missing.
			if v := x.jobOf(j, due+day); v.LastResult != st.last || v.Status != StatusMissing {
				t.Errorf("missing job shows lastResult %s status %s", v.LastResult, v.Status)
			}
			// A new report ends it.
			x.report(j, due+day, ReportOK)
			x.wantStatus(j, due+day, StatusHealthy)
			x.wantLate(j, due+day, 0, 0)
		})
	}
}

func TestMissingFollowsExpectedDays(t *testing.T) {
	x := newWorld(t, "Europe/London")
	j := x.job(x.client(t0, "active"), t0, 24*60, 60, weekdays)
	// Friday 7 June 2024 23:30 BST.
	fri := time.Date(2024, 6, 7, 23, 30, 0, 0, x.w.loc).UnixMilli()
	x.report(j, fri, ReportOK)
	mon := time.Date(2024, 6, 10, 23, 30, 0, 0, x.w.loc).UnixMilli()
	if got := j.nextExpectedAt(fri, x.w.loc); got != mon {
		t.Fatalf("nextExpectedAt %s, want Monday 23:30 local", msTime(got).In(x.w.loc))
	}
	x.wantStatus(j, fri+3*day, StatusHealthy) // the weekend: no report needed
	x.wantLate(j, fri+3*day, 0, 0)
	x.wantStatus(j, mon+hour, StatusHealthy)
	x.wantStatus(j, mon+hour+1, StatusMissing)
}

func TestOwnPause(t *testing.T) {
	x := newWorld(t, "UTC")
	j := x.job(x.client(t0, "active"), t0, 60, 30, allDays)
	x.report(j, t0+10*minute, ReportOK)
	p := t0 + 20*minute
	x.pause(j, p, true, 0)
	x.wantStatus(j, p, StatusPaused)
	x.wantStatus(j, p+100*day, StatusPaused) // never missing
	x.wantLate(j, p+100*day, 0, 0)
	if v := x.jobOf(j, p+day); !v.Paused || v.PausedUntil != 0 || v.LastResult != "ok" {
		t.Errorf("paused view: paused %v until %d lastResult %s", v.Paused, v.PausedUntil, v.LastResult)
	}

	// A report while paused changes the status, opens no alert, and the
	// job still never turns missing.
	r := p + 2*day
	rec := x.report(j, r, ReportFailed)
	if !ID(rec.AlertID).IsZero() || j.alert != nil {
		t.Errorf("a failed report on a paused job opened an alert")
	}
	x.wantStatus(j, r, StatusFailed)
	x.wantStatus(j, r+100*day, StatusFailed)
	x.wantLate(j, r+100*day, 0, 0)
	if j.failureStreak != 1 || j.lastFailureAt != r {
		t.Errorf("failure streak %d, last failure %s", j.failureStreak, msTime(j.lastFailureAt))
	}

	// Resume: the status follows lastResult and the due time counts from
	// the resume time.
	q := r + 10*day
	x.pause(j, q, false, 0)
	x.wantStatus(j, q, StatusFailed)
	if got := j.nextExpectedAt(q, x.w.loc); got != q+60*minute {
		t.Errorf("nextExpectedAt after resume %s, want resume + 60 min", msTime(got))
	}
	x.wantLate(j, q+60*minute+1, q+60*minute, 0)
	x.wantStatus(j, q+90*minute, StatusFailed)
	x.wantStatus(j, q+90*minute+1, StatusMissing)
	if v := x.jobOf(j, q); v.Paused {
		t.Errorf("resumed job shows paused")
	}
}

func TestPauseWithoutReportResumesWaiting(t *testing.T) {
	x := newWorld(t, "UTC")
	j := x.job(x.client(t0, "active"), t0, 60, 30, allDays)
	x.pause(j, t0+hour, true, 0)
	x.wantStatus(j, t0+10*day, StatusPaused)
	x.pause(j, t0+20*day, false, 0)
	x.wantStatus(j, t0+20*day, StatusWaiting)
	x.wantStatus(j, t0+40*day, StatusWaiting)
	x.wantLate(j, t0+20*day+61*minute, t0+20*day+60*minute, 1)
}

func TestPausedUntilEndsByItself(t *testing.T) {
	x := newWorld(t, "UTC")
	j := x.job(x.client(t0, "active"), t0, 60, 30, allDays)
	x.report(j, t0+10*minute, ReportOK)
	p, u := t0+20*minute, t0+5*day
	x.pause(j, p, true, u)
	x.wantStatus(j, u-1, StatusPaused)
	if v := x.jobOf(j, u-1); !v.Paused || int64(v.PausedUntil) != u {
		t.Errorf("before the end: paused %v until %s", v.Paused, msTime(int64(v.PausedUntil)))
	}
	x.wantStatus(j, u, StatusHealthy)
	if v := x.jobOf(j, u); v.Paused || v.PausedUntil != 0 {
		t.Errorf("after the end: paused %v until %d", v.Paused, v.PausedUntil)
	}
	if got := j.nextExpectedAt(u, x.w.loc); got != u+60*minute {
		t.Errorf("nextExpectedAt after the pause ended %s, want end + 60 min", msTime(got))
	}
	x.wantStatus(j, u+90*minute, StatusHealthy)
	x.wantStatus(j, u+90*minute+1, StatusMissing)

	// A report during a timed pause: the due time still counts from the
	// pause's end.
	x2 := newWorld(t, "UTC")
	j2 := x2.job(x2.client(t0, "active"), t0, 60, 30, allDays)
	x2.pause(j2, t0+minute, true, t0+3*day)
	x2.report(j2, t0+day, ReportWarn)
	x2.wantStatus(j2, t0+2*day, StatusWarning)
	x2.wantStatus(j2, t0+3*day+90*minute, StatusWarning)
	x2.wantStatus(j2, t0+3*day+90*minute+1, StatusMissing)

	// A change made after a timed pause ended (here a new pause) starts
	// from the end, not from the old report.
	x3 := newWorld(t, "UTC")
	j3 := x3.job(x3.client(t0, "active"), t0, 60, 30, allDays)
	x3.report(j3, t0+minute, ReportOK)
	x3.pause(j3, t0+2*minute, true, t0+day)
	x3.pause(j3, t0+day+30*minute, false, 0) // resume, though it ended already
	if got := j3.nextExpectedAt(t0+day+30*minute, x3.w.loc); got != t0+day+60*minute {
		t.Errorf("nextExpectedAt %s, want the pause's end + 60 min", msTime(got))
	}
}

func TestClientPausedOrArchived(t *testing.T) {
	for _, status := range []string{"paused", "archived"} {
		t.Run(status, func(t *testing.T) {
			x := newWorld(t, "UTC")
			c := x.client(t0, "active")
			j := x.job(c, t0, 60, 30, allDays)
			x.report(j, t0+10*minute, ReportOK)
			off := t0 + 20*minute
			x.clientStatus(c, off, status)
			x.wantStatus(j, off, StatusPaused)
			x.wantStatus(j, off+100*day, StatusPaused)
			x.wantLate(j, off+100*day, 0, 0)
			if v := x.jobOf(j, off); !v.Paused || v.PausedUntil != 0 {
				t.Errorf("job of a %s client: paused %v until %d", status, v.Paused, v.PausedUntil)
			}
			// A report while off: status updated, no alert, never missing.
			r := off + day
			if rec := x.report(j, r, ReportFailed); !ID(rec.AlertID).IsZero() {
				t.Errorf("a report on a job of a %s client opened an alert", status)
			}
			x.wantStatus(j, r+50*day, StatusFailed)
			// Back to active: due counts from then.
			a := r + 60*day
			x.clientStatus(c, a, "active")
			x.wantStatus(j, a, StatusFailed)
			x.wantStatus(j, a+90*minute, StatusFailed)
			x.wantStatus(j, a+90*minute+1, StatusMissing)
		})
	}
	// A client never active: its new job shows paused until a report.
	x := newWorld(t, "UTC")
	c := x.client(t0, "paused")
	j := x.job(c, t0+hour, 60, 30, allDays)
	x.wantStatus(j, t0+10*day, StatusPaused)
	x.report(j, t0+11*day, ReportOK)
	x.wantStatus(j, t0+11*day, StatusHealthy)
	x.wantStatus(j, t0+50*day, StatusHealthy)
	// Paused client and paused job: resuming the job alone keeps it off.
	j2 := x.job(c, t0+hour, 60, 30, allDays)
	x.pause(j2, t0+2*hour, true, 0)
	x.pause(j2, t0+3*hour, false, 0)
	x.wantStatus(j2, t0+10*day, StatusPaused)
	// Pausing the client after a report while off shows paused again.
	x.clientStatus(c, t0+12*day, "archived")
	x.wantStatus(j, t0+12*day, StatusHealthy) // paused → archived is still off since t0
	x.clientStatus(c, t0+13*day, "active")
	x.clientStatus(c, t0+14*day, "paused")
	x.wantStatus(j, t0+14*day, StatusPaused)
}

func TestAlertRules(t *testing.T) {
	x := newWorld(t, "UTC")
	j := x.job(x.client(t0, "active"), t0, 60, 30, allDays)
	// warn opens {warning, warning}.
	rec := x.report(j, t0+hour, ReportWarn)
	a := x.w.alerts[rec.AlertID]
	if a == nil || a.typ != alertWarning || a.severity != severityWarning || alertStatus(a, t0+hour) != alertOpen || j.alert != a {
		t.Fatalf("warn report: alert %+v", a)
	}
	// Acknowledge, then a failed report raises it: same alert, type failed,
	// critical, back to open.
	x.alertAction(a, t0+2*hour, wal.AlertAcknowledge, 0)
	if alertStatus(a, t0+2*hour) != alertAcknowledged || a.acknowledgedAt != t0+2*hour {
		t.Fatalf("acknowledge: %+v", a)
	}
	rec = x.report(j, t0+3*hour, ReportFailed)
	if rec.AlertID != a.id || a.typ != alertFailed || a.severity != severityCritical || a.status != alertOpen || a.summary != rec.Summary {
		t.Fatalf("failed report on an acknowledged warning: %+v", a)
	}
	// Acknowledged critical alert: a warn keeps critical and acknowledged.
	x.alertAction(a, t0+4*hour, wal.AlertAcknowledge, 0)
	x.report(j, t0+5*hour, ReportWarn)
	if a.typ != alertWarning || a.severity != severityCritical || a.status != alertAcknowledged {
		t.Fatalf("warn on an acknowledged critical alert: %+v", a)
	}
	// Snoozed: stays snoozed when raised; reads open once the snooze ends.
	x.alertAction(a, t0+6*hour, wal.AlertSnooze, t0+8*hour)
	x.report(j, t0+7*hour, ReportFailed)
	if alertStatus(a, t0+7*hour) != alertSnoozed {
		t.Fatalf("raised snoozed alert: %d", alertStatus(a, t0+7*hour))
	}
	if alertStatus(a, t0+8*hour-1) != alertSnoozed || alertStatus(a, t0+8*hour) != alertOpen {
		t.Fatalf("snooze end: %d, %d", alertStatus(a, t0+8*hour-1), alertStatus(a, t0+8*hour))
	}
	if v := alertOf(t, a, t0+8*hour); v.Status != "open" || v.SnoozedUntil != 0 {
		t.Fatalf("alert after its snooze: %+v", v)
	}
	if v := alertOf(t, a, t0+7*hour); v.Status != "snoozed" || int64(v.SnoozedUntil) != t0+8*hour {
		t.Fatalf("snoozed alert: %+v", v)
	}
	// A raise after the snooze ended starts from open.
	x.report(j, t0+9*hour, ReportWarn)
	if a.status != alertOpen || a.snoozedUntil != 0 {
		t.Fatalf("raise after the snooze ended: %+v", a)
	}
	// An ok report resolves it whatever its status.
	x.alertAction(a, t0+10*hour, wal.AlertSnooze, t0+20*hour)
	x.report(j, t0+11*hour, ReportOK)
	v := alertOf(t, a, t0+11*hour)
	if v.Status != "resolved" || int64(v.ResolvedAt) != t0+11*hour || v.RecoverySeconds == nil || *v.RecoverySeconds != 10*3600 || j.alert != nil {
		t.Fatalf("ok report: %+v", v)
	}
	// The next problem opens a new alert.
	rec = x.report(j, t0+12*hour, ReportFailed)
	if rec.AlertID == a.id || x.w.alerts[rec.AlertID].severity != severityCritical {
		t.Fatalf("a new problem after recovery reused the alert")
	}
	if len(x.w.alertLog) != 2 {
		t.Fatalf("%d alerts, want 2", len(x.w.alertLog))
	}
	// An ok report on a paused job resolves without a new alert.
	x.pause(j, t0+13*hour, true, 0)
	x.report(j, t0+14*hour, ReportOK)
	if j.alert != nil || x.w.alerts[rec.AlertID].status != alertResolved {
		t.Fatalf("ok report on a paused job did not resolve the alert")
	}
}

func TestSupersededAndLastTimes(t *testing.T) {
	x := newWorld(t, "UTC")
	j := x.job(x.client(t0, "active"), t0, 60, 30, allDays)
	now := t0 + 10*day
	x.reportAt(j, now, now-hour, ReportFailed)
	x.reportAt(j, now+minute, now-2*hour, ReportFailed) // older than the last: superseded
	last := x.reportAt(j, now+2*minute, now-hour, ReportOK)
	if !last.Superseded || !ID(last.AlertID).IsZero() {
		t.Fatalf("a report completed at the same time as the last is superseded: %+v", last)
	}
	if j.lastResult != resultFailed || j.lastReportAt != now-hour || j.failureStreak != 1 || j.lastSuccessAt != 0 {
		t.Fatalf("superseded reports changed the job: %+v", j)
	}
	if len(j.results) != 3 {
		t.Fatalf("superseded reports are results like any other: %d results", len(j.results))
	}
	// The due time still counts from the last non-superseded receipt.
	if got := j.nextExpectedAt(now+3*minute, x.w.loc); got != now+60*minute {
		t.Errorf("nextExpectedAt %s", msTime(got))
	}
	x.reportAt(j, now+3*minute, now+3*minute, ReportFailed)
	x.reportAt(j, now+4*minute, now+4*minute, ReportWarn)
	x.reportAt(j, now+5*minute, now+5*minute, ReportFailed)
	x.reportAt(j, now+6*minute, now+6*minute, ReportFailed)
	if j.failureStreak != 2 || j.lastFailureAt != now+6*minute || j.lastReportAt != now+6*minute {
		t.Errorf("streak %d, last failure %s", j.failureStreak, msTime(j.lastFailureAt))
	}
	// A timestamp more than 5 minutes ahead or 30 days back is ignored.
	r := x.reportAt(j, now+7*minute, now+7*minute+5*minute+1, ReportOK)
	if r.CompletedAt != now+7*minute {
		t.Errorf("future timestamp kept: %s", msTime(r.CompletedAt))
	}
	r = x.reportAt(j, now+8*minute, now+8*minute-30*day-1, ReportOK)
	if r.CompletedAt != now+8*minute {
		t.Errorf("old timestamp kept: %s", msTime(r.CompletedAt))
	}
	r = x.reportAt(j, now+9*minute, now+9*minute+5*minute, ReportOK)
	if r.CompletedAt != now+14*minute {
		t.Errorf("timestamp 5 minutes ahead not kept: %s", msTime(r.CompletedAt))
	}
}

func TestRate(t *testing.T) {
	for _, c := range []struct {
		ok, rated int64
		tenths    int64
		valid     bool
		json      string
	}{
		{0, 0, 0, false, "null"},
		{1, 3, 333, true, "33.3"},
		{2, 3, 667, true, "66.7"},
		{1, 8, 125, true, "12.5"},
		{199, 200, 995, true, "99.5"},
		{1, 16, 63, true, "6.3"},   // 6.25 → 6.3
		{3, 16, 188, true, "18.8"}, // 18.75 → 18.8
		{1, 1600, 1, true, "0.1"},  // 0.0625 → 0.1
		{1, 2001, 0, true, "0.0"},  // 0.04998 → 0.0
		{0, 5, 0, true, "0.0"},
		{5, 5, 1000, true, "100.0"},
		{1999, 2000, 1000, true, "100.0"}, // 99.95 → 100.0
		{19989, 20000, 999, true, "99.9"}, // 99.945 → 99.9
		{1 << 40, 1<<40 + 1, 1000, true, "100.0"},
	} {
		r := rate(c.ok, c.rated)
		b, _ := r.MarshalJSON()
		if r.Tenths != c.tenths || r.Valid != c.valid || string(b) != c.json {
			t.Errorf("rate(%d, %d) = %+v %s; want %d tenths, valid %v, %s", c.ok, c.rated, r, b, c.tenths, c.valid, c.json)
		}
	}
	// Against exact rounding half away from zero of 1000·ok/rated.
	for rated := int64(1); rated <= 400; rated++ {
		for ok := int64(0); ok <= rated; ok++ {
			want := 1000 * ok / rated // whole tenths, then half (or more) of a tenth rounds up
			if rem := 1000 * ok % rated; 2*rem >= rated {
				want++
			}
			if got := rate(ok, rated).Tenths; got != want {
				t.Fatalf("rate(%d, %d) = %d tenths, want %d", ok, rated, got, want)
			}
		}
	}
	if !rate(199, 200).meets(99.5) || rate(199, 200).meets(99.51) || (Rate{}).meets(0) {
		t.Errorf("meets: the target is met at or above it, never without a rate")
	}
	if !rate(1, 3).meets(33.3) || rate(1, 3).meets(33.4) {
		t.Errorf("meets 33.3")
	}
}

func TestSLAOverLast30Days(t *testing.T) {
	x := newWorld(t, "UTC")
	c := x.client(t0, "active")
	j := x.job(c, t0, 60, 30, allDays)
	j2 := x.job(c, t0, 60, 30, allDays)
	now := t0 + 100*day
	from := now - 30*day
	add := func(j *job, received, completed int64, status uint8) {
		x.apply(&wal.Report{JobID: j.id, ResultID: x.ids.next(received), Status: status, ReceivedAt: received,
			CompletedAt: completed, DurationSeconds: -1, SizeBytes: -1, Superseded: true})
	}
	if s := jobSLA(j, now); s.SuccessRate.Valid || s.Met || s.Reports != 0 || s.PeriodDays != 30 || s.Target != 95 {
		t.Fatalf("no results: %+v", s)
	}
	add(j, from-day, from-day, ReportOK)                // too old
	add(j, from, from, ReportFailed)                    // on the edge: out
	add(j, from+5*minute, from-29*day, ReportFailed)    // received in the period, completed long before: out
	add(j, from+10*minute, from+1, ReportOK)            // completed just inside: in
	add(j, now-day, now-day, ReportWarn)                // in
	add(j, now-hour, now-hour, ReportOK)                // in
	add(j, now, now+5*minute, ReportOK)                 // completed ahead of receipt (the 5-minute allowance): in
	add(j2, now-2*day, now-2*day, ReportOK)             // j2: 1 of 1
	add(j2, now-31*day+minute, now-31*day, ReportOK)    // out
	add(j2, from+3*minute, from+3*minute, ReportFailed) // in, received before from + 5 min
	s := jobSLA(j, now)
	if !s.SuccessRate.Valid || s.SuccessRate.Tenths != 750 || s.Reports != 4 || s.Met {
		t.Fatalf("SLA: %+v; want 75.0 over 4 reports, not met", s)
	}
	j.slaTarget = 75
	if s := jobSLA(j, now); !s.Met {
		t.Fatalf("SLA at its target is met: %+v", s)
	}
	if s := jobSLA(j2, now); s.SuccessRate.Tenths != 500 || s.Reports != 2 {
		t.Fatalf("job 2 SLA: %+v", s)
	}
	f := x.w.clientFigures(c, now)
	if f.SuccessRate.Tenths != 667 || f.Reports != 6 || f.JobsMeetingTarget != 1 || f.JobsBelowTarget != 1 {
		t.Fatalf("client figures: %+v", f)
	}
	if f.Jobs.Total != 2 || f.Jobs.Waiting != 2 {
		t.Fatalf("client job counts (records marked superseded leave the status alone): %+v", f.Jobs)
	}
	// A job without results in the period counts neither way.
	j3 := x.job(c, t0, 60, 30, allDays)
	add(j3, t0, t0, ReportFailed)
	if f := x.w.clientFigures(c, now); f.JobsMeetingTarget+f.JobsBelowTarget != 2 {
		t.Fatalf("a job without results in the period was counted: %+v", f)
	}
}

func TestClientNeedsAttention(t *testing.T) {
	x := newWorld(t, "UTC")
	c := x.client(t0, "active")
	j := x.job(c, t0, 60, 30, allDays)
	x.report(j, t0+minute, ReportOK)
	if f := x.w.clientFigures(c, t0+minute); f.NeedsAttention || f.Jobs.Healthy != 1 {
		t.Fatalf("healthy client: %+v", f)
	}
	if f := x.w.clientFigures(c, t0+day); !f.NeedsAttention || f.Jobs.Missing != 1 {
		t.Fatalf("missing job: %+v", f)
	}
	rec := x.report(j, t0+day, ReportWarn)
	if f := x.w.clientFigures(c, t0+day); !f.NeedsAttention || f.OpenAlerts != 1 || f.Jobs.Warning != 1 {
		t.Fatalf("open alert: %+v", f)
	}
	x.alertAction(x.w.alerts[rec.AlertID], t0+day+minute, wal.AlertAcknowledge, 0)
	if f := x.w.clientFigures(c, t0+day+minute); f.NeedsAttention || f.OpenAlerts != 0 {
		t.Fatalf("acknowledged alert on a warning job: %+v", f)
	}
	x.report(j, t0+day+2*minute, ReportFailed)
	if f := x.w.clientFigures(c, t0+day+2*minute); !f.NeedsAttention || f.Jobs.Failed != 1 {
		t.Fatalf("failed job: %+v", f)
	}
}
