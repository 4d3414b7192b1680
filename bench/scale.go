package main

// bench scale (issue 8): a state of the planned size (10,000 Pro
// workspaces, 200,000 jobs, 20,000,000 results) built through the engine's
// commands in this process; its restart time and resident memory in fresh
// child processes; the real server on that data directory (a child process)
// under REST reads alone, reads with 10% of the workspaces reporting, and
// reads with one workspace hammering past its limits; retention at 30 days
// in a child; and, with -soak, the mixed load for a long time with the
// server's RSS and the reads' p99 per window.
//
// The load never goes past a limit it means to respect: the readers are
// paced so that no workspace makes more than 285 REST requests in a calendar
// minute (Pro allows 300), the reporters so that no report key sends more
// than 40 reports a minute (60 allowed) and no job gets near 100 reports in
// 24 hours; a 429 to any of them counts as an error. Only the noisy
// workspace of phase C goes past its limits, on purpose.

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/valyala/fasthttp"

	"backupmon/engine"
	"backupmon/jsonx"
	"backupmon/transport"
	"backupmon/tune"
	"backupmon/wal"
)

// scaleChildArgs start the hidden mode bench scale runs itself as: the
// server on an existing data directory, and the retention measurement
// (`bench scale child serve|retention ...`).
var scaleChildArgs = []string{"scale", "child"}

// scaleFixtureFile is where a built state's ids, secrets and jobs-only
// figures are kept in its data directory (so that -data can reuse it).
const scaleFixtureFile = "scale-fixture.json"

const (
	scaleRESTPerMinute  = 285 // REST requests a reader makes per workspace and calendar minute at most (Pro: 300)
	scaleKeyPerMinute   = 40  // reports a report key sends per minute in the mixed load (limit: 60)
	scaleJobDayBudget   = 90  // reports per job in 24 hours the bench plans at most (limit: 100, one of them the build's)
	scaleRetentionDays  = 30
	serveRetentionDays  = 400 // backupmon serve's default --retention-days (decisions.md)
	scaleReportFraction = 10  // one workspace in this many reports in the mixed load
)

// Targets of issue 8.
const (
	targetBytesPerResult = 100
	targetBytesPerJob    = 2048
	targetScaleRestart   = 20 * time.Second
	targetNoisyP99       = 1.20
	soakReportCost       = 200  // bytes a stored report adds: result 48, index entry 16, idempotency entry ~100, growth slack and alerts
	soakP99Tolerance     = 0.25 // last window's read p99 over the first's
	retentionFreedShare  = 0.75 // RSS freed per dropped result, as a share of a result's RSS in the full state
)

// The warm-up waits for the server's first garbage collection under load
// when its heap holds at least settleHeap (a small heap's collections are
// short and it may not need one for long), for settleMax at most.
const (
	settleHeap = 256 << 20
	settleMax  = 3 * time.Minute
)

type scaleConfig struct {
	stateFlags
	data                           string
	duration, warmup, soak, window time.Duration
	retention                      bool
	phases                         string
	conns, reportConns, noisyConns int
	reportEvery                    time.Duration
	readRate                       float64
	restarts                       int
	procs                          int
	memoryLimitMiB                 int // the server's memory limit: 0 auto, -1 none

	inProcess bool // tests: the server and the retention step run in this process
}

func scaleMain(args []string) int {
	if len(args) > 0 && args[0] == "child" {
		return scaleChild(args[1:])
	}
	var c scaleConfig
	return command("scale", args, func(fs *flag.FlagSet) {
		c.stateFlags.register(fs, stateFlags{workspaces: 10000, clientsPerWS: 2, jobsPerWS: 20, resultsPerJob: 100}, "Pro workspaces", "; 5% failed, 5% warnings")
		fs.StringVar(&c.data, "data", "", "data directory, kept afterwards: a state built there before is reused (its fixture file says how it was built), else it must be empty; default: a temp dir, removed")
		fs.DurationVar(&c.duration, "duration", 20*time.Second, "measured time of each load phase (A, B, C)")
		fs.DurationVar(&c.warmup, "warmup", 3*time.Second, "warm-up before each load phase, not measured")
		fs.DurationVar(&c.soak, "soak", 0, "run the mixed load (phase B) this long against the server, per window: its RSS and the reads' p99 (0: no soak)")
		fs.DurationVar(&c.window, "window", 30*time.Second, "soak window")
		fs.BoolVar(&c.retention, "retention", true, "measure retention at 30 days after the load phases")
		fs.StringVar(&c.phases, "phases", "all", "comma-separated: restart (restart time, memory), read (A: reads alone), mixed (B: reads + 10% reporting), noisy (C: one workspace past its limits), retention; all: every one (the state is built whenever the data directory has none)")
		fs.IntVar(&c.conns, "conns", 64, "reader connections (closed loop, paced within the workspaces' limits)")
		fs.IntVar(&c.reportConns, "report-conns", 256, "reporter connections in phase B and the soak (the pace sets the rate; enough connections that fsync waits do not hold it back)")
		fs.IntVar(&c.noisyConns, "noisy-conns", 8, "connections of the noisy workspace in phase C, for each of its REST key and its report keys")
		fs.DurationVar(&c.reportEvery, "report-every", 10*time.Second, "how often each job of a reporting workspace reports")
		fs.Float64Var(&c.readRate, "read-rate", 0, "reads per second at most (0: as many as the workspaces' limits allow)")
		fs.IntVar(&c.restarts, "restarts", 3, "restarts measured per state (the median is shown)")
		fs.IntVar(&c.procs, "procs", 0, "the server's GOMAXPROCS (0: as backupmon serve sets it, one more than the CPUs)")
		fs.IntVar(&c.memoryLimitMiB, "memory-limit", 0, "the server's memory limit in MiB, as backupmon serve's --memory-limit sets it; its RSS under load is checked against it (0: 1.5 × the server's RSS once it has opened the state, at least that RSS + 256 MiB; -1: none)")
	}, c.check, func() (bool, error) { return runScale(c, os.Stdout) })
}

// check returns what is wrong with the flags, or "".
func (c *scaleConfig) check() string {
	if c.workspaces < 2 || c.clientsPerWS < 1 || c.jobsPerWS < 1 || c.resultsPerJob < 0 || c.duration <= 0 || c.warmup < 0 || c.soak < 0 ||
		c.window <= 0 || c.conns < 1 || c.reportConns < 1 || c.noisyConns < 1 || c.reportEvery <= 0 || c.restarts < 1 {
		return "-workspaces must be at least 2; -clients, -jobs, -duration, -window, -conns, -report-conns, -noisy-conns, -report-every and -restarts positive"
	}
	if _, err := parsePhases(c.phases); err != nil {
		return err.Error()
	}
	return ""
}

type scalePhases struct{ restart, read, mixed, noisy, retention bool }

func parsePhases(s string) (scalePhases, error) {
	var p scalePhases
	for _, name := range strings.Split(s, ",") {
		switch strings.TrimSpace(name) {
		case "all":
			p = scalePhases{true, true, true, true, true}
		case "restart":
			p.restart = true
		case "read":
			p.read = true
		case "mixed":
			p.mixed = true
		case "noisy":
			p.noisy = true
		case "retention":
			p.retention = true
		case "":
		default:
			return p, fmt.Errorf("-phases: unknown phase %q (restart, read, mixed, noisy, retention, all)", name)
		}
	}
	// Phases B and C are compared with A.
	p.read = p.read || p.mixed || p.noisy
	return p, nil
}

// scaleFixture is what the build made, kept in the data directory.
type scaleFixture struct {
	Workspaces, ClientsPerWS, JobsPerWS, ReportKeysPerWS, ResultsPerJob int
	WorkspaceIDs                                                        []string
	JobIDs                                                              []string // job g belongs to workspace g%Workspaces (setUp's order)
	ReportSecrets                                                       []string // report key k belongs to workspace k%Workspaces
	RESTSecrets                                                         []string // one per workspace
	BuildSeconds                                                        float64
	JobsOnly                                                            *restartStats `json:",omitempty"`
	Added                                                               int64         // reports recorded by load phases since the build
}

func (f *scaleFixture) jobs() int { return f.Workspaces * f.JobsPerWS }

// results returns the results the state holds: the build's and those the
// load phases added.
func (f *scaleFixture) results() int { return f.jobs()*f.ResultsPerJob + int(f.Added) }

func (f *scaleFixture) save(dir string) error {
	b, _ := jsonx.Marshal(f)
	return os.WriteFile(filepath.Join(dir, scaleFixtureFile), b, 0o600)
}

// noisy is the workspace that goes past its limits in phase C; it is
// neither read nor reporting otherwise.
func (f *scaleFixture) noisy() int { return f.Workspaces - 1 }

// reportKeysFor returns how many report keys a workspace needs for its jobs
// to report every `every` with no key sending more than scaleKeyPerMinute.
func reportKeysFor(jobsPerWS int, every time.Duration) int {
	perMinute := float64(jobsPerWS) * float64(time.Minute) / float64(every)
	return max(1, int(math.Ceil(perMinute/scaleKeyPerMinute)))
}

// scaleVerdicts collects the targets' outcomes for the end.
type scaleVerdicts struct{ list []scaleVerdict }

type scaleVerdict struct {
	ok           bool
	name, detail string
}

func (v *scaleVerdicts) add(ok bool, name, detail string) {
	v.list = append(v.list, scaleVerdict{ok, name, detail})
}

