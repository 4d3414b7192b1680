package testserver

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"backupmon/internal/syncbuf"
)

// Child-process timeouts: generous for a loaded CI machine, short enough
// that a hang fails fast.
const (
	ChildStartTimeout = 20 * time.Second
	ChildStopTimeout  = 20 * time.Second
)

// The backupmon binary, built on first use by Binary into binDir, which
// Main removes at the end.
var (
	binOnce  sync.Once
	binDir   string
	binPath  string
	binError error
)

// Main runs the tests of a package that starts children (call it from
// TestMain) and removes the binary Binary built.
func Main(m interface{ Run() int }) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// Binary returns the path of the backupmon binary, building it on the first
// call (`go build`, without -race, into a temporary directory outside the
// repository), or fails t.
func Binary(t testing.TB) string {
	t.Helper()
	binOnce.Do(func() {
		binDir, binError = os.MkdirTemp("", "backupmon-bin-")
		if binError == nil {
			binPath, binError = build(binDir)
		}
	})
	if binError != nil {
		t.Fatalf("the backupmon binary did not build: %v", binError)
	}
	return binPath
}

// build runs `go build -o <dir>/backupmon backupmon/cmd/backupmon` from the
// test's working directory (inside the module) and returns the binary.
func build(dir string) (string, error) {
	bin := filepath.Join(dir, "backupmon")
	// -buildvcs=false: go test does not stamp either, and stamping fails
	// in checkouts git will not read (another owner, no git).
	cmd := exec.Command(GoTool(), "build", "-buildvcs=false", "-o", bin, "backupmon/cmd/backupmon")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build -o %s backupmon/cmd/backupmon: %v\n%s", bin, err, out)
	}
	return bin, nil
}

// GoTool returns the go command of the toolchain running the tests.
func GoTool() string {
	if root := os.Getenv("GOROOT"); root != "" {
		p := filepath.Join(root, "bin", "go")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return "go"
}

// Child is one `backupmon serve` process; its Client talks to the listeners
// it printed.
type Child struct {
	*Client
	Name     string // for messages: "cycle 2" etc.
	DataDir  string
	Stdout   *syncbuf.Buffer
	Stderr   *syncbuf.Buffer
	SMTPAddr string // host:port of the SMTP listener; "" when off
	Cmd      *exec.Cmd

	exited  chan struct{} // closed once the process has been waited for
	exitErr error         // Wait's error; read after exited is closed
	quoted  bool          // stderr is in an error already: no dump at the end
}

// ChildArgs are the serve flags of every child (the data directory, both
// listeners on loopback, the admin token); extra are appended.
func ChildArgs(dataDir string, extra ...string) []string {
	args := []string{"serve", "--data", dataDir, "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--admin-token", AdminToken}
	return append(args, extra...)
}

// StartChild starts the server on dataDir and waits until it is ready; it
// fails t (with the child's stderr) when the child does not get there.
func StartChild(t testing.TB, name, dataDir string, extra ...string) *Child {
	t.Helper()
	c, err := LaunchChild(t, name, dataDir, nil, extra...)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return c
}

// LaunchChild starts the server, its command line run through wrap (a shell
// setting a resource limit, say) when wrap is not nil, and waits until it
// prints `ready` (nil error) or exits (an *ExitError, stderr included) or
// times out. The child is killed at the end of the test if it still runs.
func LaunchChild(t testing.TB, name, dataDir string, wrap func(argv []string) []string, extra ...string) (*Child, error) {
	t.Helper()
	bin := Binary(t)
	c := &Child{Client: &Client{T: t, Token: AdminToken, HTTP: newHTTPClient()}, Name: name, DataDir: dataDir,
		Stdout: &syncbuf.Buffer{}, Stderr: &syncbuf.Buffer{}, exited: make(chan struct{})}
	argv := append([]string{bin}, ChildArgs(dataDir, extra...)...)
	if wrap != nil {
		argv = wrap(argv)
	}
	c.Cmd = exec.Command(argv[0], argv[1:]...)
	// No BACKUPMON_* from the environment: the flags say everything.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "BACKUPMON_") {
			c.Cmd.Env = append(c.Cmd.Env, kv)
		}
	}
	c.Cmd.Stderr = c.Stderr
	pipe, err := c.Cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("%s: stdout: %w", name, err)
	}
	if err := c.Cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	// Cleanups run last first: the kill, then the dump.
	t.Cleanup(func() {
		if t.Failed() && !c.quoted {
			t.Logf("%s (data %s) stderr tail:\n%s", name, dataDir, Tail(c.Stderr.String(), 25))
		}
	})
	t.Cleanup(c.Kill)

	readyc := make(chan struct{})
	go c.readStdout(pipe, readyc)
	select {
	case <-readyc:
		if c.PublicURL == "" || c.AdminURL == "" {
			c.Kill()
			return nil, fmt.Errorf("%s printed ready without both listener lines; stdout:\n%s", name, c.Stdout.String())
		}
		// stderr arrives through its own pipe: wait for the recovery line,
		// logged before ready, so that checks of the start-up log see it.
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			if strings.Contains(c.Stderr.String(), `msg="engine recovered"`) {
				break
			}
		}
		return c, nil
	case <-c.exited:
		c.quoted = true // the error quotes stderr
		return c, &ExitError{Name: name, Err: c.exitErr, Stdout: c.Stdout.String(), Stderr: c.Stderr.String()}
	case <-time.After(ChildStartTimeout):
		c.Kill()
		return nil, fmt.Errorf("%s not ready after %v; stdout:\n%s\nstderr tail:\n%s", name, ChildStartTimeout, c.Stdout.String(), Tail(c.Stderr.String(), 40))
	}
}

