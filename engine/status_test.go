package engine

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"backupmon/state"
)

// These tests build a workspace's state the way replay does, by applying
// log records with apply, and check the rules of decisions.md 3 and 4.4–4.7
// on it at chosen times.

type world struct {
	t   *testing.T
	w   *workspace
	ids *state.IDGen
}

// t0 is Monday 3 June 2024, 00:00 UTC.
var t0 = time.Date(2024, 6, 3, 0, 0, 0, 0, time.UTC).UnixMilli()

func newWorld(t *testing.T, zone string) *world {
	t.Helper()
	ids := state.NewIDGen()
	w, err := state.NewWorkspace(&state.WorkspaceCreated{Header: state.Header{Workspace: ids.Next(t0), Seq: 1},
		Name: "W", TimeZone: zone, Plan: "pro", Status: "active", CreatedAt: t0})
	if err != nil {
		t.Fatal(err)
	}
	return &world{t: t, w: &workspace{Workspace: w}, ids: ids}
}

func (x *world) apply(rec state.Record) {
	x.t.Helper()
	rec.Head().Workspace = x.w.ID
	rec.Head().Seq = x.w.Seq + 1
	if err := x.w.Apply(rec, state.NopHooks{}); err != nil {
		x.t.Fatal(err)
	}
}

func (x *world) client(at int64, status string) *state.Client {
	id := x.ids.Next(at)
	x.apply(&state.ClientCreated{ID: id, Name: "C", Status: status, CreatedAt: at})
	return x.w.Clients[id]
}

// randomWorld starts a random walk's world for seed: its random source
// (stream tells the walks apart), a world in one of zones, and three active
// clients made at t0.
func randomWorld(t *testing.T, seed, stream uint64, zones ...string) (*rand.Rand, *world, []*state.Client) {
	x := newWorld(t, zones[seed%uint64(len(zones))])
	return rand.New(rand.NewPCG(seed, stream)), x, x.activeClients(3, t0)
}

// activeClients makes n active clients at at.
func (x *world) activeClients(n int, at int64) []*state.Client {
	clients := make([]*state.Client, n)
	for i := range clients {
		clients[i] = x.client(at, "active")
	}
	return clients
}

// idsInOrder sorts all, a before b when before says so, and returns their
// ids as text.
func idsInOrder[T any](all []T, before func(a, b T) bool, id func(T) state.ID) []string {
	slices.SortFunc(all, func(a, b T) int {
		if before(a, b) {
			return -1
		}
		return 1
	})
	ids := make([]string, len(all))
	for i, v := range all {
		ids[i] = id(v).String()
	}
	return ids
}

func (x *world) clientStatus(c *state.Client, at int64, status string) {
	x.apply(&state.ClientUpdated{ID: c.ID, Fields: state.ClientStatus, Status: status, At: at})
}

// job adds a job created at at, every interval minutes with grace minutes.
func (x *world) job(c *state.Client, at, interval, grace int64, days uint8) *state.Job {
	id := x.ids.Next(at)
	x.apply(&state.JobCreated{ID: id, ClientID: c.ID, DeviceID: x.ids.Next(at), Name: "J", Vendor: "generic",
		DeviceName: "D", DeviceType: "server", Hostname: "h", IntervalMinutes: interval, GraceMinutes: grace,
		ExpectedDays: days, SLATarget: 95, CreatedAt: at})
	return x.w.Jobs[id]
}

// report decides a report received at at as the live path does, applies its
// record and returns it.
func (x *world) report(j *state.Job, at int64, status uint8) *state.Report {
	x.t.Helper()
	rec := x.w.decideReport(j, &ReportInput{Status: status, SizeBytes: -1, DurationSeconds: -1}, at, "api:test")
	x.apply(rec)
	return rec
}

// reportAt is report with a completion time (a Report API timestamp).
func (x *world) reportAt(j *state.Job, at, completed int64, status uint8) *state.Report {
	x.t.Helper()
	rec := x.w.decideReport(j, &ReportInput{Status: status, SizeBytes: -1, DurationSeconds: -1, TimestampMs: completed}, at, "api:test")
	x.apply(rec)
	return rec
}