func runScale(c scaleConfig, out io.Writer) (bool, error) {
	phases, err := parsePhases(c.phases)
	if err != nil {
		return false, err
	}
	if !c.retention {
		phases.retention = false
	}
	fmt.Fprintf(out, "bench scale: go run ./bench scale %s\n", strings.Join(scaleArgs(), " "))
	fmt.Fprintf(out, "machine: %s\n", machineLine())
	var v scaleVerdicts

	dir, cleanup, f, err := scaleState(c, phases, out, &v)
	if err != nil {
		return false, err
	}
	defer cleanup()

	if phases.read || c.soak > 0 {
		err := scaleLoad(c, phases, dir, f, out, &v)
		if serr := f.save(dir); err == nil {
			err = serr // the reports recorded count for a later run on this directory
		}
		if err != nil {
			return false, err
		}
	}
	if phases.retention {
		if err := scaleRetention(c, dir, f, out, &v); err != nil {
			return false, err
		}
	}

	fmt.Fprintf(out, "load average at the end: %s\n", loadAverage())
	fmt.Fprintln(out, "targets:")
	failed := []string{}
	for _, t := range v.list {
		fmt.Fprintf(out, "  %s  %s: %s\n", passFail(t.ok), t.name, t.detail)
		if !t.ok {
			failed = append(failed, t.name)
		}
	}
	scale := fmt.Sprintf("%s workspaces, %s jobs, %s results", thousands(int64(f.Workspaces)), thousands(int64(f.jobs())), thousands(int64(f.results())))
	if len(failed) == 0 {
		fmt.Fprintf(out, "bench scale: PASS: all %d targets met (%s)\n", len(v.list), scale)
		return true, nil
	}
	fmt.Fprintf(out, "bench scale: FAIL: %d of %d targets met (%s); failed: %s\n", len(v.list)-len(failed), len(v.list), scale, strings.Join(failed, "; "))
	return false, nil
}

// scaleArgs returns the command's flags as given.
func scaleArgs() []string {
	args := os.Args[1:]
	if len(args) > 0 && args[0] == "scale" {
		args = args[1:]
	}
	return args
}

// machineLine describes the machine: CPUs, CPU model, memory, kernel, Go,
// and the load average at the start.
func machineLine() string {
	model, mhz := "unknown CPU", ""
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			k, val, ok := strings.Cut(line, ":")
			if !ok {
				continue
			}
			switch strings.TrimSpace(k) {
			case "model name":
				if model == "unknown CPU" {
					model = strings.TrimSpace(val)
				}
			case "cpu MHz":
				if mhz == "" {
					if f, err := strconv.ParseFloat(strings.TrimSpace(val), 64); err == nil {
						mhz = fmt.Sprintf(" at %.0f MHz", f)
					}
				}
			}
		}
	}
	mem := ""
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
				if kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64); err == nil {
					mem = fmt.Sprintf(", %.1f GiB of memory", kb/(1<<20))
				}
			}
		}
	}
	kernel, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	return fmt.Sprintf("nproc %d, %s%s%s, kernel %s, %s %s/%s; load average %s",
		runtime.NumCPU(), model, mhz, mem, strings.TrimSpace(string(kernel)), runtime.Version(), runtime.GOOS, runtime.GOARCH, loadAverage())
}

// loadAverage returns the 1, 5 and 15-minute load averages.
func loadAverage() string {
	load, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(load))
	return strings.Join(f[:min(3, len(f))], " ")
}

// scaleState builds the state (or finds the one -data holds) and measures
// its restarts and memory.
func scaleState(c scaleConfig, phases scalePhases, out io.Writer, v *scaleVerdicts) (string, func(), *scaleFixture, error) {
	if c.data != "" {
		if b, err := os.ReadFile(filepath.Join(c.data, scaleFixtureFile)); err == nil {
			f := &scaleFixture{}
			if err := jsonx.Unmarshal(b, f); err != nil {
				return "", nil, nil, fmt.Errorf("%s: %w", scaleFixtureFile, err)
			}
			fmt.Fprintf(out, "reusing the state in %s (built in %.0f s): %s workspaces × %d clients × %d jobs, %d results per job and %s more from earlier load phases, %d report keys and 1 REST key per workspace (-workspaces, -clients, -jobs and -results are ignored)\n",
				c.data, f.BuildSeconds, thousands(int64(f.Workspaces)), f.ClientsPerWS, f.JobsPerWS, f.ResultsPerJob, thousands(f.Added), f.ReportKeysPerWS)
			if phases.restart {
				if err := scaleRestarts(c, c.data, f, out, v); err != nil {
					return "", nil, nil, err
				}
			}
			return c.data, func() {}, f, nil
		}
	}
	dir, cleanup, err := dataDir(c.data, "backupmon-bench-scale-")
	if err != nil {
		return "", nil, nil, err
	}
	f, err := scaleBuild(c, phases, dir, out, v)
	if err != nil {
		cleanup()
		return "", nil, nil, err
	}
	return dir, cleanup, f, nil
}

