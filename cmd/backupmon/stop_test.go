package main

import (
	"bufio"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	"backupmon/internal/testserver"
)

// TestStopClosesSilentConnections: SIGTERM does not wait for connections
// that have sent nothing of a request (a browser's preconnect, a
// connection an HTTP client dialled and did not use): after a second
// they are closed without a byte written, over TLS (handshake done or
// not) as on the admin listener, and so is a keep-alive connection idle
// after a request. A request half sent when the signal came is still
// read and answered, with Connection: close, and the server exits
// once it is done, cleanly and with nothing logged for the others. (The
// requests have no key: a 401 is an answer like any other.) Before
// this, each silent connection kept the stop waiting for the read
// timeout (15 s).
func TestStopClosesSilentConnections(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile, _, _ := secWriteCert(t, dir)
	c := testserver.StartChild(t, "node", t.TempDir(), "--tls-cert", certFile, "--tls-key", keyFile)
	pub, err := url.Parse(c.PublicURL)
	if err != nil || pub.Scheme != "https" {
		t.Fatalf("public URL %q (%v), want https", c.PublicURL, err)
	}
	adm, err := url.Parse(c.AdminURL)
	if err != nil {
		t.Fatal(err)
	}
	insecure := &tls.Config{InsecureSkipVerify: true}
	dialTLS := func() net.Conn {
		t.Helper()
		conn, err := tls.Dial("tcp", pub.Host, insecure)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		return conn
	}
	dialRaw := func(addr string) net.Conn {
		t.Helper()
		conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		return conn
	}
	idle := dialTLS() // one request, then idle between requests
	if _, err := io.WriteString(idle, "GET /api/v1/health HTTP/1.1\r\nHost: test\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(idle)
	r, err := http.ReadResponse(br, nil)
	if err != nil || r.StatusCode != 401 {
		t.Fatalf("health (no key) before the stop: %v %v", r, err)
	}
	io.Copy(io.Discard, r.Body)
	silent := map[string]net.Conn{
		"TLS, handshake done":           dialTLS(),
		"TLS, no handshake":             dialRaw(pub.Host),
		"admin":                         dialRaw(adm.Host),
		"keep-alive, after one request": idle,
	}
	half := dialTLS()
	if _, err := io.WriteString(half, "GET /api/v1/health HTTP/1.1\r\n"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // the half request is read by now

	if err := c.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	signalled := time.Now()
	for name, conn := range silent {
		conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		var got []byte
		var err error
		if name == "keep-alive, after one request" {
			got, err = io.ReadAll(br)
		} else {
			got, err = io.ReadAll(conn)
		}
		if err != nil || len(got) != 0 {
			t.Errorf("%s: read %q, %v; want the end of the stream and nothing before it", name, got, err)
		}
	}
	if took := time.Since(signalled); took > 5*time.Second {
		t.Errorf("the silent connections were closed %v after SIGTERM, want about a second", took.Round(time.Millisecond))
	}
	select {
	case <-c.Exited():
		t.Fatalf("the server exited with a request half read:\n%s", testserver.Tail(c.Stderr.String(), 10))
	default:
	}

	if _, err := io.WriteString(half, "Host: test\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	half.SetReadDeadline(time.Now().Add(10 * time.Second))
	r, err = http.ReadResponse(bufio.NewReader(half), nil)
	if err != nil {
		t.Fatalf("the half-sent request: %v", err)
	}
	body, _ := io.ReadAll(r.Body)
	if r.StatusCode != 401 || !r.Close || !strings.Contains(string(body), `"code":"UNAUTHORIZED"`) {
		t.Errorf("the half-sent request: %d, close %v, %s", r.StatusCode, r.Close, body)
	}
	select {
	case <-c.Exited():
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not exit once the request was answered")
	}
	if err := c.ExitErr(); err != nil {
		t.Errorf("exit after SIGTERM: %v, want 0", err)
	}
	log := c.Stderr.String()
	if !strings.Contains(log, `msg="stopped cleanly"`) {
		t.Errorf("no clean stop in the log:\n%s", testserver.Tail(log, 10))
	}
	_, log, _ = strings.Cut(log, "msg=stopping")
	for _, bad := range []string{"level=ERROR", "level=WARN", "error when serving"} {
		if strings.Contains(log, bad) {
			t.Errorf("the log has %q:\n%s", bad, testserver.Tail(log, 20))
		}
	}
}
