package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"sync/atomic"
	"time"

	"backupmon/engine"
	"backupmon/tune"
	"backupmon/wal"
)

// Targets of issue 4 for 100,000 jobs over 1,000 workspaces.
const targetMissing = 2 * time.Second

// missingStart is the instant T every job reports at; every job is due at
// T+60m (interval 60 minutes, no grace), so every job turns missing when
// the clock passes T+60m.
var missingStart = time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)

// timerSetFunc is the function that grows the job timer heaps: the heap
// memory allocated under it is the timers'.
const timerSetFunc = "backupmon/engine.(*statusTimers).set"

type missingConfig struct {
	workspaces, jobs, clientsPerWS int
	parallel                       int
	channels                       bool
	data                           string
	cpuprofile                     string
}

func missingMain(args []string) int {
	var c missingConfig
	return command("missing", args, func(fs *flag.FlagSet) {
		fs.IntVar(&c.workspaces, "workspaces", 1000, "workspaces")
		fs.IntVar(&c.jobs, "jobs", 100000, "jobs in all (rounded up to a multiple of -workspaces)")
		fs.IntVar(&c.clientsPerWS, "clients", 10, "clients per workspace")
		fs.IntVar(&c.parallel, "parallel", 128, "workspaces or jobs set up at once")
		fs.BoolVar(&c.channels, "channels", false, "one webhook channel per workspace and a deliverer that only counts: each missing alert also queues a delivery (the outbox)")
		fs.StringVar(&c.data, "data", "", "data directory (must be empty; kept afterwards); default: a temp dir, removed")
		fs.StringVar(&c.cpuprofile, "cpuprofile", "", "write a CPU profile of the clock move (the timed phase) to this file")
	}, func() string {
		if c.workspaces < 1 || c.jobs < 1 {
			return "-workspaces and -jobs must be positive"
		}
		return ""
	}, func() (bool, error) { return runMissing(c) })
}

// countingDeliverer takes notices and only counts them.
type countingDeliverer struct{ n atomic.Int64 }

func (d *countingDeliverer) Deliver(engine.Notice) { d.n.Add(1) }