// scaleBuild builds the state through the engine's commands: workspaces,
// clients, jobs and keys (whose restart it measures), then the results.
func scaleBuild(c scaleConfig, phases scalePhases, dir string, out io.Writer, v *scaleVerdicts) (*scaleFixture, error) {
	f := &scaleFixture{Workspaces: c.workspaces, ClientsPerWS: c.clientsPerWS, JobsPerWS: c.jobsPerWS, ResultsPerJob: c.resultsPerJob,
		ReportKeysPerWS: reportKeysFor(c.jobsPerWS, c.reportEvery)}
	fmt.Fprintf(out, "state: %s Pro workspaces × %d clients × %d jobs = %s jobs, %d report keys and 1 REST key per workspace; %d results per job = %s results (one a day ending yesterday, 5%% failed, 5%% warnings); data %s\n",
		thousands(int64(f.Workspaces)), f.ClientsPerWS, f.JobsPerWS, thousands(int64(f.jobs())), f.ReportKeysPerWS, f.ResultsPerJob,
		thousands(int64(f.results())), dir)

	buildStart := time.Now()
	eng, err := engine.Open(engine.Options{Dir: dir, Logger: benchLogger(nil), SnapshotEvery: never, SnapshotInterval: never})
	if err != nil {
		return nil, err
	}
	fx, err := setUp(eng, layout{workspaces: f.Workspaces, clientsPerWS: f.ClientsPerWS, jobsPerWS: f.JobsPerWS, keysPerWS: f.ReportKeysPerWS,
		keyType: "report", parallel: c.parallel, workspaceName: "Scale MSP"})
	if err == nil {
		f.RESTSecrets, err = createRESTKeys(eng, fx.wsIDs, c.parallel)
	}
	if err != nil {
		eng.Close()
		return nil, fmt.Errorf("set up: %w", err)
	}
	f.WorkspaceIDs, f.JobIDs, f.ReportSecrets = fx.wsIDs, fx.jobIDs, fx.secrets
	if err := eng.Close(); err != nil {
		return nil, err
	}
	eng = nil
	setUpTime := time.Since(buildStart)
	fmt.Fprintf(out, "built the workspaces, clients, jobs and keys in %s (%d at once)\n", setUpTime.Round(time.Millisecond), c.parallel)
	if phases.restart {
		syncDisk(out)
		s, err := measureRestarts(dir, c.restarts)
		if err != nil {
			return nil, err
		}
		printRestartTo(out, "jobs only, no results", dir, s)
		f.JobsOnly = &s
	}

	// The results, through ImportReports (one actor turn per job).
	start := time.Now()
	stats := &engineStats{}
	eng, err = engine.Open(engine.Options{Dir: dir, Logger: benchLogger(stats), SnapshotEvery: never, SnapshotInterval: never})
	if err != nil {
		return nil, err
	}
	if err := importResults(eng, fx, f.ResultsPerJob, c.parallel); err != nil {
		eng.Close()
		return nil, err
	}
	imported := time.Since(start)
	f.BuildSeconds = (setUpTime + imported).Seconds()
	fmt.Fprintf(out, "imported %s results in %s (%s results/s, %d jobs at once); build time in all %s; the builder's peak RSS %.0f MiB\n",
		thousands(int64(f.results())), imported.Round(time.Millisecond), thousands(int64(float64(f.results())/imported.Seconds())), c.parallel,
		(setUpTime + imported).Round(time.Millisecond), float64(procStatus("VmHWM"))/(1<<20))
	start = time.Now()
	if err := eng.Close(); err != nil {
		return nil, err
	}
	closed := time.Since(start)
	eng = nil
	debug.FreeOSMemory() // the builder lets go of its state before the children load theirs
	_, _, _, _, _, snapTime := stats.take()
	size := newestSnapshotSize(dir)
	fmt.Fprintf(out, "engine closed in %s: final snapshot %.1f MiB written in %s (%.0f MiB/s); log %.1f MiB on disk\n",
		closed.Round(time.Millisecond), float64(size)/(1<<20), snapTime.Round(time.Millisecond), float64(size)/(1<<20)/max(snapTime.Seconds(), 1e-9),
		float64(dirSize(filepath.Join(dir, "wal")))/(1<<20))

	if err := f.save(dir); err != nil {
		return nil, err
	}
	if phases.restart {
		if err := scaleRestarts(c, dir, f, out, v); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// printRestartTo is recovery.go's printRestart, printing to out.
func printRestartTo(out io.Writer, what, dir string, s restartStats) {
	fmt.Fprintf(out, "restart (%s): ready in %s (median of %s), %s records replayed; heap in use %.1f MiB, RSS %.1f MiB (peak %.1f MiB); snapshot %.1f MiB, log %.1f MiB on disk\n",
		what, time.Duration(s.OpenNs).Round(time.Millisecond), s.times, thousands(s.Replayed),
		float64(s.HeapInuse)/(1<<20), float64(s.RSS)/(1<<20), float64(s.PeakRSS)/(1<<20),
		float64(newestSnapshotSize(dir))/(1<<20), float64(dirSize(filepath.Join(dir, "wal")))/(1<<20))
}

// syncDisk writes every dirty page to the disk before a measurement, so
// that the writeback of what the build wrote (gigabytes at full scale)
// does not slow the fsyncs or reads being measured.
func syncDisk(out io.Writer) {
	start := time.Now()
	syscall.Sync()
	if d := time.Since(start); d > time.Second {
		fmt.Fprintf(out, "(sync: the disk took %s to write back what the build left dirty)\n", d.Round(time.Millisecond))
	}
}

// createRESTKeys gives each workspace one REST key (every scope).
func createRESTKeys(eng *engine.Engine, wsIDs []string, parallel int) ([]string, error) {
	secrets := make([]string, len(wsIDs))
	if err := parallelDo(len(wsIDs), parallel, func(w int) error {
		kv, err := eng.CreateKey(wsIDs[w], engine.KeyInput{Name: engine.Some("Scale REST key"), Type: engine.Some("rest")})
		if err != nil {
			return err
		}
		secrets[w] = kv.Key
		return nil
	}); err != nil {
		return nil, fmt.Errorf("REST key of workspace %w", err)
	}
	return secrets, nil
}

// scaleRestarts measures the full state's restarts and the memory per job
// and per result.
func scaleRestarts(c scaleConfig, dir string, f *scaleFixture, out io.Writer, v *scaleVerdicts) error {
	syncDisk(out)
	full, err := measureRestarts(dir, c.restarts)
	if err != nil {
		return err
	}
	printRestartTo(out, "full state, from the snapshot", dir, full)
	restart := time.Duration(full.OpenNs)
	v.add(restart < targetScaleRestart, fmt.Sprintf("restart < %s", targetScaleRestart),
		fmt.Sprintf("%s (median of %s), %s results", restart.Round(time.Millisecond), full.times, thousands(int64(f.results()))))
	if f.JobsOnly == nil {
		fmt.Fprintln(out, "memory per job and per result: no jobs-only figures for this state (it was built without the restart phase)")
		return nil
	}
	jobs, results := float64(f.jobs()), float64(max(f.results(), 1))
	perJobRSS, perJobHeap := float64(f.JobsOnly.RSS)/jobs, float64(f.JobsOnly.HeapInuse)/jobs
	perResRSS := (float64(full.RSS) - float64(f.JobsOnly.RSS)) / results
	perResHeap := (float64(full.HeapInuse) - float64(f.JobsOnly.HeapInuse)) / results
	fmt.Fprintf(out, "memory: per job (jobs-only ÷ jobs) %.0f B of RSS, %.0f B of heap in use; per result ((full − jobs-only) ÷ results) %.1f B of RSS, %.1f B of heap in use\n",
		perJobRSS, perJobHeap, perResRSS, perResHeap)
	v.add(perResRSS < targetBytesPerResult, fmt.Sprintf("memory per result < %d B", targetBytesPerResult),
		fmt.Sprintf("%.1f B of RSS ((%.0f − %.0f MiB) ÷ %s), %.1f B of heap", perResRSS, float64(full.RSS)/(1<<20), float64(f.JobsOnly.RSS)/(1<<20), thousands(int64(results)), perResHeap))
	v.add(perJobRSS < targetBytesPerJob, fmt.Sprintf("memory per job < %d B", targetBytesPerJob),
		fmt.Sprintf("%.0f B of RSS (%.1f MiB ÷ %s jobs), %.0f B of heap", perJobRSS, float64(f.JobsOnly.RSS)/(1<<20), thousands(int64(jobs)), perJobHeap))
	return nil
}

// --- The server and the load ---

// scaleProc is a helper process speaking a line protocol on its standard
// input and output: a child process running `bench scale child <mode>`,
// or, in tests, a goroutine of this one.
type scaleProc struct {
	pid   int
	stdin io.WriteCloser
	out   *bufio.Scanner
	wait  func() error
	kill  func()
}

// startScaleProc starts mode (run is its body, for the in-process case).
func startScaleProc(c scaleConfig, mode string, run func(args []string, in io.Reader, out io.Writer) int, args []string) (*scaleProc, error) {
	p := &scaleProc{}
	if c.inProcess {
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		done := make(chan int, 1)
		go func() {
			code := run(args, inR, outW)
			outW.Close()
			done <- code
		}()
		p.pid, p.stdin, p.out = os.Getpid(), inW, bufio.NewScanner(outR)
		var once sync.Once
		var code int
		p.wait = func() error {
			once.Do(func() { code = <-done })
			if code != 0 {
				return fmt.Errorf("%s exited %d", mode, code)
			}
			return nil
		}
		p.kill = func() { inW.Close() }
		return p, nil
	}
	cmd, stdin, out, err := startSelf(slices.Concat(scaleChildArgs, []string{mode}, args))
	if err != nil {
		return nil, err
	}
	p.pid, p.stdin, p.out, p.wait = cmd.Process.Pid, stdin, out, cmd.Wait
	p.kill = func() { cmd.Process.Kill(); cmd.Wait() }
	return p, nil
}

func (p *scaleProc) line() (string, error) { return nextLine(p.out, "helper process exited") }

func (p *scaleProc) rss() uint64        { return pidStatus(p.pid, "VmRSS") }
func (p *scaleProc) cpu() time.Duration { return pidCPU(p.pid) }

// scaleServer is the server under load (scaleServe).
type scaleServer struct {
	*scaleProc
	addr   string
	openNs int64
}

// startScaleServer starts the server on dir and waits until it listens.
func startScaleServer(c scaleConfig, dir string) (*scaleServer, error) {
	args := []string{"-data", dir, "-procs", strconv.Itoa(c.procs)}
	if c.inProcess {
		args = append(args, "-no-tune")
	}
	p, err := startScaleProc(c, "serve", scaleServe, args)
	if err != nil {
		return nil, err
	}
	s := &scaleServer{scaleProc: p}
	line, err := s.line()
	if err == nil {
		f := strings.Fields(line)
		if len(f) != 3 || f[0] != "listening" {
			err = fmt.Errorf("server said %q", line)
		} else {
			s.addr = f[1]
			s.openNs, _ = strconv.ParseInt(f[2], 10, 64)
		}
	}
	if err != nil {
		s.kill()
		return nil, err
	}
	return s, nil
}

// serverStats is what the server tells of itself since the last asking.
type serverStats struct {
	snapshots int64
	snapTime  time.Duration
	records   int64
	heapInuse uint64
	numGC     uint32 // garbage collections since the start
	nextGC    uint64 // the heap size at which the next collection starts
	liveHeap  uint64 // the heap the last collection found live (runtime/metrics /gc/heap/live:bytes)
}

func (s *scaleServer) stats() (serverStats, error) {
	var st serverStats
	if _, err := io.WriteString(s.stdin, "stats\n"); err != nil {
		return st, err
	}
	line, err := s.line()
	if err != nil {
		return st, err
	}
	var snapNs int64
	if _, err := fmt.Sscanf(line, "stats %d %d %d %d %d %d %d", &st.snapshots, &snapNs, &st.records, &st.heapInuse, &st.numGC, &st.nextGC, &st.liveHeap); err != nil {
		return st, fmt.Errorf("server said %q: %w", line, err)
	}
	st.snapTime = time.Duration(snapNs)
	return st, nil
}

// stop closes the server's input, which makes it shut down and close the
// engine (final snapshot); it returns how long the close took.
func (s *scaleServer) stop() (time.Duration, error) {
	closed := closeInput(s.stdin, s.out)
	return closed, s.wait()
}

// pidStatus returns a size field of /proc/<pid>/status in bytes (0 when it
// cannot be read).
func pidStatus(pid int, field string) uint64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		name, rest, ok := strings.Cut(line, ":")
		if !ok || name != field {
			continue
		}
		if fields := strings.Fields(rest); len(fields) > 0 {
			kb, _ := strconv.ParseUint(fields[0], 10, 64)
			return kb << 10
		}
	}
	return 0
}

// pacer spaces the requests of a stream at a rate: over any interval T it
// lets at most rate·T + burst requests start.
type pacer struct {
	mu    sync.Mutex
	base  time.Time
	every float64 // nanoseconds between requests
	slack float64 // how far behind the schedule may fall (the burst)
	next  float64 // when the next request may start, nanoseconds after base
}

func newPacer(rate float64, burst int) *pacer {
	every := float64(time.Second) / rate
	return &pacer{base: time.Now(), every: every, slack: every * float64(max(burst, 1))}
}

// wait waits for the next request's turn; it returns false if done
// closes first.
func (p *pacer) wait(done <-chan struct{}) bool {
	now := float64(time.Since(p.base))
	p.mu.Lock()
	t := max(p.next, now-p.slack)
	p.next = t + p.every
	p.mu.Unlock()
	d := time.Duration(t - now)
	if d <= 0 {
		return true
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-done:
		return false
	}
}

func (p *pacer) rate() float64 { return float64(time.Second) / p.every }

// readBurst is the readers' burst: one request per connection, but no more
// than the workspaces' margin allows. Over a minute the readers send at
// most 285·w + burst requests, and round-robin in threes gives a workspace
// at most 285 + burst/w + 3 of them, which must stay within 300.
func readBurst(workspaces, conns int) int {
	return max(1, min(conns, (restPerMinutePro-scaleRESTPerMinute-len(scaleReadPaths))*workspaces))
}

// reportBurst is the reporters' burst: one report per connection, but no
// more than leaves every key under 60 a minute (it sends 40, plus its share
// of the burst, plus one for the rounding of the turns).
func reportBurst(workspaces, keysPerWS, conns int) int {
	return max(1, min(conns, (perKeyPerMinute-scaleKeyPerMinute-1)*workspaces*keysPerWS))
}

// streamCounts is what a stream's requests met.
type streamCounts struct {
	ok      int64 // as they should be
	limited int64 // 429: a per-minute limit
	capped  int64 // 429: the job's daily cap
	failed  int64 // errors: transport, unexpected answers, and 429s where none should come
	lat     hist  // latency of the ok answers
}

func (c *streamCounts) merge(o *streamCounts) {
	c.ok += o.ok
	c.limited += o.limited
	c.capped += o.capped
	c.failed += o.failed
	c.lat.merge(&o.lat)
}

