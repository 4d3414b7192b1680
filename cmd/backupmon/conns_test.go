package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"backupmon/internal/testserver"
)

// withOpenFiles runs a command line under an open-files limit of n, soft
// and hard, as a host with a low LimitNOFILE would.
func withOpenFiles(n int) func(argv []string) []string {
	return func(argv []string) []string {
		return append([]string{"sh", "-c", "ulimit -n " + strconv.Itoa(n) + ` && exec "$0" "$@"`}, argv...)
	}
}

// clientFrom returns an HTTP client whose connections come from the
// loopback address src (all of 127.0.0.0/8 is loopback on Linux).
func clientFrom(src string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 5 * time.Second}
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 4}}
}

// dialFrom connects from src to addr with a deadline.
func dialFrom(src, addr string) (net.Conn, error) {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	c.SetDeadline(time.Now().Add(15 * time.Second))
	return c, nil
}

var limitRefusal = regexp.MustCompile(`^HTTP/1\.1 503 Service Unavailable\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: 121\r\nRetry-After: 5\r\nX-Request-Id: ([0-9a-f]{24})\r\nConnection: close\r\n\r\n` +
	`\{"error":\{"code":"UNAVAILABLE","message":"Too many connections, try again later","requestId":"([0-9a-f]{24})"\}\}$`)

// healthOnce connects from src, sends GET /api/v1/health and returns the
// status line; with keep, the connection stays open (idle keep-alive) and
// is returned, else everything the server sent up to its close is.
func healthOnce(src, addr string, keep bool) (net.Conn, string, time.Duration, error) {
	start := time.Now()
	c, err := dialFrom(src, addr)
	if err != nil {
		return nil, "", 0, err
	}
	if _, err := io.WriteString(c, "GET /api/v1/health HTTP/1.1\r\nHost: test\r\n\r\n"); err != nil {
		c.Close()
		return nil, "", 0, err
	}
	r := bufio.NewReader(c)
	status, err := r.ReadString('\n')
	if err != nil {
		c.Close()
		return nil, status, 0, err
	}
	if keep && strings.HasPrefix(status, "HTTP/1.1 401 ") {
		return c, status, time.Since(start), nil // the body stays unread: the connection idles
	}
	rest, err := io.ReadAll(r)
	c.Close()
	return nil, status + string(rest), time.Since(start), err
}

