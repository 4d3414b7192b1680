package engine

import (
	"backupmon/state"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

// A seeded random property test of time-driven monitoring: reports (ok,
// warn, failed through the Report path), development-clock moves (forward
// by a minute to days, now and then back), job pauses and resumes (with and
// without an end), schedule changes, client pauses and archives, workspace
// suspensions and time-zone changes, acknowledgements, snoozes and
// resolutions, in three workspaces with time zones, each with a
// notification channel and an escalation rule served by a deliverer that
// fails some attempts. After every step the invariants below hold; at a few
// points the engine is reopened from disk (after a clean close, and from a
// copy of its directory as a crash would leave it) and shows the same
// views.
//
// Invariants, per workspace:
//   - at most one unresolved alert per job, and it is the job's own;
//   - a job's status is statusOf(lastResult) unless it is missing, waiting
//     or paused; waiting only without a result, missing only with one and
//     while monitored, paused only while not monitored;
//   - the health summary's counts (the REST /health object) equal the
//     number of jobs the REST /jobs list gives for each status, archived
//     clients' jobs left out, and monitoredJobs their sum;
//   - a missing job that is monitored in an active workspace has an
//     unresolved alert of type missing;
//   - the outbox is settled: nothing in flight, a pending delivery waits for
//     a later attempt, a delivered one has its time, a cancelled one says
//     why, and each names an alert of its job.

var mpSeeds = []uint64{1, 2, 3, 4}

const mpSteps = 250

// mpStart is a Friday evening before Europe's spring-forward (2025-03-30)
// and Lord Howe's fall-back (2025-04-06).
var mpStart = time.Date(2025, 3, 28, 18, 0, 0, 0, time.UTC)

var mpZones = []string{"Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Asia/Kathmandu"}

// mpDeliverer stands in for the notifier: each attempt's outcome comes back
// from a goroutine of its own, a failure for about one attempt in three
// (decided by the delivery's id and the attempt, so a retry may succeed).
type mpDeliverer struct {
	e        atomic.Pointer[Engine]
	pending  atomic.Int64 // attempts whose outcome is not handed back yet
	attempts atomic.Int64
}

func (d *mpDeliverer) Deliver(n state.Notice) {
	d.attempts.Add(1)
	d.pending.Add(1)
	go func() {
		defer d.pending.Add(-1)
		failure := ""
		if (int(n.Delivery[15])+n.Attempt)%3 == 0 {
			failure = "HTTP 500"
		}
		d.e.Load().DeliveryDone(n.Workspace, n.Delivery, n.Attempt, failure)
	}()
}

type mpJob struct {
	id, client string
}

type mpWorkspace struct {
	id        string
	suspended bool
	clients   []string
	jobs      []mpJob
	keys      [][32]byte
}

type mpRun struct {
	t    *testing.T
	seed uint64
	step int
	r    *rand.Rand
	dir  string
	e    *Engine
	d    *mpDeliverer
	ws   []*mpWorkspace
	// maxNow is the latest time the clock has shown: a clock set back
	// replays a past in which later records already happened.
	maxNow time.Time

	reports, refused, moves, reopens int
}

func (m *mpRun) fatalf(format string, args ...any) {
	m.t.Helper()
	m.t.Fatalf("seed %d step %d: %s", m.seed, m.step, fmt.Sprintf(format, args...))
}

func (m *mpRun) must(what string, err error) {
	m.t.Helper()
	if err != nil {
		m.fatalf("%s: %v", what, err)
	}
}

// mayRefuse fails on an error that is not a refusal (a validation error or
// a conflict the random choice can meet).
func (m *mpRun) mayRefuse(what string, err error) {
	m.t.Helper()
	if !allowed(err) {
		m.fatalf("%s: %v", what, err)
	}
}

func (m *mpRun) now() time.Time { return m.e.Now() }

// open opens the engine on dir and gives it the deliverer.
func (m *mpRun) open(dir string) *Engine {
	m.t.Helper()
	e := openTestEngine(m.t, dir)
	m.d.e.Store(e)
	e.SetDeliverer(m.d)
	return e
}

// settle waits until every attempt the engine started has been handed to
// the deliverer and has reported its outcome; the outcomes are applied
// before the next message to each actor. Notices of a record go to the
// deliverer once it is durable, from the log's goroutine, in the order of
// the records; a clock move of 0 is a record like any other, answered once
// durable. The first move waits (it asks every actor) for the records the
// actors' timers made after their last message, which may be logged after
// its own; the second comes after all of them, so that when it answers
// every earlier record's notices are handed out.
func (m *mpRun) settle() {
	m.t.Helper()
	for range 2 {
		_, err := m.e.SetClock(time.Time{}, 0)
		m.must("clock barrier", err)
	}
	for deadline := time.Now().Add(10 * time.Second); m.d.pending.Load() > 0; time.Sleep(50 * time.Microsecond) {
		if time.Now().After(deadline) {
			m.fatalf("%d attempts without an outcome after 10 s", m.d.pending.Load())
		}
	}
}

func (m *mpRun) setUp() {
	m.d = &mpDeliverer{}
	m.e = m.open(m.dir)
	_, err := m.e.SetClock(mpStart.Add(time.Duration(m.r.IntN(24*60))*time.Minute), 0)
	m.must("set clock", err)
	for i := range 3 {
		m.addWorkspace(i)
	}
	m.settle()
}

func (m *mpRun) addWorkspace(i int) {
	e := m.e
	v, err := e.CreateWorkspace(WorkspaceInput{Name: Some(fmt.Sprintf("ws %d", i)), Plan: Some("pro"), TimeZone: Some(mpZones[(int(m.seed)+i)%len(mpZones)])})
	m.must("create workspace", err)
	s := &mpWorkspace{id: v.ID}
	for c := range 3 {
		cv, err := e.CreateClient(s.id, ClientInput{Name: Some(fmt.Sprintf("client %d", c))})
		m.must("create client", err)
		s.clients = append(s.clients, cv.ID)
	}
	for range 5 + m.r.IntN(4) {
		m.addJob(s)
	}
	for k := range 4 {
		kv, err := e.CreateKey(s.id, KeyInput{Name: Some(fmt.Sprintf("report %d", k)), Type: Some("report")})
		m.must("create key", err)
		s.keys = append(s.keys, HashKey([]byte(kv.Key)))
	}
	ch, err := e.CreateChannel(s.id, ChannelInput{Type: Some(state.ChannelWebhook), Name: Some("hook"), URL: Some("https://hooks.example.com/" + s.id)})
	m.must("create channel", err)
	if m.r.IntN(2) == 0 {
		_, err = e.CreateChannel(s.id, ChannelInput{Type: Some(state.ChannelEmail), Name: Some("mail"), To: Some("ops@example.com"), MinSeverity: Some("critical")})
		m.must("create channel", err)
	}
	_, err = e.CreateEscalation(s.id, EscalationInput{ChannelID: Some(ch.ID), AfterMinutes: Some(int64(15 + m.r.IntN(120)))})
	m.must("create escalation", err)
	// Some days of history for a few jobs, imported.
	for _, j := range s.jobs[:2] {
		var list []ImportInput
		for d := 5; d > 0; d-- {
			list = append(list, ImportInput{ReceivedAt: m.now().Add(-time.Duration(d)*24*time.Hour + time.Duration(m.r.IntN(3600))*time.Second),
				Status: uint8(1 + m.r.IntN(3)), DurationSeconds: -1, SizeBytes: -1, Source: "email:veeam"})
		}
		m.must("import", e.ImportReports(s.id, j.id, list))
	}
	m.ws = append(m.ws, s)
}

func (m *mpRun) schedule() ScheduleInput {
	r := m.r
	in := ScheduleInput{IntervalMinutes: Some([]int64{5, 30, 60, 360, 1440}[r.IntN(5)]), GraceMinutes: Some([]int64{0, 10, 60, 120}[r.IntN(4)])}
	switch r.IntN(4) {
	case 0:
		in.ExpectedDays = Some([]string{"mon", "tue", "wed", "thu", "fri"})
	case 1:
		in.ExpectedDays = Some([]string{"sat", "sun"})
	}
	return in
}

func (m *mpRun) addJob(s *mpWorkspace) {
	c := s.clients[m.r.IntN(len(s.clients))]
	v, err := m.e.CreateJob(s.id, JobInput{
		ClientID: Some(c), Name: Some(fmt.Sprintf("job %d", m.r.IntN(1000))), Vendor: Some("veeam"),
		Device:   Some(DeviceInput{Name: Some("dev"), Type: Some("server"), Hostname: Some("host")}),
		Schedule: Some(m.schedule()),
	})
	m.must("create job", err)
	s.jobs = append(s.jobs, mpJob{v.ID, c})
}

// unresolvedAlerts returns the workspace's unresolved alerts, decoded.
func (m *mpRun) unresolvedAlerts(s *mpWorkspace) []mpAlert {
	views, err := m.e.Alerts(s.id)
	m.must("alerts", err)
	var out []mpAlert
	for _, v := range views {
		a := decode[mpAlert](m.t, v.JSON)
		if a.Status != "resolved" {
			out = append(out, a)
		}
	}
	return out
}

type mpAlert struct {
	ID, JobID, Type, Severity, Status string
}

type mpJobView struct {
	ID, ClientID, Status, LastResult string
	Paused                           bool
}

func (m *mpRun) jobViews(s *mpWorkspace) []mpJobView {
	views, err := m.e.Jobs(s.id)
	m.must("jobs", err)
	out := make([]mpJobView, len(views))
	for i, v := range views {
		out[i] = decode[mpJobView](m.t, v.JSON)
	}
	return out
}

// do runs one random step.
func (m *mpRun) do() string {
	r := m.r
	s := m.ws[r.IntN(len(m.ws))]
	j := s.jobs[r.IntN(len(s.jobs))]
	switch n := r.IntN(100); {
	case n < 40:
		status := []uint8{ReportOK, ReportOK, ReportWarn, ReportFailed, ReportFailed}[r.IntN(5)]
		rep := m.e.Report(s.keys[r.IntN(len(s.keys))], &ReportInput{JobID: j.id, Status: status, SizeBytes: -1, DurationSeconds: -1})
		switch rep.Outcome {
		case ReportRecorded:
			m.reports++
		case ReportRateLimited, ReportCapReached, ReportWorkspaceInactive:
			m.refused++
		default:
			m.fatalf("report: outcome %d", rep.Outcome)
		}
		return fmt.Sprintf("report %s on %s", state.ResultName(status), j.id)
	case n < 60:
		m.moves++
		if r.IntN(30) == 0 {
			back := time.Duration(1+r.IntN(36*60)) * time.Minute
			_, err := m.e.SetClock(m.now().Add(-back), 0)
			m.must("set clock back", err)
			return fmt.Sprintf("clock back %v", back)
		}
		adv := []time.Duration{0, time.Minute, 17 * time.Minute, time.Hour, 7 * time.Hour, 49 * time.Hour}[r.IntN(6)] + time.Duration(r.IntN(600))*time.Second
		_, err := m.e.SetClock(time.Time{}, adv)
		m.must("advance clock", err)
		return fmt.Sprintf("clock +%v", adv)
	case n < 72:
		var in JobInput
		what := ""
		switch r.IntN(4) {
		case 0:
			in.Paused, what = Some(true), "pause"
		case 1:
			until := m.now().Add(time.Duration(1+r.IntN(48*60)) * time.Minute)
			in.PausedUntil, what = Some(until), "pause until "+until.Format(time.RFC3339)
		default:
			in.Paused, what = Some(false), "resume"
		}
		_, err := m.e.UpdateJob(s.id, j.id, in)
		m.mayRefuse("update job", err)
		return what + " " + j.id
	case n < 76:
		_, err := m.e.UpdateJob(s.id, j.id, JobInput{Schedule: Some(m.schedule())})
		m.mayRefuse("update schedule", err)
		return "schedule of " + j.id
	case n < 90:
		open := m.unresolvedAlerts(s)
		if len(open) == 0 {
			return "no alert to change"
		}
		a := open[r.IntN(len(open))]
		action := []AlertAction{Acknowledge, Acknowledge, Snooze, Snooze, Resolve}[r.IntN(5)]
		var until time.Time
		if action == Snooze {
			until = m.now().Add(time.Duration(1+r.IntN(12*60)) * time.Minute)
		}
		if action == Resolve {
			// A missing job's alert stays until it reports: resolving it
			// by hand would leave the job missing without an alert, which
			// the missing invariant does not allow. Nor while the clock
			// is set back: the job may have missed, in the future the
			// clock comes back to, the due time it has now.
			if m.now().Before(m.maxNow) {
				action = Acknowledge
			}
			for _, v := range m.jobViews(s) {
				if v.ID == a.JobID && v.Status == state.StatusMissing {
					action = Acknowledge
				}
			}
		}
		_, err := m.e.ChangeAlert(s.id, a.ID, action, until, "admin", "")
		m.mayRefuse("change alert", err)
		return fmt.Sprintf("alert %s action %d", a.ID, action)
	case n < 94:
		c := s.clients[r.IntN(len(s.clients))]
		status := []string{"active", "active", "paused", "archived"}[r.IntN(4)]
		_, err := m.e.UpdateClient(s.id, c, ClientInput{Status: Some(status)})
		m.mayRefuse("update client", err)
		return "client " + c + " " + status
	case n < 97:
		status := "suspended"
		if s.suspended || r.IntN(2) == 0 {
			status = "active"
		}
		_, err := m.e.UpdateWorkspace(s.id, WorkspaceInput{Status: Some(status)})
		m.must("update workspace", err)
		s.suspended = status == "suspended"
		return "workspace " + s.id + " " + status
	default:
		zone := mpZones[r.IntN(len(mpZones))]
		_, err := m.e.UpdateWorkspace(s.id, WorkspaceInput{TimeZone: Some(zone)})
		m.mayRefuse("update workspace", err)
		return "workspace " + s.id + " zone " + zone
	}
}

// restView is what the REST API's /health and /jobs?status= give for one
// workspace at one instant, made by the functions the transport's REST
// path calls.
type restView struct {
	Health   []byte
	ByStatus map[string][]byte // status → every page of /jobs?status=, one a line
	Archived map[string]bool   // clients archived
	Active   bool
	Now      int64
}

func (m *mpRun) rest(s *mpWorkspace) restView {
	a, err := m.e.workspaceActor(s.id)
	m.must("workspace actor", err)
	return ask(a, func(w *workspace) restView {
		now := m.e.nowMs()
		v := restView{ByStatus: map[string][]byte{}, Archived: map[string]bool{}, Active: w.Active(now), Now: now}
		v.Health = state.AppendHealth(nil, w.Health(now, state.SLAPeriodDays, nil), nil, now)
		pages := func(status string) []byte {
			var out []byte
			q := RESTQuery{Endpoint: EndpointJobs, Limit: 3, Status: status}
			for range 1000 {
				b, more, pos := w.listJobs(nil, &q, now)
				out = append(out, b...)
				out = append(out, '\n')
				if !more {
					break
				}
				q.After = &pos
			}
			return out
		}
		for _, st := range state.StatusOrder {
			v.ByStatus[st] = pages(st)
		}
		for _, c := range w.Clients {
			if c.Status == "archived" {
				v.Archived[c.ID.String()] = true
			}
		}
		return v
	})
}

// pageItems decodes the pages of one list (one JSON array a line).
func (m *mpRun) pageItems(raw []byte) []mpJobView {
	var out []mpJobView
	for _, line := range splitLines(raw) {
		out = append(out, decode[[]mpJobView](m.t, line)...)
	}
	return out
}

func splitLines(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		i := slices.Index(b, '\n')
		if i < 0 {
			out = append(out, b)
			break
		}
		if i > 0 {
			out = append(out, b[:i])
		}
		b = b[i+1:]
	}
	return out
}

