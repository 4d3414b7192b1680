package main

import (
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"backupmon/internal/syncbuf"
	"backupmon/internal/testserver"
)

// While the engine recovers, serve already answers on the admin listener:
// /livez 200, /readyz 503 starting, every other admin path 503
// UNAVAILABLE; once recovery is done, everything answers as usual. The
// listener lines come first and ready after, as before. run is held before
// recovery by its test hook, in this process.
func TestServeAnswersWhileRecovering(t *testing.T) {
	cfg, err := parseServeFlags([]string{"--data", t.TempDir(), "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--admin-token", testserver.AdminToken})
	if err != nil {
		t.Fatal(err)
	}
	entered, release := make(chan struct{}), make(chan struct{})
	cfg.beforeOpen = func() { close(entered); <-release }
	out := &syncbuf.Buffer{}
	stop := make(chan os.Signal, 1)
	errc := make(chan error, 1)
	go func() { errc <- run(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), out, stop) }()
	released := false
	defer func() {
		if !released {
			close(release)
		}
	}()
	select {
	case <-entered:
	case err := <-errc:
		t.Fatalf("run returned before recovery: %v", err)
	case <-time.After(testserver.ChildStartTimeout):
		t.Fatal("run did not reach recovery")
	}

	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "public listening on http://") || !strings.HasPrefix(lines[1], "admin listening on http://") {
		t.Fatalf("printed before recovery: %q, want the two listener lines", lines)
	}
	publicURL := strings.TrimPrefix(lines[0], "public listening on ")
	adminURL := strings.TrimPrefix(lines[1], "admin listening on ")
	client := &http.Client{Timeout: 5 * time.Second}
	get := func(t *testing.T, url string, token bool) (int, string) {
		t.Helper()
		key := ""
		if token {
			key = testserver.AdminToken
		}
		r, err := testserver.Send(client, "GET", url, testserver.Bearer(key), nil)
		if err != nil {
			t.Fatal(err)
		}
		return r.Status, string(r.Body)
	}
	const starting = `{"error":{"code":"UNAVAILABLE","message":"starting"}}`
	for _, c := range []struct {
		path   string
		token  bool
		status int
		body   string
	}{
		{"/livez", false, 200, `{"status":"ok"}`},
		{"/readyz", false, 503, `{"status":"starting"}`},
		{"/admin/v1/workspaces", true, 503, starting},
		{"/metrics", false, 503, starting},
	} {
		if status, body := get(t, adminURL+c.path, c.token); status != c.status || body != c.body {
			t.Errorf("recovering: %s: %d %s, want %d %s", c.path, status, body, c.status, c.body)
		}
	}

	close(release)
	released = true
	deadline := time.Now().Add(testserver.ChildStartTimeout)
	for !strings.HasSuffix(out.String(), "\nready\n") {
		if time.Now().After(deadline) {
			t.Fatalf("no ready line; printed:\n%s", out.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	for _, c := range []struct {
		url    string
		token  bool
		status int
		body   string
	}{
		{adminURL + "/readyz", false, 200, `{"status":"ready"}`},
		{adminURL + "/admin/v1/workspaces", true, 200, `{"data":[]}`},
		{publicURL + "/api/v1/jobs", false, 401, ""},
	} {
		if status, body := get(t, c.url, c.token); status != c.status || (c.body != "" && body != c.body) {
			t.Errorf("ready: %s: %d %s, want %d %s", c.url, status, body, c.status, c.body)
		}
	}

	stop <- syscall.SIGTERM
	select {
	case err := <-errc:
		if err != nil {
			t.Fatalf("run: %v", err)
		}
	case <-time.After(testserver.ChildStopTimeout):
		t.Fatal("run did not stop after SIGTERM")
	}
}
