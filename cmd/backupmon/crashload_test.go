package main

// The crash tests' model of the outside world: a fixture of workspaces, jobs
// and report keys made through the admin API, a ledger of every report sent
// (and what became of it), a load generator, and the checks run after each
// restart.
//
// Every report carries a unique size_bytes, its id in the ledger, so that a
// result in a job's history names the request that made it.

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"backupmon/internal/testserver"
)

// Request limits of the Report API (api.md 8.3). The fixture spends at most
// keyBudget requests per key and jobBudget new reports per job over the whole
// test, without counting on a minute rolling over, so that no limit bites.
const (
	keyBudget = 58 // of 60 per key per minute
	jobBudget = 96 // of 100 per job per trailing 24 hours
)

// ---------------------------------------------------------------------------
// Fixture

type fxKey struct {
	secret, prefix string
	used           int // requests sent with it; under fxWorkspace.mu
}

type fxJob struct {
	ws   *fxWorkspace
	id   string
	used int // new reports sent to it; under fxWorkspace.mu
}

type fxWorkspace struct {
	id       string
	clientID string
	jobs     []*fxJob
	keys     []*fxKey

	mu      sync.Mutex
	nextKey int
}

// fixture is what the test made through the admin API.
type fixture struct {
	ws      []*fxWorkspace
	jobs    []*fxJob // every job, round-robin order for new reports
	jobByID map[string]*fxJob
	nextJob atomic.Int64

	aliveClients int // clients checkAlive made in the first workspace
}

// fixtureSize says how much to make.
type fixtureSize struct {
	workspaces, jobsPerWS, keysPerWS int
}

// makeFixture creates the workspaces, a client each, the jobs and the report
// keys, sixteen requests at a time.
func makeFixture(t testing.TB, c *testserver.Child, size fixtureSize) *fixture {
	t.Helper()
	fx := &fixture{jobByID: map[string]*fxJob{}}
	for i := 0; i < size.workspaces; i++ {
		var ws struct{ ID string }
		if err := c.AdminCall(201, "POST", "/workspaces", map[string]any{"name": fmt.Sprintf("crash-ws-%d", i), "plan": "pro"}, &ws); err != nil {
			t.Fatal(err)
		}
		var cl struct{ ID string }
		if err := c.AdminCall(201, "POST", "/workspaces/"+ws.ID+"/clients", map[string]any{"name": "client"}, &cl); err != nil {
			t.Fatal(err)
		}
		w := &fxWorkspace{id: ws.ID, clientID: cl.ID, jobs: make([]*fxJob, size.jobsPerWS), keys: make([]*fxKey, size.keysPerWS)}
		fx.ws = append(fx.ws, w)
	}
	var tasks []func() error
	for _, w := range fx.ws {
		for j := range w.jobs {
			tasks = append(tasks, func() error {
				body := map[string]any{
					"clientId": w.clientID, "name": fmt.Sprintf("job-%d", j), "vendor": "veeam",
					"device":   map[string]any{"name": "dev", "type": "server", "hostname": fmt.Sprintf("host-%d", j)},
					"schedule": map[string]any{"intervalMinutes": 60},
				}
				var job struct{ ID string }
				if err := c.AdminCall(201, "POST", "/workspaces/"+w.id+"/jobs", body, &job); err != nil {
					return err
				}
				w.jobs[j] = &fxJob{ws: w, id: job.ID}
				return nil
			})
		}
		for k := range w.keys {
			tasks = append(tasks, func() error {
				var key struct{ Key, Prefix string }
				if err := c.AdminCall(201, "POST", "/workspaces/"+w.id+"/keys", map[string]any{"name": fmt.Sprintf("key-%d", k), "type": "report"}, &key); err != nil {
					return err
				}
				if !strings.HasPrefix(key.Key, key.Prefix) || len(key.Prefix) != 16 {
					return fmt.Errorf("key %q with prefix %q", key.Key, key.Prefix)
				}
				w.keys[k] = &fxKey{secret: key.Key, prefix: key.Prefix}
				return nil
			})
		}
	}
	if err := runParallel(16, tasks); err != nil {
		t.Fatal(err)
	}
	// Interleave the workspaces so that consecutive reports go to
	// different actors.
	for j := 0; j < size.jobsPerWS; j++ {
		for _, w := range fx.ws {
			fx.jobs = append(fx.jobs, w.jobs[j])
			fx.jobByID[w.jobs[j].id] = w.jobs[j]
		}
	}
	return fx
}