// checkInvariants checks every invariant of every workspace.
func (m *mpRun) checkInvariants(what string) {
	m.t.Helper()
	var pending int64
	for _, s := range m.ws {
		m.checkWorkspace(s, what)
		list, err := m.e.Deliveries(s.id)
		if err != nil {
			m.t.Fatal(err)
		}
		for _, d := range list {
			if d.State == "pending" {
				pending++
			}
		}
	}
	// The metrics' count of pending deliveries is the outboxes' own.
	if got := m.e.PendingDeliveries(); got != pending {
		m.t.Fatalf("%s: PendingDeliveries %d, the outboxes hold %d pending", what, got, pending)
	}
}

func (m *mpRun) checkWorkspace(s *mpWorkspace, what string) {
	m.t.Helper()
	jobs := m.jobViews(s)
	rv := m.rest(s)
	fail := func(format string, args ...any) {
		m.t.Helper()
		m.fatalf("after %s: workspace %s at %s: %s", what, s.id, state.FormatTime(rv.Now), fmt.Sprintf(format, args...))
	}
	// Every alert's job, the alert objects of the unresolved ones (as the
	// admin and REST views show them), and each job's own unresolved one.
	type alertState struct {
		alertJob   map[string]string
		unresolved map[string][]mpAlert
		own        map[string]string
	}
	a, _ := m.e.workspaceActor(s.id)
	st := ask(a, func(w *workspace) alertState {
		now := m.e.nowMs()
		x := alertState{alertJob: map[string]string{}, unresolved: map[string][]mpAlert{}, own: map[string]string{}}
		for _, al := range w.AlertLog {
			x.alertJob[al.ID.String()] = al.Job.ID.String()
			if state.AlertStatus(al, now) != state.AlertResolved {
				var v mpAlert
				if err := json.Unmarshal(alertView(al, now).JSON, &v); err == nil {
					x.unresolved[v.JobID] = append(x.unresolved[v.JobID], v)
				}
			}
		}
		for _, j := range w.Jobs {
			if j.Alert != nil {
				x.own[j.ID.String()] = j.Alert.ID.String()
			}
		}
		return x
	})
	alertJob, unresolved, own := st.alertJob, st.unresolved, st.own

	// At most one unresolved alert per job, and it is the job's own.
	for jid, list := range unresolved {
		if len(list) > 1 {
			fail("job %s has %d unresolved alerts: %+v", jid, len(list), list)
		}
		if own[jid] != list[0].ID {
			fail("job %s: unresolved alert %s, the job's own is %q", jid, list[0].ID, own[jid])
		}
	}
	for jid, aid := range own {
		if len(unresolved[jid]) == 0 {
			fail("job %s holds alert %s, which the alert list shows resolved", jid, aid)
		}
	}

	// Status against lastResult.
	for _, j := range jobs {
		want := state.StatusOf(map[string]uint8{"ok": state.ResultOK, "warning": state.ResultWarning, "failed": state.ResultFailed, "none": state.ResultNone}[j.LastResult])
		switch j.Status {
		case state.StatusWaiting:
			if j.LastResult != "none" {
				fail("job %s is waiting with lastResult %s", j.ID, j.LastResult)
			}
		case state.StatusMissing:
			if j.LastResult == "none" || j.Paused {
				fail("job %s is missing with lastResult %s, paused %v", j.ID, j.LastResult, j.Paused)
			}
		case state.StatusPaused:
			if !j.Paused {
				fail("job %s shows paused while monitored", j.ID)
			}
		default:
			if j.Status != want {
				fail("job %s: status %s, lastResult %s", j.ID, j.Status, j.LastResult)
			}
		}
	}

	// Health counts against the status lists.
	var health map[string]any
	if err := json.Unmarshal(rv.Health, &health); err != nil {
		fail("health %s: %v", rv.Health, err)
	}
	total := 0
	for _, st := range state.StatusOrder {
		listed := 0
		for _, j := range m.pageItems(rv.ByStatus[st]) {
			if j.Status != st {
				fail("/jobs?status=%s lists job %s with status %s", st, j.ID, j.Status)
			}
			if !rv.Archived[j.ClientID] {
				listed++
			}
		}
		if got, _ := health[st].(float64); int(got) != listed {
			fail("health %s=%v, /jobs?status=%s lists %d (of clients not archived)\nhealth %s", st, health[st], st, listed, rv.Health)
		}
		total += listed
	}
	if got, _ := health["monitoredJobs"].(float64); int(got) != total {
		fail("health monitoredJobs=%v, the status lists hold %d", health["monitoredJobs"], total)
	}
	kept := 0
	for _, j := range jobs {
		if !rv.Archived[j.ClientID] {
			kept++
		}
	}
	if total != kept {
		fail("the status lists hold %d jobs of clients not archived, the workspace has %d", total, kept)
	}

	// A missing job, monitored in an active workspace, has a missing alert.
	if rv.Active {
		for _, j := range jobs {
			if j.Status != state.StatusMissing || j.Paused {
				continue
			}
			list := unresolved[j.ID]
			if len(list) != 1 || list[0].Type != "missing" {
				fail("job %s is missing without an unresolved missing alert: %+v", j.ID, list)
			}
		}
	}

	// The outbox is settled.
	views, err := m.e.Deliveries(s.id)
	m.must("deliveries", err)
	for _, d := range views {
		b := func() string { j, _ := json.Marshal(d); return string(j) }
		if alertJob[d.AlertID] != d.JobID {
			fail("delivery %s names alert %s of job %q, not of its job %s", d.ID, d.AlertID, alertJob[d.AlertID], d.JobID)
		}
		switch d.State {
		case "pending":
			if d.NextAttemptAt == 0 || int64(d.NextAttemptAt) <= rv.Now {
				fail("pending delivery %s: next attempt %d at %d (in flight, or due and not sent)", d.ID, d.NextAttemptAt, rv.Now)
			}
			if d.Attempts == 0 || d.LastError == nil {
				fail("pending delivery %s was not attempted: %s", d.ID, b())
			}
		case "delivered":
			if d.Attempts == 0 || d.DeliveredAt == 0 || d.LastError != nil || d.NextAttemptAt != 0 {
				fail("delivered %s", b())
			}
		case "cancelled":
			if d.LastError == nil || !slices.Contains([]string{"job paused", "client paused", "client archived", "workspace inactive"}, *d.LastError) {
				fail("cancelled %s", b())
			}
		case "failed":
			if d.LastError == nil || int64(d.LastAttemptAt) < int64(d.CreatedAt)+state.MsPerDay-state.MsPerHour {
				fail("failed before its day was up: %s", b())
			}
		default:
			fail("delivery state %s", b())
		}
	}
}

