package engine

// Benchmarks of the REST API's read path in the engine (issue 3): a page of
// /jobs and of /reports through Engine.REST (key lookup, the actor round
// trip, the checks and limits, the page's JSON), in a workspace of 10,000
// jobs and 1,000,000 results, and a /reports page in a workspace of 1,000
// results to compare with: a page should cost the same (within 2×) however
// many results the workspace holds.
//
// Both workspaces live in one engine, built once per test process (10-30 s)
// through ImportReports, the log without fsync (the reads do not write).

import (
	"backupmon/state"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// restBenchWS is one workspace of the REST benchmarks.
type restBenchWS struct {
	id            state.ID
	key           [32]byte
	act           *actor
	jobs, results int
}

type restBenchState struct {
	dir        string
	e          *Engine
	big, small restBenchWS
	buildTime  time.Duration
}

var restShared sharedBenchState[restBenchState]

// restBenchGet returns the shared state, building it on first use; each
// caller calls restBenchRelease when done, and the last one removes it.
func restBenchGet(b *testing.B) *restBenchState {
	b.Helper()
	return restShared.get(func() *restBenchState {
		dir, err := os.MkdirTemp("", "backupmon-engine-rest-bench-")
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		st := &restBenchState{dir: dir, e: benchOpen(b, dir, true)}
		st.big = restBenchBuild(b, st.e, "Big MSP", 100, 10000, 100)
		st.small = restBenchBuild(b, st.e, "Small MSP", 1, 10, 100)
		st.buildTime = time.Since(start)
		b.Logf("built workspaces of %d jobs / %d results and %d jobs / %d results in %s",
			st.big.jobs, st.big.results, st.small.jobs, st.small.results, st.buildTime.Round(time.Millisecond))
		return st
	}, "BenchmarkJobsPage", "BenchmarkReportsPage", "BenchmarkReportsFiltered", "BenchmarkAlertsFiltered", "BenchmarkJobsFiltered", "BenchmarkHealthPage")
}

func restBenchRelease(b *testing.B) {
	restShared.release(func(st *restBenchState) {
		benchStop(b, st.e)
		os.RemoveAll(st.dir)
	})
}

// restBenchVendor is the vendor of job g: veeam, but for one job in a
// thousand (rare matches for the vendor filter).
func restBenchVendor(g int) string {
	if g%1000 == 999 {
		return "acronis"
	}
	return "veeam"
}

// restBenchBuild makes a Pro workspace with a REST key, clients, jobs (spread
// over the clients) and perJob results per job: each job reports once a
// day, the jobs spread over the day, the last results an hour ago; one
// result in 20 failed and one in 20 had warnings, which opens and resolves
// alerts. Results are imported in the order they were received, so the
// workspace's order of results grows at its end, as it does live.
func restBenchBuild(b *testing.B, e *Engine, name string, clients, jobs, perJob int) restBenchWS {
	b.Helper()
	wv, err := e.CreateWorkspace(WorkspaceInput{Name: Some(name), Plan: Some("pro")})
	if err != nil {
		b.Fatal(err)
	}
	kv, err := e.CreateKey(wv.ID, KeyInput{Name: Some("Bench REST key"), Type: Some("rest")})
	if err != nil {
		b.Fatal(err)
	}
	clientIDs := make([]string, clients)
	for c := range clientIDs {
		cv, err := e.CreateClient(wv.ID, ClientInput{Name: Some(fmt.Sprintf("Client %04d", c))})
		if err != nil {
			b.Fatal(err)
		}
		clientIDs[c] = cv.ID
	}
	jobIDs := make([]string, jobs)
	const workers = 64
	var next atomic.Int64
	var failed atomic.Value
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				g := int(next.Add(1) - 1)
				if g >= jobs {
					return
				}
				host := fmt.Sprintf("host-%05d", g)
				jv, err := e.CreateJob(wv.ID, JobInput{
					ClientID: Some(clientIDs[g%clients]), Name: Some(fmt.Sprintf("Nightly backup %05d", g)), Vendor: Some(restBenchVendor(g)),
					Device:   Some(DeviceInput{Name: Some("Server " + host), Type: Some("server"), Hostname: Some(host)}),
					Schedule: Some(ScheduleInput{IntervalMinutes: Some(int64(1440)), GraceMinutes: Some(int64(120))}),
				})
				if err != nil {
					failed.CompareAndSwap(nil, err)
					return
				}
				jobIDs[g] = jv.ID
			}
		})
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}

	// Result r of job g is received at start + (r·jobs + g)·step; worker k
	// imports jobs g ≡ k (mod workers) round by round, so each job's results
	// come oldest first and all of them nearly in order.
	step := 24 * time.Hour / time.Duration(jobs)
	start := time.Now().Add(-time.Duration(perJob)*24*time.Hour - time.Hour)
	for k := range workers {
		wg.Go(func() {
			for r := range perJob {
				for g := k; g < jobs; g += workers {
					status := benchStatus(g, r)
					in := ImportInput{
						ReceivedAt: start.Add(time.Duration(r*jobs+g) * step), Status: status,
						DurationSeconds: int64(600 + (g+r)%7200), SizeBytes: int64(1<<30 + (g%1000)<<20), Source: "api:svc_live_0123456",
					}
					if err := e.ImportReport(wv.ID, jobIDs[g], in); err != nil {
						failed.CompareAndSwap(nil, err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
	id, _ := state.ParseID(wv.ID)
	return restBenchWS{id: id, key: HashKey([]byte(kv.Key)), act: e.actor(id), jobs: jobs, results: jobs * perJob}
}

// resetMinute zeroes the workspace's REST requests of this minute, in its
// actor: before any request sent after it.
func (ws restBenchWS) resetMinute() {
	ws.act.send(func(w *workspace) { w.RESTMinuteCount = 0 })
}

// firstIDs returns the ids of the workspace's first client and first job
// (by name), read in its actor.
func (ws restBenchWS) firstIDs() (clientID, jobID string) {
	done := make(chan struct{})
	ws.act.send(func(w *workspace) {
		clientID, jobID = w.ClientList[0].ID.String(), w.JobList[0].ID.String()
		close(done)
	})
	<-done
	return clientID, jobID
}

// restBenchPages runs q through Engine.REST b.N times; a page must hold
// wantItems items (at least one when wantItems is negative). The workspace's
// minute count is reset (in its actor, every 250 requests) so that the
// Pro limit of 300 a minute never answers instead; that message costs
// about 1/250 of an actor round trip per op.
func restBenchPages(b *testing.B, e *Engine, ws restBenchWS, q RESTQuery, wantItems int) {
	buf := make([]byte, 0, 128<<10)
	ws.resetMinute()
	check := e.REST(ws.key, &q, buf)
	if check.Outcome != RESTOK || !check.List {
		b.Fatalf("outcome %d", check.Outcome)
	}
	if n := countItems(check.Body); n != wantItems && (wantItems >= 0 || n == 0) {
		b.Fatalf("page of %d items, want %d: %.300s", n, wantItems, check.Body)
	}
	b.SetBytes(int64(len(check.Body)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if i%250 == 0 {
			ws.resetMinute()
		}
		qi := q
		ans := e.REST(ws.key, &qi, buf[:0])
		if ans.Outcome != RESTOK {
			b.Fatalf("request %d: outcome %d", i, ans.Outcome)
		}
		buf = ans.Body
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pages/s")
}

// countItems counts the objects at the top level of a JSON list of
// objects (the page's items).
func countItems(b []byte) int {
	n, depth, inString, escaped := 0, 0, false, false
	for _, c := range b {
		switch {
		case inString:
			if escaped {
				escaped = false
			} else if c == '\\' {
				escaped = true
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			if depth == 1 && c == '{' {
				n++
			}
			depth++
		case c == '}' || c == ']':
			depth--
		}
	}
	return n
}

// BenchmarkJobsPage: a page of 50 jobs (/jobs?limit=50) in a workspace of
// 10,000 jobs and 1,000,000 results, the first page and one from a cursor
// in the middle of the list. One op is one page.
func BenchmarkJobsPage(b *testing.B) {
	st := restBenchGet(b)
	defer restBenchRelease(b)
	q := RESTQuery{Endpoint: EndpointJobs, Limit: 50, Days: 30}
	b.Run(fmt.Sprintf("first/jobs=%d/results=%d", st.big.jobs, st.big.results), func(b *testing.B) {
		restBenchPages(b, st.e, st.big, q, 50)
	})
	mid := Position{Name: fmt.Sprintf("nightly backup %05d", st.big.jobs/2)}
	q.After = &mid
	b.Run(fmt.Sprintf("cursor/jobs=%d/results=%d", st.big.jobs, st.big.results), func(b *testing.B) {
		restBenchPages(b, st.e, st.big, q, 50)
	})
}

// BenchmarkReportsPage: a page of 50 results (/reports?limit=50 with the
// default 30-day window, as the transport resolves it), the first page and
// the next from its cursor, in a workspace of 1,000 results and in one of
// 1,000,000. One op is one page.
func BenchmarkReportsPage(b *testing.B) {
	st := restBenchGet(b)
	defer restBenchRelease(b)
	for _, ws := range []restBenchWS{st.small, st.big} {
		q := st.firstPage(EndpointReports)
		b.Run(fmt.Sprintf("first/results=%d", ws.results), func(b *testing.B) {
			restBenchPages(b, st.e, ws, q, 50)
		})
		ws.resetMinute()
		first := st.e.REST(ws.key, &q, nil)
		if first.Outcome != RESTOK || !first.HasMore {
			b.Fatalf("first page: outcome %d, more %v", first.Outcome, first.HasMore)
		}
		q.After = &first.Next
		b.Run(fmt.Sprintf("cursor/results=%d", ws.results), func(b *testing.B) {
			restBenchPages(b, st.e, ws, q, 50)
		})
	}
}

// BenchmarkReportsFiltered: the first page of /reports (limit 50, 30-day
// window) with filters whose matches are common or rare, in the workspace
// of 1,000,000 results: failed results (1 in 20), the results of one
// client (1 in 100), of one job, of a vendor that 1 job in 1,000 has, and
// failed results of that vendor (1 in 20,000). A page walks only the
// indexes that can match, so each should cost about an unfiltered page.
func BenchmarkReportsFiltered(b *testing.B) {
	st := restBenchGet(b)
	defer restBenchRelease(b)
	clientID, jobID := st.big.firstIDs()
	restBenchFiltered(b, st, st.big, st.firstPage(EndpointReports), []restFilter{
		{"status=failed", func(q *RESTQuery) { q.Status = "failed" }, 50},
		{"clientId", func(q *RESTQuery) { q.ClientIDSet, q.ClientID = true, clientID }, 50},
		{"jobId", func(q *RESTQuery) { q.JobIDSet, q.JobID = true, jobID }, -1},
		{"vendor=acronis", func(q *RESTQuery) { q.Vendor = "acronis" }, 50},
		{"vendor=acronis&status=failed", func(q *RESTQuery) { q.Vendor, q.Status = "acronis", "failed" }, -1},
	})
}

// BenchmarkAlertsFiltered: the first page of /alerts (limit 50, 30-day
// window) in the workspace of 1,000,000 results, unfiltered and for one
// client and one job.
func BenchmarkAlertsFiltered(b *testing.B) {
	st := restBenchGet(b)
	defer restBenchRelease(b)
	clientID, jobID := st.big.firstIDs()
	restBenchFiltered(b, st, st.big, st.firstPage(EndpointAlerts), []restFilter{
		{"none", func(q *RESTQuery) {}, 50},
		{"clientId", func(q *RESTQuery) { q.ClientIDSet, q.ClientID = true, clientID }, 50},
		{"jobId", func(q *RESTQuery) { q.JobIDSet, q.JobID = true, jobID }, -1},
	})
}

// BenchmarkJobsFiltered: the first page of /jobs (limit 50) in the
// workspace of 10,000 jobs with filters: a vendor 1 job in 1,000 has, a
// status and a last result, a search, and jobs of one client.
func BenchmarkJobsFiltered(b *testing.B) {
	st := restBenchGet(b)
	defer restBenchRelease(b)
	ws := st.big
	clientID, _ := ws.firstIDs()
	restBenchFiltered(b, st, ws, RESTQuery{Endpoint: EndpointJobs, Limit: 50, Days: 30}, []restFilter{
		{"vendor=acronis", func(q *RESTQuery) { q.Vendor = "acronis" }, -1},
		{"status=healthy", func(q *RESTQuery) { q.Status = "healthy" }, -1},
		{"status=failed", func(q *RESTQuery) { q.Status = "failed" }, -1},
		{"lastResult=failed", func(q *RESTQuery) { q.LastResult = "failed" }, -1},
		{"search=00999", func(q *RESTQuery) { q.Search = "00999" }, -1},
		{"clientId", func(q *RESTQuery) { q.ClientIDSet, q.ClientID = true, clientID }, -1},
	})
}

// firstPage is the first page of ep, 50 items over the default 30-day
// window ending now, as the transport resolves it.
func (st *restBenchState) firstPage(ep Endpoint) RESTQuery {
	now := st.e.nowMs()
	return RESTQuery{Endpoint: ep, Limit: 50, Days: 30, HasWindow: true, From: now - 30*state.MsPerDay, To: now}
}

// restFilter is one case of a filtered page benchmark: its name, the
// filter it sets and the items a page must hold (-1: any number).
type restFilter struct {
	name  string
	set   func(q *RESTQuery)
	items int
}

// restBenchFiltered runs one benchmark of base's page in ws per filter.
func restBenchFiltered(b *testing.B, st *restBenchState, ws restBenchWS, base RESTQuery, filters []restFilter) {
	for _, c := range filters {
		q := base
		c.set(&q)
		b.Run(c.name, func(b *testing.B) { restBenchPages(b, st.e, ws, q, c.items) })
	}
}

// BenchmarkHealthPage: GET /health (the workspace over 30 days, as
// dashboards poll it) in the workspace of 10,000 jobs, and over 7 days,
// which is worked out on each request.
func BenchmarkHealthPage(b *testing.B) {
	st := restBenchGet(b)
	defer restBenchRelease(b)
	for _, days := range []int{30, 7} {
		q := RESTQuery{Endpoint: EndpointHealth, Days: days}
		b.Run(fmt.Sprintf("days=%d/jobs=%d", days, st.big.jobs), func(b *testing.B) {
			buf := make([]byte, 0, 4096)
			b.ReportAllocs()
			for i := range b.N {
				if i%250 == 0 {
					st.big.resetMinute()
				}
				qi := q
				if ans := st.e.REST(st.big.key, &qi, buf[:0]); ans.Outcome != RESTOK {
					b.Fatalf("outcome %d", ans.Outcome)
				}
			}
		})
	}
}
