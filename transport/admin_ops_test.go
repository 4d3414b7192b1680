package transport_test

// The development clock, the probes and /metrics on the admin listener
// (decisions.md 1, 2, 8).

import (
	"bufio"
	"bytes"
	"context"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"backupmon/engine"
	"backupmon/internal/syncbuf"
	"backupmon/internal/testserver"
	"backupmon/transport"
	"backupmon/wal"
)

func TestAdminDevClock(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	clock := func(body any) string {
		t.Helper()
		r := s.Admin("POST", "/clock", body)
		admWantData(t, "clock", r, 200)
		admWantKeys(t, "clock answer", r.Data(), "now")
		now, _ := r.Data()["now"].(string)
		if !testserver.TimeRe.MatchString(now) {
			t.Errorf("clock now %q is not a contract timestamp", now)
		}
		return now
	}
	if now := clock(nil); now != testserver.TS(testserver.T0) {
		t.Errorf("clock without a body: %s, want testserver.T0", now)
	}
	if now := clock(map[string]any{}); now != testserver.TS(testserver.T0) {
		t.Errorf("clock with {}: %s, want testserver.T0", now)
	}
	set := time.Date(2026, 5, 1, 6, 30, 0, 250e6, time.UTC)
	if now := clock(map[string]any{"set": "2026-05-01T08:30:00.250+02:00"}); now != testserver.TS(set) {
		t.Errorf("set: %s, want %s", now, testserver.TS(set))
	}
	if now := clock(map[string]any{"advanceSeconds": 90}); now != testserver.TS(set.Add(90*time.Second)) {
		t.Errorf("advance: %s", now)
	}
	if now := clock(map[string]any{"advanceSeconds": 0}); now != testserver.TS(set.Add(90*time.Second)) {
		t.Errorf("advance 0: %s", now)
	}
	// set and advanceSeconds together: set, then move forward.
	if now := clock(map[string]any{"set": "2026-06-01T00:00:00Z", "advanceSeconds": 3600}); now != "2026-06-01T01:00:00.000Z" {
		t.Errorf("set and advance: %s", now)
	}
	// The whole server uses it.
	w := s.MustAdmin(201, "POST", "/workspaces", map[string]any{"name": "Later", "plan": "pro"}).Data()
	if w["createdAt"] != "2026-06-01T01:00:00.000Z" {
		t.Errorf("workspace created at %v under the dev clock", w["createdAt"])
	}
	// It survives a restart.
	s.Restart()
	if now := clock(nil); now != "2026-06-01T01:00:00.000Z" {
		t.Errorf("clock after restart: %s", now)
	}
}