// views is everything the admin and REST views show, for comparing an
// engine with one reopened from its directory.
func (m *mpRun) views(e *Engine, maskKeys bool) string {
	m.t.Helper()
	v := takeViews(m.t, e)
	if maskKeys {
		v = maskLastUsed(v)
	}
	type extra struct {
		Deliveries  []DeliveryView
		Channels    []ChannelView
		Escalations []EscalationView
		REST        restView
	}
	all := struct {
		Views allViews
		Extra []extra
	}{Views: v}
	saved := m.e
	m.e = e
	defer func() { m.e = saved }()
	for _, s := range m.ws {
		var x extra
		var err error
		x.Deliveries, err = e.Deliveries(s.id)
		m.must("deliveries", err)
		x.Channels, err = e.Channels(s.id)
		m.must("channels", err)
		x.Escalations, err = e.Escalations(s.id)
		m.must("escalations", err)
		x.REST = m.rest(s)
		all.Extra = append(all.Extra, x)
	}
	b, err := json.MarshalIndent(all, "", " ")
	m.must("marshal views", err)
	return string(b)
}

func (m *mpRun) sameViews(what, got, want string) {
	m.t.Helper()
	if got == want {
		return
	}
	m.dumpViews(got, want)
	gl, wl := splitLines([]byte(got)), splitLines([]byte(want))
	for i := 0; i < len(gl) && i < len(wl); i++ {
		if string(gl[i]) != string(wl[i]) {
			lo := max(0, i-6)
			m.fatalf("%s: views differ at line %d:\n--- reopened\n%s\n--- before\n%s", what, i+1, joinLines(gl[lo:min(len(gl), i+3)]), joinLines(wl[lo:min(len(wl), i+3)]))
		}
	}
	m.fatalf("%s: views differ in length: %d lines reopened, %d before", what, len(gl), len(wl))
}

