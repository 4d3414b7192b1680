package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"time"

	"backupmon/engine"
	"backupmon/jsonx"
)

// Targets of issue 2 for a state of 1,000,000 results and 100,000 jobs.
const (
	targetRestart = 5 * time.Second
	targetRSS     = 600 << 20
)

// recoveryChildCmd is the hidden command the recovery bench runs itself as,
// so that every restart is measured in a fresh process.
const recoveryChildCmd = "recovery-child"

// never keeps the engine from taking snapshots of its own while the bench
// builds or measures a state.
const never = 1 << 62

type recoveryConfig struct {
	stateFlags
	tail     int
	data     string
	idem     bool
	restarts int
}

func recoveryMain(args []string) int {
	var c recoveryConfig
	return command("recovery", args, func(fs *flag.FlagSet) {
		c.stateFlags.register(fs, stateFlags{workspaces: 1000, clientsPerWS: 10, jobsPerWS: 100, resultsPerJob: 10}, "workspaces", "")
		fs.IntVar(&c.tail, "tail", 100000, "reports logged after the last snapshot, replayed by the last restart (0: skip)")
		fs.StringVar(&c.data, "data", "", "data directory (must be empty; kept afterwards); default: a temp dir, removed")
		fs.IntVar(&c.restarts, "restarts", 3, "restarts measured per state (the median is shown)")
		fs.BoolVar(&c.idem, "idem", false, "send the results through Engine.Report, each with a 36-character idempotency key (kept 30 days), instead of ImportReports")
	}, flagsFine, func() (bool, error) { return true, runRecovery(c) })
}

// restartStats is what a child process measured after one engine.Open.
type restartStats struct {
	OpenNs    int64  `json:"open_ns"`
	Replayed  int64  `json:"replayed"`
	HeapInuse uint64 `json:"heap_inuse"`
	HeapAlloc uint64 `json:"heap_alloc"`
	Sys       uint64 `json:"sys"`
	RSS       uint64 `json:"rss"`
	PeakRSS   uint64 `json:"peak_rss"`
	NumGC     uint32 `json:"num_gc"`
	times     string // every measured time, when several were
}