func (x *world) pause(j *state.Job, at int64, paused bool, until int64) {
	x.apply(&state.JobUpdated{ID: j.ID, Fields: state.JobPaused, Paused: paused, PausedUntil: until, At: at})
}

func (x *world) alertAction(a *state.Alert, at int64, action uint8, until int64) {
	x.apply(&state.AlertChanged{AlertID: a.ID, ActivityID: x.ids.Next(at), Action: action, Until: until, At: at, Actor: "admin"})
}

func (x *world) wantStatus(j *state.Job, at int64, want string) {
	x.t.Helper()
	if got := x.w.JobStatus(j, at); got != want {
		x.t.Errorf("status at %s: %s, want %s", state.MsTime(at).Format(time.RFC3339Nano), got, want)
	}
	if got := x.jobOf(j, at).Status; got != want {
		x.t.Errorf("jobView status at %s: %s, want %s", state.MsTime(at).Format(time.RFC3339Nano), got, want)
	}
}

func (x *world) wantLate(j *state.Job, at, dueAt, minutes int64) {
	x.t.Helper()
	due, m, ok := x.w.Lateness(j, at)
	v := x.jobOf(j, at).Late
	if dueAt == 0 {
		if ok || v != nil {
			x.t.Errorf("late at %s: due %s, %d minutes; want not late", state.MsTime(at), state.MsTime(due), m)
		}
		return
	}
	if !ok || due != dueAt || m != minutes || v == nil || int64(v.DueAt) != dueAt || v.Minutes != minutes {
		x.t.Errorf("late at %s: %v due %s, %d minutes (view %+v); want due %s, %d minutes", state.MsTime(at), ok, state.MsTime(due), m, v, state.MsTime(dueAt), minutes)
	}
}

const (
	minute = state.MsPerMinute
	hour   = state.MsPerHour
	day    = state.MsPerDay
)

func TestWaitingJobNeverMissing(t *testing.T) {
	x := newWorld(t, "UTC")
	j := x.job(x.client(t0, "active"), t0, 60, 30, state.AllDays)
	x.wantStatus(j, t0, state.StatusWaiting)
	x.wantStatus(j, t0+365*day, state.StatusWaiting)
	if got := x.jobOf(j, t0).LastResult; got != "none" {
		t.Errorf("lastResult %s, want none", got)
	}
	// A new job counts from its creation; it is late, though waiting.
	if got := j.NextExpectedAt(t0, x.w.Loc); got != t0+60*minute {
		t.Errorf("nextExpectedAt %s, want creation + 60 min", state.MsTime(got))
	}
	x.wantLate(j, t0+60*minute, 0, 0)
	x.wantLate(j, t0+60*minute+1, t0+60*minute, 0)
	x.wantLate(j, t0+75*minute+59999, t0+60*minute, 15)
	// The first report decides the status.
	x.report(j, t0+2*hour, ReportWarn)
	x.wantStatus(j, t0+2*hour, state.StatusWarning)
}

func TestMissingExactlyAfterDuePlusGrace(t *testing.T) {
	for _, st := range []struct {
		report uint8
		status string
		last   string
	}{{ReportOK, state.StatusHealthy, "ok"}, {ReportWarn, state.StatusWarning, "warning"}, {ReportFailed, state.StatusFailed, "failed"}} {
		t.Run(st.status, func(t *testing.T) {
			x := newWorld(t, "UTC")
			j := x.job(x.client(t0, "active"), t0, 60, 30, state.AllDays)
			r := t0 + 10*minute
			x.report(j, r, st.report)
			due := r + 60*minute
			if got := j.NextExpectedAt(r, x.w.Loc); got != due {
				t.Fatalf("nextExpectedAt %s, want receipt + 60 min", state.MsTime(got))
			}
			x.wantStatus(j, r, st.status)
			x.wantLate(j, due, 0, 0)
			x.wantLate(j, due+1, due, 0)
			x.wantStatus(j, due+1, st.status) // late, in the grace period
			x.wantLate(j, due+29*minute+1, due, 29)
			x.wantStatus(j, due+30*minute, st.status)
			x.wantStatus(j, due+30*minute+1, state.StatusMissing)
			x.wantLate(j, due+30*minute+1, due, 30)
			x.wantStatus(j, due+400*day, state.StatusMissing)
			// lastResult keeps the last known result while missing.
			if v := x.jobOf(j, due+day); v.LastResult != st.last || v.Status != state.StatusMissing {
				t.Errorf("missing job shows lastResult %s status %s", v.LastResult, v.Status)
			}
			// A new report ends it.
			x.report(j, due+day, ReportOK)
			x.wantStatus(j, due+day, state.StatusHealthy)
			x.wantLate(j, due+day, 0, 0)
		})
	}
}