// TestConnectionsPastTheFileLimit: the outage. The server runs
// under an open-files limit of 256; one address opens 300 idle keep-alive
// connections at once, then SMTP sessions past its limit. The server stays
// up (no "listener failed"), the excess is answered 503 (SMTP 421) at
// once, another address's reports are recorded meanwhile, a further address
// past the total is refused, everyone is served again as soon as the
// pressure ends, and every acknowledged report is there after a restart.
func TestConnectionsPastTheFileLimit(t *testing.T) {
	dir := t.TempDir()
	c, err := testserver.LaunchChild(t, "limited", dir, withOpenFiles(256), "--smtp-listen", "127.0.0.1:0",
		"--max-connections", "48", "--max-connections-per-address", "24",
		"--admin-max-connections", "16", "--smtp-max-sessions", "16", "--smtp-max-sessions-per-address", "4")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{`msg="open files limit" limit=256`, `msg="connection limits" public=48 public_per_address=24 admin=16 admin_per_address=16 smtp_sessions=16 smtp_sessions_per_address=4`, `msg="memory limit"`} {
		if !strings.Contains(c.Stderr.String(), line) {
			t.Fatalf("start-up log without %s:\n%s\nstdout %s", line, c.Stderr.String(), c.Stdout.String())
		}
	}
	pub := strings.TrimPrefix(c.PublicURL, "http://")

	// A workspace, a job and a report key, one request at a time, on a
	// connection closed before the pressure.
	ws := c.NewWorkspace(map[string]any{"name": "limits", "plan": "pro"})
	job := c.NewJob(ws, c.NewClient(ws, "client"), "job", map[string]any{"intervalMinutes": 60})
	key, _ := c.NewKey(ws, "report", map[string]any{"name": "k"})
	c.HTTP.CloseIdleConnections()
	hc := clientFrom("127.0.0.1")
	acked := 0
	report := func(hc *http.Client, label string) {
		t.Helper()
		r, err := testserver.Call(hc, "POST", c.PublicURL+"/api/v1/jobs/"+job+"/report", key, map[string]any{"status": "ok"})
		if err != nil || r.Status != 200 {
			t.Fatalf("report %s: %d %s %v", label, r.Status, r.Body, err)
		}
		acked++
	}
	for i := range 3 {
		report(hc, fmt.Sprint("before ", i))
	}
	hc.CloseIdleConnections()

	// 300 connections from 127.0.0.1 at once: more than the server has
	// descriptors. 24 are served and idle; the rest are refused at once.
	type outcome struct {
		conn   net.Conn
		answer string
		took   time.Duration
		err    error
	}
	results := make([]outcome, 300)
	var wg sync.WaitGroup
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, answer, took, err := healthOnce("127.0.0.1", pub, true)
			results[i] = outcome{conn, answer, took, err}
		}()
	}
	wg.Wait()
	var held []net.Conn
	t.Cleanup(func() {
		for _, h := range held {
			h.Close()
		}
	})
	refused := 0
	for i, r := range results {
		switch {
		case r.err != nil:
			t.Errorf("connection %d: %v (read %q)", i, r.err, r.answer)
		case r.conn != nil:
			held = append(held, r.conn)
		default:
			m := limitRefusal.FindStringSubmatch(r.answer)
			if m == nil || m[1] != m[2] {
				t.Errorf("connection %d: %q, want 503 in the REST shape", i, r.answer)
			}
			if r.took > 2*time.Second {
				t.Errorf("connection %d refused after %v", i, r.took)
			}
			refused++
		}
	}
	if len(held) != 24 || refused != 276 {
		t.Fatalf("%d served and %d refused of 300 from one address, want 24 and 276", len(held), refused)
	}

	// Meanwhile another address reports, and reaches the admin API.
	other := clientFrom("127.0.0.2")
	for i := range 3 {
		report(other, fmt.Sprint("during ", i))
	}
	if r, err := testserver.Send(other, "GET", c.AdminURL+"/livez", nil, nil); err != nil || r.Status != 200 {
		t.Errorf("admin /livez from another address: %d %v", r.Status, err)
	}
	other.CloseIdleConnections()

	// SMTP: four sessions from 127.0.0.1, the fifth refused at once;
	// another address is greeted.
	smtpGreeting := func(src string) (net.Conn, string) {
		t.Helper()
		s, err := dialFrom(src, c.SMTPAddr)
		if err != nil {
			t.Fatal(err)
		}
		line, err := bufio.NewReader(s).ReadString('\n')
		if err != nil {
			t.Fatalf("SMTP from %s: %q %v", src, line, err)
		}
		return s, line
	}
	for range 4 {
		s, g := smtpGreeting("127.0.0.1")
		if !strings.HasPrefix(g, "220 ") {
			t.Fatalf("SMTP session within the limit: %q", g)
		}
		held = append(held, s)
	}
	if s, g := smtpGreeting("127.0.0.1"); g != "421 4.7.0 Too many connections, try again later\r\n" {
		t.Errorf("fifth SMTP session from one address: %q", g)
	} else {
		s.Close()
	}
	if s, g := smtpGreeting("127.0.0.2"); !strings.HasPrefix(g, "220 ") {
		t.Errorf("SMTP from another address: %q", g)
	} else {
		s.Close()
	}

	// The total: 24 more from 127.0.0.3 fill it; 127.0.0.4 is refused.
	for range 24 {
		conn, answer, _, err := healthOnce("127.0.0.3", pub, true)
		if err != nil || conn == nil {
			t.Fatalf("127.0.0.3 under the total: %q %v", answer, err)
		}
		held = append(held, conn)
	}
	if _, answer, _, err := healthOnce("127.0.0.4", pub, true); err != nil || !limitRefusal.MatchString(answer) {
		t.Fatalf("past the total: %q %v", answer, err)
	}

	// The pressure ends: answered again at once.
	for _, h := range held {
		h.Close()
	}
	held = nil
	for _, src := range []string{"127.0.0.1", "127.0.0.4"} {
		hc := clientFrom(src)
		deadline := time.Now().Add(2 * time.Second)
		for {
			r, err := testserver.Call(hc, "POST", c.PublicURL+"/api/v1/jobs/"+job+"/report", key, map[string]any{"status": "ok"})
			if err == nil && r.Status == 200 {
				acked++
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s after the pressure: %d %v", src, r.Status, err)
			}
			time.Sleep(20 * time.Millisecond) // the server has yet to see the closes
		}
		hc.CloseIdleConnections()
	}

	select {
	case <-c.Exited():
		t.Fatalf("the server exited: %v", c.ExitErr())
	default:
	}
	log := c.Stderr.String()
	if strings.Contains(log, "listener failed") || !strings.Contains(log, `msg="connection refused: too many connections"`) {
		t.Errorf("log:\n%s", testserver.Tail(log, 30))
	}
	if code, err := c.Term(); err != nil || code != 0 {
		t.Fatalf("stop: %d %v", code, err)
	}

	// Nothing acknowledged is lost.
	c2 := testserver.StartChild(t, "after", dir)
	var v struct {
		History []historyEntry `json:"history"`
	}
	if err := c2.AdminCall(200, "GET", "/workspaces/"+ws+"/jobs/"+job+"?limit=1000", nil, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.History) != acked {
		t.Errorf("%d results after the restart, %d acknowledged", len(v.History), acked)
	}
}