// runParallel runs the tasks on n goroutines and returns the first error.
func runParallel(n int, tasks []func() error) error {
	var (
		next  atomic.Int64
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				k := int(next.Add(1)) - 1
				if k >= len(tasks) {
					return
				}
				if err := tasks[k](); err != nil {
					once.Do(func() { first = err })
				}
			}
		}()
	}
	wg.Wait()
	return first
}

// takeKey returns a key of w with budget left for one more request.
func (w *fxWorkspace) takeKey() (*fxKey, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for range w.keys {
		k := w.keys[w.nextKey%len(w.keys)]
		w.nextKey++
		if k.used < keyBudget {
			k.used++
			return k, nil
		}
	}
	return nil, fmt.Errorf("workspace %s: every report key has used its %d requests; make the fixture larger", w.id, keyBudget)
}

// takeJob returns a job with budget left for one more new report, and a key
// of its workspace.
func (fx *fixture) takeJob() (*fxJob, *fxKey, error) {
	for range fx.jobs {
		j := fx.jobs[int(fx.nextJob.Add(1)-1)%len(fx.jobs)]
		j.ws.mu.Lock()
		ok := j.used < jobBudget
		if ok {
			j.used++
		}
		j.ws.mu.Unlock()
		if ok {
			k, err := j.ws.takeKey()
			return j, k, err
		}
	}
	return nil, nil, fmt.Errorf("every job has had its %d reports; make the fixture larger", jobBudget)
}

// budgetLeft returns how many new reports and how many requests the
// fixture can still take.
func (fx *fixture) budgetLeft() (reports, requests int) {
	for _, w := range fx.ws {
		w.mu.Lock()
		for _, j := range w.jobs {
			reports += jobBudget - j.used
		}
		for _, k := range w.keys {
			requests += keyBudget - k.used
		}
		w.mu.Unlock()
	}
	return reports, requests
}

// ---------------------------------------------------------------------------
// Ledger

// reportState is what the test knows about a report it sent.
type reportState uint8

const (
	stSending  reportState = iota // no answer yet
	stAcked                       // answered 200 (or found stored): must be stored, exactly once, forever
	stMaybe                       // the connection failed or 5xx: may or may not be stored
	stRejected                    // answered 4xx, or found not stored after a restart: must never be stored
)

type sentReport struct {
	id      int64 // size_bytes, unique in the test
	job     *fxJob
	key     *fxKey // the API key of the request that made (or would make) the result
	idem    string // "" for a report without an idempotency key
	viaBody bool   // idem sent in the body, not the header
	status  string // ok, warn, failed
	state   reportState
	cycle   string
}

// ledger records every report sent.
type ledger struct {
	mu   sync.Mutex
	byID map[int64]*sentReport
	next atomic.Int64
	salt string
}

func newLedger() *ledger {
	return &ledger{byID: map[int64]*sentReport{}, salt: fmt.Sprintf("%08x", rand.Uint32())}
}

// newReport allocates a report to a job and key with budget left and enters
// it in the ledger as being sent.
func (l *ledger) newReport(fx *fixture, cycle string, keyless bool, rng *rand.Rand) (*sentReport, error) {
	j, k, err := fx.takeJob()
	if err != nil {
		return nil, err
	}
	id := l.next.Add(1)
	r := &sentReport{id: id, job: j, key: k, cycle: cycle}
	switch n := rng.IntN(10); {
	case n == 0:
		r.status = "failed"
	case n == 1:
		r.status = "warn"
	default:
		r.status = "ok"
	}
	if !keyless {
		r.idem = fmt.Sprintf("crash-%s-%09d", l.salt, id)
		r.viaBody = rng.IntN(8) == 0
	}
	l.mu.Lock()
	l.byID[id] = r
	l.mu.Unlock()
	return r, nil
}