func TestMissingFollowsExpectedDays(t *testing.T) {
	x := newWorld(t, "Europe/London")
	j := x.job(x.client(t0, "active"), t0, 24*60, 60, weekdays)
	// Friday 7 June 2024 23:30 BST.
	fri := time.Date(2024, 6, 7, 23, 30, 0, 0, x.w.Loc).UnixMilli()
	x.report(j, fri, ReportOK)
	mon := time.Date(2024, 6, 10, 23, 30, 0, 0, x.w.Loc).UnixMilli()
	if got := j.NextExpectedAt(fri, x.w.Loc); got != mon {
		t.Fatalf("nextExpectedAt %s, want Monday 23:30 local", state.MsTime(got).In(x.w.Loc))
	}
	x.wantStatus(j, fri+3*day, state.StatusHealthy) // the weekend: no report needed
	x.wantLate(j, fri+3*day, 0, 0)
	x.wantStatus(j, mon+hour, state.StatusHealthy)
	x.wantStatus(j, mon+hour+1, state.StatusMissing)
}

func TestOwnPause(t *testing.T) {
	x := newWorld(t, "UTC")
	j := x.job(x.client(t0, "active"), t0, 60, 30, state.AllDays)
	x.report(j, t0+10*minute, ReportOK)
	p := t0 + 20*minute
	x.pause(j, p, true, 0)
	x.wantStatus(j, p, state.StatusPaused)
	x.wantStatus(j, p+100*day, state.StatusPaused) // never missing
	x.wantLate(j, p+100*day, 0, 0)
	if v := x.jobOf(j, p+day); !v.Paused || v.PausedUntil != 0 || v.LastResult != "ok" {
		t.Errorf("paused view: paused %v until %d lastResult %s", v.Paused, v.PausedUntil, v.LastResult)
	}

	// A report while paused changes the status, opens no alert, and the
	// job still never turns missing.
	r := p + 2*day
	rec := x.report(j, r, ReportFailed)
	if !state.ID(rec.AlertID).IsZero() || j.Alert != nil {
		t.Errorf("a failed report on a paused job opened an alert")
	}
	x.wantStatus(j, r, state.StatusFailed)
	x.wantStatus(j, r+100*day, state.StatusFailed)
	x.wantLate(j, r+100*day, 0, 0)
	if j.FailureStreak != 1 || j.LastFailureAt != r {
		t.Errorf("failure streak %d, last failure %s", j.FailureStreak, state.MsTime(j.LastFailureAt))
	}

	// Resume: the status follows lastResult and the due time counts from
	// the resume time.
	q := r + 10*day
	x.pause(j, q, false, 0)
	x.wantStatus(j, q, state.StatusFailed)
	if got := j.NextExpectedAt(q, x.w.Loc); got != q+60*minute {
		t.Errorf("nextExpectedAt after resume %s, want resume + 60 min", state.MsTime(got))
	}
	x.wantLate(j, q+60*minute+1, q+60*minute, 0)
	x.wantStatus(j, q+90*minute, state.StatusFailed)
	x.wantStatus(j, q+90*minute+1, state.StatusMissing)
	if v := x.jobOf(j, q); v.Paused {
		t.Errorf("resumed job shows paused")
	}
}

func TestPauseWithoutReportResumesWaiting(t *testing.T) {
	x := newWorld(t, "UTC")
	j := x.job(x.client(t0, "active"), t0, 60, 30, state.AllDays)
	x.pause(j, t0+hour, true, 0)
	x.wantStatus(j, t0+10*day, state.StatusPaused)
	x.pause(j, t0+20*day, false, 0)
	x.wantStatus(j, t0+20*day, state.StatusWaiting)
	x.wantStatus(j, t0+40*day, state.StatusWaiting)
	x.wantLate(j, t0+20*day+61*minute, t0+20*day+60*minute, 1)
}

