package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"backupmon/internal/testserver"
)

// The kill loop: killCycles SIGKILLs at random moments while the server
// takes mixed load (reports, admin changes, REST reads, development clock
// moves). After each restart every acknowledged mutation must be there and
// nothing that was never sent: reports (the ledger of crashload_test.go),
// new clients, job renames and clock moves (adminLedger below). Snapshots
// come every killSnapEvery records, so kills also land in the middle of
// snapshots and of the log truncations behind them.
const (
	killCycles    = 20
	killSnapEvery = "500"
)

func TestKillLoop(t *testing.T) {
	if testing.Short() {
		t.Skip("the kill loop takes about a minute")
	}
	dir := t.TempDir()
	c := testserver.StartChild(t, "first start", dir, "--dev-clock", "--snapshot-every", killSnapEvery)
	fx := makeFixture(t, c, fixtureSize{workspaces: 4, jobsPerWS: 30, keysPerWS: 120})
	adm := newAdminLedger(t, c, fx)
	led := newLedger()
	const budget, span = 1600, 1200 * time.Millisecond
	snaps := map[string]bool{} // snapshot files seen after the restarts
	for cycle := 1; cycle <= killCycles; cycle++ {
		label := fmt.Sprintf("kill %d", cycle)
		lr := startLoad(t, c, fx, led, loadOpts{
			cycle: label, workers: 16, budget: budget,
			rate: float64(budget) / span.Seconds(), keyless: 16,
		})
		mixed := adm.startMixed(c)
		time.Sleep(time.Duration(100+rand.IntN(1000)) * time.Millisecond)
		mixed.stopped.Store(true)
		lr.stopAndKill(c)
		mixed.wg.Wait()
		lr.report()
		mixed.report(t, label)
		if lr.acked.Load() == 0 {
			t.Fatalf("%s: no report was acknowledged before the kill", label)
		}
		c = testserver.StartChild(t, "restart after "+label, dir, "--dev-clock", "--snapshot-every", killSnapEvery)
		entries, _ := os.ReadDir(filepath.Join(dir, "snapshots"))
		for _, e := range entries {
			snaps[e.Name()] = true
		}
		verifyStateOf(t, c, fx, led, "after "+label, label)
		adm.verify(t, c, "after "+label)
		// At rest, a day forward: the Report API's per-key and per-job
		// limits start afresh, so the fixture's budgets do too.
		adm.advance(t, c, 25*time.Hour)
		fx.resetBudgets()
		if t.Failed() {
			t.FailNow()
		}
	}
	if len(snaps) < 3 {
		t.Errorf("only %d snapshots were taken during the loop: the kills did not meet snapshots", len(snaps))
	}
	// At rest, a kill and a replay give back the same state.
	killQuiet(t, c, fx, "quiet kill", "--dev-clock", "--snapshot-every", killSnapEvery)
	t.Logf("admin changes: %d clients made, %d jobs renamed, %d clock moves acknowledged; %d REST reads; %d snapshots",
		adm.clientsAcked(), adm.renamesAcked(), adm.clockMoves, adm.reads.Load(), len(snaps))
}

// resetBudgets forgets the requests and reports spent so far, once the
// clock has moved past every limit's window.
func (fx *fixture) resetBudgets() {
	for _, w := range fx.ws {
		w.mu.Lock()
		for _, j := range w.jobs {
			j.used = 0
		}
		for _, k := range w.keys {
			k.used = 0
		}
		w.mu.Unlock()
	}
}

// adminOp is one admin change the kill loop sent: a client made (name) or a
// job renamed (job, name).
type adminOp struct {
	ws    *fxWorkspace
	job   *fxJob // nil for a new client
	name  string
	state reportState
}

// adminLedger records the admin changes and clock moves of the kill loop.
type adminLedger struct {
	fx       *fixture
	restKeys map[*fxWorkspace]string
	salt     string

	mu       sync.Mutex
	next     int
	clients  []*adminOp            // new clients, in send order
	names    map[*fxJob]string     // each job's name as last verified
	renames  map[*fxJob][]*adminOp // renames since the last check, in send order
	clock    time.Time             // the development clock as last acknowledged
	inflight time.Duration         // a clock move sent but not answered, if any

	clockMoves int
	reads      atomic.Int64
}