func (l *ledger) setState(r *sentReport, s reportState) {
	l.mu.Lock()
	r.state = s
	l.mu.Unlock()
}

// clone returns a deep copy of the ledger (fixture pointers shared), for
// tests that restart several copies of one data directory.
func (l *ledger) clone() *ledger {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := &ledger{byID: make(map[int64]*sentReport, len(l.byID)), salt: l.salt}
	n.next.Store(l.next.Load())
	for id, r := range l.byID {
		cp := *r
		n.byID[id] = &cp
	}
	return n
}

// all returns every report, by id.
func (l *ledger) all() []*sentReport {
	l.mu.Lock()
	defer l.mu.Unlock()
	list := make([]*sentReport, 0, len(l.byID))
	for _, r := range l.byID {
		list = append(list, r)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].id < list[j].id })
	return list
}

// ---------------------------------------------------------------------------
// Report API

// reportAnswer is a Report API answer, fields as sent.
type reportAnswer struct {
	code       int
	raw        string
	OK         *bool           `json:"ok"`
	Status     *string         `json:"status"`
	AlertID    json.RawMessage `json:"alert_id"`
	Duplicate  *bool           `json:"duplicate"`
	Superseded *bool           `json:"superseded"`
	Error      string          `json:"error"`
}

func (a *reportAnswer) duplicate() bool { return a.Duplicate != nil && *a.Duplicate }

// sendReport posts r to its job with key k.
func sendReport(c *testserver.Child, r *sentReport, k *fxKey) (*reportAnswer, error) {
	body, idem := fmt.Sprintf(`{"status":%q,"size_bytes":%d}`, r.status, r.id), r.idem
	if r.idem != "" && r.viaBody {
		body, idem = fmt.Sprintf(`{"status":%q,"size_bytes":%d,"idempotency_key":%q}`, r.status, r.id, r.idem), ""
	}
	resp, err := c.ReportSend(r.job.id, k.secret, idem, body)
	if err != nil && resp.Status == 0 { // no answer (an answer that is not JSON is below)
		return nil, err
	}
	a := &reportAnswer{code: resp.Status, raw: string(resp.Body)}
	if err := json.Unmarshal(resp.Body, a); err != nil {
		return a, fmt.Errorf("report answer %d is not JSON: %q", resp.Status, resp.Body)
	}
	return a, nil
}

// checkAcceptAnswer checks a 200 answer to a report sent for the first time.
func checkAcceptAnswer(a *reportAnswer, r *sentReport) error {
	if a.code != 200 || a.OK == nil || !*a.OK || a.Status == nil || *a.Status != r.status || a.Duplicate == nil || a.Superseded == nil || len(a.AlertID) == 0 {
		return fmt.Errorf("report %d (%s): answer %d %s", r.id, r.status, a.code, a.raw)
	}
	return nil
}

// checkDuplicateAnswer checks the answer to a report sent again with its
// key (decisions.md 3: {ok, status, alert_id: null, duplicate: true,
// superseded: false}).
func checkDuplicateAnswer(a *reportAnswer, r *sentReport) error {
	if a.code != 200 || a.OK == nil || !*a.OK || a.Status == nil || *a.Status != r.status ||
		!a.duplicate() || a.Superseded == nil || *a.Superseded || string(a.AlertID) != "null" {
		return fmt.Errorf("report %d (key %s, job %s, sent in %s) sent again: want 200 duplicate, got %d %s", r.id, r.idem, r.job.id, r.cycle, a.code, a.raw)
	}
	return nil
}

// ---------------------------------------------------------------------------
// Load

// loadOpts shape a load run.
type loadOpts struct {
	cycle   string
	workers int
	budget  int     // most new reports
	rate    float64 // reports per second; 0: as fast as the server answers
	keyless int     // one report in this many has no idempotency key
}

// loadRun is a running load; stopAndKill or stopAndTerm ends it.
type loadRun struct {
	t       testing.TB
	opts    loadOpts
	started time.Time
	stopped atomic.Bool // set before the child is signalled
	wg      sync.WaitGroup

	issued, acked, maybe, rejected, dupInLoad atomic.Int64

	errMu sync.Mutex
	errs  []string
}

