package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"backupmon/engine"
	"backupmon/jsonx"
	"backupmon/wal"
)

// layout says how many of each thing the fixture holds. Job g and key k
// belong to workspace g%workspaces and k%workspaces, so that request i can
// use job i%jobs and a key of the same workspace (see pick).
type layout struct {
	workspaces    int
	clientsPerWS  int
	jobsPerWS     int
	keysPerWS     int    // report keys, or keyType keys
	keyType       string // "" or "report": report keys; "rest": REST keys with every scope
	resultsPerJob int    // past results per job, one a day up to the last hours, all ok
	alertsPerWS   int    // jobs per workspace whose last result failed, which leaves an unresolved alert
	parallel      int    // workspaces set up at once
	devicePerJob  bool
	workspaceName string
}

func (l layout) jobs() int { return l.workspaces * l.jobsPerWS }
func (l layout) keys() int { return l.workspaces * l.keysPerWS }

// fixture is what setUp made: ids and secrets, indexed as layout says.
type fixture struct {
	layout
	wsIDs   []string
	jobIDs  []string // global job index g: workspace g%workspaces
	secrets []string // global key index k: workspace k%workspaces
}

// pick returns the job and the key request i uses: every job gets one
// request in each run of len(jobIDs), every key one in each run of
// len(secrets), and the key always belongs to the job's workspace.
func (f *fixture) pick(i uint64) (job, key int) {
	w := uint64(f.workspaces)
	job = int(i % uint64(len(f.jobIDs)))
	key = int(i%w + w*((i/w)%uint64(f.keysPerWS)))
	return job, key
}

// setUp creates the fixture's workspaces, clients, jobs and keys through the
// engine's commands, many workspaces at once so that the log's group commit
// shares the fsyncs.
func setUp(eng *engine.Engine, l layout) (*fixture, error) {
	f := &fixture{layout: l, wsIDs: make([]string, l.workspaces), jobIDs: make([]string, l.jobs()), secrets: make([]string, l.keys())}
	if err := parallelDo(l.workspaces, l.parallel, func(w int) error {
		return f.setUpWorkspace(eng, w)
	}); err != nil {
		return f, fmt.Errorf("workspace %w", err)
	}
	return f, nil
}

func (f *fixture) setUpWorkspace(eng *engine.Engine, w int) error {
	ws, err := eng.CreateWorkspace(engine.WorkspaceInput{
		Name: engine.Some(fmt.Sprintf("%s %d", f.workspaceName, w)),
		Plan: engine.Some("pro"),
	})
	if err != nil {
		return err
	}
	f.wsIDs[w] = ws.ID
	clients, err := createClients(eng, ws.ID, w, f.clientsPerWS)
	if err != nil {
		return err
	}
	for m := range f.jobsPerWS {
		host := fmt.Sprintf("host-%d-%d", w, m%len(clients))
		if f.devicePerJob {
			host = fmt.Sprintf("host-%d-%d", w, m)
		}
		jv, err := createServerJob(eng, ws.ID, clients[m%len(clients)], "generic", fmt.Sprintf("Nightly backup %d", m), host, 1440, 120)
		if err != nil {
			return err
		}
		f.jobIDs[w+f.workspaces*m] = jv.ID
	}
	if err := f.importResults(eng, ws.ID, w); err != nil {
		return err
	}
	keyType := f.keyType
	if keyType == "" {
		keyType = "report"
	}
	for m := range f.keysPerWS {
		kv, err := eng.CreateKey(ws.ID, engine.KeyInput{Name: engine.Some(fmt.Sprintf("Bench %s key %d", keyType, m)), Type: engine.Some(keyType)})
		if err != nil {
			return err
		}
		f.secrets[w+f.workspaces*m] = kv.Key
	}
	return nil
}

// stateFlags are the flags of the commands that build a large state
// through setUp (recovery, scale): its size, and how many workspaces or jobs
// are built at once.
type stateFlags struct {
	workspaces, clientsPerWS, jobsPerWS, resultsPerJob int
	parallel                                           int
}