func TestPausedUntilEndsByItself(t *testing.T) {
	x := newWorld(t, "UTC")
	j := x.job(x.client(t0, "active"), t0, 60, 30, state.AllDays)
	x.report(j, t0+10*minute, ReportOK)
	p, u := t0+20*minute, t0+5*day
	x.pause(j, p, true, u)
	x.wantStatus(j, u-1, state.StatusPaused)
	if v := x.jobOf(j, u-1); !v.Paused || int64(v.PausedUntil) != u {
		t.Errorf("before the end: paused %v until %s", v.Paused, state.MsTime(int64(v.PausedUntil)))
	}
	x.wantStatus(j, u, state.StatusHealthy)
	if v := x.jobOf(j, u); v.Paused || v.PausedUntil != 0 {
		t.Errorf("after the end: paused %v until %d", v.Paused, v.PausedUntil)
	}
	if got := j.NextExpectedAt(u, x.w.Loc); got != u+60*minute {
		t.Errorf("nextExpectedAt after the pause ended %s, want end + 60 min", state.MsTime(got))
	}
	x.wantStatus(j, u+90*minute, state.StatusHealthy)
	x.wantStatus(j, u+90*minute+1, state.StatusMissing)

	// A report during a timed pause: the due time still counts from the
	// pause's end.
	x2 := newWorld(t, "UTC")
	j2 := x2.job(x2.client(t0, "active"), t0, 60, 30, state.AllDays)
	x2.pause(j2, t0+minute, true, t0+3*day)
	x2.report(j2, t0+day, ReportWarn)
	x2.wantStatus(j2, t0+2*day, state.StatusWarning)
	x2.wantStatus(j2, t0+3*day+90*minute, state.StatusWarning)
	x2.wantStatus(j2, t0+3*day+90*minute+1, state.StatusMissing)

	// A change made after a timed pause ended (here a new pause) starts
	// from the end, not from the old report.
	x3 := newWorld(t, "UTC")
	j3 := x3.job(x3.client(t0, "active"), t0, 60, 30, state.AllDays)
	x3.report(j3, t0+minute, ReportOK)
	x3.pause(j3, t0+2*minute, true, t0+day)
	x3.pause(j3, t0+day+30*minute, false, 0) // resume, though it ended already
	if got := j3.NextExpectedAt(t0+day+30*minute, x3.w.Loc); got != t0+day+60*minute {
		t.Errorf("nextExpectedAt %s, want the pause's end + 60 min", state.MsTime(got))
	}
}

func TestClientPausedOrArchived(t *testing.T) {
	for _, status := range []string{"paused", "archived"} {
		t.Run(status, func(t *testing.T) {
			x := newWorld(t, "UTC")
			c := x.client(t0, "active")
			j := x.job(c, t0, 60, 30, state.AllDays)
			x.report(j, t0+10*minute, ReportOK)
			off := t0 + 20*minute
			x.clientStatus(c, off, status)
			x.wantStatus(j, off, state.StatusPaused)
			x.wantStatus(j, off+100*day, state.StatusPaused)
			x.wantLate(j, off+100*day, 0, 0)
			if v := x.jobOf(j, off); !v.Paused || v.PausedUntil != 0 {
				t.Errorf("job of a %s client: paused %v until %d", status, v.Paused, v.PausedUntil)
			}
			// A report while off: status updated, no alert, never missing.
			r := off + day
			if rec := x.report(j, r, ReportFailed); !state.ID(rec.AlertID).IsZero() {
				t.Errorf("a report on a job of a %s client opened an alert", status)
			}
			x.wantStatus(j, r+50*day, state.StatusFailed)
			// Back to active: due counts from then.
			a := r + 60*day
			x.clientStatus(c, a, "active")
			x.wantStatus(j, a, state.StatusFailed)
			x.wantStatus(j, a+90*minute, state.StatusFailed)
			x.wantStatus(j, a+90*minute+1, state.StatusMissing)
		})
	}
	// A client never active: its new job shows paused until a report.
	x := newWorld(t, "UTC")
	c := x.client(t0, "paused")
	j := x.job(c, t0+hour, 60, 30, state.AllDays)
	x.wantStatus(j, t0+10*day, state.StatusPaused)
	x.report(j, t0+11*day, ReportOK)
	x.wantStatus(j, t0+11*day, state.StatusHealthy)
	x.wantStatus(j, t0+50*day, state.StatusHealthy)
	// Paused client and paused job: resuming the job alone keeps it off.
	j2 := x.job(c, t0+hour, 60, 30, state.AllDays)
	x.pause(j2, t0+2*hour, true, 0)
	x.pause(j2, t0+3*hour, false, 0)
	x.wantStatus(j2, t0+10*day, state.StatusPaused)
	// Pausing the client after a report while off shows paused again.
	x.clientStatus(c, t0+12*day, "archived")
	x.wantStatus(j, t0+12*day, state.StatusHealthy) // paused → archived is still off since t0
	x.clientStatus(c, t0+13*day, "active")
	x.clientStatus(c, t0+14*day, "paused")
	x.wantStatus(j, t0+14*day, state.StatusPaused)
}

