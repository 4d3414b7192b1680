package main

// Helpers that run the real backupmon binary as a child process: the first
// test that needs it builds it (`go build`, without -race, into a temporary
// directory outside the repository, which TestMain removes), and bmChild
// starts, kills and stops one server process.

import (
	"bufio"
	"bytes"
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
)

// The backupmon binary, built on first use by needBinary into bmBinDir,
// which TestMain removes at the end.
var (
	bmOnce     sync.Once
	bmBinDir   string
	bmBinary   string
	bmBuildErr error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if bmBinDir != "" {
		os.RemoveAll(bmBinDir)
	}
	os.Exit(code)
}

// buildBinary runs `go build -o <dir>/backupmon .` in the package directory
// (the test's working directory) and returns the binary's path.
func buildBinary(dir string) (string, error) {
	bin := filepath.Join(dir, "backupmon")
	// -buildvcs=false: go test does not stamp either, and stamping fails
	// in checkouts git will not read (another owner, no git).
	cmd := exec.Command(goTool(), "build", "-buildvcs=false", "-o", bin, ".")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build -o %s .: %v\n%s", bin, err, out)
	}
	return bin, nil
}

// goTool returns the go command of the toolchain running the tests.
func goTool() string {
	if root := os.Getenv("GOROOT"); root != "" {
		if p := filepath.Join(root, "bin", "go"); fileExists(p) {
			return p
		}
	}
	return "go"
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// needBinary returns the binary, building it on the first call, or fails
// the test.
func needBinary(t testing.TB) string {
	t.Helper()
	bmOnce.Do(func() {
		bmBinDir, bmBuildErr = os.MkdirTemp("", "backupmon-bin-")
		if bmBuildErr == nil {
			bmBinary, bmBuildErr = buildBinary(bmBinDir)
		}
	})
	if bmBuildErr != nil {
		t.Fatalf("the backupmon binary did not build: %v", bmBuildErr)
	}
	return bmBinary
}

// Child-process timeouts: generous for a loaded CI machine, short enough that
// a hang fails fast.
const (
	childStartTimeout = 20 * time.Second
	childStopTimeout  = 20 * time.Second
)

// lockedBuffer is a bytes.Buffer safe for the child's writer goroutine and
// the test's readers.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// bmChild is one `backupmon serve` process.
type bmChild struct {
	name      string // for messages: "cycle 2" etc.
	dataDir   string
	cmd       *exec.Cmd
	stdout    *lockedBuffer
	stderr    *lockedBuffer
	publicURL string
	adminURL  string
	smtpAddr  string // host:port of the SMTP listener; "" when off

	exited  chan struct{} // closed when the process has been waited for
	exitErr error         // Wait's error; read after exited is closed
	quoted  bool          // stderr is in an error already: no dump at the end
}

// childArgs are the serve flags every test uses; extra are appended.
func childArgs(dataDir string, extra ...string) []string {
	args := []string{"serve", "--data", dataDir, "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--admin-token", testAdminToken}
	return append(args, extra...)
}

const testAdminToken = "crash-test-admin-token"

// startChild starts the server on dataDir and waits for `ready`; it fails
// the test (with the child's stderr) when the child does not get there.
func startChild(t testing.TB, name, dataDir string, extra ...string) *bmChild {
	t.Helper()
	c, err := launchChild(t, name, dataDir, extra...)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return c
}

// launchChild starts the server and waits until it prints `ready` (nil
// error) or exits or times out (error, stderr included). The child is
// killed at the end of the test if it is still running.
func launchChild(t testing.TB, name, dataDir string, extra ...string) (*bmChild, error) {
	t.Helper()
	return launchChildVia(t, name, dataDir, nil, extra...)
}

// launchChildVia is launchChild with the command line run through wrap
// (a shell setting a resource limit, say) when wrap is not nil.
func launchChildVia(t testing.TB, name, dataDir string, wrap func(argv []string) []string, extra ...string) (*bmChild, error) {
	t.Helper()
	bin := needBinary(t)
	c := &bmChild{name: name, dataDir: dataDir, stdout: &lockedBuffer{}, stderr: &lockedBuffer{}, exited: make(chan struct{})}
	argv := append([]string{bin}, childArgs(dataDir, extra...)...)
	if wrap != nil {
		argv = wrap(argv)
	}
	c.cmd = exec.Command(argv[0], argv[1:]...)
	// No BACKUPMON_* from the environment: the flags say everything.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "BACKUPMON_") {
			c.cmd.Env = append(c.cmd.Env, kv)
		}
	}
	c.cmd.Stderr = c.stderr
	pipe, err := c.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := c.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	// Cleanups run last first: the kill, then the dump.
	t.Cleanup(func() {
		if t.Failed() && !c.quoted {
			t.Logf("%s (data %s) stderr tail:\n%s", name, dataDir, tail(c.stderr.String(), 25))
		}
	})
	t.Cleanup(func() { c.kill() })

	readyc := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(pipe)
		signalled := false
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(c.stdout, line)
			switch {
			case strings.HasPrefix(line, "public listening on "):
				c.publicURL = strings.TrimPrefix(line, "public listening on ")
			case strings.HasPrefix(line, "admin listening on "):
				c.adminURL = strings.TrimPrefix(line, "admin listening on ")
			case strings.HasPrefix(line, "smtp listening on "):
				c.smtpAddr = strings.TrimPrefix(line, "smtp listening on ")
			case line == "ready" && !signalled:
				signalled = true
				close(readyc)
			}
		}
		// Drain whatever is left so the child never blocks on stdout.
		io.Copy(io.Discard, pipe)
		c.exitErr = c.cmd.Wait()
		close(c.exited)
	}()

	select {
	case <-readyc:
		if c.publicURL == "" || c.adminURL == "" {
			c.kill()
			return nil, fmt.Errorf("%s printed ready without both listener lines; stdout:\n%s", name, c.stdout.String())
		}
		// stderr arrives through its own pipe: wait for the recovery line,
		// logged before ready, so that checks of the start-up log see it.
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			if strings.Contains(c.stderr.String(), `msg="engine recovered"`) {
				break
			}
		}
		return c, nil
	case <-c.exited:
		c.quoted = true // the error quotes stderr
		return c, &childExitError{name: name, err: c.exitErr, stdout: c.stdout.String(), stderr: c.stderr.String()}
	case <-time.After(childStartTimeout):
		c.kill()
		return nil, fmt.Errorf("%s not ready after %v; stdout:\n%s\nstderr tail:\n%s", name, childStartTimeout, c.stdout.String(), tail(c.stderr.String(), 40))
	}
}