func (lr *loadRun) fail(format string, args ...any) {
	lr.errMu.Lock()
	defer lr.errMu.Unlock()
	lr.errs = append(lr.errs, fmt.Sprintf(format, args...))
}

// startLoad starts opts.workers goroutines posting new reports to c.
func startLoad(t testing.TB, c *testserver.Child, fx *fixture, led *ledger, opts loadOpts) *loadRun {
	lr := &loadRun{t: t, opts: opts, started: time.Now()}
	var seq atomic.Int64
	for w := 0; w < opts.workers; w++ {
		lr.wg.Add(1)
		go func() {
			defer lr.wg.Done()
			rng := rand.New(rand.NewPCG(rand.Uint64(), uint64(w)))
			for !lr.stopped.Load() {
				i := seq.Add(1)
				if i > int64(opts.budget) {
					return
				}
				if opts.rate > 0 {
					due := lr.started.Add(time.Duration(float64(i) / opts.rate * float64(time.Second)))
					if d := time.Until(due); d > 0 {
						time.Sleep(d)
					}
					if lr.stopped.Load() {
						return
					}
				}
				keyless := opts.keyless > 0 && rng.IntN(opts.keyless) == 0
				r, err := led.newReport(fx, opts.cycle, keyless, rng)
				if err != nil {
					lr.fail("%v", err)
					return
				}
				lr.issued.Add(1)
				a, err := sendReport(c, r, r.key)
				switch {
				case err != nil && a == nil:
					led.setState(r, stMaybe)
					lr.maybe.Add(1)
					if !lr.stopped.Load() {
						lr.fail("report %d failed before the server was stopped: %v", r.id, err)
					}
				case err != nil:
					led.setState(r, stMaybe)
					lr.maybe.Add(1)
					lr.fail("%v", err)
				case a.code == 200:
					if err := checkAcceptAnswer(a, r); err != nil {
						lr.fail("%v", err)
					}
					if a.duplicate() {
						// net/http may resend a request carrying an
						// Idempotency-Key when a kept-alive connection
						// breaks; the key is recorded either way.
						lr.dupInLoad.Add(1)
					}
					led.setState(r, stAcked)
					lr.acked.Add(1)
				case a.code >= 500:
					led.setState(r, stMaybe)
					lr.maybe.Add(1)
					lr.fail("report %d answered %d %s", r.id, a.code, a.raw)
				default:
					led.setState(r, stRejected)
					lr.rejected.Add(1)
					lr.fail("report %d answered %d %s (a limit bit? the fixture is too small)", r.id, a.code, a.raw)
				}
			}
		}()
	}
	return lr
}

// wait waits until the workers have spent the budget.
func (lr *loadRun) wait() { lr.wg.Wait() }

// stopAndKill SIGKILLs the child mid-load and waits for the workers.
func (lr *loadRun) stopAndKill(c *testserver.Child) {
	lr.stopped.Store(true)
	c.Kill()
	lr.wg.Wait()
}

// stopAndTerm SIGTERMs the child mid-load, waits for the workers and
// returns the exit code.
func (lr *loadRun) stopAndTerm(c *testserver.Child) (int, error) {
	lr.stopped.Store(true)
	code, err := c.Term()
	lr.wg.Wait()
	return code, err
}

// report logs the run's counts and fails the test for every unexpected
// answer seen.
func (lr *loadRun) report() {
	lr.t.Helper()
	el := time.Since(lr.started)
	lr.t.Logf("%s: %d reports sent in %v (%.0f/s): %d acknowledged, %d in flight at the stop, %d refused, %d answered duplicate by a transport retry",
		lr.opts.cycle, lr.issued.Load(), el.Round(time.Millisecond), float64(lr.issued.Load())/el.Seconds(),
		lr.acked.Load(), lr.maybe.Load(), lr.rejected.Load(), lr.dupInLoad.Load())
	lr.errMu.Lock()
	defer lr.errMu.Unlock()
	for i, e := range lr.errs {
		if i == 10 {
			lr.t.Errorf("%s: ... and %d more", lr.opts.cycle, len(lr.errs)-10)
			break
		}
		lr.t.Errorf("%s: %s", lr.opts.cycle, e)
	}
}