func newAdminLedger(t *testing.T, c *testserver.Child, fx *fixture) *adminLedger {
	t.Helper()
	a := &adminLedger{fx: fx, restKeys: map[*fxWorkspace]string{}, salt: fmt.Sprintf("%06x", rand.Uint32()>>8),
		names: map[*fxJob]string{}, renames: map[*fxJob][]*adminOp{}}
	for _, w := range fx.ws {
		var key struct{ Key string }
		if err := c.AdminCall(201, "POST", "/workspaces/"+w.id+"/keys", map[string]any{"name": "reader", "type": "rest"}, &key); err != nil {
			t.Fatal(err)
		}
		a.restKeys[w] = key.Key
		for i, j := range w.jobs {
			a.names[j] = fmt.Sprintf("job-%d", i)
		}
	}
	a.clock = a.readClock(t, c)
	return a
}

func (a *adminLedger) clientsAcked() (n int) {
	for _, op := range a.clients {
		if op.state == stAcked {
			n++
		}
	}
	return n
}

// renamesAcked counts the jobs whose name is no longer the fixture's.
func (a *adminLedger) renamesAcked() (n int) {
	for j, name := range a.names {
		if name != fmt.Sprintf("job-%d", indexOf(j.ws.jobs, j)) {
			n++
		}
	}
	return n
}

func indexOf(jobs []*fxJob, j *fxJob) int {
	for i, x := range jobs {
		if x == j {
			return i
		}
	}
	return -1
}

// readClock returns the development clock (a move of zero seconds).
func (a *adminLedger) readClock(t *testing.T, c *testserver.Child) time.Time {
	t.Helper()
	var out struct{ Now time.Time }
	if err := c.AdminCall(200, "POST", "/clock", map[string]any{"advanceSeconds": 0}, &out); err != nil {
		t.Fatal(err)
	}
	return out.Now
}

// advance moves the clock forward at rest.
func (a *adminLedger) advance(t *testing.T, c *testserver.Child, d time.Duration) {
	t.Helper()
	var out struct{ Now time.Time }
	if err := c.AdminCall(200, "POST", "/clock", map[string]any{"advanceSeconds": int(d.Seconds())}, &out); err != nil {
		t.Fatal(err)
	}
	if want := a.clock.Add(d); !out.Now.Equal(want) {
		t.Fatalf("the clock moved to %v, want %v", out.Now, want)
	}
	a.clock = out.Now
}

// mixedRun is the admin, read and clock load of one kill cycle.
type mixedRun struct {
	stopped atomic.Bool
	wg      sync.WaitGroup
	errMu   sync.Mutex
	errs    []string
}

func (m *mixedRun) fail(format string, args ...any) {
	if m.stopped.Load() {
		return // answers cut by the kill are expected
	}
	m.errMu.Lock()
	defer m.errMu.Unlock()
	m.errs = append(m.errs, fmt.Sprintf(format, args...))
}

func (m *mixedRun) report(t *testing.T, label string) {
	t.Helper()
	m.errMu.Lock()
	defer m.errMu.Unlock()
	for i, e := range m.errs {
		if i == 10 {
			t.Errorf("%s: ... and %d more", label, len(m.errs)-10)
			break
		}
		t.Errorf("%s: %s", label, e)
	}
}

// startMixed starts one goroutine making clients and renaming jobs, one
// moving the clock and two reading the REST API, until stopped.
func (a *adminLedger) startMixed(c *testserver.Child) *mixedRun {
	m := &mixedRun{}
	m.wg.Add(4)
	go func() { // admin changes, one at a time so that their order is known
		defer m.wg.Done()
		rng := rand.New(rand.NewPCG(rand.Uint64(), 1))
		for !m.stopped.Load() {
			w := a.fx.ws[rng.IntN(len(a.fx.ws))]
			a.mu.Lock()
			a.next++
			op := &adminOp{ws: w, name: fmt.Sprintf("kl-%s-%d", a.salt, a.next)}
			path, want := "/workspaces/"+w.id+"/clients", 201
			method := "POST"
			if rng.IntN(2) == 0 {
				op.job = w.jobs[rng.IntN(len(w.jobs))]
				a.renames[op.job] = append(a.renames[op.job], op)
				path, want, method = "/workspaces/"+w.id+"/jobs/"+op.job.id, 200, "PATCH"
			} else {
				a.clients = append(a.clients, op)
			}
			a.mu.Unlock()
			r, err := c.AdminSend(method, path, map[string]any{"name": op.name})
			a.mu.Lock()
			switch {
			case err != nil:
				op.state = stMaybe
				m.fail("%s %s: %v", method, path, err)
			case r.Status == want:
				op.state = stAcked
			default:
				op.state = stRejected
				m.fail("%s %s: %d %s", method, path, r.Status, r.Body)
			}
			a.mu.Unlock()
			time.Sleep(2 * time.Millisecond)
		}
	}()
	go func() { // clock moves
		defer m.wg.Done()
		for !m.stopped.Load() {
			d := time.Duration(1+rand.IntN(600)) * time.Second
			a.mu.Lock()
			a.inflight = d
			a.mu.Unlock()
			r, err := c.AdminSend("POST", "/clock", map[string]any{"advanceSeconds": int(d.Seconds())})
			if err != nil {
				m.fail("clock move: %v", err)
				return // in flight at the kill: a.inflight stays
			}
			var out struct {
				Data struct{ Now time.Time }
			}
			if r.Status != 200 || json.Unmarshal(r.Body, &out) != nil {
				m.fail("clock move: %d %s", r.Status, r.Body)
				return
			}
			a.mu.Lock()
			if want := a.clock.Add(d); !out.Data.Now.Equal(want) {
				m.fail("clock moved to %v, want %v", out.Data.Now, want)
			}
			a.clock, a.inflight = out.Data.Now, 0
			a.clockMoves++
			a.mu.Unlock()
			time.Sleep(20 * time.Millisecond)
		}
	}()
	for i := range 2 { // REST reads
		go func() {
			defer m.wg.Done()
			paths := []string{"/api/v1/jobs?limit=50", "/api/v1/alerts", "/api/v1/clients", "/api/v1/health", "/api/v1/reports?limit=50"}
			for n := i; !m.stopped.Load(); n++ {
				w := a.fx.ws[n%len(a.fx.ws)]
				p := paths[n%len(paths)]
				r, err := c.Send("GET", c.PublicURL+p, testserver.Bearer(a.restKeys[w]), nil)
				switch {
				case err != nil:
					m.fail("GET %s: %v", p, err)
				case r.Status == 200 || r.Status == 429: // the REST API's own limit may bite
					a.reads.Add(1)
				default:
					m.fail("GET %s: %d %s", p, r.Status, r.Body)
				}
			}
		}()
	}
	return m
}