// streamBuilder makes the requests of one connection's goroutine.
type streamBuilder interface {
	build(req *fasthttp.Request, i uint64)
	// good reports whether a 200 answer is as it should be.
	good(resp *fasthttp.Response) bool
}

// stream is a closed-loop load: conns goroutines, each on its own
// connection, sending request after request (spaced by the pacer, if any).
type stream struct {
	name     string
	hc       *fasthttp.HostClient
	pace     *pacer
	limitsOK bool // 429s are expected (the noisy workspace)
	next     atomic.Uint64
	gen      atomic.Uint64 // bumped by take: answers to requests sent before it are not counted
	stopped  atomic.Bool
	done     chan struct{} // closed by stop
	wg       sync.WaitGroup
	workers  []*streamWorker
	since    time.Time
	errs     errorLog
}

type streamWorker struct {
	mu sync.Mutex
	c  streamCounts
}

func startStream(name, addr string, conns int, pace *pacer, limitsOK bool, newBuilder func(host []byte) streamBuilder) *stream {
	s := &stream{name: name, pace: pace, limitsOK: limitsOK, since: time.Now(), done: make(chan struct{}), hc: loadClient(addr, conns)}
	host := []byte("http://" + addr)
	for range conns {
		w := &streamWorker{}
		s.workers = append(s.workers, w)
		s.wg.Go(func() {
			req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
			defer fasthttp.ReleaseRequest(req)
			defer fasthttp.ReleaseResponse(resp)
			rb := newBuilder(host)
			for !s.stopped.Load() {
				if s.pace != nil && !s.pace.wait(s.done) {
					return
				}
				rb.build(req, s.next.Add(1)-1)
				gen := s.gen.Load()
				t0 := time.Now()
				err := s.hc.Do(req, resp)
				lat := time.Since(t0)
				w.mu.Lock()
				switch {
				case err == nil && s.gen.Load() != gen && resp.StatusCode() == fasthttp.StatusOK:
					// Sent before the interval being measured began.
				case err != nil:
					w.c.failed++
					s.errs.add("transport: "+err.Error(), err.Error())
				case resp.StatusCode() == fasthttp.StatusTooManyRequests:
					if bytes.Contains(resp.Body(), []byte("Daily ingest cap")) {
						w.c.capped++
					} else {
						w.c.limited++
					}
					if !s.limitsOK {
						w.c.failed++
						s.errs.add("429 where the load stays within the limits", string(resp.Body()))
					}
				case resp.StatusCode() == fasthttp.StatusOK && rb.good(resp):
					w.c.ok++
					w.c.lat.record(lat)
				default:
					w.c.failed++
					s.errs.add(fmt.Sprintf("status %d", resp.StatusCode()), string(resp.Body()))
				}
				w.mu.Unlock()
			}
		})
	}
	return s
}

// take returns the counts since the last take (or the start) and how long
// that was, and starts counting again. Good answers count only when their
// request was sent in the interval; errors and 429s count whenever they come.
func (s *stream) take() (streamCounts, time.Duration) {
	s.gen.Add(1)
	var c streamCounts
	for _, w := range s.workers {
		w.mu.Lock()
		c.merge(&w.c)
		w.c = streamCounts{}
		w.mu.Unlock()
	}
	now := time.Now()
	d := now.Sub(s.since)
	s.since = now
	return c, d
}

// printErrors prints the kinds of errors met so far and forgets them.
func (s *stream) printErrors(out io.Writer) {
	s.errs.print(out, "  "+s.name)
	s.errs.mu.Lock()
	s.errs.kinds, s.errs.first = nil, nil
	s.errs.mu.Unlock()
}

func (s *stream) stop() {
	if s.stopped.Swap(true) {
		return
	}
	close(s.done)
	s.wg.Wait()
	s.hc.CloseIdleConnections()
}

var scaleReadPaths = readPaths // /jobs?limit=50, /alerts?status=unresolved, /health

// scaleReads polls the three read paths in turn, workspace after workspace
// of ws, each with its own REST key.
type scaleReads struct {
	ws    []int
	auths [][]byte // per workspace index
	uris  [][]byte
}

func newScaleReads(f *scaleFixture, ws []int) func(host []byte) streamBuilder {
	r := &scaleReads{ws: ws}
	for _, k := range f.RESTSecrets {
		r.auths = append(r.auths, []byte("Bearer "+k))
	}
	return func(host []byte) streamBuilder {
		w := &scaleReads{ws: r.ws, auths: r.auths} // each connection's goroutine has its own
		for _, p := range scaleReadPaths {
			w.uris = append(w.uris, []byte(string(host)+p))
		}
		return w
	}
}

// pick returns request i's path and workspace: workspace ws[(i/3)%len]
// makes three requests in a row, one on each path.
func (r *scaleReads) pick(i uint64) (path, ws int) {
	n := uint64(len(scaleReadPaths))
	return int(i % n), r.ws[(i/n)%uint64(len(r.ws))]
}

func (r *scaleReads) build(req *fasthttp.Request, i uint64) {
	path, ws := r.pick(i)
	req.SetRequestURIBytes(r.uris[path])
	req.Header.SetBytesV("Authorization", r.auths[ws])
}

func (r *scaleReads) good(resp *fasthttp.Response) bool {
	return bytes.HasPrefix(resp.Body(), []byte(`{"data":`))
}

// scaleReports sends Report API reports for the jobs of the workspaces in
// set, each job in turn, the workspace's report keys taking turns.
type scaleReports struct {
	f     *scaleFixture
	set   atomic.Pointer[[]int]
	paths [][]byte // per job: /api/v1/jobs/<id>/report
	auths [][]byte // per report key
	nonce string
}

func newScaleReports(f *scaleFixture, set []int, nonce string) *scaleReports {
	r := &scaleReports{f: f, nonce: nonce}
	r.set.Store(&set)
	for _, id := range f.JobIDs {
		r.paths = append(r.paths, []byte("/api/v1/jobs/"+id+"/report"))
	}
	for _, k := range f.ReportSecrets {
		r.auths = append(r.auths, []byte("Bearer "+k))
	}
	return r
}

// pick returns report i's job and key: the jobs of the set take turns
// (job m of every workspace, then job m+1), so each job reports once in
// every len(set)·jobs reports; a workspace's n-th report uses its key n mod
// keys, so each key sends the same share.
func (r *scaleReports) pick(set []int, i uint64) (job, key int, round uint64) {
	R, J, K, W := uint64(len(set)), uint64(r.f.JobsPerWS), uint64(r.f.ReportKeysPerWS), r.f.Workspaces
	g := i % (R * J)
	round = i / (R * J)
	ws := set[g%R]
	m := g / R
	n := round*J + m
	return ws + W*int(m), ws + W*int(n%K), round
}

func (r *scaleReports) builder(host []byte) streamBuilder {
	return &reportWorker{reportRequest: newReportRequest(host, "scale-"+r.nonce+"-"), r: r}
}

type reportWorker struct {
	reportRequest
	r *scaleReports
}

func (b *reportWorker) build(req *fasthttp.Request, i uint64) {
	job, key, round := b.r.pick(*b.r.set.Load(), i)
	b.set(req, i, b.r.paths[job], b.r.auths[key])
	status := "ok"
	switch (round*7 + uint64(job)) % 20 {
	case 0:
		status = "failed"
	case 10:
		status = "warn"
	}
	b.body = append(b.body[:0], `{"status":"`...)
	b.body = append(b.body, status...)
	b.body = append(b.body, `","duration_seconds":`...)
	b.body = strconv.AppendUint(b.body, 600+i%3600, 10)
	b.body = append(b.body, `,"size_bytes":`...)
	b.body = strconv.AppendUint(b.body, 1<<30+(i%4096)<<20, 10)
	b.body = append(b.body, '}')
	req.SetBodyRaw(b.body)
}

func (b *reportWorker) good(resp *fasthttp.Response) bool {
	return bytes.Contains(resp.Body(), []byte(`"duplicate":false`))
}

// reportSlice returns the s-th set of reporting workspaces: n workspaces
// in a row among the ones that are not the noisy one, wrapping around.
func reportSlice(f *scaleFixture, n, s int) []int {
	others := f.Workspaces - 1
	set := make([]int, n)
	for t := range set {
		set[t] = (s*n + t) % others
	}
	return set
}

// phaseFigures is one measured phase of a stream.
type phaseFigures struct {
	c       streamCounts
	elapsed time.Duration
}

func (p phaseFigures) rate() float64 { return float64(p.c.ok) / max(p.elapsed.Seconds(), 1e-9) }

func (p phaseFigures) String() string {
	return fmt.Sprintf("%s/s (%s in %s)  p50 %s  p99 %s  max %s  errors %d",
		thousands(int64(p.rate())), thousands(p.c.ok), p.elapsed.Round(time.Millisecond),
		fmtDur(p.c.lat.quantile(0.50)), fmtDur(p.c.lat.quantile(0.99)), fmtDur(time.Duration(p.c.lat.max)), p.c.failed)
}

