package engine

// BenchmarkRecovery and the large state it shares with
// BenchmarkSnapshotWrite: by default 1,000 workspaces × 100 jobs × 10
// results = 1,000,000 results over 100,000 jobs (issue 2's restart target),
// built once per test process, since that takes a while.
//
// BACKUPMON_BENCH_STATE=<workspaces>x<jobs per workspace>x<results per job>
// changes the size (e.g. 100x10x10 for a quick check), and
// BACKUPMON_BENCH_TAIL the number of reports logged after the snapshot for
// the "snapshot+tail" case (default 100,000, the engine's default
// SnapshotEvery: the longest tail a running server leaves).

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// benchState is a built state on disk: dir holds it as the last snapshot
// left it; tailDir holds the same plus a tail of reports in the log after
// the snapshot.
type benchState struct {
	name                           string
	root, dir, tailDir             string
	workspaces, jobsPerWS, perJob  int
	jobs, results, tail            int
	snapshotBytes                  int64
	buildTime, tailTime, closeTime time.Duration
}

var benchShared sharedBenchState[benchState]

// sharedBenchState is a state built once and shared by the benchmark runs of a
// process that use it; the last run to release it removes it.
type sharedBenchState[T any] struct {
	mu    sync.Mutex
	st    *T
	users int // benchmark runs still to use it in this process
}

// get returns the state, building it with build on first use, for the
// runs of the named benchmarks that -test.bench selects (benchUsers).
func (f *sharedBenchState[T]) get(build func() *T, names ...string) *T {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.st == nil {
		f.st = build()
		f.users = benchUsers(names...)
	}
	return f.st
}

// release removes the state with remove once every run that uses it is
// done.
func (f *sharedBenchState[T]) release(remove func(st *T)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.users--
	if f.users <= 0 && f.st != nil {
		remove(f.st)
		f.st = nil
	}
}

// benchBigState returns the large state, building it on first use. Each
// caller calls benchReleaseBigState when done; the last one removes it.
func benchBigState(b *testing.B) *benchState {
	b.Helper()
	return benchShared.get(func() *benchState { return benchBuildBigState(b) }, "BenchmarkSnapshotWrite", "BenchmarkRecovery")
}

// benchBuildBigState builds the large state, of the size
// BACKUPMON_BENCH_STATE and BACKUPMON_BENCH_TAIL ask for.
func benchBuildBigState(b *testing.B) *benchState {
	ws, jobs, per := 1000, 100, 10
	if s := os.Getenv("BACKUPMON_BENCH_STATE"); s != "" {
		if _, err := fmt.Sscanf(strings.ReplaceAll(s, "x", " "), "%d %d %d", &ws, &jobs, &per); err != nil || ws < 1 || jobs < 1 || per < 0 {
			b.Fatalf("BACKUPMON_BENCH_STATE=%q: want <workspaces>x<jobs per workspace>x<results per job>", s)
		}
	}
	tail := 100000
	if s := os.Getenv("BACKUPMON_BENCH_TAIL"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			b.Fatalf("BACKUPMON_BENCH_TAIL=%q: want a count", s)
		}
		tail = n
	}
	root, err := os.MkdirTemp("", "backupmon-engine-bench-")
	if err != nil {
		b.Fatal(err)
	}
	st := &benchState{
		name: fmt.Sprintf("results=%d/jobs=%d", ws*jobs*per, ws*jobs), root: root,
		dir: filepath.Join(root, "state"), tailDir: filepath.Join(root, "tail"),
		workspaces: ws, jobsPerWS: jobs, perJob: per, jobs: ws * jobs, results: ws * jobs * per, tail: tail,
	}
	if err := st.build(b); err != nil {
		os.RemoveAll(root)
		b.Fatal(err)
	}
	b.Logf("built %s in %s (snapshot %.1f MB written in %s), tail of %d reports in %s",
		st.name, st.buildTime.Round(time.Millisecond), float64(st.snapshotBytes)/1e6, st.closeTime.Round(time.Millisecond),
		st.tail, st.tailTime.Round(time.Millisecond))
	return st
}

// benchReleaseBigState removes the state once every benchmark run that
// uses it in this process is done.
func benchReleaseBigState() {
	benchShared.release(func(st *benchState) { os.RemoveAll(st.root) })
}

// benchUsers counts the runs of the named benchmarks (here those that share
// a state) that -test.bench selects (times -test.count), judging by the
// pattern's first element as go test does.
func benchUsers(names ...string) int {
	pattern := "."
	if f := flag.Lookup("test.bench"); f != nil {
		pattern = f.Value.String()
	}
	if i := strings.IndexByte(pattern, '/'); i >= 0 {
		pattern = pattern[:i]
	}
	re, err := regexp.Compile(pattern)
	n := 0
	for _, name := range names {
		if err != nil || re.MatchString(name) {
			n++
		}
	}
	count := 1
	if f := flag.Lookup("test.count"); f != nil {
		if c, err := strconv.Atoi(f.Value.String()); err == nil && c > 0 {
			count = c
		}
	}
	return max(n*count, 1)
}