// childExitError is what launchChild returns when the child exited before
// printing ready.
type childExitError struct {
	name           string
	err            error
	stdout, stderr string
}

func (e *childExitError) Error() string {
	return fmt.Sprintf("%s exited before ready (%v); stdout:\n%s\nstderr tail:\n%s", e.name, e.err, e.stdout, tail(e.stderr, 40))
}

// exitCode returns the process exit code, or -1 when it died of a signal.
func (e *childExitError) exitCode() int {
	var ee *exec.ExitError
	if errors.As(e.err, &ee) {
		return ee.ExitCode()
	}
	if e.err == nil {
		return 0
	}
	return -1
}

// kill sends SIGKILL (if the process still runs) and waits for it.
func (c *bmChild) kill() {
	select {
	case <-c.exited:
		return
	default:
	}
	c.cmd.Process.Signal(syscall.SIGKILL)
	select {
	case <-c.exited:
	case <-time.After(childStopTimeout):
	}
}

// term sends SIGTERM and waits for the exit; it returns the exit code (-1
// for a death by signal) or an error on timeout.
func (c *bmChild) term() (int, error) {
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return 0, err
	}
	select {
	case <-c.exited:
	case <-time.After(childStopTimeout):
		c.kill()
		return 0, fmt.Errorf("%s did not exit within %v of SIGTERM", c.name, childStopTimeout)
	}
	if c.exitErr == nil {
		return 0, nil
	}
	var ee *exec.ExitError
	if errors.As(c.exitErr, &ee) {
		return ee.ExitCode(), nil
	}
	return 0, c.exitErr
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{fmt.Sprintf("... (%d lines before)", len(lines)-n)}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}
