package main

// The processes of bench cluster: the backupmon binary it runs, the
// children it finds by their command line (localcluster starts them), and
// the single node it starts itself.

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// buildBinary builds backupmon/cmd/backupmon into dir and returns its path,
// or the build's error with its output.
func buildBinary(dir string) (string, error) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("build backupmon: the go command: %w", err)
	}
	bin := filepath.Join(dir, "backupmon")
	out, err := exec.Command(goTool, "build", "-buildvcs=false", "-o", bin, "backupmon/cmd/backupmon").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build backupmon/cmd/backupmon: %w\n%s", err, out)
	}
	return bin, nil
}

// childWithArg returns the pid of a child of this process whose command line
// holds the argument arg, or an error when there is none.
func childWithArg(arg string) (int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, fmt.Errorf("list processes: %w", err)
	}
	self := os.Getpid()
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || parentPID(pid) != self {
			continue
		}
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err == nil && slices.Contains(strings.Split(string(cmdline), "\x00"), arg) {
			return pid, nil
		}
	}
	return 0, fmt.Errorf("no child process with the argument %s", arg)
}

// parentPID returns the parent of process pid (field 4 of
// /proc/<pid>/stat), 0 when it cannot be read.
func parentPID(pid int) int {
	f := statFields(pid)
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}

// namedProc is a process the bench measures: its name in the output and
// its pid.
type namedProc struct {
	name string
	pid  int
}

// procCPU returns the user and system CPU time each process has used so
// far.
func procCPU(procs []namedProc) []time.Duration {
	out := make([]time.Duration, len(procs))
	for i, p := range procs {
		out[i] = pidCPU(p.pid)
	}
	return out
}

// cpuMeter measures the CPU of procs over a load phase: its total is the
// targetCPU of runLoad, which calls it at the start and at the end of the
// measured time; used then returns each process's share.
type cpuMeter struct {
	procs []namedProc
	marks [][]time.Duration
}

func (m *cpuMeter) total() time.Duration {
	s := procCPU(m.procs)
	m.marks = append(m.marks, s)
	var sum time.Duration
	for _, d := range s {
		sum += d
	}
	return sum
}

// used returns the CPU each process used between the first and the last
// call of total.
func (m *cpuMeter) used() []time.Duration {
	out := make([]time.Duration, len(m.procs))
	if len(m.marks) < 2 {
		return out
	}
	first, last := m.marks[0], m.marks[len(m.marks)-1]
	for i := range out {
		out[i] = last[i] - first[i]
	}
	return out
}

// rssLine returns "name RSS MiB" for each process, comma-separated, and
// their sum.
func rssLine(procs []namedProc) (string, uint64) {
	parts := make([]string, len(procs))
	var sum uint64
	for i, p := range procs {
		rss := pidStatus(p.pid, "VmRSS")
		sum += rss
		parts[i] = fmt.Sprintf("%s %.0f MiB", p.name, float64(rss)/(1<<20))
	}
	return strings.Join(parts, ", "), sum
}

// singleNode is a `backupmon serve` process of bench cluster, without
// --cluster, on its own data directory.
type singleNode struct {
	cmd                 *exec.Cmd
	publicURL, adminURL string
	exited              chan struct{}
}

// startSingleNode starts bin serve on data with free loopback ports and the
// admin token, its log in logPath, and waits up to timeout until it says
// ready; it returns why it did not (the log's tail), the process killed.
func startSingleNode(bin, data, logPath, token string, timeout time.Duration) (*singleNode, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "serve", "--data", data, "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--admin-token", token)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "BACKUPMON_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	cmd.Stderr = logf
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		logf.Close()
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start the single node: %w", err)
	}
	n := &singleNode{cmd: cmd, exited: make(chan struct{})}
	// Buffered: the few lines before ready are all read; later ones, once
	// nobody reads, are only logged.
	lines := make(chan string, 256)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			fmt.Fprintln(logf, sc.Text())
			select {
			case lines <- sc.Text():
			default:
			}
		}
		cmd.Wait()
		logf.Close()
		close(n.exited)
	}()
	deadline := time.After(timeout)
	for {
		select {
		case line := <-lines:
			if v, ok := strings.CutPrefix(line, "public listening on "); ok {
				n.publicURL = v
			}
			if v, ok := strings.CutPrefix(line, "admin listening on "); ok {
				n.adminURL = v
			}
			if line == "ready" {
				if n.publicURL == "" || n.adminURL == "" {
					n.kill()
					return nil, errors.New("the single node said ready before its listeners' addresses")
				}
				return n, nil
			}
		case <-n.exited:
			return nil, fmt.Errorf("the single node exited before it was ready:\n%s", tail(logPath, 20))
		case <-deadline:
			n.kill()
			return nil, fmt.Errorf("the single node not ready after %v:\n%s", timeout, tail(logPath, 20))
		}
	}
}

func (n *singleNode) pid() int { return n.cmd.Process.Pid }

// stop asks the node to stop (SIGTERM: final snapshot) and waits up to d;
// then it kills it and says so.
func (n *singleNode) stop(d time.Duration) error {
	n.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-n.exited:
		return nil
	case <-time.After(d):
		n.kill()
		return fmt.Errorf("the single node did not stop within %v of SIGTERM", d)
	}
}

func (n *singleNode) kill() {
	n.cmd.Process.Kill()
	<-n.exited
}

// tail returns the last n lines of the file at path.
func tail(path string, n int) string {
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// perfRecord is a running `perf record` of some processes.
type perfRecord struct {
	cmd  *exec.Cmd
	path string
	out  bytes.Buffer
}

// startPerf profiles procs (perf record -g at 499 Hz, their pids in the
// data) into path for d; wait says how it went. Diagnosis only: perf takes
// CPU of its own from the machine the load runs on.
func startPerf(path string, procs []namedProc, d time.Duration) *perfRecord {
	pids := make([]string, len(procs))
	for i, p := range procs {
		pids[i] = strconv.Itoa(p.pid)
	}
	r := &perfRecord{path: path}
	r.cmd = exec.Command("perf", "record", "-q", "-F", "499", "-g", "-p", strings.Join(pids, ","), "-o", path, "--", "sleep", strconv.FormatFloat(d.Seconds(), 'f', 3, 64))
	r.cmd.Stdout, r.cmd.Stderr = &r.out, &r.out
	if err := r.cmd.Start(); err != nil {
		r.cmd = nil
		fmt.Fprintf(&r.out, "%v", err)
	}
	return r
}

// wait waits for the profile and returns a line saying where it is (and
// how to read it), or why there is none.
func (r *perfRecord) wait() string {
	if r.cmd == nil || r.cmd.Wait() != nil {
		return fmt.Sprintf("perf record failed: %s", strings.TrimSpace(r.out.String()))
	}
	return fmt.Sprintf("perf profile %s (perf report -i %s --no-children --sort pid,sym)", r.path, r.path)
}