func TestAlertRules(t *testing.T) {
	x := newWorld(t, "UTC")
	j := x.job(x.client(t0, "active"), t0, 60, 30, state.AllDays)
	// warn opens {warning, warning}.
	rec := x.report(j, t0+hour, ReportWarn)
	a := x.w.Alerts[rec.AlertID]
	if a == nil || a.Type != state.AlertWarning || a.Severity != state.SeverityWarning || state.AlertStatus(a, t0+hour) != state.AlertOpen || j.Alert != a {
		t.Fatalf("warn report: alert %+v", a)
	}
	// Acknowledge, then a failed report raises it: same alert, type failed,
	// critical, back to open.
	x.alertAction(a, t0+2*hour, state.AlertAcknowledge, 0)
	if state.AlertStatus(a, t0+2*hour) != state.AlertAcknowledged || a.AcknowledgedAt != t0+2*hour {
		t.Fatalf("acknowledge: %+v", a)
	}
	rec = x.report(j, t0+3*hour, ReportFailed)
	if rec.AlertID != a.ID || a.Type != state.AlertFailed || a.Severity != state.SeverityCritical || a.Status != state.AlertOpen || a.Summary != rec.Summary {
		t.Fatalf("failed report on an acknowledged warning: %+v", a)
	}
	// Acknowledged critical alert: a warn keeps critical and acknowledged.
	x.alertAction(a, t0+4*hour, state.AlertAcknowledge, 0)
	x.report(j, t0+5*hour, ReportWarn)
	if a.Type != state.AlertWarning || a.Severity != state.SeverityCritical || a.Status != state.AlertAcknowledged {
		t.Fatalf("warn on an acknowledged critical alert: %+v", a)
	}
	// Snoozed: stays snoozed when raised; reads open once the snooze ends.
	x.alertAction(a, t0+6*hour, state.AlertSnooze, t0+8*hour)
	x.report(j, t0+7*hour, ReportFailed)
	if state.AlertStatus(a, t0+7*hour) != state.AlertSnoozed {
		t.Fatalf("raised snoozed alert: %d", state.AlertStatus(a, t0+7*hour))
	}
	if state.AlertStatus(a, t0+8*hour-1) != state.AlertSnoozed || state.AlertStatus(a, t0+8*hour) != state.AlertOpen {
		t.Fatalf("snooze end: %d, %d", state.AlertStatus(a, t0+8*hour-1), state.AlertStatus(a, t0+8*hour))
	}
	if v := alertOf(t, a, t0+8*hour); v.Status != "open" || v.SnoozedUntil != 0 {
		t.Fatalf("alert after its snooze: %+v", v)
	}
	if v := alertOf(t, a, t0+7*hour); v.Status != "snoozed" || int64(v.SnoozedUntil) != t0+8*hour {
		t.Fatalf("snoozed alert: %+v", v)
	}
	// A raise after the snooze ended starts from open.
	x.report(j, t0+9*hour, ReportWarn)
	if a.Status != state.AlertOpen || a.SnoozedUntil != 0 {
		t.Fatalf("raise after the snooze ended: %+v", a)
	}
	// An ok report resolves it whatever its status.
	x.alertAction(a, t0+10*hour, state.AlertSnooze, t0+20*hour)
	x.report(j, t0+11*hour, ReportOK)
	v := alertOf(t, a, t0+11*hour)
	if v.Status != "resolved" || int64(v.ResolvedAt) != t0+11*hour || v.RecoverySeconds == nil || *v.RecoverySeconds != 10*3600 || j.Alert != nil {
		t.Fatalf("ok report: %+v", v)
	}
	// The next problem opens a new alert.
	rec = x.report(j, t0+12*hour, ReportFailed)
	if rec.AlertID == a.ID || x.w.Alerts[rec.AlertID].Severity != state.SeverityCritical {
		t.Fatalf("a new problem after recovery reused the alert")
	}
	if len(x.w.AlertLog) != 2 {
		t.Fatalf("%d alerts, want 2", len(x.w.AlertLog))
	}
	// An ok report on a paused job resolves without a new alert.
	x.pause(j, t0+13*hour, true, 0)
	x.report(j, t0+14*hour, ReportOK)
	if j.Alert != nil || x.w.Alerts[rec.AlertID].Status != state.AlertResolved {
		t.Fatalf("ok report on a paused job did not resolve the alert")
	}
}

