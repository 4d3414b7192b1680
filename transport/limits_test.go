package transport_test

import (
	"bufio"
	"crypto/tls"
	"io"
	"net"
	"os"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"backupmon/engine"
	"backupmon/internal/loopback"
	"backupmon/internal/testserver"
	"backupmon/transport"
	"backupmon/transport/connlimit"
)

// startLimited starts a server whose listeners have the given limits
// (and TLS on the public one when tlsConf is not nil), serving pubLn as the
// public listener when it is not nil.
func startLimited(t *testing.T, pubLim, admLim connlimit.Limits, tlsConf *tls.Config, pubLn net.Listener) *testserver.Server {
	t.Helper()
	return testserver.Start(t, testserver.Options{PublicListener: pubLn, Configure: func(cfg *transport.Config, _ *engine.Engine) {
		cfg.TLS, cfg.PublicConns, cfg.AdminConns = tlsConf, pubLim, admLim
	}})
}

// rawConn is a client connection from a chosen loopback address.
type rawConn struct{ *loopback.Conn }

func dialRaw(t *testing.T, src, addr string) *rawConn {
	return &rawConn{loopback.Dial(t, src, addr, 10*time.Second)}
}

// get sends GET path on a kept-alive connection and returns the status line.
func (c *rawConn) get(t *testing.T, path string) string {
	t.Helper()
	if _, err := io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: test\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	status, err := c.R.ReadString('\n')
	if err != nil {
		t.Fatalf("GET %s: %q %v", path, status, err)
	}
	n := 0
	for { // the header, then the body by its length
		line, err := c.R.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if line == "\r\n" {
			break
		}
		if k, v, ok := strings.Cut(line, ":"); ok && strings.EqualFold(k, "content-length") {
			n = atoi(strings.TrimSpace(v))
		}
	}
	if _, err := io.ReadFull(c.R, make([]byte, n)); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(status)
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}

// refused sends req (maybe nothing) and returns everything the server
// sends before it closes, and how long that took.
func refusedAnswer(t *testing.T, c *rawConn, req string) (string, time.Duration) {
	t.Helper()
	start := time.Now()
	if req != "" {
		io.WriteString(c, req)
	}
	b, err := io.ReadAll(c.R)
	if err != nil {
		t.Fatalf("reading the refusal: %v (read %q)", err, b)
	}
	return string(b), time.Since(start)
}

var (
	restRefusal = regexp.MustCompile(`^HTTP/1\.1 503 Service Unavailable\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: 121\r\nRetry-After: 5\r\nX-Request-Id: ([0-9a-f]{24})\r\nConnection: close\r\n\r\n` +
		`\{"error":\{"code":"UNAVAILABLE","message":"Too many connections, try again later","requestId":"([0-9a-f]{24})"\}\}$`)
	reportRefusal = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: 49\r\nRetry-After: 5\r\nConnection: close\r\n\r\n" +
		`{"error":"Too many connections, try again later"}`
	adminRefusal = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: 82\r\nRetry-After: 5\r\nConnection: close\r\n\r\n" +
		`{"error":{"code":"UNAVAILABLE","message":"Too many connections, try again later"}}`
)

func checkREST(t *testing.T, got string) {
	t.Helper()
	m := restRefusal.FindStringSubmatch(got)
	if m == nil || m[1] != m[2] {
		t.Fatalf("refusal %q, want the REST shape with one request id", got)
	}
}