// readStdout copies the child's stdout into Stdout, takes the listener
// lines, closes readyc at `ready`, and waits for the process at the end.
func (c *Child) readStdout(pipe io.Reader, readyc chan struct{}) {
	sc := bufio.NewScanner(pipe)
	signalled := false
	for sc.Scan() {
		line := sc.Text()
		fmt.Fprintln(c.Stdout, line)
		switch {
		case strings.HasPrefix(line, "public listening on "):
			c.PublicURL = strings.TrimPrefix(line, "public listening on ")
		case strings.HasPrefix(line, "admin listening on "):
			c.AdminURL = strings.TrimPrefix(line, "admin listening on ")
		case strings.HasPrefix(line, "smtp listening on "):
			c.SMTPAddr = strings.TrimPrefix(line, "smtp listening on ")
		case line == "ready" && !signalled:
			signalled = true
			close(readyc)
		}
	}
	// Drain whatever is left so that the child never blocks on stdout.
	io.Copy(io.Discard, pipe)
	c.exitErr = c.Cmd.Wait()
	close(c.exited)
}

// NeedSMTP fails the test unless the child printed an SMTP listener line.
func (c *Child) NeedSMTP() {
	c.T.Helper()
	if c.SMTPAddr == "" {
		c.T.Fatalf("%s printed no smtp listener line:\n%s", c.Name, c.Stdout.String())
	}
}

// ExitError is what LaunchChild returns when the child exited before it
// printed ready.
type ExitError struct {
	Name           string
	Err            error // Wait's
	Stdout, Stderr string
}

// Error quotes the exit, stdout and the tail of stderr.
func (e *ExitError) Error() string {
	return fmt.Sprintf("%s exited before ready (%v); stdout:\n%s\nstderr tail:\n%s", e.Name, e.Err, e.Stdout, Tail(e.Stderr, 40))
}

// ExitCode returns the process's exit code, or -1 when a signal ended it.
func (e *ExitError) ExitCode() int {
	var ee *exec.ExitError
	if errors.As(e.Err, &ee) {
		return ee.ExitCode()
	}
	if e.Err == nil {
		return 0
	}
	return -1
}

// Kill sends SIGKILL (if the process still runs) and waits for it.
func (c *Child) Kill() {
	select {
	case <-c.exited:
		return
	default:
	}
	c.Cmd.Process.Signal(syscall.SIGKILL)
	select {
	case <-c.exited:
	case <-time.After(ChildStopTimeout):
	}
	c.closeIdle()
}

// Term sends SIGTERM and waits for the exit; it returns the exit code (-1
// for a death by signal), or an error when the signal fails or the child
// does not exit in time (it is killed then).
func (c *Child) Term() (int, error) {
	if err := c.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return 0, fmt.Errorf("%s: SIGTERM: %w", c.Name, err)
	}
	select {
	case <-c.exited:
	case <-time.After(ChildStopTimeout):
		c.Kill()
		return 0, fmt.Errorf("%s did not exit within %v of SIGTERM", c.Name, ChildStopTimeout)
	}
	c.closeIdle()
	if c.exitErr == nil {
		return 0, nil
	}
	var ee *exec.ExitError
	if errors.As(c.exitErr, &ee) {
		return ee.ExitCode(), nil
	}
	return 0, c.exitErr
}

// Exited is closed once the process has ended and been waited for.
func (c *Child) Exited() <-chan struct{} { return c.exited }

// ExitErr returns Wait's error; call it after Exited is closed.
func (c *Child) ExitErr() error { return c.exitErr }

// Restart kills the child if it still runs and starts a new one, named
// name, on the same data directory with the flags extra and the same
// HTTP client; it fails the test when the new one does not start.
func (c *Child) Restart(name string, extra ...string) *Child {
	c.T.Helper()
	c.Kill()
	n := StartChild(c.T, name, c.DataDir, extra...)
	n.HTTP = c.HTTP
	return n
}