// dumpViews writes both views to files for a closer look (a failing run only).
func (m *mpRun) dumpViews(got, want string) {
	if m.t.Failed() {
		return
	}
	_ = os.WriteFile(filepath.Join(os.TempDir(), fmt.Sprintf("mp-%d-reopened.json", m.seed)), []byte(got), 0o600)
	_ = os.WriteFile(filepath.Join(os.TempDir(), fmt.Sprintf("mp-%d-before.json", m.seed)), []byte(want), 0o600)
}

func joinLines(l [][]byte) string {
	var b []byte
	for _, x := range l {
		b = append(b, x...)
		b = append(b, '\n')
	}
	return string(b)
}

// reopenClean closes the engine and opens it again from its directory (the
// snapshot written at close).
func (m *mpRun) reopenClean() {
	m.t.Helper()
	m.settle()
	// A snapshot drops the finished deliveries past their 30 days (as it
	// drops results past retention); the close writes one too.
	m.must("snapshot", m.e.Snapshot())
	before := m.views(m.e, false)
	m.must("close", m.e.Close())
	m.e = m.open(m.dir)
	m.settle()
	m.sameViews("reopened after a clean close", m.views(m.e, false), before)
	m.reopens++
}

// reopenCopy opens a copy of the running engine's directory, as a crash
// now would leave it (everything acknowledged is in the log), and compares.
func (m *mpRun) reopenCopy() {
	m.t.Helper()
	// Twice: the outcomes of the first settle's attempts are records too;
	// the second barrier makes them durable.
	m.settle()
	m.settle()
	before := m.views(m.e, true)
	dir := copyDir(m.t, m.dir)
	e := openTestEngine(m.t, dir)
	defer e.Close() // one copy per call: closed at the method's end
	m.sameViews("reopened from a copy of the directory", m.views(e, true), before)
	m.reopens++
}