// scaleLoad runs the server on dir and the load phases against it.
func scaleLoad(c scaleConfig, phases scalePhases, dir string, f *scaleFixture, out io.Writer, v *scaleVerdicts) error {
	if f.ReportKeysPerWS < reportKeysFor(f.JobsPerWS, c.reportEvery) {
		return fmt.Errorf("the state has %d report keys per workspace, too few for %d jobs reporting every %s within %d reports a minute per key: raise -report-every or build again",
			f.ReportKeysPerWS, f.JobsPerWS, c.reportEvery, scaleKeyPerMinute)
	}
	syncDisk(out)
	start := time.Now()
	server, err := startScaleServer(c, dir)
	if err != nil {
		return err
	}
	defer server.kill() // after stop, it does nothing
	stateRSS := server.rss()
	fmt.Fprintf(out, "server (engine and transport as backupmon serve wires them, retention %d days; in a process of its own): recovered in %s, listening %s after %s; RSS %.1f MiB\n",
		serveRetentionDays, time.Duration(server.openNs).Round(time.Millisecond), server.addr, time.Since(start).Round(time.Millisecond), float64(stateRSS)/(1<<20))
	limit, err := server.setMemoryLimit(c.memoryLimitMiB, stateRSS, out)
	if err != nil {
		return err
	}
	peak := watchRSS(server.scaleProc)
	defer peak.stop()

	// The readers: every workspace but the noisy one, each within its limit.
	others := make([]int, f.Workspaces-1)
	for w := range others {
		others[w] = w
	}
	limitRate := float64(len(others)) * scaleRESTPerMinute / 60
	readRate := limitRate
	if c.readRate > 0 {
		readRate = min(readRate, c.readRate)
	}
	fmt.Fprintf(out, "readers: %d connections polling %s round-robin over %s workspaces with their REST keys, at most %s requests/s (%d a minute per workspace; Pro allows %d)\n",
		c.conns, strings.Join(scaleReadPaths, ", "), thousands(int64(len(others))), thousands(int64(readRate)), scaleRESTPerMinute, restPerMinutePro)
	readPacer := newPacer(readRate, readBurst(len(others), c.conns))
	gc0, err := server.stats()
	if err != nil {
		return err
	}
	reads := startStream("reads", server.addr, c.conns, readPacer, false, newScaleReads(f, others))
	defer reads.stop()

	reporting := max(1, f.Workspaces/scaleReportFraction)
	reportRate := float64(reporting*f.JobsPerWS) / c.reportEvery.Seconds()
	perKey := float64(f.JobsPerWS) * float64(time.Minute) / float64(c.reportEvery) / float64(f.ReportKeysPerWS)
	nonce := strconv.FormatInt(time.Now().UnixNano(), 36)
	reportSets := max(1, (f.Workspaces-1)/reporting) // distinct slices the soak rotates over

	measure := func() { time.Sleep(c.duration) }
	var a phaseFigures
	if phases.read {
		// The server's heap grows to twice what recovery left before its
		// first collection under load; until then it collects nothing, so
		// with a large heap the warm-up lasts until one is done (settleMax at
		// most), and every phase is measured with the collector at its pace.
		start := time.Now()
		time.Sleep(c.warmup)
		for st := gc0; gc0.heapInuse >= settleHeap && st.numGC <= gc0.numGC && time.Since(start) < settleMax; st, _ = server.stats() {
			time.Sleep(500 * time.Millisecond)
		}
		st0, _ := server.stats()
		if gc0.heapInuse >= settleHeap {
			fmt.Fprintf(out, "warm-up: %s, until the server's first garbage collection under load (%d since the readers started)\n", time.Since(start).Round(100*time.Millisecond), st0.numGC-gc0.numGC)
		}
		reads.take()
		cpu0, gcpu0 := server.cpu(), processCPU()
		measure()
		a.c, a.elapsed = reads.take()
		st1, _ := server.stats()
		fmt.Fprintf(out, "phase A, reads alone: %s; CPU: server %.2f cores, load generator %.2f; %s%s\n", a,
			(server.cpu()-cpu0).Seconds()/a.elapsed.Seconds(), (processCPU()-gcpu0).Seconds()/a.elapsed.Seconds(), serverNote(server, st0, st1), paceNote(a, readPacer))
		reads.printErrors(out)
	}

	if phases.mixed {
		set := reportSlice(f, reporting, 0)
		fmt.Fprintf(out, "reporters: %s workspaces (1 in %d) × %d jobs, each job reporting every %s: %s reports/s on %d connections; %.0f a minute per report key (%d keys per workspace, %d allowed), %.0f per job per minute (about %.0f per job in this phase; the cap is %d a day); every report with its own Idempotency-Key, 5%% failed, 5%% warnings\n",
			thousands(int64(reporting)), scaleReportFraction, f.JobsPerWS, c.reportEvery, thousands(int64(reportRate)), c.reportConns,
			perKey, f.ReportKeysPerWS, perKeyPerMinute, float64(time.Minute)/float64(c.reportEvery), math.Ceil((c.warmup+c.duration).Seconds()/c.reportEvery.Seconds()), perJobPerDay)
		rr := newScaleReports(f, set, nonce)
		reports := startStream("reports", server.addr, c.reportConns, newPacer(reportRate, reportBurst(reporting, f.ReportKeysPerWS, c.reportConns)), false, rr.builder)
		time.Sleep(c.warmup)
		reads.take()
		reports.take()
		st0, _ := server.stats()
		cpu0, gcpu0 := server.cpu(), processCPU()
		measure()
		var b, rb phaseFigures
		b.c, b.elapsed = reads.take()
		rb.c, rb.elapsed = reports.take()
		st1, _ := server.stats()
		cpu, gcpu := (server.cpu()-cpu0).Seconds()/b.elapsed.Seconds(), (processCPU()-gcpu0).Seconds()/b.elapsed.Seconds()
		reports.stop()
		f.Added += rb.c.ok
		fmt.Fprintf(out, "phase B, reads while 1 workspace in %d reports: reads %s; CPU: server %.2f cores, load generator %.2f; %s%s\n",
			scaleReportFraction, b, cpu, gcpu, serverNote(server, st0, st1), paceNote(b, readPacer))
		fmt.Fprintf(out, "  reports %s (planned %s/s)\n", rb, thousands(int64(reportRate)))
		if rb.rate() < 0.95*reportRate {
			fmt.Fprintf(out, "  WARNING: the reports reached %.0f%% of the planned rate (their latency over -report-conns %d connections held them back)\n", 100*rb.rate()/reportRate, c.reportConns)
		}
		reads.printErrors(out)
		reports.printErrors(out)
		fmt.Fprintf(out, "  B/A: reads/s %.2f, p50 %.2f, p99 %.2f\n", b.rate()/a.rate(),
			ratio(b.c.lat.quantile(0.50), a.c.lat.quantile(0.50)), ratio(b.c.lat.quantile(0.99), a.c.lat.quantile(0.99)))
		v.add(b.c.failed == 0 && rb.c.failed == 0, "phase B within the limits", fmt.Sprintf("%d read errors, %d report errors (429s included)", b.c.failed, rb.c.failed))
	}

	if phases.noisy {
		noisy := f.noisy()
		fmt.Fprintf(out, "noisy workspace: #%d (not read, not reporting otherwise), from a client process of its own on the same machine: %d connections on its REST key (polling the three paths without pause) and %d on its %d report keys (reporting on its %d jobs without pause)\n",
			noisy, c.noisyConns, c.noisyConns, f.ReportKeysPerWS, f.JobsPerWS)
		nc, err := startNoisy(c, dir, server.addr, nonce+"n")
		if err != nil {
			return err
		}
		defer nc.kill() // after stop, it does nothing
		time.Sleep(c.warmup)
		reads.take()
		if _, _, err := nc.take(io.Discard); err != nil {
			return err
		}
		st0, _ := server.stats()
		cpu0, ncpu0, gcpu0 := server.cpu(), nc.cpu(), processCPU()
		measure()
		var cf phaseFigures
		cf.c, cf.elapsed = reads.take()
		nr1, nr2, err := nc.take(out)
		if err != nil {
			return err
		}
		st1, _ := server.stats()
		secs := cf.elapsed.Seconds()
		cpu, ncpu, gcpu := (server.cpu()-cpu0).Seconds()/secs, (nc.cpu()-ncpu0).Seconds()/secs, (processCPU()-gcpu0).Seconds()/secs
		if err := nc.stop(); err != nil {
			return fmt.Errorf("noisy client: %w", err)
		}
		f.Added += nr2.c.ok
		fmt.Fprintf(out, "phase C, reads while one workspace hammers: reads %s; CPU: server %.2f cores, noisy client %.2f, load generator %.2f; %s%s\n",
			cf, cpu, ncpu, gcpu, serverNote(server, st0, st1), paceNote(cf, readPacer))
		per := func(n int64, d time.Duration) string { return thousands(int64(float64(n) / max(d.Seconds(), 1e-9))) }
		fmt.Fprintf(out, "  noisy REST key: %s requests/s: %s answered 200, %s answered 429 RATE_LIMITED, %d errors\n",
			per(nr1.c.ok+nr1.c.limited+nr1.c.failed, nr1.elapsed), thousands(nr1.c.ok), thousands(nr1.c.limited), nr1.c.failed)
		fmt.Fprintf(out, "  noisy report keys: %s requests/s: %s answered 200, %s answered 429 (per-key minute limit), %s 429 (job's daily cap), %d errors\n",
			per(nr2.c.ok+nr2.c.limited+nr2.c.capped+nr2.c.failed, nr2.elapsed), thousands(nr2.c.ok), thousands(nr2.c.limited), thousands(nr2.c.capped), nr2.c.failed)
		reads.printErrors(out)
		p99x := ratio(cf.c.lat.quantile(0.99), a.c.lat.quantile(0.99))
		fmt.Fprintf(out, "  C/A: reads/s %.2f, p50 %.2f, p99 %.2f\n", cf.rate()/a.rate(), ratio(cf.c.lat.quantile(0.50), a.c.lat.quantile(0.50)), p99x)
		v.add(p99x < targetNoisyP99 && cf.c.ok > 0 && a.c.ok > 0, fmt.Sprintf("noisy neighbour: others' read p99 < %.2f× phase A's", targetNoisyP99),
			fmt.Sprintf("%.2f× (%s against %s)", p99x, fmtDur(cf.c.lat.quantile(0.99)), fmtDur(a.c.lat.quantile(0.99))))
		v.add(nr1.c.limited > 0 && nr2.c.limited+nr2.c.capped > 0 && cf.c.failed == 0 && nr1.c.failed+nr2.c.failed == 0, "noisy workspace limited, others not",
			fmt.Sprintf("noisy: %s REST 429s, %s report 429s; others: %d errors", thousands(nr1.c.limited), thousands(nr2.c.limited+nr2.c.capped), cf.c.failed))
	}

	if c.soak > 0 {
		if err := scaleSoak(c, f, server, reads, readPacer, reporting, reportSets, reportRate, nonce+"s", out, v); err != nil {
			return err
		}
	}

	reads.stop()
	if top := peak.stop(); limit > 0 {
		fmt.Fprintf(out, "server RSS under load: highest %.1f MiB (sampled every %s), %.0f%% of its memory limit of %.1f MiB\n",
			float64(top)/(1<<20), rssEvery, 100*float64(top)/float64(limit), float64(limit)/(1<<20))
		v.add(top <= uint64(limit), "server RSS under its memory limit", fmt.Sprintf("highest %.1f MiB, limit %.1f MiB (the state's RSS at open %.1f MiB)",
			float64(top)/(1<<20), float64(limit)/(1<<20), float64(stateRSS)/(1<<20)))
	}
	closed, err := server.stop()
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	fmt.Fprintf(out, "server stopped: engine closed (final snapshot) in %s\n", closed.Round(time.Millisecond))
	return nil
}

