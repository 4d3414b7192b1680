package engine

// Benchmarks of the engine's hot path and of its snapshots. The large state
// they share with BenchmarkRecovery is in recovery_bench_test.go.

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"backupmon/wal"
)

var benchLogger = slog.New(slog.NewTextHandler(io.Discard, nil))

// benchNever keeps the engine from taking snapshots of its own.
const benchNever = 1 << 62

// benchOpen opens an engine on dir with the real clock and a quiet logger;
// a log failure fails the benchmark instead of exiting.
func benchOpen(tb testing.TB, dir string, noSync bool) *Engine {
	tb.Helper()
	e, err := Open(Options{
		Dir: dir, Logger: benchLogger, SnapshotEvery: benchNever, SnapshotInterval: benchNever,
		WAL: wal.Options{NoSync: noSync, OnFatal: func(err error) { tb.Errorf("log failed: %v", err) }},
	})
	if err != nil {
		tb.Fatalf("Open %s: %v", dir, err)
	}
	return e
}

// benchStop stops e without writing a snapshot (so that the directory stays
// as it is, as after a crash) and ends its actors, so that its state can be
// freed. Nothing may be sent to e afterwards.
func benchStop(tb testing.TB, e *Engine) {
	tb.Helper()
	e.closeOnce.Do(func() {
		close(e.stop)
		e.stopped.Wait()
		if err := e.log.Close(); err != nil {
			tb.Errorf("close log: %v", err)
		}
	})
	e.closed.Store(true)
	e.actors.Range(func(_, v any) bool {
		v.(*actor).stop()
		return true
	})
}

// benchStatus is the status of job g's result r in the built states: one
// in 20 failed and one in 20 had warnings, which opens and resolves
// alerts.
func benchStatus(g, r int) uint8 {
	switch (g*7 + r) % 20 {
	case 0:
		return ReportFailed
	case 10:
		return ReportWarn
	}
	return ReportOK
}

// benchFixture is a set of workspaces with jobs and report keys, laid out so
// that request i can use job i%len(jobs) and a key of the same workspace:
// job g and key k belong to workspace g%ws and k%ws.
type benchFixture struct {
	ws         int
	keysPerWS  int
	wsIDs      []string
	jobIDs     []string
	keyHashes  [][32]byte
	keySecrets []string
}

// pick returns the job and key request i uses: each job gets one request in
// every len(jobIDs), each key one in every len(keyHashes).
func (f *benchFixture) pick(i uint64) (job, key int) {
	w := uint64(f.ws)
	return int(i % uint64(len(f.jobIDs))), int(i%w + w*((i/w)%uint64(f.keysPerWS)))
}

