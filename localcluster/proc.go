package localcluster

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Proc is one child process of the cluster, started again with the same
// command line after a kill. Its output (both streams) goes to its log file.
type Proc struct {
	Name string
	Log  string // the log file's path

	bin  string
	args []string

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
}

// NewProc returns the process of bin with args, named name, its output
// going to the file log; Start starts it.
func NewProc(name, bin, log string, args ...string) *Proc {
	done := make(chan struct{})
	close(done)
	return &Proc{Name: name, Log: log, bin: bin, args: args, exited: done}
}

// Start starts the process and waits until it prints the line `ready`; it
// returns an error quoting the log's tail when the process exits first or
// timeout passes (the process is killed then).
func (p *Proc) Start(timeout time.Duration) error {
	if p.Running() {
		return fmt.Errorf("%s already runs", p.Name)
	}
	logf, err := os.OpenFile(p.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(p.bin, p.args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "BACKUPMON_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	// Its own process group, so that a Ctrl-C meant for the parent does not
	// stop the NATS servers before the nodes have handed their shards
	// over; and ended with the parent.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	cmd.Stderr = logf
	out, err := cmd.StdoutPipe()
	if err != nil {
		logf.Close()
		return err
	}
	fmt.Fprintf(logf, "--- %s start %s\n", time.Now().Format(time.RFC3339Nano), strings.Join(p.args, " "))
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("start %s: %w", p.Name, err)
	}
	exited, ready := make(chan struct{}), make(chan struct{})
	p.mu.Lock()
	p.cmd, p.exited = cmd, exited
	p.mu.Unlock()
	go func() {
		sc := bufio.NewScanner(out)
		seen := false
		for sc.Scan() {
			fmt.Fprintln(logf, sc.Text())
			if sc.Text() == "ready" && !seen {
				seen = true
				close(ready)
			}
		}
		io.Copy(logf, out)
		cmd.Wait()
		logf.Close()
		close(exited)
	}()
	select {
	case <-ready:
		return nil
	case <-exited:
		return fmt.Errorf("%s exited before it was ready:\n%s", p.Name, p.Tail(30))
	case <-time.After(timeout):
		p.Kill()
		return fmt.Errorf("%s not ready after %v:\n%s", p.Name, timeout, p.Tail(30))
	}
}

// Running reports whether the process runs (stopped counts as running).
func (p *Proc) Running() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// signal sends sig to the process if it runs.
func (p *Proc) signal(sig syscall.Signal) error {
	p.mu.Lock()
	cmd, exited := p.cmd, p.exited
	p.mu.Unlock()
	select {
	case <-exited:
		return errors.New(p.Name + " does not run")
	default:
	}
	return cmd.Process.Signal(sig)
}

// wait waits at most d for the process to end, and reports whether it did.
func (p *Proc) wait(d time.Duration) bool {
	p.mu.Lock()
	exited := p.exited
	p.mu.Unlock()
	select {
	case <-exited:
		return true
	case <-time.After(d):
		return false
	}
}

// Kill kills the process (SIGKILL) and waits for it.
func (p *Proc) Kill() {
	p.signal(syscall.SIGCONT)
	if p.signal(syscall.SIGKILL) == nil {
		p.wait(time.Minute)
	}
}

// Stop freezes the process (SIGSTOP); Cont lets it go on.
func (p *Proc) Stop() error { return p.signal(syscall.SIGSTOP) }

// Hangup asks the process to read its certificate again (SIGHUP).
func (p *Proc) Hangup() error { return p.signal(syscall.SIGHUP) }

// Cont lets a stopped process go on (SIGCONT).
func (p *Proc) Cont() error { return p.signal(syscall.SIGCONT) }

// Stacks makes the process write every goroutine's stack to its log and
// exit (SIGQUIT), and returns the goroutines whose stacks name any of
// funcs (all when none is given): what a test that found the process stuck
// shows. The process is gone afterwards.
func (p *Proc) Stacks(funcs ...string) string {
	p.signal(syscall.SIGCONT)
	if p.signal(syscall.SIGQUIT) != nil || !p.wait(10*time.Second) {
		p.Kill()
	}
	b, _ := os.ReadFile(p.Log)
	dump := string(b)
	if i := strings.LastIndex(dump, "SIGQUIT: quit"); i >= 0 {
		dump = dump[i:]
	}
	var out []string
	for g := range strings.SplitSeq(dump, "\n\n") {
		if !strings.HasPrefix(g, "goroutine ") {
			continue
		}
		for _, f := range funcs {
			if strings.Contains(g, f) {
				out = append(out, g)
				break
			}
		}
		if len(funcs) == 0 {
			out = append(out, g)
		}
	}
	return strings.Join(out, "\n\n")
}

// Term asks the process to stop (SIGTERM) and waits up to d; then it kills
// it. It returns an error when it had to.
func (p *Proc) Term(d time.Duration) error {
	p.signal(syscall.SIGCONT)
	if p.signal(syscall.SIGTERM) != nil {
		return nil
	}
	if !p.wait(d) {
		p.Kill()
		return fmt.Errorf("%s did not stop within %v of SIGTERM", p.Name, d)
	}
	return nil
}

// TermOrStacks asks the process to stop (SIGTERM) and waits up to d; a
// process still running then is dumped (Stacks, which ends it) and the
// error quotes the goroutines that name any of funcs (all when none is
// given): what a test shows of a node stuck in its shutdown.
func (p *Proc) TermOrStacks(d time.Duration, funcs ...string) error {
	p.signal(syscall.SIGCONT)
	if p.signal(syscall.SIGTERM) != nil || p.wait(d) {
		return nil
	}
	return fmt.Errorf("%s did not stop within %v of SIGTERM; its goroutines:\n%s", p.Name, d, p.Stacks(funcs...))
}

// Tail returns the last n lines of the process's log.
func (p *Proc) Tail(n int) string {
	b, _ := os.ReadFile(p.Log)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