func runRecovery(c recoveryConfig) error {
	dir, cleanup, err := dataDir(c.data, "backupmon-bench-recovery-")
	if err != nil {
		return err
	}
	defer cleanup()
	jobs := c.workspaces * c.jobsPerWS
	results := jobs * c.resultsPerJob
	fmt.Printf("bench recovery: %s workspaces, %s clients, %s jobs, %s results; GOMAXPROCS %d, data %s\n",
		thousands(int64(c.workspaces)), thousands(int64(c.workspaces*c.clientsPerWS)), thousands(int64(jobs)),
		thousands(int64(results)), runtime.GOMAXPROCS(0), dir)

	// 1. Workspaces, clients, devices, jobs and one report key each; no results.
	start := time.Now()
	eng, err := engine.Open(engine.Options{Dir: dir, Logger: benchLogger(nil), SnapshotEvery: never, SnapshotInterval: never})
	if err != nil {
		return err
	}
	keysPerWS := 1
	if c.idem {
		// Each key sends at most 60 reports in all, so the per-minute limit
		// never bites however long the build takes.
		keysPerWS = (c.jobsPerWS*c.resultsPerJob + perKeyPerMinute - 1) / perKeyPerMinute
	}
	f, err := setUp(eng, layout{workspaces: c.workspaces, clientsPerWS: c.clientsPerWS, jobsPerWS: c.jobsPerWS, keysPerWS: keysPerWS, parallel: c.parallel, workspaceName: "Recovery MSP"})
	if err != nil {
		eng.Close()
		return fmt.Errorf("set up: %w", err)
	}
	if err := eng.Close(); err != nil {
		return err
	}
	fmt.Printf("built the jobs in %s\n", time.Since(start).Round(time.Millisecond))
	empty, err := measureRestarts(dir, c.restarts)
	if err != nil {
		return err
	}
	printRestart("jobs, no results", dir, empty)

	// 2. The results, through ImportReports (one actor turn per job).
	start = time.Now()
	eng, err = engine.Open(engine.Options{Dir: dir, Logger: benchLogger(nil), SnapshotEvery: never, SnapshotInterval: never})
	if err != nil {
		return err
	}
	how := "imported"
	if c.idem {
		how = "reported (Engine.Report, with idempotency keys)"
		err = reportResults(eng, f, c.resultsPerJob, c.parallel)
	} else {
		err = importResults(eng, f, c.resultsPerJob, c.parallel)
	}
	if err != nil {
		eng.Close()
		return err
	}
	built := time.Since(start)
	start = time.Now()
	if err := eng.Close(); err != nil {
		return err
	}
	snapTime := time.Since(start)
	snapSize := newestSnapshotSize(dir)
	fmt.Printf("%s %s results in %s; final snapshot (%.1f MiB) written in %s: %.0f MiB/s\n",
		how, thousands(int64(results)), built.Round(time.Millisecond), float64(snapSize)/(1<<20), snapTime.Round(time.Millisecond),
		float64(snapSize)/(1<<20)/snapTime.Seconds())
	full, err := measureRestarts(dir, c.restarts)
	if err != nil {
		return err
	}
	printRestart("full state, from the snapshot", dir, full)
	fmt.Printf("  per job (jobs-only heap in use ÷ jobs): %.0f bytes; per result ((full − jobs-only) heap in use ÷ results): %.0f bytes\n",
		float64(empty.HeapInuse)/float64(jobs), (float64(full.HeapInuse)-float64(empty.HeapInuse))/float64(results))
	fmt.Printf("  RSS per job (jobs-only): %.0f bytes; RSS per result (full − jobs-only): %.0f bytes; whole RSS ÷ results: %.0f bytes\n",
		float64(empty.RSS)/float64(jobs), (float64(full.RSS)-float64(empty.RSS))/float64(results), float64(full.RSS)/float64(results))

	worst := full
	if c.tail > 0 {
		// 3. A tail of reports logged after the snapshot: the process stops
		// without a snapshot, as a crash would leave it.
		start = time.Now()
		if err := runChild(dir, "tail", strconv.Itoa(c.tail), strconv.Itoa(c.parallel)); err != nil {
			return fmt.Errorf("write the tail: %w", err)
		}
		fmt.Printf("logged a tail of %s reports after the snapshot in %s\n", thousands(int64(c.tail)), time.Since(start).Round(time.Millisecond))
		tail, err := measureRestarts(dir, c.restarts)
		if err != nil {
			return err
		}
		printRestart("full state, from the snapshot + a replayed tail", dir, tail)
		if tail.OpenNs > worst.OpenNs {
			worst.OpenNs = tail.OpenNs
		}
		worst.RSS = max(worst.RSS, tail.RSS)
		worst.PeakRSS = max(worst.PeakRSS, tail.PeakRSS)
	}
	fmt.Printf("target restart < %s: %s (worst %s)\n", targetRestart, passFail(time.Duration(worst.OpenNs) < targetRestart), time.Duration(worst.OpenNs).Round(time.Millisecond))
	fmt.Printf("target resident memory < %d MiB: %s (RSS after GC %.0f MiB; peak during recovery %.0f MiB)\n",
		targetRSS>>20, passFail(worst.RSS < targetRSS), float64(worst.RSS)/(1<<20), float64(worst.PeakRSS)/(1<<20))
	return nil
}

func passFail(ok bool) string {
	if ok {
		return "PASS"
	}
	return "FAIL"
}

func printRestart(what, dir string, s restartStats) {
	fmt.Printf("restart (%s): ready in %s (median of %s), %s records replayed; heap in use %.1f MiB, RSS %.1f MiB (peak %.1f MiB); snapshot %.1f MiB, log %.1f MiB on disk\n",
		what, time.Duration(s.OpenNs).Round(time.Millisecond), s.times, thousands(s.Replayed),
		float64(s.HeapInuse)/(1<<20), float64(s.RSS)/(1<<20), float64(s.PeakRSS)/(1<<20),
		float64(newestSnapshotSize(dir))/(1<<20), float64(dirSize(filepath.Join(dir, "wal")))/(1<<20))
}

// importResults gives every job n results, one a day ending yesterday,
// mostly ok with some warnings and failures (which open and then resolve
// alerts).
func importResults(eng *engine.Engine, f *fixture, n, parallel int) error {
	now := time.Now()
	if err := parallelDo(len(f.jobIDs), parallel, func(g int) error {
		list := make([]engine.ImportInput, n)
		for r := range list {
			list[r] = engine.ImportInput{
				ReceivedAt:      now.Add(-time.Duration(n-r)*24*time.Hour + time.Duration(g%3600)*time.Second),
				Status:          fixtureStatus(g, r),
				DurationSeconds: int64(600 + (g+r)%7200),
				SizeBytes:       int64(1<<30 + (g%1000)<<20),
				Source:          "api:svc_live_0123456",
			}
		}
		return eng.ImportReports(f.wsIDs[g%f.workspaces], f.jobIDs[g], list)
	}); err != nil {
		return fmt.Errorf("import job %w", err)
	}
	return nil
}