// setMemoryLimit gives the server its memory limit (debug.SetMemoryLimit,
// as backupmon serve's --memory-limit does): mib MiB, or with 0 1.5 × its
// RSS with the state open (at least that RSS + 256 MiB: a small state's
// process holds buffers and runtime memory besides), or none with -1. It
// returns the limit in bytes (0: none).
func (s *scaleServer) setMemoryLimit(mib int, stateRSS uint64, out io.Writer) (int64, error) {
	var limit int64
	how := "given"
	switch {
	case mib < 0:
		fmt.Fprintln(out, "memory limit: none (-memory-limit -1)")
		return 0, nil
	case mib > 0:
		limit = int64(mib) << 20
	default:
		limit = max(int64(stateRSS)*3/2, int64(stateRSS)+256<<20)
		how = "1.5 × the RSS with the state open, at least that + 256 MiB"
	}
	if _, err := fmt.Fprintf(s.stdin, "memlimit %d\n", limit); err != nil {
		return 0, err
	}
	if line, err := s.line(); err != nil || line != fmt.Sprintf("memlimit %d", limit) {
		return 0, fmt.Errorf("server said %q to its memory limit: %v", line, err)
	}
	fmt.Fprintf(out, "memory limit: %.1f MiB (%s)\n", float64(limit)/(1<<20), how)
	return limit, nil
}

// rssEvery is how often the server's RSS is sampled under load.
const rssEvery = 100 * time.Millisecond

// rssWatch samples a process's RSS until stopped.
type rssWatch struct {
	done chan struct{}
	top  chan uint64
	once sync.Once
	last uint64
}

// watchRSS samples p's RSS every rssEvery.
func watchRSS(p *scaleProc) *rssWatch {
	w := &rssWatch{done: make(chan struct{}), top: make(chan uint64, 1)}
	go func() {
		var top uint64
		t := time.NewTicker(rssEvery)
		defer t.Stop()
		for {
			top = max(top, p.rss())
			select {
			case <-w.done:
				w.top <- top
				return
			case <-t.C:
			}
		}
	}()
	return w
}

// stop ends the sampling and returns the highest RSS seen.
func (w *rssWatch) stop() uint64 {
	w.once.Do(func() {
		close(w.done)
		w.last = <-w.top
	})
	return w.last
}

// noisyClient is the noisy workspace's client in a process of its own
// (scaleNoisy), as another machine's would be: its runtime does not
// share the readers' goroutine scheduling.
type noisyClient struct{ *scaleProc }

func startNoisy(c scaleConfig, dir, addr, nonce string) (*noisyClient, error) {
	p, err := startScaleProc(c, "noisy", scaleNoisy, []string{"-data", dir, "-addr", addr, "-conns", strconv.Itoa(c.noisyConns), "-nonce", nonce})
	if err != nil {
		return nil, err
	}
	n := &noisyClient{p}
	if line, err := n.line(); err != nil || line != "ready" {
		n.kill()
		return nil, fmt.Errorf("noisy client said %q: %v", line, err)
	}
	return n, nil
}

// take returns the noisy client's REST and report counts since the last
// take; the kinds of errors it met go to out.
func (n *noisyClient) take(out io.Writer) (rest, rep phaseFigures, err error) {
	if _, err = io.WriteString(n.stdin, "take\n"); err != nil {
		return
	}
	for {
		var line string
		if line, err = n.line(); err != nil {
			return
		}
		if e, ok := strings.CutPrefix(line, "error "); ok {
			fmt.Fprintln(out, e)
			continue
		}
		var ns int64
		if _, err = fmt.Sscanf(line, "take %d %d %d %d %d %d %d %d", &rest.c.ok, &rest.c.limited, &rest.c.failed,
			&rep.c.ok, &rep.c.limited, &rep.c.capped, &rep.c.failed, &ns); err != nil {
			err = fmt.Errorf("noisy client said %q: %w", line, err)
			return
		}
		rest.elapsed, rep.elapsed = time.Duration(ns), time.Duration(ns)
		return
	}
}

func (n *noisyClient) stop() error {
	n.stdin.Close()
	for n.out.Scan() {
	}
	return n.wait()
}

// scaleNoisy is the noisy client's side: it hammers the server at addr
// with the noisy workspace's REST key and report keys (from the fixture
// in -data), -conns connections each, without pause, until in closes;
// each line "take" on in is answered with the error kinds met (lines
// "error ...") and "take <REST ok> <REST 429> <REST errors> <reports ok>
// <reports 429 per key> <reports 429 daily cap> <report errors> <ns>".
func scaleNoisy(args []string, in io.Reader, out io.Writer) int {
	fs := flag.NewFlagSet("noisy", flag.ContinueOnError)
	dir := fs.String("data", "", "")
	addr := fs.String("addr", "", "")
	conns := fs.Int("conns", 8, "")
	nonce := fs.String("nonce", "", "")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	f := &scaleFixture{}
	if err := readJSON(filepath.Join(*dir, scaleFixtureFile), f); err != nil {
		fmt.Fprintln(os.Stderr, "noisy client:", err)
		return 1
	}
	noisy := f.noisy()
	rest := startStream("noisy REST", *addr, *conns, nil, true, newScaleReads(f, []int{noisy}))
	reports := startStream("noisy reports", *addr, *conns, nil, true, newScaleReports(f, []int{noisy}, *nonce).builder)
	fmt.Fprintln(out, "ready")
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		if sc.Text() != "take" {
			continue
		}
		rc, d := rest.take()
		pc, _ := reports.take()
		var errs bytes.Buffer
		rest.printErrors(&errs)
		reports.printErrors(&errs)
		for _, line := range strings.Split(strings.TrimSpace(errs.String()), "\n") {
			if line != "" {
				fmt.Fprintln(out, "error "+line)
			}
		}
		fmt.Fprintf(out, "take %d %d %d %d %d %d %d %d\n", rc.ok, rc.limited, rc.failed, pc.ok, pc.limited, pc.capped, pc.failed, d.Nanoseconds())
	}
	rest.stop()
	reports.stop()
	return 0
}

// serverNote describes the server's memory and garbage collections over a
// phase: st0 from before it, st1 after.
func serverNote(s *scaleServer, st0, st1 serverStats) string {
	return fmt.Sprintf("server RSS %.1f MiB, heap in use %.1f MiB (next GC at %.1f MiB), %d GCs in the phase",
		float64(s.rss())/(1<<20), float64(st1.heapInuse)/(1<<20), float64(st1.nextGC)/(1<<20), st1.numGC-st0.numGC)
}

// paceNote says when the reads ran at the pace of the workspaces' limits
// rather than as fast as the server answered.
func paceNote(p phaseFigures, pc *pacer) string {
	if p.rate() >= 0.97*pc.rate() {
		return fmt.Sprintf(" (held at the pace of %s/s: the server had room for more)", thousands(int64(pc.rate())))
	}
	return ""
}

func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return math.NaN()
	}
	return float64(a) / float64(b)
}

