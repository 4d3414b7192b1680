package main

// The targets of `bench report` run in child processes of their own (this
// same binary, started with the hidden command report-target), so that the
// load generator, the server and the bare handler each have their own Go
// runtime, as a real client and a real server would: the server's runtime
// settings and its garbage are its own, and a blocking fsync in the server
// leaves the CPU to the other processes.

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"strconv"
	"strings"
	"time"

	"backupmon/engine"
	"backupmon/jsonx"
	"backupmon/transport"
	"backupmon/tune"
)

const targetChildCmd = "report-target"

// fixtureFile is where the server child writes the ids and secrets the load
// generator needs.
const fixtureFile = "bench-fixture.json"

type fixtureJSON struct {
	Layout struct {
		Workspaces, ClientsPerWS, JobsPerWS, KeysPerWS int
		KeyType                                        string
		ResultsPerJob, AlertsPerWS                     int
	}
	WorkspaceIDs, JobIDs, Secrets []string
	SetUpMillis                   int64
}

// targetChild serves one target until its standard input closes: "server"
// (engine and transport as `backupmon serve` wires them, with the fixture
// set up through the engine's commands: "report", report keys for bench
// report, or "read", REST keys and past results for bench read) or "bare"
// (fixed answers: the Report API's ok answer, or those of -answers). It prints
// "listening <addr>" when ready; a line "stats" on standard input makes the
// server print its log statistics since the last such line.
func targetChild(args []string) int {
	fs := flag.NewFlagSet(targetChildCmd, flag.ContinueOnError)
	kind := fs.String("kind", "server", "server or bare")
	dir := fs.String("data", "", "data directory (server)")
	workspaces := fs.Int("workspaces", 1000, "")
	jobsPerWS := fs.Int("jobs-per-ws", 1, "")
	keysPerWS := fs.Int("keys-per-ws", 1, "")
	snapshotEvery := fs.Uint64("snapshot-every", 0, "")
	noSync := fs.Bool("nosync", false, "")
	procs := fs.Int("procs", 0, "GOMAXPROCS (0: the server's own choice)")
	cpuProfile := fs.String("cpuprofile", "", "")
	fixtureKind := fs.String("fixture", "report", "report or read (server)")
	clientsPerWS := fs.Int("clients-per-ws", 1, "")
	resultsPerJob := fs.Int("results-per-job", 0, "")
	alertsPerWS := fs.Int("alerts-per-ws", 0, "")
	answersFile := fs.String("answers", "", "a JSON list of bareAnswer (bare); default: the Report API's ok answer")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	switch {
	case *procs > 0:
		runtime.GOMAXPROCS(*procs)
	case *kind == "server":
		tune.Procs() // as backupmon serve does
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench target:", err)
		return 1
	}
	in := bufio.NewScanner(os.Stdin)
	if *kind == "bare" {
		answers := []bareAnswer{okAnswer}
		if *answersFile != "" {
			err := readJSON(*answersFile, &answers)
			if err == nil && len(answers) == 0 {
				err = errors.New("no answers")
			}
			if err != nil {
				fmt.Fprintln(os.Stderr, "bench target: answers:", err)
				return 1
			}
		}
		srv := bareServer(answers)
		go srv.Serve(ln)
		stopProfile := startProfile(*cpuProfile)
		fmt.Printf("listening %s\n", ln.Addr())
		for in.Scan() {
		}
		stopProfile()
		srv.Shutdown()
		return 0
	}

	stats := &engineStats{}
	eng, err := openEngine(*dir, stats, *snapshotEvery, *noSync)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench target:", err)
		return 1
	}
	l := layout{workspaces: *workspaces, clientsPerWS: 1, jobsPerWS: *jobsPerWS, keysPerWS: *keysPerWS, parallel: 128, workspaceName: "Bench MSP"}
	switch *fixtureKind {
	case "report":
	case "read":
		l.keyType, l.clientsPerWS, l.resultsPerJob, l.alertsPerWS = "rest", *clientsPerWS, *resultsPerJob, *alertsPerWS
	default:
		fmt.Fprintf(os.Stderr, "bench target: unknown fixture %q\n", *fixtureKind)
		return 2
	}
	start := time.Now()
	f, err := setUp(eng, l)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench target: set up:", err)
		return 1
	}
	// The set-up's records are behind a snapshot before the load starts, so
	// the snapshot they call for is not taken during the measurement.
	if err := eng.Snapshot(); err != nil {
		fmt.Fprintln(os.Stderr, "bench target: snapshot after set-up:", err)
		return 1
	}
	var fj fixtureJSON
	fj.Layout.Workspaces, fj.Layout.ClientsPerWS, fj.Layout.JobsPerWS, fj.Layout.KeysPerWS = l.workspaces, l.clientsPerWS, l.jobsPerWS, l.keysPerWS
	fj.Layout.KeyType, fj.Layout.ResultsPerJob, fj.Layout.AlertsPerWS = l.keyType, l.resultsPerJob, l.alertsPerWS
	fj.WorkspaceIDs, fj.JobIDs, fj.Secrets = f.wsIDs, f.jobIDs, f.secrets
	fj.SetUpMillis = time.Since(start).Milliseconds()
	b, _ := jsonx.Marshal(fj)
	if err := os.WriteFile(filepath.Join(*dir, fixtureFile), b, 0o600); err != nil {
		fmt.Fprintln(os.Stderr, "bench target:", err)
		return 1
	}
	stats.take()
	srv := transport.New(transport.Config{Engine: eng, Logger: benchLogger(nil), AdminToken: "bench-admin-token"})
	go srv.ServePublic(ln)
	stopProfile := startProfile(*cpuProfile)
	fmt.Printf("listening %s\n", ln.Addr())
	for in.Scan() {
		if path, ok := strings.CutPrefix(in.Text(), "trace "); ok {
			go writeTrace(path, 2*time.Second)
		}
		if in.Text() == "stats" {
			batches, records, p50, p99, snaps, snapTime := stats.take()
			fmt.Printf("stats %d %d %d %d %d %d\n", batches, records, p50, p99, snaps, snapTime)
		}
	}
	stopProfile()
	return shutDown(srv, eng, os.Stdout, "bench target")
}