// fixtureStatus is the status of result r of job g: one in twenty failed,
// one in twenty a warning, the rest ok.
func fixtureStatus(g, r int) uint8 {
	switch (g*7 + r) % 20 {
	case 0:
		return engine.ReportFailed
	case 10:
		return engine.ReportWarn
	}
	return engine.ReportOK
}

// reportResults gives every job n results through Engine.Report, the path
// of a Report API request, each with its own idempotency key: the results
// are received now, with timestamps one a day ending yesterday. Request r of
// job g uses key (g + r·jobs) of the job's workspace, so that each key sends
// the same number of reports.
func reportResults(eng *engine.Engine, f *fixture, n, parallel int) error {
	now := time.Now()
	hashes := make([][32]byte, len(f.secrets))
	for k, s := range f.secrets {
		hashes[k] = engine.HashKey([]byte(s))
	}
	nonce := uint64(now.UnixNano())
	if err := parallelDo(len(f.jobIDs), parallel, func(g int) error {
		w, m := g%f.workspaces, g/f.workspaces
		for r := range n {
			k := w + f.workspaces*((m+r*f.jobsPerWS)%f.keysPerWS)
			in := &engine.ReportInput{
				JobID: f.jobIDs[g], Status: fixtureStatus(g, r), SizeBytes: int64(1<<30 + (g%1000)<<20), DurationSeconds: int64(600 + (g+r)%7200),
				TimestampMs:    now.Add(-time.Duration(n-r) * 24 * time.Hour).UnixMilli(),
				IdempotencyKey: uuidLike(nonce, uint64(g)*uint64(n)+uint64(r)),
			}
			if rep := eng.Report(hashes[k], in); rep.Outcome != engine.ReportRecorded {
				return fmt.Errorf("report %d: outcome %d", r, rep.Outcome)
			}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("job %w", err)
	}
	return nil
}

// uuidLike returns a 36-character key shaped like a UUID, unique per (a, b).
func uuidLike(a, b uint64) string {
	const hexDigits = "0123456789abcdef"
	var buf [36]byte
	v := [2]uint64{a, b}
	j := 0
	for i := range buf {
		if i == 8 || i == 13 || i == 18 || i == 23 {
			buf[i] = '-'
			continue
		}
		word := v[j/16]
		buf[i] = hexDigits[(word>>(60-4*(j%16)))&0xf]
		j++
	}
	return string(buf[:])
}

// measureRestarts measures n restarts and returns the one with the median
// time, with the largest RSS and peak RSS seen in any of them.
func measureRestarts(dir string, n int) (restartStats, error) {
	var all []restartStats
	for range max(n, 1) {
		s, err := measureRestart(dir)
		if err != nil {
			return s, err
		}
		all = append(all, s)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].OpenNs < all[j].OpenNs })
	m := all[len(all)/2]
	times := make([]string, len(all))
	for i, s := range all {
		times[i] = time.Duration(s.OpenNs).Round(time.Millisecond).String()
		m.RSS, m.PeakRSS = max(m.RSS, s.RSS), max(m.PeakRSS, s.PeakRSS)
	}
	m.times = strings.Join(times, " ")
	return m, nil
}

// measureRestart runs a child process that opens the engine on dir and
// reports how long that took and the memory it holds.
func measureRestart(dir string) (restartStats, error) {
	var s restartStats
	out, err := childOutput(dir, "open")
	if err != nil {
		return s, err
	}
	if err := lastLineJSON(out, &s); err != nil {
		return s, fmt.Errorf("child answered %q: %w", out, err)
	}
	return s, nil
}

func runChild(dir string, args ...string) error {
	_, err := childOutput(dir, args...)
	return err
}

func childOutput(dir string, args ...string) ([]byte, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, append([]string{recoveryChildCmd, dir}, args...)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("%s %s: %w", recoveryChildCmd, strings.Join(args, " "), err)
	}
	return out, nil
}