// ---------------------------------------------------------------------------
// Checks after a restart

// historyEntry is a result in the admin job view's history.
type historyEntry struct {
	ID        string `json:"id"`
	JobID     string `json:"jobId"`
	Status    string `json:"status"`
	SizeBytes *int64 `json:"sizeBytes"`
	Source    string `json:"source"`
}

// fetchHistories returns every job's history, by job id.
func fetchHistories(t testing.TB, c *testserver.Child, fx *fixture) map[string][]historyEntry {
	t.Helper()
	var mu sync.Mutex
	out := map[string][]historyEntry{}
	var tasks []func() error
	for _, j := range fx.jobs {
		tasks = append(tasks, func() error {
			var v struct {
				ID      string         `json:"id"`
				History []historyEntry `json:"history"`
			}
			if err := c.AdminCall(200, "GET", "/workspaces/"+j.ws.id+"/jobs/"+j.id+"?limit=1000", nil, &v); err != nil {
				return err
			}
			if v.ID != j.id {
				return fmt.Errorf("job %s answered as %s", j.id, v.ID)
			}
			if len(v.History) >= 1000 {
				return fmt.Errorf("job %s: history holds %d results, the check cannot see them all", j.id, len(v.History))
			}
			mu.Lock()
			out[j.id] = v.History
			mu.Unlock()
			return nil
		})
	}
	if err := runParallel(8, tasks); err != nil {
		t.Fatalf("%s: read job histories: %v", c.Name, err)
	}
	return out
}

var resultStatus = map[string]string{"ok": "ok", "warn": "warning", "failed": "failed"}

// verifyState checks, after a restart, every report the ledger knows:
//
//   - every result in a history was sent (to that job, with that status and
//     key), at most once, and was not refused: no phantom results;
//   - every acknowledged report is stored;
//   - a report that was in flight at the kill is stored or not; from now on
//     it is known to be one or the other;
//   - every stored report with an idempotency key answers duplicate when
//     sent again, and one in flight at the kill that was not stored is
//     recorded when sent again (the key index agrees with the results).
//
// It logs per-job counts: acknowledged <= stored <= sent.
func verifyState(t testing.TB, c *testserver.Child, fx *fixture, led *ledger, label string) {
	t.Helper()
	verifyStateOf(t, c, fx, led, label, "")
}