// register defines -workspaces (whose help is workspacesHelp), -clients,
// -jobs and -results with the defaults in def, the help of -results ending
// with resultsNote, and -parallel.
func (s *stateFlags) register(fs *flag.FlagSet, def stateFlags, workspacesHelp, resultsNote string) {
	fs.IntVar(&s.workspaces, "workspaces", def.workspaces, workspacesHelp)
	fs.IntVar(&s.clientsPerWS, "clients", def.clientsPerWS, "clients per workspace")
	fs.IntVar(&s.jobsPerWS, "jobs", def.jobsPerWS, "jobs per workspace")
	fs.IntVar(&s.resultsPerJob, "results", def.resultsPerJob, "results per job (one a day, ending yesterday"+resultsNote+")")
	fs.IntVar(&s.parallel, "parallel", 128, "workspaces or jobs built at once")
}

// createClients creates n clients (at least one), "Client <w>-<i>", in
// workspace wsID, the w-th of the fixture, and returns their ids, or the
// engine's error.
func createClients(eng *engine.Engine, wsID string, w, n int) ([]string, error) {
	clients := make([]string, max(n, 1))
	for i := range clients {
		cv, err := eng.CreateClient(wsID, engine.ClientInput{Name: engine.Some(fmt.Sprintf("Client %d-%d", w, i))})
		if err != nil {
			return nil, err
		}
		clients[i] = cv.ID
	}
	return clients, nil
}

// createServerJob creates a job of vendor named name in workspace wsID, for
// client clientID, backing up the server host, expected every interval
// minutes with grace minutes more, and returns its view, or the engine's
// error.
func createServerJob(eng *engine.Engine, wsID, clientID, vendor, name, host string, interval, grace int64) (engine.JobView, error) {
	return eng.CreateJob(wsID, engine.JobInput{
		ClientID: engine.Some(clientID),
		Name:     engine.Some(name),
		Vendor:   engine.Some(vendor),
		Device:   engine.Some(engine.DeviceInput{Name: engine.Some("Server " + host), Type: engine.Some("server"), Hostname: engine.Some(host)}),
		Schedule: engine.Some(engine.ScheduleInput{IntervalMinutes: engine.Some(interval), GraceMinutes: engine.Some(grace)}),
	})
}

// importResults gives each job of workspace w its past results: one a day,
// the last 2 to 12 hours ago (so that the job is healthy), every one ok but
// the last of the first alertsPerWS jobs, which failed and leaves an
// unresolved alert.
func (f *fixture) importResults(eng *engine.Engine, wsID string, w int) error {
	if f.resultsPerJob <= 0 {
		return nil
	}
	now := time.Now()
	list := make([]engine.ImportInput, f.resultsPerJob)
	for m := range f.jobsPerWS {
		last := now.Add(-2*time.Hour - time.Duration(m%600)*time.Minute)
		for r := range list {
			list[r] = engine.ImportInput{
				ReceivedAt: last.Add(-time.Duration(f.resultsPerJob-1-r) * 24 * time.Hour),
				Status:     engine.ReportOK, DurationSeconds: int64(600 + (w+m+r)%3600), SizeBytes: int64(1<<30 + (m%1000)<<20),
				Source: "api:bench",
			}
		}
		if m < f.alertsPerWS {
			list[len(list)-1].Status = engine.ReportFailed
		}
		if err := eng.ImportReports(wsID, f.jobIDs[w+f.workspaces*m], list); err != nil {
			return err
		}
	}
	return nil
}

// engineStats counts what the engine's log and snapshots did, from the
// log's Observe hook and the engine's "snapshot written" log lines.
type engineStats struct {
	mu        sync.Mutex
	batches   int64
	records   int64
	syncTotal time.Duration
	sync      hist

	snapshots    atomic.Int64
	snapshotTime atomic.Int64 // nanoseconds
	replayed     atomic.Int64 // records replayed by the last Open
}

func (s *engineStats) observe(records int, sync time.Duration) {
	s.mu.Lock()
	s.batches++
	s.records += int64(records)
	s.syncTotal += sync
	s.sync.record(sync)
	s.mu.Unlock()
}