// recoveryChild is the child side: `recovery-child <dir> open` opens the
// engine, measures, and exits without closing it (so the directory stays as
// it was); `recovery-child <dir> tail <n> <parallel>` logs n more reports
// and exits without a snapshot.
func recoveryChild(args []string) int {
	if len(args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: recovery-child <dir> open | tail <n> <parallel>")
		return 2
	}
	dir, mode := args[0], args[1]
	stats := &engineStats{}
	opts := engine.Options{Dir: dir, Logger: benchLogger(stats), SnapshotEvery: never, SnapshotInterval: never}
	switch mode {
	case "open":
		runtime.GC()
		if path := os.Getenv("BACKUPMON_BENCH_CPUPROFILE"); path != "" {
			// Diagnosis: where the restart's CPU goes.
			if f, err := os.Create(fmt.Sprintf("%s.%d", path, os.Getpid())); err == nil {
				pprof.StartCPUProfile(f)
				defer pprof.StopCPUProfile()
			}
		}
		start := time.Now()
		eng, err := engine.Open(opts)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		took := time.Since(start)
		if !eng.Ready() {
			fmt.Fprintln(os.Stderr, "engine not ready after Open")
			return 1
		}
		debug.FreeOSMemory() // as serve does after recovery (a GC that returns free memory to the system)
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		s := restartStats{OpenNs: took.Nanoseconds(), Replayed: stats.replayed.Load(), HeapInuse: ms.HeapInuse, HeapAlloc: ms.HeapAlloc, Sys: ms.Sys, NumGC: ms.NumGC}
		s.RSS, s.PeakRSS = procStatus("VmRSS"), procStatus("VmHWM")
		if path := os.Getenv("BACKUPMON_BENCH_HEAPPROFILE"); path != "" {
			// Diagnosis: the heap of the recovered state, by allocation site.
			if f, err := os.Create(fmt.Sprintf("%s.%d", path, os.Getpid())); err == nil {
				pprof.WriteHeapProfile(f)
				f.Close()
			}
		}
		b, _ := jsonx.Marshal(s)
		fmt.Println(string(b))
		runtime.KeepAlive(eng)
		return 0 // no Close: that would write a snapshot
	case "tail":
		if len(args) < 4 {
			return 2
		}
		n, _ := strconv.Atoi(args[2])
		parallel, _ := strconv.Atoi(args[3])
		eng, err := engine.Open(opts)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if err := writeTail(eng, n, parallel); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return 0 // every report is durable: stop as a crash would, without a snapshot
	}
	fmt.Fprintf(os.Stderr, "recovery-child: unknown mode %q\n", mode)
	return 2
}

// writeTail logs n reports, one per job round-robin, received an hour ago.
func writeTail(eng *engine.Engine, n, parallel int) error {
	type jobRef struct{ ws, job string }
	var jobs []jobRef
	for _, ws := range eng.Workspaces() {
		list, err := eng.Jobs(ws.ID)
		if err != nil {
			return err
		}
		for _, j := range list {
			jobs = append(jobs, jobRef{ws.ID, j.ID})
		}
	}
	if len(jobs) == 0 {
		return errors.New("no jobs")
	}
	at := time.Now().Add(-time.Hour)
	if err := parallelDo(n, parallel, func(i int) error {
		j := jobs[i%len(jobs)]
		in := engine.ImportInput{ReceivedAt: at.Add(time.Duration(i/len(jobs)) * time.Second), Status: engine.ReportOK, DurationSeconds: 900, SizeBytes: 5 << 30, Source: "api:svc_live_0123456"}
		return eng.ImportReport(j.ws, j.job, in)
	}); err != nil {
		return fmt.Errorf("report %w", err)
	}
	return nil
}

// procStatus returns a size field of /proc/self/status in bytes (0 when it
// cannot be read).
func procStatus(field string) uint64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok || name != field {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			return 0
		}
		kb, _ := strconv.ParseUint(fields[0], 10, 64)
		return kb << 10
	}
	return 0
}

// newestSnapshotSize returns the size of the newest file in dir/snapshots.
func newestSnapshotSize(dir string) int64 {
	entries, _ := os.ReadDir(filepath.Join(dir, "snapshots"))
	var newest os.FileInfo
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		if newest == nil || info.ModTime().After(newest.ModTime()) {
			newest = info
		}
	}
	if newest == nil {
		return 0
	}
	return newest.Size()
}

func dirSize(dir string) int64 {
	var n int64
	filepath.Walk(dir, func(_ string, info os.FileInfo, err error) error {
		if err == nil && info.Mode().IsRegular() {
			n += info.Size()
		}
		return nil
	})
	return n
}
