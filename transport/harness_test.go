package transport_test

// The black-box harness: a real engine (log and snapshots in a temp dir)
// behind the real fasthttp listeners on loopback, driven with net/http.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"backupmon/engine"
	"backupmon/password"
	"backupmon/transport"
	"backupmon/vfs"
	"backupmon/wal"
)

const testAdminToken = "test-admin-token"

// testCursorKey signs the cursors of every test server, kept across
// restarts as backupmon serve keeps <data>/cursor.key.
var testCursorKey = []byte("test cursor key, the same across restarts")

// t0 is where the development clock starts in tests: a Wednesday.
var t0 = time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)

type serverOptions struct {
	dir         string                   // reuse a data directory (default: a new temp dir)
	noDevClock  bool                     // run on the system clock
	beforeSync  func(first, last uint64) // the log's BeforeSync hook
	readTimeout time.Duration            // the listeners' read timeout (default: the server's, 15 s)
	hasher      *password.Hasher         // the admin API's password hasher (default: the server's)
	// fs is the file system under the log and the snapshots, which a test
	// makes fail. With it, OnFatal records the failure (fatals) instead of
	// failing the test, and the process goes on, fail-stopped.
	fs *vfs.Faulty
}

type testServer struct {
	t         *testing.T
	opts      serverOptions
	Dir       string
	Eng       *engine.Engine
	Clock     *engine.DevClock
	PublicURL string
	AdminURL  string
	srv       *transport.Server
	client    *http.Client
	logs      *syncBuffer
	closed    bool
	fatals    atomic.Int32 // OnFatal calls, with fs
	keepClock bool         // the next start keeps Clock where it stands (RestartAt)
}

// syncBuffer collects the server's logs for tests that read them.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startServer starts an engine and both listeners; they stop at the end of
// the test.
func startServer(t *testing.T, opts serverOptions) *testServer {
	t.Helper()
	if opts.dir == "" {
		opts.dir = t.TempDir()
	}
	s := &testServer{t: t, opts: opts, Dir: opts.dir, logs: &syncBuffer{}}
	s.start()
	t.Cleanup(s.Close)
	return s
}