// verifyStateOf is verifyState sending again, as duplicates, only the
// acknowledged reports of cycle (every cycle's when cycle is ""), so that
// a long kill loop does not resend its whole past after each restart.
func verifyStateOf(t testing.TB, c *testserver.Child, fx *fixture, led *ledger, label, cycle string) {
	t.Helper()
	start := time.Now()
	hist := fetchHistories(t, c, fx)

	led.mu.Lock()
	byID := led.byID
	stored := map[int64]bool{}
	var errs []string
	fail := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	type counts struct{ acked, stored, sent int }
	perJob := map[*fxJob]*counts{}
	for _, j := range fx.jobs {
		perJob[j] = &counts{}
	}
	for jobID, entries := range hist {
		j := fx.jobByID[jobID]
		for _, e := range entries {
			if e.SizeBytes == nil {
				fail("job %s: result %s has no size: not sent by this test", jobID, e.ID)
				continue
			}
			r := byID[*e.SizeBytes]
			switch {
			case r == nil:
				fail("job %s: result %s (size %d) was never sent: phantom result", jobID, e.ID, *e.SizeBytes)
				continue
			case r.job != j:
				fail("job %s: result %s is report %d, which was sent to job %s", jobID, e.ID, r.id, r.job.id)
				continue
			case stored[r.id]:
				fail("job %s: report %d is stored twice", jobID, r.id)
				continue
			case r.state == stRejected:
				fail("job %s: report %d (%s) is stored but was refused, or was not stored after an earlier restart", jobID, r.id, r.cycle)
			case r.state == stSending:
				fail("job %s: report %d is stored but the test never finished sending it", jobID, r.id)
			}
			stored[r.id] = true
			if e.Status != resultStatus[r.status] {
				fail("job %s: report %d sent as %s stored as %s", jobID, r.id, r.status, e.Status)
			}
			if e.Source != "api:"+r.key.prefix {
				fail("job %s: report %d sent with key %s… stored with source %q", jobID, r.id, r.key.prefix, e.Source)
			}
		}
	}
	var resendDup, resendNew []*sentReport
	var nAcked, nMaybe, nMaybeStored int
	for _, r := range byID {
		pc := perJob[r.job]
		pc.sent++
		if stored[r.id] {
			pc.stored++
		}
		switch r.state {
		case stAcked:
			pc.acked++
			nAcked++
			if !stored[r.id] {
				fail("job %s: report %d (key %q, %s) was acknowledged but is not stored: lost", r.job.id, r.id, r.idem, r.cycle)
			} else if r.idem != "" && (cycle == "" || r.cycle == cycle) {
				resendDup = append(resendDup, r)
			}
		case stMaybe:
			nMaybe++
			if stored[r.id] {
				nMaybeStored++
				r.state = stAcked
				if r.idem != "" {
					resendDup = append(resendDup, r)
				}
			} else if r.idem != "" {
				resendNew = append(resendNew, r)
			} else {
				r.state = stRejected
			}
		}
	}
	led.mu.Unlock()
	for _, e := range errs[:min(len(errs), 20)] {
		t.Errorf("%s: %s", label, e)
	}
	if len(errs) > 20 {
		t.Errorf("%s: ... and %d more", label, len(errs)-20)
	}
	minAcked, maxSent := 1<<30, 0
	for _, pc := range perJob {
		if pc.acked > pc.stored || pc.stored > pc.sent {
			t.Errorf("%s: per-job counts out of order: acknowledged %d, stored %d, sent %d", label, pc.acked, pc.stored, pc.sent)
		}
		minAcked, maxSent = min(minAcked, pc.acked), max(maxSent, pc.sent)
	}

	// Send again: stored reports answer duplicate; keyed reports in flight
	// at the kill that were not stored are recorded now.
	var mu sync.Mutex
	var resendErrs []string
	var tasks []func() error
	for _, r := range resendDup {
		tasks = append(tasks, func() error {
			k, err := r.job.ws.takeKey()
			if err != nil {
				return err
			}
			a, err := sendReport(c, r, k)
			if err == nil {
				err = checkDuplicateAnswer(a, r)
			}
			if err != nil {
				mu.Lock()
				resendErrs = append(resendErrs, err.Error())
				mu.Unlock()
			}
			return nil
		})
	}
	for _, r := range resendNew {
		tasks = append(tasks, func() error {
			// The same key as the first time, so that the source is the
			// one the ledger knows.
			r.job.ws.mu.Lock()
			r.key.used++
			r.job.ws.mu.Unlock()
			a, err := sendReport(c, r, r.key)
			if err == nil {
				err = checkAcceptAnswer(a, r)
				if err == nil && a.duplicate() {
					err = fmt.Errorf("report %d (key %s) is not stored but its key answers duplicate", r.id, r.idem)
				}
			}
			if err != nil {
				led.setState(r, stMaybe) // unknown again
				mu.Lock()
				resendErrs = append(resendErrs, err.Error())
				mu.Unlock()
				return nil
			}
			led.setState(r, stAcked)
			return nil
		})
	}
	if err := runParallel(16, tasks); err != nil {
		t.Fatalf("%s: %v", label, err)
	}
	for i, e := range resendErrs {
		if i == 20 {
			t.Errorf("%s: ... and %d more", label, len(resendErrs)-20)
			break
		}
		t.Errorf("%s: %s", label, e)
	}
	t.Logf("%s: %d reports sent, %d acknowledged before, %d in flight at the stop of which %d stored; %d stored in all; %d sent again as duplicates, %d in-flight ones recorded now; per job acknowledged ≥ %d, sent ≤ %d; checked in %v",
		label, len(byID), nAcked, nMaybe, nMaybeStored, len(stored), len(resendDup), len(resendNew), minAcked, maxSent, time.Since(start).Round(time.Millisecond))
}