// The clock never passes 9999-12-31T23:59:59.999Z, where times would
// need a fifth year digit (api.md 2.1), and a count of seconds too large
// for the server's arithmetic is refused before it is used. A refused move
// leaves the clock where it was.
func TestAdminClockBounds(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	now := func() string { return s.MustAdmin(200, "POST", "/clock", map[string]any{}).Data()["now"].(string) }
	const maxAdvance = int64(9223372036) // the seconds of the longest time.Duration
	for _, c := range []struct {
		name string
		body string
	}{
		{"beyond 2^53", `{"advanceSeconds":9007199254740993}`},
		{"2^53", `{"advanceSeconds":9007199254740992}`},
		{"the longest Duration and a second", `{"advanceSeconds":9223372037}`},
		{"set, then past the year 9999", `{"set":"9999-12-31T23:00:00Z","advanceSeconds":7200}`},
		{"set, then a second past the last millisecond", `{"set":"9999-12-31T23:59:59.999Z","advanceSeconds":1}`},
		{"set in the last hour, then an hour", `{"set":"9999-12-31T23:30:00+00:00","advanceSeconds":3600}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := now()
			admWantError(t, c.name, s.Admin("POST", "/clock", []byte(c.body)), 400, "INVALID_REQUEST", "advanceSeconds")
			if after := now(); after != before {
				t.Errorf("the refused move changed the clock: %s → %s", before, after)
			}
		})
	}
	// Up to the bounds, moves are taken.
	for _, c := range []struct {
		name, body, want string
	}{
		{"the longest advance", `{"set":"2026-03-04T10:00:00Z","advanceSeconds":` + strconv.FormatInt(maxAdvance, 10) + `}`, "2318-06-14T09:47:16.000Z"},
		{"set to the last millisecond", `{"set":"9999-12-31T23:59:59.999Z"}`, "9999-12-31T23:59:59.999Z"},
		{"set, then to the last second", `{"set":"9999-12-31T23:00:00Z","advanceSeconds":3599}`, "9999-12-31T23:59:59.000Z"},
		{"nothing from there", `{"advanceSeconds":0}`, "9999-12-31T23:59:59.000Z"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := s.Admin("POST", "/clock", []byte(c.body))
			admWantData(t, c.name, r, 200)
			if got := r.Data()["now"]; got != c.want {
				t.Errorf("now %v, want %s", got, c.want)
			}
		})
	}
	admWantError(t, "a second more", s.Admin("POST", "/clock", []byte(`{"advanceSeconds":1}`)), 400, "INVALID_REQUEST", "advanceSeconds")
}

func TestAdminClockWithoutDevClock(t *testing.T) {
	s := testserver.Start(t, testserver.Options{NoDevClock: true})
	for _, body := range []any{nil, map[string]any{"advanceSeconds": 60}, map[string]any{"set": "2030-01-01T00:00:00Z"}, `[]`} {
		var b any = body
		if str, ok := body.(string); ok {
			b = []byte(str)
		}
		admWantError(t, "clock without --dev-clock", s.Admin("POST", "/clock", b), 404, "NOT_FOUND", "")
	}
	// Still behind the token.
	admWantError(t, "clock without token", s.Do("POST", s.AdminURL+"/admin/v1/clock", nil, nil), 401, "UNAUTHORIZED", "")
	// The rest of the admin API runs on the system clock.
	before := time.Now().Add(-time.Second)
	w := s.MustAdmin(201, "POST", "/workspaces", map[string]any{"name": "Real time", "plan": "pro"}).Data()
	at, err := time.Parse(time.RFC3339Nano, w["createdAt"].(string))
	if err != nil || at.Before(before) || at.After(time.Now().Add(time.Second)) {
		t.Errorf("createdAt %v on the system clock (err %v)", w["createdAt"], err)
	}
}

func TestAdminProbes(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	for _, tc := range []struct{ path, body string }{{"/livez", `{"status":"ok"}`}, {"/readyz", `{"status":"ready"}`}} {
		// Probes answer without the admin token.
		r := s.Do("GET", s.AdminURL+tc.path, nil, nil)
		if r.Status != 200 || string(r.Body) != tc.body || r.Header.Get("Content-Type") != "application/json; charset=utf-8" {
			t.Errorf("%s: %d %q %q", tc.path, r.Status, r.Header.Get("Content-Type"), r.Body)
		}
	}
	// They live on the admin listener only.
	if r := s.Do("GET", s.PublicURL+"/livez", nil, nil); r.Status != 404 {
		t.Errorf("/livez on the public listener: %d", r.Status)
	}
	if r := s.Do("GET", s.PublicURL+"/metrics", nil, nil); r.Status != 404 {
		t.Errorf("/metrics on the public listener: %d", r.Status)
	}
}

// While the engine recovers, the admin listener already answers: /livez
// 200, /readyz 503 starting, every other path 503 UNAVAILABLE (token or
// not); once the engine is attached, everything answers as usual.
func TestAdminWhileStarting(t *testing.T) {
	logs := &syncbuf.Buffer{}
	srv := transport.New(transport.Config{AdminToken: testserver.AdminToken, DevClock: true,
		Logger: slog.New(slog.NewTextHandler(logs, nil))})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.ServeAdmin(ln)
	var eng *engine.Engine
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		if eng != nil {
			eng.Close()
		}
	})
	base := "http://" + ln.Addr().String()
	hc := &http.Client{Timeout: 10 * time.Second}
	type adminCase struct {
		method, path string
		token        bool
		status       int
		body         string
	}
	check := func(phase string, cases []adminCase) {
		for _, c := range cases {
			t.Run(phase+" "+c.method+" "+c.path, func(t *testing.T) {
				key := ""
				if c.token {
					key = testserver.AdminToken
				}
				r, err := testserver.Send(hc, c.method, base+c.path, testserver.Bearer(key), nil)
				if err != nil {
					t.Fatal(err)
				}
				if ct := r.Header.Get("Content-Type"); r.Status != c.status || string(r.Body) != c.body || ct != "application/json; charset=utf-8" {
					t.Errorf("got %d %s (%s), want %d %s", r.Status, r.Body, ct, c.status, c.body)
				}
			})
		}
	}
	const starting = `{"error":{"code":"UNAVAILABLE","message":"starting"}}`
	check("starting", []adminCase{
		{"GET", "/livez", false, 200, `{"status":"ok"}`},
		{"GET", "/readyz", false, 503, `{"status":"starting"}`},
		{"GET", "/admin/v1/workspaces", true, 503, starting},
		{"GET", "/admin/v1/workspaces", false, 503, starting},
		{"POST", "/admin/v1/workspaces", true, 503, starting},
		{"POST", "/admin/v1/clock", true, 503, starting},
		{"GET", "/metrics", false, 503, starting},
		{"GET", "/nope", false, 503, starting},
	})

	eng, err = engine.Open(engine.Options{Dir: t.TempDir(), Clock: engine.NewDevClock(testserver.T0),
		Logger: slog.New(slog.NewTextHandler(logs, nil)), WAL: wal.Options{OnFatal: func(err error) { t.Errorf("log failed: %v", err) }}})
	if err != nil {
		t.Fatal(err)
	}
	srv.Attach(eng)
	check("open", []adminCase{
		{"GET", "/livez", false, 200, `{"status":"ok"}`},
		{"GET", "/readyz", false, 200, `{"status":"ready"}`},
		{"GET", "/admin/v1/workspaces", true, 200, `{"data":[]}`},
		{"GET", "/admin/v1/workspaces", false, 401, `{"error":{"code":"UNAUTHORIZED","message":"Missing or invalid admin token"}}`},
		{"GET", "/nope", false, 404, `{"error":{"code":"NOT_FOUND","message":"No such endpoint"}}`},
	})
	if r, err := testserver.Send(hc, "GET", base+"/metrics", nil, nil); err != nil || r.Status != 200 {
		t.Errorf("/metrics once open: %d %v", r.Status, err)
	}
}

// admMetrics reads /metrics into sample → value (sample as written, e.g.
// `name{label="v"}`).
func admMetrics(s *testserver.Server) (map[string]float64, string) {
	s.T.Helper()
	r := s.Do("GET", s.AdminURL+"/metrics", nil, nil)
	if r.Status != 200 {
		s.T.Fatalf("/metrics: %d %s", r.Status, r.Body)
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		s.T.Errorf("/metrics Content-Type %q", ct)
	}
	m := map[string]float64{}
	sc := bufio.NewScanner(bytes.NewReader(r.Body))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			s.T.Errorf("/metrics line %q: %v", line, err)
			continue
		}
		m[line[:i]] = v
	}
	return m, string(r.Body)
}

func TestAdminMetrics(t *testing.T) {
	s, f := startFixture(t)
	s.Admin("POST", "/workspaces", map[string]any{"name": ""}) // a 400
	before, text := admMetrics(s)
	for _, name := range []string{"backupmon_http_requests_total", "backupmon_wal_fsync_seconds", "backupmon_wal_batch_records", "backupmon_reports_ingested_total"} {
		if !strings.Contains(text, "# TYPE "+name+" ") {
			t.Errorf("/metrics has no %s", name)
		}
	}
	// Requests by route and status.
	for sample, want := range map[string]float64{
		`backupmon_http_requests_total{route="admin_workspace_create",status="201"}`: 1,
		`backupmon_http_requests_total{route="admin_workspace_create",status="400"}`: 1,
		`backupmon_http_requests_total{route="admin_client_create",status="201"}`:    1,
		`backupmon_http_requests_total{route="admin_job_create",status="201"}`:       1,
		`backupmon_http_requests_total{route="admin_key_create",status="201"}`:       3,
	} {
		if before[sample] != want {
			t.Errorf("%s = %v, want %v", sample, before[sample], want)
		}
	}
	if before["backupmon_wal_fsync_seconds_count"] < 1 || before["backupmon_wal_batch_records_count"] < 1 ||
		before["backupmon_wal_batch_records_sum"] < 6 {
		t.Errorf("log metrics after six changes: fsync count %v, batch count %v, records %v", before["backupmon_wal_fsync_seconds_count"],
			before["backupmon_wal_batch_records_count"], before["backupmon_wal_batch_records_sum"])
	}
	if _, ok := before[`backupmon_wal_fsync_seconds_bucket{le="+Inf"}`]; !ok {
		t.Errorf("backupmon_wal_fsync_seconds is not a histogram")
	}

	// A report moves the counters; a duplicate is not ingested again.
	r := s.Report(f.Job, f.ReportKey, "run-1", `{"status":"ok"}`)
	if r.Status != 200 {
		t.Fatalf("report: %d %s", r.Status, r.Body)
	}
	if r := s.Report(f.Job, f.ReportKey, "run-1", `{"status":"ok"}`); r.Status != 200 || r.JSON["duplicate"] != true {
		t.Fatalf("duplicate: %d %s", r.Status, r.Body)
	}
	s.Report(f.Job, "svc_live_"+strings.Repeat("0", 48), "", `{"status":"ok"}`) // 401
	after, _ := admMetrics(s)
	if d := after["backupmon_reports_ingested_total"] - before["backupmon_reports_ingested_total"]; d != 1 {
		t.Errorf("reports_ingested_total moved by %v, want 1", d)
	}
	if d := after[`backupmon_http_requests_total{route="report",status="200"}`] - before[`backupmon_http_requests_total{route="report",status="200"}`]; d != 2 {
		t.Errorf(`requests{route="report",status="200"} moved by %v, want 2`, d)
	}
	if after[`backupmon_http_requests_total{route="report",status="401"}`] != 1 {
		t.Errorf(`requests{route="report",status="401"} = %v`, after[`backupmon_http_requests_total{route="report",status="401"}`])
	}
	if after["backupmon_wal_fsync_seconds_count"] <= before["backupmon_wal_fsync_seconds_count"] ||
		after["backupmon_wal_batch_records_sum"] < before["backupmon_wal_batch_records_sum"]+1 {
		t.Errorf("log metrics did not move with a report")
	}
}