// The read timeouts and the SMTP session lifetime come from their flags:
// an HTTP request cut short is answered 408 after --read-timeout, a silent
// SMTP client 421 after --smtp-read-timeout, and a session that keeps
// busy ends at --smtp-session-lifetime.
func TestTimeoutFlags(t *testing.T) {
	c := testserver.StartChild(t, "timeouts", t.TempDir(), "--smtp-listen", "127.0.0.1:0",
		"--read-timeout", "400ms", "--smtp-read-timeout", "400ms", "--smtp-session-lifetime", "1200ms")
	within := func(t *testing.T, start time.Time, d time.Duration) {
		t.Helper()
		if took := time.Since(start); took < d || took > d+time.Second {
			t.Errorf("after %v, want %v", took, d)
		}
	}
	t.Run("HTTP", func(t *testing.T) {
		// The server's read deadline starts at its accept, which can come
		// before the dial returns here: the clock starts before the dial.
		start := time.Now()
		conn, err := dialFrom("127.0.0.1", strings.TrimPrefix(c.PublicURL, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		io.WriteString(conn, "GET /api/v1/health HTTP/1.1\r\nHost: te")
		status, err := bufio.NewReader(conn).ReadString('\n')
		if status != "HTTP/1.1 408 Request Timeout\r\n" {
			t.Fatalf("%q %v", status, err)
		}
		within(t, start, 400*time.Millisecond)
	})
	smtp := func(t *testing.T, busy bool) string {
		conn, err := dialFrom("127.0.0.1", c.SMTPAddr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		r := bufio.NewReader(conn)
		r.ReadString('\n')
		var last string
		for {
			if busy {
				io.WriteString(conn, "NOOP\r\n")
			}
			line, err := r.ReadString('\n')
			if err != nil {
				return last
			}
			last = line
			time.Sleep(100 * time.Millisecond)
		}
	}
	t.Run("SMTP idle", func(t *testing.T) {
		start := time.Now()
		if last := smtp(t, false); last != "421 4.4.2 Idle timeout, bye bye\r\n" {
			t.Fatalf("last answer %q", last)
		}
		within(t, start, 400*time.Millisecond)
	})
	t.Run("SMTP busy", func(t *testing.T) {
		start := time.Now()
		if last := smtp(t, true); last != "421 4.4.2 Session time limit reached, closing connection\r\n" {
			t.Fatalf("last answer %q", last)
		}
		within(t, start, 1200*time.Millisecond)
	})
}