func TestMonitoringProperties(t *testing.T) {
	for _, seed := range mpSeeds {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			m := &mpRun{t: t, seed: seed, r: rand.New(rand.NewPCG(seed, 0x6d6f6e)), dir: t.TempDir()}
			m.setUp()
			m.maxNow = m.now()
			defer func() { m.e.Close() }()
			m.checkInvariants("set-up")
			var last []string
			for m.step = 1; m.step <= mpSteps; m.step++ {
				what := m.do()
				if now := m.now(); now.After(m.maxNow) {
					m.maxNow = now
				}
				last = append(last, what)
				if len(last) > 8 {
					last = last[1:]
				}
				m.settle()
				m.checkInvariants(fmt.Sprintf("%q (steps before: %q)", what, last[:len(last)-1]))
				switch m.step {
				case mpSteps / 3:
					m.reopenCopy()
				case 2 * mpSteps / 3:
					m.reopenClean()
				}
			}
			m.reopenCopy()
			m.reopenClean()
			m.checkInvariants("the last reopen")
			t.Logf("seed %d: %d reports recorded, %d refused, %d clock moves, %d reopens, %d attempts delivered", seed, m.reports, m.refused, m.moves, m.reopens, m.d.attempts.Load())
		})
	}
}

// mpFixture is one workspace with a client, a job (hourly, 10 minutes of
// grace), a report key and a webhook channel, on an engine whose deliverer
// succeeds, at mpStart.
func mpFixture(t *testing.T) (*mpRun, *mpWorkspace) {
	m := &mpRun{t: t, r: rand.New(rand.NewPCG(1, 1)), dir: t.TempDir(), d: &mpDeliverer{}}
	m.e = m.open(m.dir)
	t.Cleanup(func() { m.e.Close() })
	_, err := m.e.SetClock(mpStart, 0)
	m.must("set clock", err)
	v, err := m.e.CreateWorkspace(WorkspaceInput{Name: Some("w"), Plan: Some("pro"), TimeZone: Some("Europe/Berlin")})
	m.must("create workspace", err)
	s := &mpWorkspace{id: v.ID}
	m.ws = append(m.ws, s)
	c, err := m.e.CreateClient(s.id, ClientInput{Name: Some("c")})
	m.must("create client", err)
	s.clients = append(s.clients, c.ID)
	j, err := m.e.CreateJob(s.id, JobInput{ClientID: Some(c.ID), Name: Some("j"), Vendor: Some("veeam"),
		Device:   Some(DeviceInput{Name: Some("d"), Type: Some("server"), Hostname: Some("h")}),
		Schedule: Some(ScheduleInput{IntervalMinutes: Some(int64(60)), GraceMinutes: Some(int64(10))})})
	m.must("create job", err)
	s.jobs = append(s.jobs, mpJob{j.ID, c.ID})
	k, err := m.e.CreateKey(s.id, KeyInput{Name: Some("k"), Type: Some("report")})
	m.must("create key", err)
	s.keys = append(s.keys, HashKey([]byte(k.Key)))
	_, err = m.e.CreateChannel(s.id, ChannelInput{Type: Some(state.ChannelWebhook), Name: Some("hook"), URL: Some("https://hooks.example.com/x")})
	m.must("create channel", err)
	return m, s
}