// scaleSoak runs reads and reports for c.soak, printing the server's RSS
// and the reads' p99 per window; the reporting tenth moves to the next
// slice of workspaces every window, so that no job gets near its daily cap.
func scaleSoak(c scaleConfig, f *scaleFixture, server *scaleServer, reads *stream, readPacer *pacer, reporting, sets int, reportRate float64, nonce string, out io.Writer, v *scaleVerdicts) error {
	windows := max(1, int(c.soak/c.window))
	perJob := float64(windows) / float64(sets) * c.window.Seconds() / c.reportEvery.Seconds()
	fmt.Fprintf(out, "soak: %s in %d windows of %s: the reads, and %s reports/s from 1 workspace in %d (the reporting set moves to the next of %d slices each window: about %.0f reports per job in all)\n",
		c.soak, windows, c.window, thousands(int64(reportRate)), scaleReportFraction, sets, math.Ceil(perJob))
	if perJob+c.duration.Seconds()/c.reportEvery.Seconds()+1 > scaleJobDayBudget {
		fmt.Fprintf(out, "WARNING: the soak plans about %.0f reports per job in 24 hours: the daily cap of %d may bite\n", perJob, perJobPerDay)
	}
	rr := newScaleReports(f, reportSlice(f, reporting, 1%sets), nonce)
	reports := startStream("reports", server.addr, c.reportConns, newPacer(reportRate, reportBurst(reporting, f.ReportKeysPerWS, c.reportConns)), false, rr.builder)
	defer reports.stop()
	time.Sleep(c.warmup)
	reads.take()
	reports.take()
	prev, _ := server.stats()
	type windowFigures struct {
		reads, reports phaseFigures
		rss            uint64
		st             serverStats
	}
	var all []windowFigures
	start := time.Now()
	cpu0 := server.cpu()
	for k := range windows {
		time.Sleep(time.Until(start.Add(time.Duration(k+1) * c.window)))
		var wf windowFigures
		wf.reads.c, wf.reads.elapsed = reads.take()
		wf.reports.c, wf.reports.elapsed = reports.take()
		set := reportSlice(f, reporting, (k+2)%sets)
		rr.set.Store(&set)
		wf.rss = server.rss()
		wf.st, _ = server.stats()
		cpu := server.cpu()
		fmt.Fprintf(out, "  window %3d %s: reads %s/s p50 %s p99 %s, errors %d; reports %s/s, errors %d; server RSS %.1f MiB, heap in use %.1f MiB, live at the last GC %.1f MiB, %d GCs, %.2f cores, %d snapshots\n",
			k+1, time.Duration(k+1)*c.window, thousands(int64(wf.reads.rate())), fmtDur(wf.reads.c.lat.quantile(0.50)), fmtDur(wf.reads.c.lat.quantile(0.99)), wf.reads.c.failed,
			thousands(int64(wf.reports.rate())), wf.reports.c.failed, float64(wf.rss)/(1<<20), float64(wf.st.heapInuse)/(1<<20), float64(wf.st.liveHeap)/(1<<20), wf.st.numGC-prev.numGC,
			(cpu-cpu0).Seconds()/wf.reads.elapsed.Seconds(), wf.st.snapshots)
		prev = wf.st
		cpu0 = cpu
		all = append(all, wf)
	}
	reads.printErrors(out)
	reports.printErrors(out)
	first, last := all[0], all[len(all)-1]
	var maxRSS uint64
	var readErrs, reportErrs, recorded int64
	for _, w := range all {
		maxRSS = max(maxRSS, w.rss)
		readErrs += w.reads.c.failed
		reportErrs += w.reports.c.failed
		recorded += w.reports.c.ok
	}
	f.Added += recorded
	rssX := float64(last.rss) / float64(first.rss)
	p99X := ratio(last.reads.c.lat.quantile(0.99), first.reads.c.lat.quantile(0.99))
	fmt.Fprintf(out, "soak: RSS first window %.1f MiB, last %.1f MiB (×%.3f; highest ×%.3f); read p99 first %s, last %s (×%.2f); %s reports recorded in the windows, RSS grew %.0f B per recorded report (the state grows by each)\n",
		float64(first.rss)/(1<<20), float64(last.rss)/(1<<20), rssX, float64(maxRSS)/float64(first.rss),
		fmtDur(first.reads.c.lat.quantile(0.99)), fmtDur(last.reads.c.lat.quantile(0.99)), p99X, thousands(recorded),
		(float64(last.rss)-float64(first.rss))/float64(max(recorded, 1)))
	// The state grows by each report recorded, and RSS follows the
	// collector's goal (twice the live heap with GOGC=100), so "flat" is
	// judged on the live heap: what it gained per recorded report against
	// what a stored report costs.
	liveGrowth := (float64(last.st.liveHeap) - float64(first.st.liveHeap)) / float64(max(recorded, 1))
	// A job's first report after the restart grows its results (loaded
	// exactly sized) by a quarter, once: the growth is judged from the
	// window after which every reporting slice has had its turn.
	settled := min(sets, len(all)-1)
	var settledReports int64
	for _, w := range all[settled:] {
		settledReports += w.reports.c.ok
	}
	base := all[settled-1]
	if settled == 0 {
		base = first
	}
	settledGrowth := (float64(last.st.liveHeap) - float64(base.st.liveHeap)) / float64(max(settledReports, 1))
	fmt.Fprintf(out, "soak: live heap at the last GC first window %.1f MiB, last %.1f MiB: %.0f B per recorded report; from window %d (every reporting slice has had its turn, its jobs' results grown once) %.1f → %.1f MiB: %.0f B per recorded report (a stored report with its idempotency key costs about %d B)\n",
		float64(first.st.liveHeap)/(1<<20), float64(last.st.liveHeap)/(1<<20), liveGrowth, settled,
		float64(base.st.liveHeap)/(1<<20), float64(last.st.liveHeap)/(1<<20), settledGrowth, soakReportCost)
	v.add(settledGrowth <= 2*soakReportCost, fmt.Sprintf("soak: live heap flat but for the state's growth (≤ %d B per recorded report once every job reported, twice a report's cost)", 2*soakReportCost),
		fmt.Sprintf("%.0f B per report from window %d (%.1f → %.1f MiB; %.0f B over the whole soak; RSS %.1f → %.1f MiB, ×%.3f, with the collector's headroom)", settledGrowth, settled,
			float64(base.st.liveHeap)/(1<<20), float64(last.st.liveHeap)/(1<<20), liveGrowth, float64(first.rss)/(1<<20), float64(last.rss)/(1<<20), rssX))
	v.add(p99X <= 1+soakP99Tolerance, fmt.Sprintf("soak: read p99 flat (last window ≤ %.0f%% over the first)", soakP99Tolerance*100),
		fmt.Sprintf("×%.2f (%s → %s)", p99X, fmtDur(first.reads.c.lat.quantile(0.99)), fmtDur(last.reads.c.lat.quantile(0.99))))
	v.add(readErrs == 0 && reportErrs == 0, "soak within the limits", fmt.Sprintf("%d read errors, %d report errors (429s included)", readErrs, reportErrs))
	return nil
}

// --- Retention ---

// retentionStats is what the retention child measured.
type retentionStats struct {
	OpenNs     int64  `json:"open_ns"`
	HeapOpen   uint64 `json:"heap_open"` // right after recovery, as in a restart
	RSSOpen    uint64 `json:"rss_open"`
	HeapBefore uint64 `json:"heap_before"` // after the count, which keeps every job's encoded JSON

	RSSBefore  uint64 `json:"rss_before"`
	Results    int64  `json:"results"`     // before the snapshot
	Due        int64  `json:"due"`         // of them, older than the cut at the snapshot's start
	SnapshotNs int64  `json:"snapshot_ns"` // the snapshot that ran retention
	HeapAfter  uint64 `json:"heap_after"`
	RSSAfter   uint64 `json:"rss_after"`
	Kept       int64  `json:"kept"`
	KeptOld    int64  `json:"kept_old"` // kept results older than the cut: must be none
	OldestMs   int64  `json:"oldest_ms"`
	CutMs      int64  `json:"cut_ms"`
}

