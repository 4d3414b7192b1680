package engine

// Benchmarks of the job timers' cost per report (issue 4: timer bookkeeping
// under 1 µs per report). A report moves its job's status-change instant
// (its next due time plus grace) forward; the actor's after-message work
// puts the job back in its status list and its instant in the workspace's
// heap (jobindex.go), and works out the next wake-up (timers.go).
//
//	go test -run '^$' -bench Timer ./engine
//
// BenchmarkStatusTimersSet is the raw heap operation; BenchmarkReportTimers
// the engine's work around it in a real workspace, and the report's whole
// in-actor cost with and without it.

import (
	"backupmon/state"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// benchTimerHeap returns n jobs in a status-timer heap, job i due at
// (i+1)·step (so job 0 is at the root).
func benchTimerHeap(n int, step int64) (state.StatusTimers, []*state.Job) {
	var h state.StatusTimers
	jobs := make([]*state.Job, n)
	for i := range jobs {
		jobs[i] = &state.Job{} // one allocation each, as real jobs are
		h.Set(jobs[i], int64(i+1)*step)
	}
	return h, jobs
}

// BenchmarkStatusTimersSet measures statusTimers.set moving one job's
// instant forward, as a report does:
//   - inorder: jobs report in the order they are due, so the job reported
//     is the one at the root, and its new instant (now + interval) is the
//     latest of all: it sinks the heap's whole depth (the steady state of
//     jobs that report on time, and the worst case);
//   - random: a job picked at random moves forward by one interval.
func BenchmarkStatusTimersSet(b *testing.B) {
	const step = 1000 // ms between the jobs' instants
	for _, n := range []int{100, 100000} {
		b.Run(fmt.Sprintf("inorder/jobs=%d", n), func(b *testing.B) {
			h, _ := benchTimerHeap(n, step)
			next := int64(n+1) * step
			b.ResetTimer()
			for range b.N {
				h.Set(h[0].V, next)
				next += step
			}
		})
		b.Run(fmt.Sprintf("random/jobs=%d", n), func(b *testing.B) {
			h, jobs := benchTimerHeap(n, step)
			interval := int64(n) * step
			r := rand.New(rand.NewPCG(1, 2))
			picks := make([]*state.Job, 1<<16)
			for i := range picks {
				picks[i] = jobs[r.IntN(n)]
			}
			b.ResetTimer()
			for i := range b.N {
				j := picks[i&(len(picks)-1)]
				h.Set(j, h[j.TimerIx-1].At+interval)
			}
		})
	}
}

// timerBenchWS is one workspace of BenchmarkReportTimers, kept across its
// runs: jobs report in turn (next is the job due first) at times one
// millisecond apart (at), so that the job reported is always at the root of
// the heap and every report moves it.
type timerBenchWS struct {
	e    *Engine
	a    *actor
	jobs []*state.Job
	next int   // jobs[next%len(jobs)] reports next
	at   int64 // the time it reports at
}

// benchTimerWorkspace opens an engine (real clock, log without fsync) with
// one workspace of n jobs, each reported once, job g at now−n+g ms, so that
// job 0 is due first.
func benchTimerWorkspace(b *testing.B, n int) *timerBenchWS {
	b.Helper()
	e := benchOpen(b, b.TempDir(), true)
	f := benchSetUp(b, e, 1, 10, n, 1)
	base := time.Now().UnixMilli()
	for g, id := range f.jobIDs {
		in := ImportInput{ReceivedAt: time.UnixMilli(base - int64(n) + int64(g)), Status: ReportOK, DurationSeconds: 600, SizeBytes: 1 << 30, Source: "api:bench"}
		if err := e.ImportReport(f.wsIDs[0], id, in); err != nil {
			b.Fatal(err)
		}
	}
	wid, _ := state.ParseID(f.wsIDs[0])
	a := e.actor(wid)
	jobs := ask(a, func(w *workspace) []*state.Job {
		list := make([]*state.Job, n)
		for g, id := range f.jobIDs {
			list[g] = w.Job(id)
		}
		return list
	})
	return &timerBenchWS{e: e, a: a, jobs: jobs, at: base}
}

// benchPruneEvery is how often BenchmarkReportTimers drops the results.
const benchPruneEvery = 1 << 14

// BenchmarkReportTimers measures, in one workspace of 100 and of 10,000
// jobs (each reported once), the engine's per-report cost of keeping the
// job timers, inside the actor (each run's loop is one actor message, so no
// hand-off is counted). Jobs report in the order they are due, one
// millisecond apart (a job reported twice in the same millisecond would be
// superseded and move nothing), so each report sinks its job from the
// heap's root to its bottom (see BenchmarkStatusTimersSet/inorder):
//   - afterMessage: what a report's record leaves to the actor's
//     after-message work: the job marked (jobIndex.touch, with its new due
//     base), then afterMessage as the actor runs it with the real clock
//     (the clock read, advanceTimers: the job's next instant worked out
//     again and moved in the heap, its status looked at for a missing
//     alert; nothing due; nextTimer and the wake-up check; moving the job
//     between status lists is left to the next read);
//   - advance+next: the same without afterMessage's clock read and wake-up
//     check: advanceTimers and nextTimer alone;
//   - report: the whole report in the actor without the log: decideReport,
//     applyNew (the result, its indexes, the job's fields), takeFresh and
//     afterMessage;
//   - report-without-timers: the same, but the job index is not brought up
//     to date (the marks are dropped instead of afterMessage): report minus
//     this is the timers' share of a report, with the caches as the rest of
//     the report leaves them. It runs last: it leaves the index stale.
//
// The report modes drop the results every benchPruneEvery reports (the
// timer stopped), so that a run's cost does not depend on how many piled
// up: copying ever larger result lists as they grow would otherwise cost
// more than the timers and vary from run to run.
func BenchmarkReportTimers(b *testing.B) {
	for _, n := range []int{100, 10000} {
		var ws *timerBenchWS
		for _, mode := range []string{"afterMessage", "advance+next", "report", "report-without-timers"} {
			b.Run(fmt.Sprintf("%s/jobs=%d", mode, n), func(b *testing.B) {
				if ws == nil {
					ws = benchTimerWorkspace(b, n)
				}
				e, a, jobs := ws.e, ws.a, ws.jobs
				in := &ReportInput{Status: ReportOK, DurationSeconds: 600, SizeBytes: 1 << 30}
				b.ReportAllocs()
				b.ResetTimer()
				bad := ask(a, func(w *workspace) error {
					x := &w.JobIdx
					now := e.nowMs() // advance+next's clock
					for i := range b.N {
						j, at := jobs[ws.next%n], ws.at
						ws.next++
						ws.at++
						switch mode {
						case "afterMessage":
							j.DueBase, j.LastReportAt, j.LastReceivedAt = at, at, at
							x.Touch(j)
							a.afterMessage()
						case "advance+next":
							j.DueBase, j.LastReportAt, j.LastReceivedAt = at, at, at
							x.Touch(j)
							w.AdvanceTimers(now)
							if w.nextTimer() == 0 {
								return fmt.Errorf("no next timer")
							}
						case "report", "report-without-timers":
							if i%benchPruneEvery == benchPruneEvery-1 {
								b.StopTimer()
								w.Prune(at, 1)
								b.StartTimer()
							}
							rec := w.decideReport(j, in, at, "api:bench")
							if err := a.applyNew(rec); err != nil {
								return err
							}
							a.takeFresh(at)
							if mode == "report" {
								a.afterMessage()
								continue
							}
							for _, d := range x.Retime {
								d.Retime = false
							}
							x.Retime = x.Retime[:0]
						}
					}
					if mode == "report-without-timers" {
						return nil
					}
					// The job reported last is due last: it went to the bottom.
					last := jobs[(ws.next-1)%n]
					if got, want := x.Timers[last.TimerIx-1].At, w.StatusChangeAt(last, now); got != want || x.Timers[0].V != jobs[ws.next%n] {
						return fmt.Errorf("the heap was not kept: last job at %d, want %d", got, want)
					}
					return nil
				})
				b.StopTimer()
				if bad != nil {
					b.Fatal(bad)
				}
			})
		}
		if ws != nil {
			benchStop(b, ws.e)
		}
	}
}