func TestSupersededAndLastTimes(t *testing.T) {
	x := newWorld(t, "UTC")
	j := x.job(x.client(t0, "active"), t0, 60, 30, state.AllDays)
	now := t0 + 10*day
	x.reportAt(j, now, now-hour, ReportFailed)
	x.reportAt(j, now+minute, now-2*hour, ReportFailed) // older than the last: superseded
	last := x.reportAt(j, now+2*minute, now-hour, ReportOK)
	if !last.Superseded || !state.ID(last.AlertID).IsZero() {
		t.Fatalf("a report completed at the same time as the last is superseded: %+v", last)
	}
	if j.LastResult != state.ResultFailed || j.LastReportAt != now-hour || j.FailureStreak != 1 || j.LastSuccessAt != 0 {
		t.Fatalf("superseded reports changed the job: %+v", j)
	}
	if len(j.Results) != 3 {
		t.Fatalf("superseded reports are results like any other: %d results", len(j.Results))
	}
	// The due time still counts from the last non-superseded receipt.
	if got := j.NextExpectedAt(now+3*minute, x.w.Loc); got != now+60*minute {
		t.Errorf("nextExpectedAt %s", state.MsTime(got))
	}
	x.reportAt(j, now+3*minute, now+3*minute, ReportFailed)
	x.reportAt(j, now+4*minute, now+4*minute, ReportWarn)
	x.reportAt(j, now+5*minute, now+5*minute, ReportFailed)
	x.reportAt(j, now+6*minute, now+6*minute, ReportFailed)
	if j.FailureStreak != 2 || j.LastFailureAt != now+6*minute || j.LastReportAt != now+6*minute {
		t.Errorf("streak %d, last failure %s", j.FailureStreak, state.MsTime(j.LastFailureAt))
	}
	// A timestamp more than 5 minutes ahead or 30 days back is ignored.
	r := x.reportAt(j, now+7*minute, now+7*minute+5*minute+1, ReportOK)
	if r.CompletedAt != now+7*minute {
		t.Errorf("future timestamp kept: %s", state.MsTime(r.CompletedAt))
	}
	r = x.reportAt(j, now+8*minute, now+8*minute-30*day-1, ReportOK)
	if r.CompletedAt != now+8*minute {
		t.Errorf("old timestamp kept: %s", state.MsTime(r.CompletedAt))
	}
	r = x.reportAt(j, now+9*minute, now+9*minute+5*minute, ReportOK)
	if r.CompletedAt != now+14*minute {
		t.Errorf("timestamp 5 minutes ahead not kept: %s", state.MsTime(r.CompletedAt))
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
		r := state.RateOf(c.ok, c.rated)
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
			if got := state.RateOf(ok, rated).Tenths; got != want {
				t.Fatalf("rate(%d, %d) = %d tenths, want %d", ok, rated, got, want)
			}
		}
	}
	if !state.RateOf(199, 200).Meets(99.5) || state.RateOf(199, 200).Meets(99.51) || (state.Rate{}).Meets(0) {
		t.Errorf("meets: the target is met at or above it, never without a rate")
	}
	if !state.RateOf(1, 3).Meets(33.3) || state.RateOf(1, 3).Meets(33.4) {
		t.Errorf("meets 33.3")
	}
}