// take returns the counts so far and starts again from zero.
func (s *engineStats) take() (batches, records int64, p50, p99 time.Duration, snaps int64, snapTime time.Duration) {
	s.mu.Lock()
	batches, records, p50, p99 = s.batches, s.records, s.sync.quantile(0.50), s.sync.quantile(0.99)
	s.batches, s.records, s.syncTotal, s.sync = 0, 0, 0, hist{}
	s.mu.Unlock()
	return batches, records, p50, p99, s.snapshots.Swap(0), time.Duration(s.snapshotTime.Swap(0))
}

// statsHandler passes warnings and errors to stderr and counts snapshots.
type statsHandler struct {
	out   slog.Handler
	stats *engineStats
}

func (h statsHandler) Enabled(_ context.Context, l slog.Level) bool { return true }

func (h statsHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == "snapshot written" {
		h.stats.snapshots.Add(1)
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "elapsed" {
				h.stats.snapshotTime.Add(int64(a.Value.Duration()))
			}
			return true
		})
	}
	if r.Message == "engine recovered" {
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "replayed" {
				h.stats.replayed.Store(a.Value.Int64())
			}
			return true
		})
	}
	if r.Level >= slog.LevelWarn {
		return h.out.Handle(ctx, r)
	}
	return nil
}

func (h statsHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return statsHandler{out: h.out.WithAttrs(as), stats: h.stats}
}

func (h statsHandler) WithGroup(name string) slog.Handler {
	return statsHandler{out: h.out.WithGroup(name), stats: h.stats}
}

// benchLogger returns a logger that shows warnings and errors only and
// feeds stats (which may be nil).
func benchLogger(stats *engineStats) *slog.Logger {
	out := slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})
	if stats == nil {
		return slog.New(out)
	}
	return slog.New(statsHandler{out: out, stats: stats})
}

// openEngine opens an engine on dir with the real clock. A log failure
// stops the process, as in the server.
func openEngine(dir string, stats *engineStats, snapshotEvery uint64, noSync bool) (*engine.Engine, error) {
	opts := engine.Options{Dir: dir, Logger: benchLogger(stats), SnapshotEvery: snapshotEvery, WAL: wal.Options{NoSync: noSync}}
	if stats != nil {
		opts.WAL.Observe = stats.observe
	}
	return engine.Open(opts)
}

// dataDir returns dir (created, and required to be empty) or, when dir is
// "", a new temporary directory; cleanup removes a temporary one.
func dataDir(dir, pattern string) (path string, cleanup func(), err error) {
	if dir == "" {
		path, err = os.MkdirTemp("", pattern)
		if err != nil {
			return "", nil, err
		}
		return path, func() { os.RemoveAll(path) }, nil
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return "", nil, err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", nil, err
	}
	if len(entries) > 0 {
		return "", nil, errors.New(dir + " is not empty: the bench needs a fresh data directory")
	}
	return dir, func() {}, nil
}

// startLoadRun opens the data directory of a load run of bench name (see
// dataDir) and prints the run's first line: what it measures, the load
// generator's GOMAXPROCS and the directory; and a warning when the
// server's log skips fsync. It returns dataDir's error.
func startLoadRun(out io.Writer, name, data, what string, noSync bool) (dir string, cleanup func(), err error) {
	dir, cleanup, err = dataDir(data, "backupmon-bench-"+name+"-")
	if err != nil {
		return "", nil, err
	}
	fmt.Fprintf(out, "bench %s: %s; load generator GOMAXPROCS %d; data %s\n", name, what, runtime.GOMAXPROCS(0), dir)
	if noSync {
		fmt.Fprintln(out, "WARNING: -nosync: the server's log does not fsync; these figures are not of the durable path")
	}
	return dir, cleanup, nil
}

// readJSON decodes the JSON file at path into v; it returns the read or
// decode error.
func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return jsonx.Unmarshal(b, v)
}

// lastLineJSON decodes the last line of a child process's output, its
// answer, into v; it returns the decode error.
func lastLineJSON(out []byte, v any) error {
	out = bytes.TrimSpace(out)
	return jsonx.Unmarshal(bytes.TrimSpace(out[bytes.LastIndexByte(out, '\n')+1:]), v)
}

// thousands formats n with thin separators: 1234567 → 1,234,567.
func thousands(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