// shutDown stops a served target once its input has closed: the server
// (its requests given 30 seconds to finish), then the engine (final
// snapshot); it prints "closed <nanoseconds>", how long the engine's close
// took, for closeInput, and returns the exit code: 1, the error printed
// after who, when the close failed.
func shutDown(srv *transport.Server, eng *engine.Engine, out io.Writer, who string) int {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv.Shutdown(ctx)
	closeStart := time.Now()
	if err := eng.Close(); err != nil {
		fmt.Fprintf(os.Stderr, "%s: close: %v\n", who, err)
		return 1
	}
	fmt.Fprintf(out, "closed %d\n", time.Since(closeStart).Nanoseconds())
	return 0
}

// target is a running child process serving one target.
type target struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Scanner
	addr  string
}

// startTarget starts a target child and waits until it listens.
func startTarget(args ...string) (*target, error) {
	return startListening(fmt.Sprintf("target %v", args), append([]string{targetChildCmd}, args...))
}

// startListening starts a child of this program with args, serving a target
// called name in errors, and waits for its first line, "listening <addr>";
// it returns the child's error or what else it said, the child killed.
func startListening(name string, args []string) (*target, error) {
	cmd, stdin, out, err := startSelf(args)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	t := &target{cmd: cmd, stdin: stdin, out: out}
	line, err := t.line()
	if err != nil {
		t.kill()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	addr, ok := strings.CutPrefix(line, "listening ")
	if !ok {
		t.kill()
		return nil, fmt.Errorf("%s said %q", name, line)
	}
	t.addr = addr
	return t, nil
}

// startSelf starts this program again with args, its standard error this
// one's, and returns the running command, its standard input and a scanner
// of its standard output, or why it could not start.
func startSelf(args []string) (*exec.Cmd, io.WriteCloser, *bufio.Scanner, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, nil, nil, err
	}
	cmd := exec.Command(self, args...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, nil, err
	}
	return cmd, stdin, bufio.NewScanner(stdout), nil
}