func TestSLAOverLast30Days(t *testing.T) {
	x := newWorld(t, "UTC")
	c := x.client(t0, "active")
	j := x.job(c, t0, 60, 30, state.AllDays)
	j2 := x.job(c, t0, 60, 30, state.AllDays)
	now := t0 + 100*day
	from := now - 30*day
	add := func(j *state.Job, received, completed int64, status uint8) {
		x.apply(&state.Report{JobID: j.ID, ResultID: x.ids.Next(received), Status: status, ReceivedAt: received,
			CompletedAt: completed, DurationSeconds: -1, SizeBytes: -1, Superseded: true})
	}
	if s := state.SLAOf(j, now); s.SuccessRate.Valid || s.Met || s.Reports != 0 || s.PeriodDays != 30 || s.Target != 95 {
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
	s := state.SLAOf(j, now)
	if !s.SuccessRate.Valid || s.SuccessRate.Tenths != 750 || s.Reports != 4 || s.Met {
		t.Fatalf("SLA: %+v; want 75.0 over 4 reports, not met", s)
	}
	j.SLATarget = 75
	if s := state.SLAOf(j, now); !s.Met {
		t.Fatalf("SLA at its target is met: %+v", s)
	}
	if s := state.SLAOf(j2, now); s.SuccessRate.Tenths != 500 || s.Reports != 2 {
		t.Fatalf("job 2 SLA: %+v", s)
	}
	f := x.w.ClientFigures(c, now)
	if f.SuccessRate.Tenths != 667 || f.Reports != 6 || f.JobsMeetingTarget != 1 || f.JobsBelowTarget != 1 {
		t.Fatalf("client figures: %+v", f)
	}
	if f.Jobs.Total != 2 || f.Jobs.Waiting != 2 {
		t.Fatalf("client job counts (records marked superseded leave the status alone): %+v", f.Jobs)
	}
	// A job without results in the period counts neither way.
	j3 := x.job(c, t0, 60, 30, state.AllDays)
	add(j3, t0, t0, ReportFailed)
	if f := x.w.ClientFigures(c, now); f.JobsMeetingTarget+f.JobsBelowTarget != 2 {
		t.Fatalf("a job without results in the period was counted: %+v", f)
	}
}

func TestClientNeedsAttention(t *testing.T) {
	x := newWorld(t, "UTC")
	c := x.client(t0, "active")
	j := x.job(c, t0, 60, 30, state.AllDays)
	x.report(j, t0+minute, ReportOK)
	if f := x.w.ClientFigures(c, t0+minute); f.NeedsAttention || f.Jobs.Healthy != 1 {
		t.Fatalf("healthy client: %+v", f)
	}
	if f := x.w.ClientFigures(c, t0+day); !f.NeedsAttention || f.Jobs.Missing != 1 {
		t.Fatalf("missing job: %+v", f)
	}
	rec := x.report(j, t0+day, ReportWarn)
	if f := x.w.ClientFigures(c, t0+day); !f.NeedsAttention || f.OpenAlerts != 1 || f.Jobs.Warning != 1 {
		t.Fatalf("open alert: %+v", f)
	}
	x.alertAction(x.w.Alerts[rec.AlertID], t0+day+minute, state.AlertAcknowledge, 0)
	if f := x.w.ClientFigures(c, t0+day+minute); f.NeedsAttention || f.OpenAlerts != 0 {
		t.Fatalf("acknowledged alert on a warning job: %+v", f)
	}
	x.report(j, t0+day+2*minute, ReportFailed)
	if f := x.w.ClientFigures(c, t0+day+2*minute); !f.NeedsAttention || f.Jobs.Failed != 1 {
		t.Fatalf("failed job: %+v", f)
	}
}