// runMissing builds the jobs, gives each one ok report at T, and moves the
// development clock past their common deadline; it reports whether every
// job turned missing with its alert.
func runMissing(c missingConfig) (bool, error) {
	tune.Procs() // as backupmon serve does
	jobsPerWS := (c.jobs + c.workspaces - 1) / c.workspaces
	jobs := jobsPerWS * c.workspaces
	dir, cleanup, err := dataDir(c.data, "backupmon-bench-missing-")
	if err != nil {
		return false, err
	}
	defer cleanup()
	channels := "no channels"
	if c.channels {
		channels = "one webhook channel per workspace (a deliverer that counts)"
	}
	fmt.Printf("bench missing: %s workspaces × %d jobs = %s jobs, interval 60 min, grace 0, all reported at %s; %s; GOMAXPROCS %d, data %s\n",
		thousands(int64(c.workspaces)), jobsPerWS, thousands(int64(jobs)), missingStart.Format(time.RFC3339), channels, runtime.GOMAXPROCS(0), dir)

	stats := &engineStats{}
	clock := engine.NewDevClock(missingStart)
	eng, err := engine.Open(engine.Options{Dir: dir, Clock: clock, Logger: benchLogger(stats), WAL: wal.Options{Observe: stats.observe}})
	if err != nil {
		return false, err
	}
	defer eng.Close()
	var deliv *countingDeliverer
	if c.channels {
		deliv = &countingDeliverer{}
		eng.SetDeliverer(deliv)
	}

	// 1. Workspaces, clients, jobs (and channels): no report yet, so no job
	// has a status-change instant.
	start := time.Now()
	wsIDs := make([]string, c.workspaces)
	jobIDs := make([]string, jobs) // job g belongs to workspace g%workspaces
	err = parallelDo(c.workspaces, c.parallel, func(w int) error {
		ws, err := eng.CreateWorkspace(engine.WorkspaceInput{Name: engine.Some(fmt.Sprintf("Timers MSP %d", w)), Plan: engine.Some("pro")})
		if err != nil {
			return err
		}
		wsIDs[w] = ws.ID
		if c.channels {
			if _, err := eng.CreateChannel(ws.ID, engine.ChannelInput{
				Type: engine.Some(engine.ChannelWebhook), Name: engine.Some("Bench webhook"),
				URL: engine.Some(fmt.Sprintf("https://hooks.example.invalid/backupmon/%d", w)),
			}); err != nil {
				return err
			}
		}
		clients, err := createClients(eng, ws.ID, w, c.clientsPerWS)
		if err != nil {
			return err
		}
		for m := range jobsPerWS {
			host := fmt.Sprintf("host-%d-%d", w, m%len(clients))
			jv, err := createServerJob(eng, ws.ID, clients[m%len(clients)], "generic", fmt.Sprintf("Hourly backup %d", m), host, 60, 0)
			if err != nil {
				return err
			}
			jobIDs[w+c.workspaces*m] = jv.ID
		}
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("set up: %w", err)
	}
	fmt.Printf("created the workspaces, clients and jobs in %s\n", time.Since(start).Round(time.Millisecond))
	// A snapshot first: the one the set-up's records called for may be
	// encoding meanwhile, and its buffers would count.
	if err := eng.Snapshot(); err != nil {
		return false, err
	}
	liveJobs, inuseJobs := heapLive()

	// 2. One ok report per job, received at T (ImportReports: the report
	// path's decision and record, one actor turn per job, without HTTP and
	// key checks). Each job gets its status-change instant, T+60m+1ms, in
	// its workspace's timer heap. Every allocation is profiled meanwhile, so
	// that the heap memory allocated under statusTimers.set (the heap
	// slices) can be told from the rest.
	runtime.MemProfileRate = 1
	start = time.Now()
	err = parallelDo(jobs, c.parallel, func(g int) error {
		return eng.ImportReports(wsIDs[g%c.workspaces], jobIDs[g], []engine.ImportInput{{
			ReceivedAt: missingStart, Status: engine.ReportOK, DurationSeconds: int64(600 + g%3600), SizeBytes: int64(1<<30 + (g%1000)<<20),
			Source: "api:svc_live_bench00",
		}})
	})
	reportTime := time.Since(start)
	runtime.MemProfileRate = 512 << 10 // the default again, before anything is timed
	if err != nil {
		return false, fmt.Errorf("reports: %w", err)
	}
	if err := eng.Snapshot(); err != nil {
		return false, err
	}
	liveReported, inuseReported := heapLive()
	timerBytes, timerAllocs := inuseUnder(timerSetFunc)
	fmt.Printf("reported every job once (ok, at T) in %s (allocation profiling on)\n", reportTime.Round(time.Millisecond))
	fmt.Printf("live heap (HeapAlloc after GC): %.1f MiB with the jobs, %.1f MiB after one report each: %+.0f B per job (a result, its index entries, the status timer); heap in use (HeapInuse) %.1f → %.1f MiB\n",
		float64(liveJobs)/(1<<20), float64(liveReported)/(1<<20), float64(int64(liveReported)-int64(liveJobs))/float64(jobs),
		float64(inuseJobs)/(1<<20), float64(inuseReported)/(1<<20))
	fmt.Printf("job timer heaps (allocated under statusTimers.set, in use): %s B in %s slices = %.1f B per job (16 B entries; %.1f B of slack per job from append growth)\n",
		thousands(timerBytes), thousands(timerAllocs), float64(timerBytes)/float64(jobs), float64(timerBytes-16*int64(jobs))/float64(jobs))

	// 3. The clock to the deadline itself: nothing is due yet (a job is
	// missing once the clock is past due + grace). This is the move's fixed
	// cost: the ClockSet record's fsync and one message to each actor.
	deadline := missingStart.Add(60 * time.Minute)
	start = time.Now()
	if _, err := eng.SetClock(deadline, 0); err != nil {
		return false, err
	}
	emptyMove := time.Since(start)
	if n, err := countMissing(eng, wsIDs); err != nil {
		return false, err
	} else if n.jobs != 0 || n.alerts != 0 {
		return false, fmt.Errorf("at the deadline itself %d jobs are missing and %d alerts open: want none", n.jobs, n.alerts)
	}
	fmt.Printf("clock moved to the deadline (T+60m, nothing due): %s\n", emptyMove.Round(10*time.Microsecond))

	// The snapshot taken after the reports keeps the snapshot loop from
	// taking one during the move (the move's own 100,001 records make the
	// next one due only as it ends).
	runtime.GC()
	stats.take() // counts from here on

	// 4. The timed phase: the clock 1 ms past the deadline. SetClock logs
	// the time, then runs every actor's due timers (each job turns missing
	// and records its missing alert, and with -channels queues a delivery)
	// and returns once every record is durable.
	var prof *os.File
	if c.cpuprofile != "" {
		if prof, err = os.Create(c.cpuprofile); err != nil {
			return false, err
		}
		if err := pprof.StartCPUProfile(prof); err != nil {
			prof.Close()
			return false, err
		}
	}
	var msBefore, msAfter runtime.MemStats
	runtime.ReadMemStats(&msBefore)
	cpuBefore := processCPU()
	start = time.Now()
	if _, err := eng.SetClock(deadline.Add(time.Millisecond), 0); err != nil {
		return false, err
	}
	moveTime := time.Since(start)
	cpu := processCPU() - cpuBefore
	runtime.ReadMemStats(&msAfter)
	if prof != nil {
		pprof.StopCPUProfile()
		prof.Close()
	}
	batches, records, p50, p99, snaps, _ := stats.take()
	var delivered int64
	if deliv != nil {
		delivered = deliv.n.Load()
	}

	// 5. Every job shows missing and has exactly one unresolved missing alert.
	n, err := countMissing(eng, wsIDs)
	if err != nil {
		return false, err
	}
	ok := n.jobs == jobs && n.alerts == jobs && n.other == 0
	if c.channels && delivered != int64(jobs) {
		ok = false
	}
	fmt.Printf("clock moved 1 ms past the deadline: %s until every record was durable; %s records in %s fsyncs (%.0f records/fsync, write+fsync p50 %s, p99 %s); process CPU %s (%.1f µs per job); %d GC cycles, %.0f MiB allocated; snapshots during the move: %d\n",
		moveTime.Round(time.Millisecond), thousands(records), thousands(batches), float64(records)/float64(max(batches, 1)),
		p50.Round(time.Microsecond), p99.Round(time.Microsecond), cpu.Round(time.Millisecond),
		float64(cpu.Microseconds())/float64(jobs), msAfter.NumGC-msBefore.NumGC, float64(msAfter.TotalAlloc-msBefore.TotalAlloc)/(1<<20), snaps)
	fmt.Printf("afterwards: %s jobs missing of %s, %s unresolved missing alerts, %d other alerts", thousands(int64(n.jobs)), thousands(int64(jobs)), thousands(int64(n.alerts)), n.other)
	if c.channels {
		fmt.Printf(", %s notices handed to the deliverer", thousands(delivered))
	}
	fmt.Println()
	if !ok {
		fmt.Println("ERROR: not every job turned missing with exactly one missing alert")
	}
	fmt.Printf("target: all %s missing transitions applied within %s of the deadline: %s (%s)\n",
		thousands(int64(jobs)), targetMissing, passFail(ok && moveTime < targetMissing), moveTime.Round(time.Millisecond))
	fmt.Printf("missing: %s jobs missing and %s alerts durable %s after the deadline (%s); timers %.1f B/job\n",
		thousands(int64(n.jobs)), thousands(int64(n.alerts)), moveTime.Round(time.Millisecond), passFail(ok && moveTime < targetMissing),
		float64(timerBytes)/float64(jobs))
	return ok, nil
}

// heapLive returns the bytes of live heap objects (HeapAlloc) and the
// heap's spans in use (HeapInuse, which counts the free slots of partly
// used spans too) after a full collection.
func heapLive() (alloc, inuse uint64) {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc, ms.HeapInuse
}

// inuseUnder returns the bytes and objects in use that were allocated with
// fn on the stack, by the memory profile (exact while MemProfileRate was 1;
// the profile is as of the last completed collection, so call it after
// heapLive).
func inuseUnder(fn string) (bytes, objects int64) {
	var recs []runtime.MemProfileRecord
	n, _ := runtime.MemProfile(nil, true)
	for {
		recs = make([]runtime.MemProfileRecord, n+64)
		var ok bool
		if n, ok = runtime.MemProfile(recs, true); ok {
			recs = recs[:n]
			break
		}
	}
	for i := range recs {
		r := &recs[i]
		if r.InUseBytes() == 0 {
			continue
		}
		frames := runtime.CallersFrames(r.Stack())
		for {
			f, more := frames.Next()
			if f.Function == fn {
				bytes += r.InUseBytes()
				objects += r.InUseObjects()
				break
			}
			if !more {
				break
			}
		}
	}
	return bytes, objects
}

// missingCount is what countMissing found.
type missingCount struct {
	jobs   int // jobs whose status is missing
	alerts int // unresolved missing alerts
	other  int // any other alert
}

// countMissing reads every workspace's jobs and alerts through the engine's
// views.
func countMissing(eng *engine.Engine, wsIDs []string) (missingCount, error) {
	var n missingCount
	for _, ws := range wsIDs {
		jobs, err := eng.Jobs(ws)
		if err != nil {
			return n, err
		}
		for _, j := range jobs {
			if bytes.Contains(j.JSON, []byte(`"status":"missing"`)) {
				n.jobs++
			}
		}
		alerts, err := eng.Alerts(ws)
		if err != nil {
			return n, err
		}
		for _, a := range alerts {
			if bytes.Contains(a.JSON, []byte(`"type":"missing"`)) && !bytes.Contains(a.JSON, []byte(`"status":"resolved"`)) {
				n.alerts++
			} else {
				n.other++
			}
		}
	}
	return n, nil
}