func (t *target) line() (string, error) { return nextLine(t.out, "target exited") }

// nextLine returns the next line a child process wrote, the scanner's error,
// or an error saying gone once the process has closed its output.
func nextLine(out *bufio.Scanner, gone string) (string, error) {
	if !out.Scan() {
		if err := out.Err(); err != nil {
			return "", err
		}
		return "", errors.New(gone)
	}
	return out.Text(), nil
}

// stats asks the server target for its log statistics since the last call.
func (t *target) stats() (batches, records int64, p50, p99 time.Duration, snaps int64, snapTime time.Duration, err error) {
	if _, err = io.WriteString(t.stdin, "stats\n"); err != nil {
		return
	}
	line, err := t.line()
	if err != nil {
		return
	}
	var n [6]int64
	f := strings.Fields(line)
	if len(f) != 7 || f[0] != "stats" {
		err = fmt.Errorf("target said %q", line)
		return
	}
	for i := range n {
		n[i], _ = strconv.ParseInt(f[i+1], 10, 64)
	}
	return n[0], n[1], time.Duration(n[2]), time.Duration(n[3]), n[4], time.Duration(n[5]), nil
}

// stop closes the target's input, which makes it shut down, and waits. For
// the server it returns how long the engine's close (final snapshot) took.
func (t *target) stop() (time.Duration, error) {
	closed := closeInput(t.stdin, t.out)
	return closed, t.cmd.Wait()
}

// finish stops the target t (named what in the error), prints how long
// its engine took to close, and, when errors is not 0, how many of the
// run's items (unit: requests, transactions) failed.
func (t *target) finish(out io.Writer, what string, errors int64, unit string) error {
	closed, err := t.stop()
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	fmt.Fprintf(out, "engine closed (final snapshot) in %s\n", closed.Round(time.Millisecond))
	if errors > 0 {
		fmt.Fprintf(out, "ERRORS: %d %s failed (see above)\n", errors, unit)
	}
	return nil
}

// closeInput closes a child's input, which makes it shut down, and reads
// its output to the end; it returns the time of its last line "closed
// <nanoseconds>" (how long the engine's close took), 0 without one.
func closeInput(stdin io.Closer, out *bufio.Scanner) time.Duration {
	stdin.Close()
	var closed time.Duration
	for out.Scan() {
		if v, ok := strings.CutPrefix(out.Text(), "closed "); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			closed = time.Duration(n)
		}
	}
	return closed
}

func (t *target) kill() {
	t.cmd.Process.Kill()
	t.cmd.Wait()
}

// cpu returns the user and system CPU time the target process has used so
// far.
func (t *target) cpu() time.Duration { return pidCPU(t.cmd.Process.Pid) }

// pidCPU returns the user and system CPU time process pid has used so far
// (fields 14 and 15 of /proc/<pid>/stat, in clock ticks of 10 ms); 0 when
// it cannot be read.
func pidCPU(pid int) time.Duration {
	f := statFields(pid)
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond
}

// statFields returns the fields of /proc/<pid>/stat after the command name
// (which is in parentheses and may hold spaces): the first is the state,
// field 3; nil when it cannot be read.
func statFields(pid int) []string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(s[i+1:])
}

// startProfile writes a CPU profile to path (when not empty) until the
// returned function is called.
func startProfile(path string) func() {
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err == nil {
		err = pprof.StartCPUProfile(f)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench target: cpu profile:", err)
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}

// writeTrace writes a runtime execution trace of the next d to path.
func writeTrace(path string, d time.Duration) {
	f, err := os.Create(path)
	if err == nil {
		err = trace.Start(f)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench target: trace:", err)
		return
	}
	time.Sleep(d)
	trace.Stop()
	f.Close()
}

// startTrace asks the target for a 2-second execution trace into path.
func (t *target) startTrace(path string) {
	io.WriteString(t.stdin, "trace "+path+"\n")
}
