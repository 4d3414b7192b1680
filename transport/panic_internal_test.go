package transport

// The listeners' panic handlers: a handler that panics answers 500 in its
// route's shape, the panic is logged, and the listener goes on serving.
// Production has no route that panics, so this test adds some through the
// handlers' test hook and serves them on loopback.

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"
)

// servePanicking serves h on a loopback listener until the test ends and
// returns its base URL.
func servePanicking(t *testing.T, s *Server, name string, h fasthttp.RequestHandler, onError func(*fasthttp.RequestCtx, error)) string {
	t.Helper()
	srv := s.newHTTPServer(name, h, publicMaxBody, readTimeout, onError)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.ShutdownWithContext(ctx)
	})
	return "http://" + ln.Addr().String()
}

func TestPanicHandlers(t *testing.T) {
	// The log goes to a file: each record is one write, whichever
	// goroutine logs it, and the test reads the file.
	logPath := filepath.Join(t.TempDir(), "log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { logFile.Close() })
	logs := func() string {
		b, err := os.ReadFile(logPath)
		if err != nil {
			return err.Error()
		}
		return string(b)
	}
	s := New(Config{Logger: slog.New(slog.NewTextHandler(logFile, nil)), AdminToken: "token"})
	s.attached.Store(true) // as if started: the routes used here need no engine
	boom := func(v any) fasthttp.RequestHandler {
		return func(*fasthttp.RequestCtx) { panic(v) }
	}
	public := servePanicking(t, s, "public", s.publicHandler(func(r *router.Router) {
		r.GET("/api/v1/panic", s.route("panic_rest", boom("rest handler broke")))
		r.GET("/api/v1/jobs/{jobId}/report", s.route("panic_report", boom(fmt.Errorf("report handler broke"))))
	}), s.publicParseError)
	admin := servePanicking(t, s, "admin", s.adminHandler(func(r *router.Router) {
		r.GET("/admin/v1/panic", s.route("panic_admin", boom(42)))
	}), s.adminParseError)

	client := &http.Client{Timeout: 10 * time.Second}
	get := func(t *testing.T, url string) (*http.Response, string) {
		t.Helper()
		resp, err := client.Get(url)
		if err != nil {
			t.Fatalf("GET %s: %v", url, err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp, string(b)
	}
	idRe := regexp.MustCompile(`^[0-9a-f]{24}$`)
	for _, c := range []struct {
		name, url string
		body      string // %s: the request id
		requestID bool
		logged    string
	}{
		{"REST shape", public + "/api/v1/panic", `{"error":{"code":"INTERNAL_ERROR","message":"Internal server error; retry","requestId":"%s"}}`, true,
			`msg="panic in public handler" path=/api/v1/panic panic="rest handler broke"`},
		{"Report shape", public + "/api/v1/jobs/0195c2a4-6f1e-7a3b-9c4d-2e8f1a6b3c5d/report", `{"error":"Failed to record report"}`, true,
			`msg="panic in public handler" path=/api/v1/jobs/0195c2a4-6f1e-7a3b-9c4d-2e8f1a6b3c5d/report panic="report handler broke"`},
		{"admin shape", admin + "/admin/v1/panic", `{"error":{"code":"INTERNAL_ERROR","message":"Internal server error"}}`, false,
			`msg="panic in admin handler" path=/admin/v1/panic panic=42`},
	} {
		t.Run(c.name, func(t *testing.T) {
			for i := range 2 { // the listener goes on after a panic
				resp, body := get(t, c.url)
				id := resp.Header.Get("X-Request-Id")
				want := c.body
				if c.requestID {
					if !idRe.MatchString(id) {
						t.Errorf("X-Request-Id %q", id)
					}
					if strings.Contains(want, "%s") {
						want = fmt.Sprintf(want, id)
					}
				}
				if resp.StatusCode != 500 || body != want {
					t.Errorf("request %d:\n got %d %s\nwant 500 %s", i, resp.StatusCode, body, want)
				}
				if ct := resp.Header.Get("Content-Type"); ct != contentTypeJSON {
					t.Errorf("Content-Type %q", ct)
				}
			}
			if n := strings.Count(logs(), c.logged); n != 2 {
				t.Errorf("%d log records %q, want 2; logs:\n%s", n, c.logged, logs())
			}
		})
	}
	// Other routes of both listeners still answer.
	if resp, body := get(t, public+"/api/v1/openapi.json"); resp.StatusCode != 200 || !strings.HasPrefix(body, "{") {
		t.Errorf("openapi.json after the panics: %d", resp.StatusCode)
	}
	if resp, body := get(t, admin+"/livez"); resp.StatusCode != 200 || body != `{"status":"ok"}` {
		t.Errorf("/livez after the panics: %d %s", resp.StatusCode, body)
	}
	if resp, _ := get(t, public+"/api/v1/nope"); resp.StatusCode != 404 {
		t.Errorf("unknown path after the panics: %d", resp.StatusCode)
	}
}
