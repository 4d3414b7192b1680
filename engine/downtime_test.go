package engine

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"backupmon/state"
)

// A deadline that passes while the engine is closed fires once, at
// start-up: timers are rebuilt from the state, and what a timer did is in
// the state (timers.go), so a second start after it finds nothing to do.
// The development clock with KeepClock lets the time pass while the
// engine is closed.

// dtStart is Wednesday 4 March 2026, 10:00 UTC.
var dtStart = time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)

// dtDeliverer records every notice and answers each as delivered.
type dtDeliverer struct {
	e  *Engine
	mu sync.Mutex
	ns []state.Notice
	wg sync.WaitGroup
}

func (d *dtDeliverer) Deliver(n state.Notice) {
	d.mu.Lock()
	d.ns = append(d.ns, n)
	d.mu.Unlock()
	// Deliver must not block, and it may run on the actor's goroutine: the
	// outcome goes back from another.
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		if err := d.e.DeliveryDone(n.Workspace, n.Delivery, n.Attempt, ""); err != nil {
			panic(err)
		}
	}()
}

// dtBrief shows notices without their JSON bodies.
func dtBrief(ns []state.Notice) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = fmt.Sprintf("%s %s attempt %d (%s)", n.Event, n.Delivery, n.Attempt, n.AlertType)
	}
	return out
}

func (d *dtDeliverer) notices() []state.Notice {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]state.Notice(nil), d.ns...)
}

type dtAlert struct {
	ID       string
	Type     string
	Severity string
	Status   string
	Summary  string
	JobID    string
	Created  tTime `json:"createdAt"`
}

// dtOpen opens the engine in dir with the development clock at now, kept
// (not restored from the log).
func dtOpen(t *testing.T, dir string, now time.Time) *Engine {
	t.Helper()
	opts := quietOptions(dir, NewDevClock(now))
	opts.KeepClock = true
	e, err := Open(opts)
	if err != nil {
		t.Fatalf("open engine in %s at %s: %v", dir, now, err)
	}
	return e
}

func dtAlerts(t *testing.T, e *Engine, ws string) []dtAlert {
	t.Helper()
	views, err := e.Alerts(ws)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]dtAlert, len(views))
	for i, v := range views {
		if err := json.Unmarshal(v.JSON, &out[i]); err != nil {
			t.Fatalf("alert %s: %v", v.JSON, err)
		}
	}
	return out
}

// dtWaitDeliveries waits until the workspace's deliveries are done (as
// done says), at most 10 seconds, and returns them; what names the wait in
// the failure.
func dtWaitDeliveries(t *testing.T, e *Engine, ws, what string, done func([]DeliveryView) bool) []DeliveryView {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		list, err := e.Deliveries(ws)
		check(t, "deliveries", err)
		if done(list) {
			return list
		}
		if time.Now().After(deadline) {
			t.Fatalf("deliveries not %s after 10 s: %+v", what, list)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// dtWaitDelivered waits until the workspace has n deliveries, every one
// delivered, and returns them.
func dtWaitDelivered(t *testing.T, e *Engine, ws string, n int) []DeliveryView {
	t.Helper()
	return dtWaitDeliveries(t, e, ws, fmt.Sprintf("all %d delivered", n), func(list []DeliveryView) bool {
		done := len(list) == n
		for _, d := range list {
			done = done && d.State == "delivered"
		}
		return done
	})
}

func TestDowntimeDeadlineFiresOnce(t *testing.T) {
	for _, withChannel := range []bool{false, true} {
		name := "no channel"
		if withChannel {
			name = "webhook channel"
		}
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			e := dtOpen(t, dir, dtStart)
			open := true
			defer func() {
				if open {
					e.Close()
				}
			}()
			ws, job := monitoredJob(t, e, 60, 30)
			kv, err := e.CreateKey(ws, KeyInput{Name: Some("agent"), Type: Some("report")})
			check(t, "create key", err)
			var deliv *dtDeliverer
			if withChannel {
				_, err := e.CreateChannel(ws, ChannelInput{Type: Some(state.ChannelWebhook), Name: Some("hook"), URL: Some("https://hooks.example.com/x")})
				check(t, "create channel", err)
				deliv = &dtDeliverer{e: e}
				e.SetDeliverer(deliv)
			}
			if r := e.Report(HashKey([]byte(kv.Key)), &ReportInput{JobID: job, Status: ReportOK, SizeBytes: -1, DurationSeconds: -1}); r.Outcome != ReportRecorded {
				t.Fatalf("report: outcome %d", r.Outcome)
			}
			due := dtStart.Add(time.Hour)
			missingAt := due.Add(30 * time.Minute) // the alert's creation
			if a := dtAlerts(t, e, ws); len(a) != 0 {
				t.Fatalf("alerts before the downtime: %+v", a)
			}
			check(t, "close", e.Close())
			open = false

			// Restarts while the due time plus grace has passed: the
			// first records the missing alert, the second nothing more.
			var alertID string
			for i, at := range []time.Time{dtStart.Add(5 * time.Hour), dtStart.Add(6 * time.Hour)} {
				e = dtOpen(t, dir, at)
				open = true
				if got := e.Now(); !got.Equal(at) {
					t.Errorf("restart %d: clock %s, want %s (KeepClock)", i+1, got, at)
				}
				if withChannel {
					deliv.wg.Wait() // outcomes of the last run's attempts
					deliv = &dtDeliverer{e: e, ns: deliv.notices()}
					e.SetDeliverer(deliv)
				}
				alerts := dtAlerts(t, e, ws)
				if len(alerts) != 1 {
					t.Fatalf("restart %d: %d alerts, want 1: %+v", i+1, len(alerts), alerts)
				}
				a := alerts[0]
				wantSummary := "No backup report received: one was due at " + state.FormatTime(due.UnixMilli()) + " and 30 minutes of grace have passed"
				if a.Type != "missing" || a.Severity != "critical" || a.Status != "open" || a.JobID != job ||
					int64(a.Created) != missingAt.UnixMilli() || a.Summary != wantSummary {
					t.Errorf("restart %d: alert %+v, want missing/critical/open created at %s", i+1, a, missingAt)
				}
				if alertID == "" {
					alertID = a.ID
				} else if a.ID != alertID {
					t.Errorf("restart %d: alert %s, want the same alert %s", i+1, a.ID, alertID)
				}
				if withChannel {
					list := dtWaitDelivered(t, e, ws, 1)
					if d := list[0]; d.Event != state.EventOpened || d.AlertID != alertID || d.Attempts != 1 || d.JobID != job {
						t.Errorf("restart %d: delivery %+v, want one alert.opened of %s delivered at the first attempt", i+1, d, alertID)
					}
					deliv.wg.Wait()
					ns := deliv.notices()
					if len(ns) != 1 || ns[0].Event != state.EventOpened || ns[0].Attempt != 1 || ns[0].AlertType != "missing" {
						t.Errorf("restart %d: notices %v, want one alert.opened of the missing alert", i+1, dtBrief(ns))
					}
				}
				// The workspace's views agree: the job is missing, with
				// that alert unresolved.
				jobs, err := e.Jobs(ws)
				check(t, "jobs", err)
				var j struct {
					Status string
					Late   struct {
						DueAt tTime
					}
				}
				if len(jobs) != 1 || json.Unmarshal(jobs[0].JSON, &j) != nil || j.Status != state.StatusMissing || int64(j.Late.DueAt) != due.UnixMilli() {
					t.Errorf("restart %d: job %s, want missing, late since %s", i+1, jobs[0].JSON, due)
				}
				check(t, "close", e.Close())
				open = false
			}
		})
	}
}
