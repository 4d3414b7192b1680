package transport_test

// A raw TCP client for the tests that must see the bytes on the wire (the
// spelling of header names) or send what net/http will not (a chunked body
// cut short, a body that stops, a header too large to be read).

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"backupmon/internal/testserver"
)

// wireConn is one raw connection to a listener.
type wireConn struct {
	t *testing.T
	c net.Conn
}

// wireDial connects to base ("http://host:port").
func wireDial(t *testing.T, base string) *wireConn {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatalf("dial %s: %v", base, err)
	}
	t.Cleanup(func() { c.Close() })
	return &wireConn{t: t, c: c}
}

// write sends b. An error is returned, not fatal: the server may already
// have answered and closed.
func (w *wireConn) write(b []byte) error {
	w.c.SetWriteDeadline(time.Now().Add(10 * time.Second))
	_, err := w.c.Write(b)
	return err
}

// read reads until the server closes the connection (or 10 seconds pass)
// and returns the raw bytes and the answer parsed from them.
func (w *wireConn) read() ([]byte, testserver.Response) {
	w.t.Helper()
	w.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	raw, err := io.ReadAll(w.c)
	if err != nil && len(raw) == 0 {
		w.t.Fatalf("read the answer: %v", err)
	}
	return raw, wireParse(w.t, raw)
}

// wireParse parses the first HTTP answer in raw.
func wireParse(t *testing.T, raw []byte) testserver.Response {
	t.Helper()
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), nil)
	if err != nil {
		t.Fatalf("not an HTTP answer: %v: %q", err, raw)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read the body: %v: %q", err, raw)
	}
	r := testserver.Response{Status: resp.StatusCode, Header: resp.Header, Body: body}
	if len(body) > 0 && strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(body, &r.JSON); err != nil {
			t.Fatalf("answer is not a JSON object: %v: %s", err, body)
		}
	}
	return r
}

// wireExchange sends req on a new connection and reads the answer; req
// should close the connection (Connection: close) unless the server does.
func wireExchange(t *testing.T, base string, req string) ([]byte, testserver.Response) {
	t.Helper()
	w := wireDial(t, base)
	if err := w.write([]byte(req)); err != nil {
		t.Fatalf("send: %v", err)
	}
	return w.read()
}

// wireHeaderBlock returns the status line and headers of a raw answer.
func wireHeaderBlock(raw []byte) string {
	if i := bytes.Index(raw, []byte("\r\n\r\n")); i >= 0 {
		return string(raw[:i+2])
	}
	return string(raw)
}
