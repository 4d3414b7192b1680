package transport

// No Server header (issue 8, section 3), on the one path the real binary
// cannot be made to take: a handler that panics. Both listeners are the
// production servers (newHTTPServer) with routes that panic added through
// the handlers' test hook, as in panic_internal_test.go; the answers of
// their panic handlers, of their parse-error handlers and of a plain 404
// carry no Server header and no other banner. The other paths are covered
// against the binary by cmd/backupmon's TestSecuritySurface.

import (
	"bufio"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"
)

func TestSecurityNoServerHeaderOnPanics(t *testing.T) {
	s := New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), AdminToken: "token"})
	s.attached.Store(true) // the routes used here need no engine
	boom := func(*fasthttp.RequestCtx) { panic("boom") }
	public := servePanicking(t, s, "public", s.publicHandler(func(r *router.Router) {
		r.GET("/api/v1/panic", s.route("panic_rest", boom))
		r.GET("/api/v1/jobs/{jobId}/report", s.route("panic_report", boom))
	}), s.publicParseError)
	admin := servePanicking(t, s, "admin", s.adminHandler(func(r *router.Router) {
		r.GET("/admin/v1/panic", s.route("panic_admin", boom))
	}), s.adminParseError)

	client := &http.Client{Timeout: 10 * time.Second}
	t.Cleanup(client.CloseIdleConnections)
	check := func(t *testing.T, what string, status int, h http.Header, want int) {
		t.Helper()
		if status != want {
			t.Errorf("%s: %d, want %d", what, status, want)
		}
		for _, name := range []string{"Server", "X-Powered-By"} {
			if v, ok := h[name]; ok {
				t.Errorf("%s: %s %q", what, name, v)
			}
		}
	}
	for _, tc := range []struct {
		what, url string
		want      int
	}{
		{"a REST handler that panics", public + "/api/v1/panic", 500},
		{"a Report API handler that panics", public + "/api/v1/jobs/0195c2a4-6f1e-7a3b-9c4d-2e8f1a6b3c5d/report", 500},
		{"an admin handler that panics", admin + "/admin/v1/panic", 500},
		{"an unknown public path", public + "/api/v1/nope", 404},
		{"an unknown admin path", admin + "/admin/v1/nope", 404},
	} {
		t.Run(tc.what, func(t *testing.T) {
			resp, err := client.Get(tc.url)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			check(t, tc.what, resp.StatusCode, resp.Header, tc.want)
		})
	}
	for _, tc := range []struct{ what, base string }{{"public", public}, {"admin", admin}} {
		t.Run("a request that does not parse on the "+tc.what+" listener", func(t *testing.T) {
			conn, err := net.DialTimeout("tcp", strings.TrimPrefix(tc.base, "http://"), 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			conn.SetDeadline(time.Now().Add(5 * time.Second))
			io.WriteString(conn, "GET / HTTP/9\r\nHost: x\r\n\r\n")
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatalf("no answer: %v", err)
			}
			resp.Body.Close()
			check(t, "a bad request line", resp.StatusCode, resp.Header, 400)
		})
	}
}