// checkAlive checks that the admin API answers (a read and a mutation) and
// that new reports are accepted, one per workspace; they join the ledger as
// acknowledged.
func checkAlive(t testing.TB, c *testserver.Child, fx *fixture, led *ledger, label string) {
	t.Helper()
	var list []struct{ ID string }
	if err := c.AdminCall(200, "GET", "/workspaces", nil, &list); err != nil {
		t.Fatalf("%s: %v", label, err)
	}
	if len(list) != len(fx.ws) {
		t.Errorf("%s: %d workspaces, want %d", label, len(list), len(fx.ws))
	}
	// Every client made so far is there (made before a kill, so durable
	// when acknowledged), and a new one can be made.
	var clients []struct{ ID string }
	if err := c.AdminCall(200, "GET", "/workspaces/"+fx.ws[0].id+"/clients", nil, &clients); err != nil {
		t.Fatalf("%s: %v", label, err)
	}
	if len(clients) != 1+fx.aliveClients {
		t.Errorf("%s: %d clients, want %d", label, len(clients), 1+fx.aliveClients)
	}
	if err := c.AdminCall(201, "POST", "/workspaces/"+fx.ws[0].id+"/clients", map[string]any{"name": "after " + label}, nil); err != nil {
		t.Errorf("%s: %v", label, err)
	} else {
		fx.aliveClients++
	}
	rng := rand.New(rand.NewPCG(rand.Uint64(), 7))
	for range fx.ws {
		r, err := led.newReport(fx, label+" (alive)", false, rng)
		if err != nil {
			t.Fatal(err)
		}
		a, err := sendReport(c, r, r.key)
		if err == nil {
			err = checkAcceptAnswer(a, r)
		}
		if err == nil && a.duplicate() {
			err = fmt.Errorf("new report %d answered duplicate", r.id)
		}
		if err != nil {
			led.setState(r, stMaybe)
			t.Errorf("%s: new report: %v", label, err)
			continue
		}
		led.setState(r, stAcked)
	}
}

// stateDump reads everything the admin API shows of the fixture's
// workspaces (workspace, clients, jobs with their whole history, alerts,
// activity, keys) as canonical JSON, one document per line. Key records
// leave out lastUsedAt: the log does not record a key's use, so a kill may
// lose the newest one.
func stateDump(t testing.TB, c *testserver.Child, fx *fixture) string {
	t.Helper()
	var paths []string
	for _, w := range fx.ws {
		base := "/workspaces/" + w.id
		paths = append(paths, base, base+"/clients", base+"/jobs", base+"/alerts", base+"/activity", base+"/keys")
		for _, j := range w.jobs {
			paths = append(paths, base+"/jobs/"+j.id+"?limit=1000")
		}
	}
	docs := make([]string, len(paths))
	var tasks []func() error
	for i, p := range paths {
		tasks = append(tasks, func() error {
			var v any
			if err := c.AdminCall(200, "GET", p, nil, &v); err != nil {
				return err
			}
			if strings.HasSuffix(p, "/keys") {
				for _, k := range v.([]any) {
					delete(k.(map[string]any), "lastUsedAt")
				}
			}
			b, err := json.Marshal(v) // maps come out with sorted keys
			if err != nil {
				return err
			}
			docs[i] = p + " " + string(b)
			return nil
		})
	}
	if err := runParallel(8, tasks); err != nil {
		t.Fatalf("%s: read the state: %v", c.Name, err)
	}
	return strings.Join(docs, "\n")
}

// killQuiet checks replay and snapshot fidelity on a server at rest: it
// reads the whole state, kills the server, restarts it on its data
// directory and reads the state again, which must be the same. It returns
// the new child.
func killQuiet(t testing.TB, c *testserver.Child, fx *fixture, label string, flags ...string) *testserver.Child {
	t.Helper()
	before := stateDump(t, c, fx)
	c.Kill()
	c = testserver.StartChild(t, label, c.DataDir, flags...)
	if d := testserver.LineDiff(before, stateDump(t, c, fx), 4); d != "" {
		t.Errorf("%s: the state after the restart differs from the state before the kill:\n%s", label, d)
	}
	return c
}