// build makes dir: the workspaces, clients, jobs and a report key each, then
// every job's results through ImportReports (one a day, ending yesterday,
// 5% failed and 5% warnings, which open and resolve alerts), closed with a
// snapshot. Then tailDir: a copy with tail more reports in the log, stopped
// without a snapshot.
func (st *benchState) build(b *testing.B) error {
	start := time.Now()
	e := benchOpen(b, st.dir, false)
	f := benchSetUp(b, e, st.workspaces, 10, st.jobsPerWS, 1)
	now := time.Now()
	var next atomic.Int64
	var failed atomic.Value
	var wg sync.WaitGroup
	for range 128 {
		wg.Go(func() {
			list := make([]ImportInput, st.perJob)
			for {
				g := int(next.Add(1) - 1)
				if g >= len(f.jobIDs) {
					return
				}
				for r := range list {
					status := benchStatus(g, r)
					list[r] = ImportInput{
						ReceivedAt: now.Add(-time.Duration(st.perJob-r)*24*time.Hour + time.Duration(g%3600)*time.Second),
						Status:     status, DurationSeconds: int64(600 + (g+r)%7200), SizeBytes: int64(1<<30 + (g%1000)<<20),
						Source: "api:svc_live_0123456",
					}
				}
				if err := e.ImportReports(f.wsIDs[g%f.ws], f.jobIDs[g], list); err != nil {
					failed.CompareAndSwap(nil, fmt.Errorf("import job %d: %w", g, err))
					return
				}
			}
		})
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		benchStop(b, e)
		return err
	}
	st.buildTime = time.Since(start)
	start = time.Now()
	if err := e.Close(); err != nil {
		return err
	}
	st.closeTime = time.Since(start)
	benchStop(b, e) // ends the actors
	st.snapshotBytes = benchNewestSnapshot(st.dir)

	if st.tail == 0 {
		st.tailDir = st.dir
		return nil
	}
	start = time.Now()
	if err := os.CopyFS(st.tailDir, os.DirFS(st.dir)); err != nil {
		return err
	}
	e = benchOpen(b, st.tailDir, false)
	next.Store(0)
	at := time.Now().Add(-time.Hour)
	for range 128 {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= st.tail {
					return
				}
				g := i % len(f.jobIDs)
				in := ImportInput{ReceivedAt: at.Add(time.Duration(i/len(f.jobIDs)) * time.Second), Status: ReportOK, DurationSeconds: 900, SizeBytes: 5 << 30, Source: "api:svc_live_0123456"}
				if err := e.ImportReport(f.wsIDs[g%f.ws], f.jobIDs[g], in); err != nil {
					failed.CompareAndSwap(nil, fmt.Errorf("tail report %d: %w", i, err))
					return
				}
			}
		})
	}
	wg.Wait()
	benchStop(b, e) // no snapshot: the tail stays in the log
	st.tailTime = time.Since(start)
	if err, _ := failed.Load().(error); err != nil {
		return err
	}
	return nil
}

func benchNewestSnapshot(dir string) int64 {
	entries, _ := os.ReadDir(filepath.Join(dir, "snapshots"))
	var size int64
	var newest time.Time
	for _, e := range entries {
		if info, err := e.Info(); err == nil && info.Mode().IsRegular() && info.ModTime().After(newest) {
			newest, size = info.ModTime(), info.Size()
		}
	}
	return size
}

// BenchmarkRecovery measures Open on the large state until the engine is
// ready: "snapshot" loads the newest snapshot and replays an empty log;
// "snapshot+tail" also replays BACKUPMON_BENCH_TAIL reports logged after it.
// Open is followed by a stop that writes nothing, so every iteration sees
// the same directory. MB-heap is the heap in use after Open and a GC, with
// the engine still open; B/result divides it by the stored results.
func BenchmarkRecovery(b *testing.B) {
	st := benchBigState(b)
	defer benchReleaseBigState()
	for _, c := range []struct {
		name    string
		dir     string
		results int
	}{
		{"snapshot", st.dir, st.results},
		{"snapshot+tail", st.tailDir, st.results + st.tail},
	} {
		b.Run(c.name+"/"+st.name, func(b *testing.B) {
			var heap uint64
			for i := range b.N {
				e := benchOpen(b, c.dir, false)
				if !e.Ready() {
					b.Fatal("not ready after Open")
				}
				if i == b.N-1 {
					b.StopTimer()
					runtime.GC()
					var ms runtime.MemStats
					runtime.ReadMemStats(&ms)
					heap = ms.HeapInuse
					b.StartTimer()
				}
				b.StopTimer()
				benchStop(b, e)
				runtime.GC()
				b.StartTimer()
			}
			b.ReportMetric(float64(heap)/1e6, "MB-heap")
			b.ReportMetric(float64(heap)/float64(c.results), "B/result")
		})
	}
}