// benchSetUp creates ws workspaces with clientsPerWS clients, jobsPerWS jobs
// and keysPerWS report keys each, many workspaces at once so that they share
// the log's fsyncs.
func benchSetUp(tb testing.TB, e *Engine, ws, clientsPerWS, jobsPerWS, keysPerWS int) *benchFixture {
	tb.Helper()
	f := &benchFixture{
		ws: ws, keysPerWS: keysPerWS, wsIDs: make([]string, ws), jobIDs: make([]string, ws*jobsPerWS),
		keyHashes: make([][32]byte, ws*keysPerWS), keySecrets: make([]string, ws*keysPerWS),
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Value
	for range 128 {
		wg.Go(func() {
			for {
				w := int(next.Add(1) - 1)
				if w >= ws {
					return
				}
				if err := f.setUpWorkspace(e, w, clientsPerWS, jobsPerWS, keysPerWS); err != nil {
					failed.CompareAndSwap(nil, fmt.Errorf("workspace %d: %w", w, err))
					return
				}
			}
		})
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		tb.Fatal(err)
	}
	return f
}

func (f *benchFixture) setUpWorkspace(e *Engine, w, clientsPerWS, jobsPerWS, keysPerWS int) error {
	wv, err := e.CreateWorkspace(WorkspaceInput{Name: Some("Bench MSP " + strconv.Itoa(w)), Plan: Some("pro")})
	if err != nil {
		return err
	}
	f.wsIDs[w] = wv.ID
	clients := make([]string, max(clientsPerWS, 1))
	for c := range clients {
		cv, err := e.CreateClient(wv.ID, ClientInput{Name: Some(fmt.Sprintf("Client %d-%d", w, c))})
		if err != nil {
			return err
		}
		clients[c] = cv.ID
	}
	for m := range jobsPerWS {
		host := fmt.Sprintf("host-%d-%d", w, m%len(clients))
		jv, err := e.CreateJob(wv.ID, JobInput{
			ClientID: Some(clients[m%len(clients)]), Name: Some("Nightly backup " + strconv.Itoa(m)), Vendor: Some("generic"),
			Device:   Some(DeviceInput{Name: Some("Server " + host), Type: Some("server"), Hostname: Some(host)}),
			Schedule: Some(ScheduleInput{IntervalMinutes: Some(int64(1440)), GraceMinutes: Some(int64(120))}),
		})
		if err != nil {
			return err
		}
		f.jobIDs[w+f.ws*m] = jv.ID
	}
	for m := range keysPerWS {
		kv, err := e.CreateKey(wv.ID, KeyInput{Name: Some("Report key " + strconv.Itoa(m)), Type: Some("report")})
		if err != nil {
			return err
		}
		f.keySecrets[w+f.ws*m] = kv.Key
		f.keyHashes[w+f.ws*m] = HashKey([]byte(kv.Key))
	}
	return nil
}

// BenchmarkReport measures Engine.Report, the whole engine side of a Report
// API request: key lookup, the actor's checks and decision, the log record
// and its group-committed fsync, and the answer. 64 goroutines report at
// once (as the load generator's 64 connections do), each with a unique
// idempotency key, over 256 workspaces with enough jobs and keys that no
// limit is reached. "fsync" is the real path; "nosync" skips the fsync and
// shows the CPU cost alone. One op is one report; allocs/op includes the
// ReportInput the transport allocates per request.
func BenchmarkReport(b *testing.B) {
	for _, mode := range []struct {
		name   string
		noSync bool
	}{{"fsync", false}, {"nosync", true}} {
		b.Run(mode.name, func(b *testing.B) {
			const workspaces = 256
			// 100 reports per job a day, 60 per key a minute: size both to
			// b.N (a key's requests are counted over the whole run).
			jobsPerWS := (b.N*11/10/100 + workspaces) / workspaces
			keysPerWS := (b.N*11/10/60 + workspaces) / workspaces
			e := benchOpen(b, b.TempDir(), mode.noSync)
			defer benchStop(b, e)
			f := benchSetUp(b, e, workspaces, 1, jobsPerWS, keysPerWS)
			idem := make([]string, b.N)
			for i := range idem {
				idem[i] = "bench-" + strconv.Itoa(i)
			}
			var next atomic.Uint64
			b.SetParallelism(32) // 64 goroutines on 2 CPUs
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					i := next.Add(1) - 1
					job, key := f.pick(i)
					in := &ReportInput{
						JobID: f.jobIDs[job], Status: ReportOK, SizeBytes: 1<<30 + int64(i%4096)<<20,
						DurationSeconds: 600 + int64(i%3600), IdempotencyKey: idem[i],
					}
					if r := e.Report(f.keyHashes[key], in); r.Outcome != ReportRecorded {
						b.Errorf("report %d: outcome %d", i, r.Outcome)
						return
					}
				}
			})
			b.StopTimer()
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "reports/s")
		})
	}
}

// BenchmarkSnapshotWrite measures Engine.Snapshot on the large state of
// BenchmarkRecovery (1,000,000 results over 100,000 jobs by default; see
// BACKUPMON_BENCH_STATE): encoding every workspace in its actor, writing
// the file, fsync, rename and directory fsync, and pruning. MB/s is of the
// snapshot file.
func BenchmarkSnapshotWrite(b *testing.B) {
	st := benchBigState(b)
	defer benchReleaseBigState()
	// Snapshot in a copy, so that the shared state is left as it is.
	dir := filepath.Join(b.TempDir(), "state")
	if err := os.CopyFS(dir, os.DirFS(st.dir)); err != nil {
		b.Fatal(err)
	}
	b.Run(st.name, func(b *testing.B) {
		e := benchOpen(b, dir, false)
		defer benchStop(b, e)
		b.SetBytes(st.snapshotBytes)
		b.ResetTimer()
		for range b.N {
			if err := e.Snapshot(); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		b.ReportMetric(float64(st.results)/(float64(b.Elapsed().Nanoseconds())/float64(b.N))*1e9, "results/s")
	})
}