// scaleRetention restarts the state with 30 days of retention in a child,
// which takes a snapshot (running retention) and measures. A kept data
// directory is copied first, so that it keeps every result.
func scaleRetention(c scaleConfig, dir string, f *scaleFixture, out io.Writer, v *scaleVerdicts) error {
	work := dir
	if c.data != "" {
		tmp, err := os.MkdirTemp("", "backupmon-bench-scale-retention-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		start := time.Now()
		if err := copyDir(dir, tmp); err != nil {
			return fmt.Errorf("copy the state for retention: %w", err)
		}
		fmt.Fprintf(out, "retention: copied %s to %s in %s (the kept state stays whole)\n", dir, tmp, time.Since(start).Round(time.Millisecond))
		work = tmp
	}
	var s retentionStats
	var err error
	if c.inProcess {
		s, err = measureRetention(work, scaleRetentionDays)
	} else {
		var b []byte
		b, err = scaleChildOutput("retention", "-data", work, "-days", strconv.Itoa(scaleRetentionDays))
		if err == nil {
			if jerr := lastLineJSON(b, &s); jerr != nil {
				err = fmt.Errorf("retention child said %q: %w", b, jerr)
			}
		}
	}
	if err != nil {
		return err
	}
	dropped := s.Results - s.Kept
	fmt.Fprintf(out, "retention %d days (a child: engine.Open with RetentionDays %d, recovered in %s, then Engine.Snapshot in %s): %s results before, %s older than 30 days; %s dropped (%.1f%%), %s kept, %d kept older than the cut\n",
		scaleRetentionDays, scaleRetentionDays, time.Duration(s.OpenNs).Round(time.Millisecond), time.Duration(s.SnapshotNs).Round(time.Millisecond),
		thousands(s.Results), thousands(s.Due), thousands(dropped), 100*float64(dropped)/float64(max(s.Results, 1)), thousands(s.Kept), s.KeptOld)
	freedRSS := (float64(s.RSSBefore) - float64(s.RSSAfter)) / float64(max(dropped, 1))
	freedHeap := (float64(s.HeapBefore) - float64(s.HeapAfter)) / float64(max(dropped, 1))
	if s.Due == 0 {
		fmt.Fprintf(out, "  RSS %.1f MiB after recovery, %.1f MiB after the snapshot\n", float64(s.RSSOpen)/(1<<20), float64(s.RSSAfter)/(1<<20))
		v.add(s.KeptOld == 0, "retention at 30 days", fmt.Sprintf("no result was older than 30 days (-results %d): nothing to drop", f.ResultsPerJob))
		return nil
	}
	fmt.Fprintf(out, "  RSS %.1f MiB after recovery, %.1f MiB before the snapshot (after counting through the job views, which keep each job's JSON), %.1f MiB after; heap in use %.1f, %.1f and %.1f MiB: freed %.1f B of RSS and %.1f B of heap per dropped result (resolved alerts older than 30 days went too)\n",
		float64(s.RSSOpen)/(1<<20), float64(s.RSSBefore)/(1<<20), float64(s.RSSAfter)/(1<<20), float64(s.HeapOpen)/(1<<20), float64(s.HeapBefore)/(1<<20), float64(s.HeapAfter)/(1<<20), freedRSS, freedHeap)
	v.add(dropped >= s.Due && s.KeptOld == 0, "retention at 30 days drops every older result",
		fmt.Sprintf("%s of %s older than 30 days dropped (%s in all), %s kept, %d kept older than 30 days", thousands(min(dropped, s.Due)), thousands(s.Due), thousands(dropped), thousands(s.Kept), s.KeptOld))
	if perRes := retentionReference(f, s); perRes > 0 {
		v.add(freedRSS >= retentionFreedShare*perRes, fmt.Sprintf("retention frees ≥ %.0f%% of a result's RSS per dropped result", retentionFreedShare*100),
			fmt.Sprintf("%.1f B freed against %.1f B a result costs ((RSS after recovery − jobs-only RSS) ÷ results)", freedRSS, perRes))
	} else {
		v.add(s.RSSAfter < s.RSSBefore, "retention frees memory", fmt.Sprintf("RSS %.1f → %.1f MiB (no jobs-only figure to compare a result's cost with)", float64(s.RSSBefore)/(1<<20), float64(s.RSSAfter)/(1<<20)))
	}
	return nil
}

// retentionReference is what a result costs in RSS in the state the
// retention child opened: (its RSS after recovery − the jobs-only RSS) ÷
// results.
func retentionReference(f *scaleFixture, s retentionStats) float64 {
	if f.JobsOnly == nil || s.Results == 0 {
		return 0
	}
	return (float64(s.RSSOpen) - float64(f.JobsOnly.RSS)) / float64(s.Results)
}

// measureRetention opens the engine on dir with retention, measures,
// snapshots (which prunes) and measures again.
func measureRetention(dir string, days int) (retentionStats, error) {
	var s retentionStats
	runtime.GC()
	start := time.Now()
	eng, err := engine.Open(engine.Options{Dir: dir, Logger: benchLogger(nil), SnapshotEvery: never, SnapshotInterval: never, RetentionDays: days})
	if err != nil {
		return s, err
	}
	defer eng.Close()
	s.OpenNs = time.Since(start).Nanoseconds()
	s.HeapOpen, s.RSSOpen = settledMemory()
	// Counting first, so that the memory before and after the snapshot is
	// measured in the same conditions: the count reads every job's view,
	// which keeps the job's encoded JSON (about 1 KB a job) from then on.
	cut := time.Now().Add(-time.Duration(days) * 24 * time.Hour).UnixMilli()
	s.CutMs = cut
	if s.Results, s.Due, _, err = countResults(eng, cut); err != nil {
		return s, err
	}
	s.HeapBefore, s.RSSBefore = settledMemory()
	writeHeapProfile("before")
	stopProfile := startProfile(os.Getenv("BACKUPMON_BENCH_CPUPROFILE")) // diagnosis: the snapshot that prunes
	start = time.Now()
	err = eng.Snapshot()
	s.SnapshotNs = time.Since(start).Nanoseconds()
	stopProfile()
	if err != nil {
		return s, err
	}
	s.HeapAfter, s.RSSAfter = settledMemory()
	writeHeapProfile("after")
	s.Kept, s.KeptOld, s.OldestMs, err = countResults(eng, cut)
	return s, err
}

// writeHeapProfile writes the heap profile to $BACKUPMON_BENCH_HEAPPROFILE.<what>
// (diagnosis: where the memory retention keeps goes), if that is set.
func writeHeapProfile(what string) {
	path := os.Getenv("BACKUPMON_BENCH_HEAPPROFILE")
	if path == "" {
		return
	}
	if f, err := os.Create(path + "." + what); err == nil {
		pprof.WriteHeapProfile(f)
		f.Close()
	}
}

// settledMemory returns the heap in use and the RSS after a collection that
// returns free memory to the system.
func settledMemory() (heap, rss uint64) {
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse, procStatus("VmRSS")
}

// countResults counts every job's results (the admin job view's history),
// those received before cutMs, and the oldest one's time.
func countResults(eng *engine.Engine, cutMs int64) (n, older, oldest int64, err error) {
	wss := eng.Workspaces()
	var total, old atomic.Int64
	var oldestAll atomic.Int64
	oldestAll.Store(math.MaxInt64)
	if err := parallelDo(len(wss), 2*runtime.GOMAXPROCS(0), func(i int) error {
		jobs, err := eng.Jobs(wss[i].ID)
		if err != nil {
			return err
		}
		for _, j := range jobs {
			view, err := eng.JobDetail(wss[i].ID, j.ID, math.MaxInt32)
			if err != nil {
				return err
			}
			c, o, first := scanHistory(view.JSON, cutMs)
			total.Add(c)
			old.Add(o)
			for {
				cur := oldestAll.Load()
				if first >= cur || oldestAll.CompareAndSwap(cur, first) {
					break
				}
			}
		}
		return nil
	}); err != nil {
		return 0, 0, 0, fmt.Errorf("workspace %w", err)
	}
	return total.Load(), old.Load(), oldestAll.Load(), nil
}

// scanHistory counts the results in a job view's history, those received
// before cutMs, and returns the oldest one's time (MaxInt64 when none).
func scanHistory(b []byte, cutMs int64) (n, older, oldest int64) {
	oldest = math.MaxInt64
	i := bytes.Index(b, []byte(`"history":[`))
	if i < 0 {
		return 0, 0, oldest
	}
	b = b[i:]
	key := []byte(`"receivedAt":"`)
	for {
		i := bytes.Index(b, key)
		if i < 0 {
			return n, older, oldest
		}
		b = b[i+len(key):]
		end := bytes.IndexByte(b, '"')
		if end < 0 {
			return n, older, oldest
		}
		t, err := time.Parse("2006-01-02T15:04:05.000Z", string(b[:end]))
		if err != nil {
			continue
		}
		ms := t.UnixMilli()
		n++
		if ms < cutMs {
			older++
		}
		oldest = min(oldest, ms)
	}
}

// copyDir copies the regular files under src to dst.
func copyDir(src, dst string) error {
	return filepath.Walk(src, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if info.IsDir() {
			return os.MkdirAll(target, 0o750)
		}
		if !info.Mode().IsRegular() {
			return nil
		}
		in, err := os.Open(path)
		if err != nil {
			return err
		}
		defer in.Close()
		o, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, info.Mode().Perm())
		if err != nil {
			return err
		}
		if _, err := io.Copy(o, in); err != nil {
			o.Close()
			return err
		}
		return o.Close()
	})
}

// --- The child processes ---

func scaleChildOutput(args ...string) ([]byte, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, slices.Concat(scaleChildArgs, args)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("bench scale child %s: %w", strings.Join(args, " "), err)
	}
	return out, nil
}

// scaleChild is the child side: `bench scale child serve -data <dir>`
// serves the state (see scaleServe); `bench scale child noisy ...` is the
// noisy workspace's client (scaleNoisy); `bench scale child retention
// -data <dir> -days n` measures retention and prints its figures as JSON.
func scaleChild(args []string) int {
	if len(args) < 1 {
		fmt.Fprintln(os.Stderr, "usage: bench scale child serve|noisy|retention -data <dir> ...")
		return 2
	}
	switch args[0] {
	case "serve":
		return scaleServe(args[1:], os.Stdin, os.Stdout)
	case "noisy":
		return scaleNoisy(args[1:], os.Stdin, os.Stdout)
	case "retention":
		fs := flag.NewFlagSet("retention", flag.ContinueOnError)
		dir := fs.String("data", "", "")
		days := fs.Int("days", scaleRetentionDays, "")
		if err := fs.Parse(args[1:]); err != nil {
			return 2
		}
		s, err := measureRetention(*dir, *days)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench scale child retention:", err)
			return 1
		}
		b, _ := jsonx.Marshal(s)
		fmt.Println(string(b))
		return 0
	}
	fmt.Fprintf(os.Stderr, "bench scale child: unknown mode %q\n", args[0])
	return 2
}

// scaleServe opens the engine on an existing data directory as backupmon
// serve does (real clock, default snapshot settings, serve's retention,
// GOMAXPROCS one more than the CPUs, recovery's garbage returned at once)
// and serves the public APIs with the transport on 127.0.0.1:0. It prints
// "listening <addr> <recovery ns>", answers each line "stats" on in with
// "stats <snapshots> <snapshot ns> <log records> <heap in use> <GCs>
// <next GC>" (the first three since the last), each line "memlimit <bytes>"
// by setting its memory limit (as serve's --memory-limit) and echoing the
// line, and when in closes it shuts down, closes the engine and prints
// "closed <ns>".
func scaleServe(args []string, in io.Reader, out io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	dir := fs.String("data", "", "")
	procs := fs.Int("procs", 0, "")
	noTune := fs.Bool("no-tune", false, "leave GOMAXPROCS alone (in-process tests)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	switch {
	case *procs > 0:
		runtime.GOMAXPROCS(*procs)
	case !*noTune:
		tune.Procs()
	}
	stats := &engineStats{}
	start := time.Now()
	eng, err := engine.Open(engine.Options{Dir: *dir, Logger: benchLogger(stats), RetentionDays: serveRetentionDays, WAL: wal.Options{Observe: stats.observe}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "scale server:", err)
		return 1
	}
	opened := time.Since(start)
	debug.FreeOSMemory()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		eng.Close()
		fmt.Fprintln(os.Stderr, "scale server:", err)
		return 1
	}
	srv := transport.New(transport.Config{Engine: eng, Logger: benchLogger(nil), AdminToken: "bench-admin-token"})
	go srv.ServePublic(ln)
	stats.take()
	fmt.Fprintf(out, "listening %s %d\n", ln.Addr(), opened.Nanoseconds())
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1)) // in-process tests: the test's own limit back
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "memlimit "); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n <= 0 {
				fmt.Fprintf(out, "bad memory limit %q\n", v)
				continue
			}
			debug.SetMemoryLimit(n)
			fmt.Fprintf(out, "memlimit %d\n", n)
			continue
		}
		if sc.Text() == "stats" {
			_, records, _, _, snaps, snapTime := stats.take()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
			metrics.Read(live)
			fmt.Fprintf(out, "stats %d %d %d %d %d %d %d\n", snaps, snapTime.Nanoseconds(), records, ms.HeapInuse, ms.NumGC, ms.NextGC, live[0].Value.Uint64())
		}
	}
	return shutDown(srv, eng, out, "scale server")
}