func (m *mpRun) advance(d time.Duration) {
	m.t.Helper()
	_, err := m.e.SetClock(time.Time{}, d)
	m.must("advance clock", err)
	m.settle()
}

func (m *mpRun) report(s *mpWorkspace, status uint8) state.ID {
	m.t.Helper()
	rep := m.e.Report(s.keys[0], &ReportInput{JobID: s.jobs[0].id, Status: status, SizeBytes: -1, DurationSeconds: -1})
	if rep.Outcome != ReportRecorded {
		m.fatalf("report: outcome %d", rep.Outcome)
	}
	m.settle()
	return rep.AlertID
}

// TestLateMissedAfterSnoozeEndReplays: a missed due time recorded late (the
// workspace was suspended when it passed) is dated before the end of a
// snooze that the clock has passed since. The state must not depend on
// whether the snooze's timer ran (it runs live, never on replay): the
// engine reopened from its log shows the same, its outbox included, and
// opens at all (an attempt of a delivery that replay does not make stops
// recovery).
func TestLateMissedAfterSnoozeEndReplays(t *testing.T) {
	m, s := mpFixture(t)
	alert := m.report(s, ReportFailed) // due in an hour, missing 10 minutes later
	_, err := m.e.ChangeAlert(s.id, alert.String(), Snooze, m.now().Add(2*time.Hour), "admin", "")
	m.must("snooze", err)
	_, err = m.e.UpdateWorkspace(s.id, WorkspaceInput{Status: Some("suspended")})
	m.must("suspend", err)
	m.advance(3 * time.Hour) // past the due time, and past the snooze's end
	_, err = m.e.UpdateWorkspace(s.id, WorkspaceInput{Status: Some("active")})
	m.must("reactivate", err)
	m.settle()
	m.checkInvariants("the late missing alert")
	m.reopenCopy()
	m.reopenClean()
}

// TestEscalationOfAResolvedAlert: an escalation rule's instant comes for an
// alert resolved before it: nothing is sent and the engine goes on (the
// timer's "nothing to record" must not be taken for a record).
func TestEscalationOfAResolvedAlert(t *testing.T) {
	m, s := mpFixture(t)
	chs, err := m.e.Channels(s.id)
	m.must("channels", err)
	_, err = m.e.CreateEscalation(s.id, EscalationInput{ChannelID: Some(chs[0].ID), AfterMinutes: Some(int64(15))})
	m.must("escalation", err)
	m.report(s, ReportFailed)
	m.advance(5 * time.Minute)
	m.report(s, ReportOK)
	m.advance(20 * time.Minute)
	m.checkInvariants("the escalation instant of a resolved alert")
	list, err := m.e.Deliveries(s.id)
	m.must("deliveries", err)
	var events []string
	for _, d := range list {
		events = append(events, d.Event+" "+d.State)
	}
	if want := []string{"alert.resolved delivered", "alert.opened delivered"}; !slices.Equal(events, want) {
		t.Errorf("deliveries %v, want %v", events, want)
	}
	// The engine still takes changes.
	m.report(s, ReportFailed)
	m.reopenCopy()
}