// Each listener answers connections past its limits, per address and in
// all, at once with 503 in the shape of the path (the Report API's or the
// REST API's, as unreadable requests are answered; the admin API's on the
// admin listener) and closes them; other addresses are served meanwhile,
// and a closed connection's place is taken again at once.
func TestConnectionLimits(t *testing.T) {
	s := startLimited(t, connlimit.Limits{Total: 5, PerAddress: 3}, connlimit.Limits{Total: 2, PerAddress: 2}, nil, nil)
	var held []*rawConn
	for range 3 {
		c := dialRaw(t, "127.0.0.1", s.PublicAddr)
		if st := c.get(t, "/api/v1/health"); st != "HTTP/1.1 401 Unauthorized" {
			t.Fatalf("a connection within the limits: %q", st)
		}
		held = append(held, c) // kept alive, idle
	}
	for _, tc := range []struct {
		name, src, req string
		check          func(t *testing.T, got string)
		within         time.Duration
	}{
		{"REST path, address over its limit", "127.0.0.1", "GET /api/v1/health HTTP/1.1\r\nHost: test\r\n\r\n", checkREST, time.Second},
		{"Report API path", "127.0.0.1", "POST /api/v1/jobs/j_1/report?x=1 HTTP/1.1\r\nHost: test\r\nContent-Length: 2\r\n\r\n{}", func(t *testing.T, got string) {
			if got != reportRefusal {
				t.Fatalf("refusal %q, want %q", got, reportRefusal)
			}
		}, time.Second},
		{"dashboard path", "127.0.0.1", "GET /login HTTP/1.1\r\nHost: test\r\n\r\n", checkREST, time.Second},
		{"nothing sent", "127.0.0.1", "", checkREST, 2 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, took := refusedAnswer(t, dialRaw(t, tc.src, s.PublicAddr), tc.req)
			tc.check(t, got)
			if took > tc.within {
				t.Errorf("answered after %v", took)
			}
		})
	}
	// Another address is served while 127.0.0.1 is at its limit, up to
	// the total.
	for range 2 {
		c := dialRaw(t, "127.0.0.2", s.PublicAddr)
		if st := c.get(t, "/api/v1/health"); st != "HTTP/1.1 401 Unauthorized" {
			t.Fatalf("another address: %q", st)
		}
		held = append(held, c)
	}
	got, _ := refusedAnswer(t, dialRaw(t, "127.0.0.3", s.PublicAddr), "GET /api/v1/health HTTP/1.1\r\nHost: test\r\n\r\n")
	checkREST(t, got)
	// The pressure ends: answered again at once.
	held[0].Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		c := dialRaw(t, "127.0.0.1", s.PublicAddr)
		io.WriteString(c, "GET /api/v1/health HTTP/1.1\r\nHost: test\r\n\r\n")
		st, _ := c.R.ReadString('\n')
		if strings.TrimSpace(st) == "HTTP/1.1 401 Unauthorized" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after a close, still %q", st)
		}
		time.Sleep(10 * time.Millisecond) // the server has not seen the close yet
	}

	for range 2 {
		c := dialRaw(t, "127.0.0.1", s.AdminAddr)
		if st := c.get(t, "/livez"); st != "HTTP/1.1 200 OK" {
			t.Fatalf("admin within its limits: %q", st)
		}
	}
	if got, _ := refusedAnswer(t, dialRaw(t, "127.0.0.1", s.AdminAddr), "GET /livez HTTP/1.1\r\nHost: test\r\n\r\n"); got != adminRefusal {
		t.Fatalf("admin refusal %q, want %q", got, adminRefusal)
	}
	select {
	case err := <-s.PublicDone:
		t.Fatalf("the public listener stopped: %v", err)
	default:
	}
}

// Over TLS, the refusal is sent through TLS.
func TestConnectionLimitsTLS(t *testing.T) {
	conf := testTLS(t)
	s := startLimited(t, connlimit.Limits{Total: 1, PerAddress: 1}, connlimit.Limits{}, conf.server, nil)
	first, err := tls.Dial("tcp", s.PublicAddr, conf.client)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	io.WriteString(first, "GET /api/v1/health HTTP/1.1\r\nHost: test\r\n\r\n")
	if st, err := bufio.NewReader(first).ReadString('\n'); err != nil || st != "HTTP/1.1 401 Unauthorized\r\n" {
		t.Fatalf("first connection: %q %v", st, err)
	}
	c, err := tls.Dial("tcp", s.PublicAddr, conf.client)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	io.WriteString(c, "POST /api/v1/jobs/j_1/report HTTP/1.1\r\nHost: test\r\nContent-Length: 2\r\n\r\n{}")
	b, err := io.ReadAll(c)
	if string(b) != reportRefusal {
		t.Fatalf("refusal over TLS %q (%v), want %q", b, err, reportRefusal)
	}
}

type tlsPair struct{ server, client *tls.Config }

func testTLS(t *testing.T) tlsPair {
	t.Helper()
	c := testserver.SelfSigned(t)
	return tlsPair{
		server: &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{c.DER}, PrivateKey: c.Key}}},
		client: &tls.Config{RootCAs: c.Pool},
	}
}

// emfileListener fails Accept with EMFILE while failing is set, as a
// process out of descriptors sees it.
type emfileListener struct {
	net.Listener
	mu      sync.Mutex
	failing bool
	fails   int
}

func (l *emfileListener) Accept() (net.Conn, error) {
	l.mu.Lock()
	if !l.failing {
		l.mu.Unlock()
		return l.Listener.Accept()
	}
	l.fails++
	l.mu.Unlock()
	return nil, &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.EMFILE)}
}

// A process out of descriptors keeps serving: accept's EMFILE is logged
// once, retried with a back-off, and connections are taken again once
// descriptors are free (fasthttp alone takes it as fatal and stops).
func TestAcceptErrorsAreTemporary(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := &emfileListener{Listener: inner, failing: true}
	s := startLimited(t, connlimit.Limits{}, connlimit.Limits{}, nil, ln)
	time.Sleep(1500 * time.Millisecond) // 5, 10, 20, ... 640 ms, 1 s
	select {
	case err := <-s.PublicDone:
		t.Fatalf("the public listener stopped on EMFILE: %v", err)
	default:
	}
	ln.mu.Lock()
	fails := ln.fails
	ln.failing = false
	ln.mu.Unlock()
	if fails < 5 || fails > 12 {
		t.Errorf("%d accepts failed in 1.5 s, want a back-off from 5 ms to 1 s", fails)
	}
	if n := strings.Count(s.Logs.String(), `msg="accept failed; retrying"`); n != 1 {
		t.Errorf("%d log lines for the accept errors, want 1 (rate-limited):\n%s", n, s.Logs.String())
	}
	c := dialRaw(t, "127.0.0.1", s.PublicAddr)
	if st := c.get(t, "/api/v1/health"); st != "HTTP/1.1 401 Unauthorized" {
		t.Fatalf("after the errors: %q", st)
	}
}
