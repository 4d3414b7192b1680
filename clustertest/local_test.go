package clustertest

import (
	"bufio"
	"io"
	"net/smtp"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"backupmon/internal/testserver"
)

// TestClusterLocal: `backupmon cluster local` (make cluster) starts three
// NATS servers and three nodes with the demo, and every curl line it
// prints answers 2xx, each against another node; Ctrl-C stops them all.
func TestClusterLocal(t *testing.T) {
	if testing.Short() {
		t.Skip("runs six processes")
	}
	cmd := exec.Command(testserver.Binary(t), "cluster", "local", "--dir", t.TempDir(), "--ports", "0")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		io.Copy(io.Discard, out)
	}()
	var printed []string
	deadline := time.After(2 * time.Minute)
	for done := false; !done; {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("cluster local ended before it was ready:\n%s", strings.Join(printed, "\n"))
			}
			printed = append(printed, l)
			done = l == "Ctrl-C stops the cluster."
		case <-deadline:
			t.Fatalf("cluster local not ready after 2 minutes:\n%s", strings.Join(printed, "\n"))
		}
	}
	var curls int
	for _, l := range printed {
		l = strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(l, "curl -s smtp://"):
			curls++
			sendCurlMail(t, l)
		case strings.Contains(l, " admin cluster --admin-url "):
			args := strings.Fields(l)
			b, err := exec.Command(testserver.Binary(t), args[1:]...).CombinedOutput()
			if err != nil || !strings.Contains(string(b), "SHARD  STATE") || strings.Count(string(b), " served ") != 4 {
				t.Errorf("%s\n  printed (%v):\n%s", l, err, b)
			}
		case strings.HasPrefix(l, "curl "):
			curls++
			r, err := testserver.Curl(newClient(), l)
			if err != nil {
				t.Fatalf("%s: %v", l, err)
			}
			if r.Status/100 != 2 {
				t.Errorf("%s\n  answered %d %s", l, r.Status, r.Body)
			}
		}
	}
	if curls != 4 {
		t.Errorf("%d curl lines, want 4:\n%s", curls, strings.Join(printed, "\n"))
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("cluster local after Ctrl-C: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("cluster local still runs a minute after Ctrl-C")
	}
}

// sendCurlMail sends the e-mail a printed `curl smtp://` line describes.
func sendCurlMail(t *testing.T, line string) {
	t.Helper()
	args := testserver.ShellWords(line)
	var addr, from, to, file string
	for i := 1; i < len(args); i++ {
		switch args[i] {
		case "--mail-from":
			i++
			from = args[i]
		case "--mail-rcpt":
			i++
			to = args[i]
		case "--upload-file":
			i++
			file = args[i]
		default:
			if a, ok := strings.CutPrefix(args[i], "smtp://"); ok {
				addr = a
			}
		}
	}
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	if err := smtp.SendMail(addr, nil, from, []string{to}, raw); err != nil {
		t.Errorf("%s\n  answered %v", line, err)
	}
}