func (s *testServer) start() {
	t := s.t
	t.Helper()
	logger := slog.New(slog.NewTextHandler(s.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	var clock engine.Clock = engine.SystemClock{}
	if !s.opts.noDevClock {
		if s.Clock == nil {
			s.Clock = engine.NewDevClock(t0)
		}
		clock = s.Clock
	}
	metrics := transport.NewMetrics()
	onFatal := func(err error) { t.Errorf("log failed: %v", err) }
	var fsys vfs.FS = vfs.OS
	if s.opts.fs != nil {
		fsys = s.opts.fs
		onFatal = func(err error) {
			s.fatals.Add(1)
			logger.Error("wal: write failed (the test's OnFatal: the process goes on)", "err", err)
		}
	}
	eng, err := engine.Open(engine.Options{
		Dir: s.Dir, Clock: clock, Logger: logger, KeepClock: s.keepClock, FS: fsys,
		WAL: wal.Options{Logger: logger, BeforeSync: s.opts.beforeSync, Observe: metrics.ObserveWAL,
			OnFatal: onFatal},
	})
	if err != nil {
		t.Fatalf("open engine: %v", err)
	}
	s.Eng = eng
	s.srv = transport.New(transport.Config{Engine: eng, Logger: logger, Metrics: metrics, AdminToken: testAdminToken, DevClock: !s.opts.noDevClock, CursorKey: testCursorKey, ReadTimeout: s.opts.readTimeout, Hasher: s.opts.hasher})
	pub, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	adm, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.srv.ServePublic(pub)
	go s.srv.ServeAdmin(adm)
	s.PublicURL = "http://" + pub.Addr().String()
	s.AdminURL = "http://" + adm.Addr().String()
	s.client = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	s.closed = false
}

// Close stops the listeners and closes the engine cleanly (with a snapshot).
func (s *testServer) Close() {
	if s.closed {
		return
	}
	s.closed = true
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// Idle client connections first: one the client dialled but never
	// used is not idle to the server, which would wait for it until ctx
	// expires.
	s.client.CloseIdleConnections()
	s.srv.Shutdown(ctx)
	s.client.CloseIdleConnections()
	if err := s.Eng.Close(); err != nil {
		if s.fatals.Load() > 0 { // the failed log refuses the last snapshot
			s.t.Logf("close engine after the log failed: %v", err)
		} else {
			s.t.Errorf("close engine: %v", err)
		}
	}
}

// Restart closes the server and opens a new one on the same data directory
// and development clock.
func (s *testServer) Restart() {
	s.t.Helper()
	s.Close()
	s.fatals.Store(0)
	s.start()
}

// RestartAt closes the server, lets the development clock stand at at
// while it is down, and opens a new one there (instead of where the log
// left the clock): time passes during the downtime.
func (s *testServer) RestartAt(at time.Time) {
	s.t.Helper()
	s.Close()
	s.fatals.Store(0)
	s.Clock.Set(at)
	s.keepClock = true
	defer func() { s.keepClock = false }()
	s.start()
}

// response is an HTTP answer with its body decoded when it is JSON.
type response struct {
	Status int
	Header http.Header
	Body   []byte
	JSON   map[string]any
}

// Data returns the "data" member of an admin answer as an object.
func (r response) Data() map[string]any {
	d, _ := r.JSON["data"].(map[string]any)
	return d
}

// List returns the "data" member of an admin answer as a list.
func (r response) List() []map[string]any {
	raw, _ := r.JSON["data"].([]any)
	out := make([]map[string]any, len(raw))
	for i, v := range raw {
		out[i], _ = v.(map[string]any)
	}
	return out
}

// send sends a request and reads the answer, decoding a JSON body, without
// touching a testing.T (safe on any goroutine).
func (s *testServer) send(method, url string, header map[string]string, body []byte) (response, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return response{}, err
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return response{}, fmt.Errorf("%s %s: %w", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return response{}, err
	}
	r := response{Status: resp.StatusCode, Header: resp.Header, Body: b}
	if len(b) > 0 && strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(b, &r.JSON); err != nil {
			return r, fmt.Errorf("%s %s: answer is not a JSON object: %v: %s", method, url, err, b)
		}
	}
	return r, nil
}

// do is send that fails the test on an error.
func (s *testServer) do(method, url string, header map[string]string, body []byte) response {
	s.t.Helper()
	r, err := s.send(method, url, header, body)
	if err != nil {
		s.t.Fatal(err)
	}
	return r
}

// Admin calls the admin API with the test token; body is marshalled unless
// it is already []byte or a string.
func (s *testServer) Admin(method, path string, body any) response {
	s.t.Helper()
	var b []byte
	switch v := body.(type) {
	case nil:
	case []byte:
		b = v
	case string:
		b = []byte(v)
	default:
		var err error
		if b, err = json.Marshal(v); err != nil {
			s.t.Fatal(err)
		}
	}
	return s.do(method, s.AdminURL+"/admin/v1"+path, map[string]string{"Authorization": "Bearer " + testAdminToken, "Content-Type": "application/json"}, b)
}

// MustAdmin calls the admin API and fails the test unless the answer has
// the wanted status.
func (s *testServer) MustAdmin(want int, method, path string, body any) response {
	s.t.Helper()
	r := s.Admin(method, path, body)
	if r.Status != want {
		s.t.Fatalf("%s %s: status %d, want %d: %s", method, path, r.Status, want, r.Body)
	}
	return r
}

// Report posts a report body with key (and an Idempotency-Key header when
// idem is not empty).
func (s *testServer) Report(jobID, key, idem, body string) response {
	s.t.Helper()
	h := map[string]string{"Content-Type": "application/json"}
	if key != "" {
		h["Authorization"] = "Bearer " + key
	}
	if idem != "" {
		h["Idempotency-Key"] = idem
	}
	return s.do("POST", s.PublicURL+"/api/v1/jobs/"+jobID+"/report", h, []byte(body))
}

// Advance moves the development clock forward through the admin API.
func (s *testServer) Advance(d time.Duration) {
	s.t.Helper()
	s.MustAdmin(200, "POST", "/clock", map[string]any{"advanceSeconds": int64(d / time.Second)})
}

// SetClock sets the development clock through the admin API.
func (s *testServer) SetClock(at time.Time) {
	s.t.Helper()
	s.MustAdmin(200, "POST", "/clock", map[string]any{"set": at.UTC().Format(time.RFC3339Nano)})
}

// fixture is a workspace with one client, one job and a key of each type.
type fixture struct {
	WS, Client, Job              string
	ReportKey, RestKey, AsstKey  string
	ReportKeyID, ReportKeyPrefix string
}

type fixtureOptions struct {
	plan, timeZone string
	schedule       map[string]any
}

// Fixture creates a workspace (plan pro, UTC unless told), a client, a daily
// job and one key of each type.
func (s *testServer) Fixture(o fixtureOptions) fixture {
	s.t.Helper()
	if o.plan == "" {
		o.plan = "pro"
	}
	if o.timeZone == "" {
		o.timeZone = "UTC"
	}
	if o.schedule == nil {
		o.schedule = map[string]any{"intervalMinutes": 1440}
	}
	var f fixture
	f.WS = s.MustAdmin(201, "POST", "/workspaces", map[string]any{"name": "Acme IT", "plan": o.plan, "timeZone": o.timeZone}).Data()["id"].(string)
	f.Client = s.MustAdmin(201, "POST", "/workspaces/"+f.WS+"/clients", map[string]any{"name": "Globex"}).Data()["id"].(string)
	f.Job = s.NewJob(f.WS, f.Client, "Nightly backup", o.schedule)
	rk := s.MustAdmin(201, "POST", "/workspaces/"+f.WS+"/keys", map[string]any{"name": "agent", "type": "report"}).Data()
	f.ReportKey, f.ReportKeyID, f.ReportKeyPrefix = rk["key"].(string), rk["id"].(string), rk["prefix"].(string)
	f.RestKey = s.MustAdmin(201, "POST", "/workspaces/"+f.WS+"/keys", map[string]any{"name": "psa", "type": "rest"}).Data()["key"].(string)
	f.AsstKey = s.MustAdmin(201, "POST", "/workspaces/"+f.WS+"/keys", map[string]any{"name": "bot", "type": "assistant"}).Data()["key"].(string)
	return f
}

// NewJob creates a job on a client and returns its id.
func (s *testServer) NewJob(ws, client, name string, schedule map[string]any) string {
	s.t.Helper()
	return s.MustAdmin(201, "POST", "/workspaces/"+ws+"/jobs", map[string]any{
		"clientId": client, "name": name, "vendor": "veeam",
		"device":   map[string]any{"name": "File server", "type": "server", "hostname": "fs01"},
		"schedule": schedule,
	}).Data()["id"].(string)
}

// Job reads a job through the admin API's job view.
func (s *testServer) Job(ws, job string) map[string]any {
	s.t.Helper()
	return s.MustAdmin(200, "GET", "/workspaces/"+ws+"/jobs/"+job, nil).Data()
}