// verify checks, after a restart, the admin changes and the clock: every
// acknowledged change is there, nothing unsent is, and a change in flight
// at the kill is there or not, as a whole.
func (a *adminLedger) verify(t *testing.T, c *testserver.Child, label string) {
	t.Helper()
	a.mu.Lock()
	defer a.mu.Unlock()

	now := a.readClock(t, c)
	if now.Before(a.clock) || now.After(a.clock.Add(a.inflight)) {
		t.Errorf("%s: the clock is %v; acknowledged %v, with %v in flight", label, now, a.clock, a.inflight)
	}
	a.clock, a.inflight = now, 0

	byName := map[string]*adminOp{}
	for _, op := range a.clients {
		byName[op.name] = op
	}
	for _, w := range a.fx.ws {
		var clients []struct{ ID, Name string }
		if err := c.AdminCall(200, "GET", "/workspaces/"+w.id+"/clients", nil, &clients); err != nil {
			t.Fatalf("%s: %v", label, err)
		}
		seen := map[string]bool{}
		for _, cl := range clients {
			if cl.Name == "client" {
				continue
			}
			op := byName[cl.Name]
			switch {
			case op == nil || op.ws != w:
				t.Errorf("%s: workspace %s has client %q, never sent to it", label, w.id, cl.Name)
			case seen[cl.Name]:
				t.Errorf("%s: client %q twice", label, cl.Name)
			case op.state == stRejected:
				t.Errorf("%s: client %q is there but was refused or missing after an earlier restart", label, cl.Name)
			}
			seen[cl.Name] = true
		}
		for _, op := range a.clients {
			if op.ws != w {
				continue
			}
			switch {
			case seen[op.name]:
				op.state = stAcked
			case op.state == stAcked:
				t.Errorf("%s: client %q was acknowledged and is lost", label, op.name)
			default:
				op.state = stRejected
			}
		}

		var jobs []struct{ ID, Name string }
		if err := c.AdminCall(200, "GET", "/workspaces/"+w.id+"/jobs", nil, &jobs); err != nil {
			t.Fatalf("%s: %v", label, err)
		}
		for _, jv := range jobs {
			j := a.fx.jobByID[jv.ID]
			if j == nil {
				t.Errorf("%s: unknown job %s", label, jv.ID)
				continue
			}
			// The name is the last acknowledged one, or one sent after it
			// whose answer the kill cut off.
			allowed := []string{a.names[j]}
			for _, op := range a.renames[j] {
				switch op.state {
				case stAcked:
					allowed = []string{op.name}
				case stMaybe:
					allowed = append(allowed, op.name)
				}
			}
			ok := false
			for _, n := range allowed {
				ok = ok || n == jv.Name
			}
			if !ok {
				t.Errorf("%s: job %s is named %q; acknowledged or in flight: %q", label, j.id, jv.Name, allowed)
			}
			a.names[j] = jv.Name
			delete(a.renames, j)
		}
	}
}
