package transport_test

// Report API request and response fields (api.md 2.9, 8.3; decisions.md 3,
// 4.5), through the real HTTP surface, read back through the admin job view.

import (
	"strings"
	"testing"
	"time"

	"backupmon/internal/testserver"
)

// rpFresh gives a subtest its own job (never reported, so never superseded)
// and its own report key (so the per-key minute limit never interferes).
func rpFresh(s *testserver.Server, f testserver.Fixture) (job, key string) {
	s.T.Helper()
	job = s.NewJob(f.WS, f.Client, "Job "+strings.ReplaceAll(s.T.Name(), "/", " "), testserver.Daily())
	key, _ = s.NewKey(f.WS, "report", nil)
	return job, key
}

// rpOnly returns the job's single history entry, failing unless there is
// exactly one.
func rpOnly(s *testserver.Server, ws, job string) map[string]any {
	s.T.Helper()
	h := rpHistory(s, ws, job)
	if len(h) != 1 {
		s.T.Fatalf("history has %d entries, want 1: %v", len(h), h)
	}
	return h[0]
}

// rpNothingRecorded checks that a refused report left the job untouched.
func rpNothingRecorded(s *testserver.Server, ws, job string) {
	s.T.Helper()
	j := rpJob(s, ws, job)
	if h := admList(s.T, j, "history"); len(h) != 0 {
		s.T.Errorf("refused report was recorded: %v", h)
	}
	rpFields(s.T, "job after a refused report", j, map[string]any{"status": "waiting", "lastResult": "none", "lastReportAt": nil})
}

func TestReportStatusField(t *testing.T) {
	s, f := startFixture(t)
	accepted := []struct {
		name, body, echo, jobStatus, result string
	}{
		{"ok", `{"status":"ok"}`, "ok", "healthy", "ok"},
		{"warn", `{"status":"warn"}`, "warn", "warning", "warning"},
		{"failed", `{"status":"failed"}`, "failed", "failed", "failed"},
		// A JSON string is its decoded text, whatever escapes spell it.
		{"escaped ok", `{"status":"\u006fk"}`, "ok", "healthy", "ok"},
		{"whitespace around", " \n{ \"status\" : \"warn\" }\n ", "warn", "warning", "warning"},
	}
	for _, c := range accepted {
		rpRun(t, s, "accepted "+c.name, func(t *testing.T) {
			job, key := rpFresh(s, f)
			id := rpAccepted(t, c.name, s.Report(job, key, "", c.body), c.echo)
			j := rpJob(s, f.WS, job)
			rpFields(t, "job", j, map[string]any{"status": c.jobStatus, "lastResult": c.result})
			rpFields(t, "result", rpOnly(s, f.WS, job), map[string]any{"status": c.result})
			if id != "" {
				rpFields(t, "alert", rpAlert(s, f.WS, id), map[string]any{"jobId": job, "status": "open"})
			}
		})
	}
	refused := []struct{ name, body string }{
		{"missing", `{}`},
		{"missing with other fields", `{"size_bytes":10,"duration_seconds":5}`},
		{"null", `{"status":null}`},
		{"upper case OK", `{"status":"OK"}`},
		{"capitalised Warn", `{"status":"Warn"}`},
		{"upper case FAILED", `{"status":"FAILED"}`},
		{"warning spelled out", `{"status":"warning"}`},
		{"fail", `{"status":"fail"}`},
		{"healthy", `{"status":"healthy"}`},
		{"empty", `{"status":""}`},
		{"padded", `{"status":" ok"}`},
		{"number", `{"status":1}`},
		{"boolean", `{"status":true}`},
		{"list", `{"status":["ok"]}`},
		{"object", `{"status":{"value":"ok"}}`},
		{"field name upper case", `{"STATUS":"ok"}`},
	}
	for _, c := range refused {
		rpRun(t, s, "refused "+c.name, func(t *testing.T) {
			job, key := rpFresh(s, f)
			rpWantErr(t, c.name, s.Report(job, key, "", c.body), 400, rpMsgStatus)
			rpNothingRecorded(s, f.WS, job)
		})
	}
}

func TestReportInvalidJSON(t *testing.T) {
	s, f := startFixture(t)
	for _, body := range []string{
		``, ` `, `status=ok`, `null`, `true`, `1`, `"ok"`, `[]`, `[{"status":"ok"}]`,
		`{"status":"ok"`, `{"status":"ok",}`, `{"status":"ok"} x`, `{"status":"ok"}{}`, `{status:"ok"}`,
		`{'status':'ok'}`, `{"status":"ok" "size_bytes":1}`, `{"status":ok}`, `{"status":"ok","size_bytes":01}`,
		`{"status":"ok","size_bytes":NaN}`, `{"status":"ok","x":"\q"}`,
	} {
		rpRun(t, s, body, func(t *testing.T) {
			job, key := rpFresh(s, f)
			rpWantErr(t, "body "+body, s.Report(job, key, "", body), 400, rpMsgInvalidJSON)
			rpNothingRecorded(s, f.WS, job)
		})
	}
}

// rpBodyCase is an accepted report body: the members added to
// {"status":"ok" and the value the result records (nil: none).
type rpBodyCase struct {
	name, field string
	want        any
}

// rpRunAccepted sends each case on a fresh job, requires it accepted, and
// checks the job's one result against fields(case.want).
func rpRunAccepted(t *testing.T, s *testserver.Server, f testserver.Fixture, cases []rpBodyCase, fields func(want any) map[string]any) {
	t.Helper()
	for _, c := range cases {
		rpRun(t, s, "accepted "+c.name, func(t *testing.T) {
			job, key := rpFresh(s, f)
			rpAccepted(t, c.name, s.Report(job, key, "", `{"status":"ok"`+c.field+`}`), "ok")
			rpFields(t, "result", rpOnly(s, f.WS, job), fields(c.want))
		})
	}
}

func TestReportSizeBytes(t *testing.T) {
	s, f := startFixture(t)
	rpRunAccepted(t, s, f, []rpBodyCase{
		{"absent", ``, nil},
		{"null means absent", `,"size_bytes":null`, nil},
		{"zero is accepted but not recorded", `,"size_bytes":0`, nil},
		{"zero as 0.0", `,"size_bytes":0.0`, nil},
		{"one", `,"size_bytes":1`, 1},
		{"a terabyte", `,"size_bytes":1099511627776`, 1099511627776},
		{"exponent", `,"size_bytes":1.5e3`, 1500},
		// docs/decisions.md: a fraction is rounded half up to whole bytes.
		{"fraction half up", `,"size_bytes":10.5`, 11},
		{"fraction down", `,"size_bytes":10.4`, 10},
	}, func(want any) map[string]any { return map[string]any{"sizeBytes": want} })
	for _, c := range []struct{ name, field string }{
		{"negative", `-1`},
		{"negative fraction", `-0.5`},
		{"string", `"100"`},
		{"string zero", `"0"`},
		{"boolean", `true`},
		{"list", `[1]`},
		{"object", `{"bytes":1}`},
		{"too large for a float", `1e400`},
		{"2^63 cannot be stored", `9223372036854775808`},
	} {
		rpRun(t, s, "refused "+c.name, func(t *testing.T) {
			job, key := rpFresh(s, f)
			rpWantErr(t, c.name, s.Report(job, key, "", `{"status":"ok","size_bytes":`+c.field+`}`), 400, rpMsgSize)
			rpNothingRecorded(s, f.WS, job)
		})
	}
}

func TestReportDurationSeconds(t *testing.T) {
	s, f := startFixture(t)
	completed := testserver.T0 // the development clock stands still at T0
	rpRunAccepted(t, s, f, []rpBodyCase{
		{"absent", ``, nil},
		{"null means absent", `,"duration_seconds":null`, nil},
		{"zero", `,"duration_seconds":0`, 0},
		{"upper bound 604800 inclusive", `,"duration_seconds":604800`, 604800},
		{"upper bound as 604800.0", `,"duration_seconds":604800.0`, 604800},
		{"whole", `,"duration_seconds":3600`, 3600},
		{"1.5 rounds half up to 2", `,"duration_seconds":1.5`, 2},
		{"2.4 rounds to 2", `,"duration_seconds":2.4`, 2},
		{"2.5 rounds half up to 3", `,"duration_seconds":2.5`, 3},
		{"0.4 rounds to 0", `,"duration_seconds":0.4`, 0},
		{"0.5 rounds half up to 1", `,"duration_seconds":0.5`, 1},
		{"604799.5 rounds up to 604800", `,"duration_seconds":604799.5`, 604800},
		{"exponent", `,"duration_seconds":1.2e2`, 120},
	}, func(seconds any) map[string]any {
		want := map[string]any{"durationSeconds": nil, "startedAt": nil, "completedAt": testserver.TS(completed)}
		if n, ok := seconds.(int); ok {
			want["durationSeconds"] = n
			want["startedAt"] = testserver.TS(completed.Add(-time.Duration(n) * time.Second))
		}
		return want
	})
	for _, c := range []struct{ name, field string }{
		{"604800.4 is checked before rounding", `604800.4`},
		{"604801", `604801`},
		{"negative", `-1`},
		{"slightly negative", `-0.1`},
		{"string", `"60"`},
		{"boolean", `false`},
		{"list", `[60]`},
		{"object", `{"s":60}`},
		{"huge", `1e400`},
	} {
		rpRun(t, s, "refused "+c.name, func(t *testing.T) {
			job, key := rpFresh(s, f)
			rpWantErr(t, c.name, s.Report(job, key, "", `{"status":"ok","duration_seconds":`+c.field+`}`), 400, rpMsgDuration)
			rpNothingRecorded(s, f.WS, job)
		})
	}
	rpRun(t, s, "startedAt is completedAt minus duration with a timestamp", func(t *testing.T) {
		job, key := rpFresh(s, f)
		rpAccepted(t, "report", s.Report(job, key, "", `{"status":"ok","timestamp":"2026-03-04T09:00:00Z","duration_seconds":90.4}`), "ok")
		rpFields(t, "result", rpOnly(s, f.WS, job), map[string]any{
			"completedAt": "2026-03-04T09:00:00.000Z", "startedAt": "2026-03-04T08:58:30.000Z",
			"durationSeconds": 90, "receivedAt": testserver.TS(testserver.T0),
		})
	})
	rpRun(t, s, "body checks run in order status, size, duration", func(t *testing.T) {
		job, key := rpFresh(s, f)
		rpWantErr(t, "bad status and size", s.Report(job, key, "", `{"status":"x","size_bytes":-1,"duration_seconds":-1}`), 400, rpMsgStatus)
		rpWantErr(t, "bad size and duration", s.Report(job, key, "", `{"status":"ok","size_bytes":-1,"duration_seconds":-1}`), 400, rpMsgSize)
		rpNothingRecorded(s, f.WS, job)
	})
}

// rpTimestampCase is a report timestamp and the completedAt it must give
// (the receipt time when the timestamp is ignored).
type rpTimestampCase struct {
	name, field string // field: the raw JSON after "timestamp": (empty: absent)
	completed   time.Time
}

func rpRunTimestampCases(t *testing.T, s *testserver.Server, f testserver.Fixture, now time.Time, cases []rpTimestampCase) {
	t.Helper()
	for _, c := range cases {
		rpRun(t, s, c.name, func(t *testing.T) {
			job, key := rpFresh(s, f)
			body := `{"status":"ok"}`
			if c.field != "" {
				body = `{"status":"ok","timestamp":` + c.field + `}`
			}
			rpAccepted(t, c.name, s.Report(job, key, "", body), "ok")
			rpFields(t, "result", rpOnly(s, f.WS, job), map[string]any{"completedAt": testserver.TS(c.completed), "receivedAt": testserver.TS(now)})
			rpFields(t, "job", rpJob(s, f.WS, job), map[string]any{"lastReportAt": testserver.TS(c.completed), "lastSuccessAt": testserver.TS(c.completed)})
		})
	}
}

func TestReportTimestamp(t *testing.T) {
	s, f := startFixture(t)
	q := func(tm time.Time) string { return `"` + tm.UTC().Format("2006-01-02T15:04:05.000Z") + `"` }
	nine := time.Date(2026, 3, 4, 9, 0, 0, 0, time.UTC)
	rpRunTimestampCases(t, s, f, testserver.T0, []rpTimestampCase{
		{"missing", ``, testserver.T0},
		{"null means absent", `null`, testserver.T0},
		{"UTC with Z", `"2026-03-04T09:00:00Z"`, nine},
		{"fraction kept to the millisecond", `"2026-03-04T09:00:00.123456Z"`, nine.Add(123 * time.Millisecond)},
		{"offset +02:00", `"2026-03-04T11:00:00+02:00"`, nine},
		{"offset -05:30", `"2026-03-04T03:30:00-05:30"`, nine},
		{"offset +00:00", `"2026-03-04T09:00:00+00:00"`, nine},
		{"offset +0200", `"2026-03-04T11:00:00+0200"`, nine},
		{"offset across midnight", `"2026-03-03T23:00:00-10:00"`, nine},
		{"exactly 5 minutes in the future is accepted", q(testserver.T0.Add(5 * time.Minute)), testserver.T0.Add(5 * time.Minute)},
		{"5 minutes and 1 ms in the future is ignored", q(testserver.T0.Add(5*time.Minute + time.Millisecond)), testserver.T0},
		{"an hour in the future is ignored", q(testserver.T0.Add(time.Hour)), testserver.T0},
		{"exactly 30 days old is accepted", q(testserver.T0.Add(-30 * 24 * time.Hour)), testserver.T0.Add(-30 * 24 * time.Hour)},
		{"30 days and 1 ms old is ignored", q(testserver.T0.Add(-30*24*time.Hour - time.Millisecond)), testserver.T0},
		{"a year old is ignored", `"2025-03-04T10:00:00Z"`, testserver.T0},
		{"unreadable word", `"yesterday"`, testserver.T0},
		{"unreadable empty", `""`, testserver.T0},
		{"date only", `"2026-03-04"`, testserver.T0},
		{"no such day", `"2026-02-30T09:00:00Z"`, testserver.T0},
		{"hour 25", `"2026-03-04T25:00:00Z"`, testserver.T0},
		{"offset beyond 18 hours", `"2026-03-04T09:00:00+19:00"`, testserver.T0},
		{"unix seconds as a number", `1772614800`, testserver.T0},
		{"unix milliseconds as a number", `1772614800000`, testserver.T0},
		{"unix seconds as a string", `"1772614800"`, testserver.T0},
		{"boolean", `true`, testserver.T0},
		{"object", `{"at":"2026-03-04T09:00:00Z"}`, testserver.T0},
		{"list", `["2026-03-04T09:00:00Z"]`, testserver.T0},
	})
}

// Without an offset a timestamp is read in the workspace's time zone
// (docs/decisions.md); with one, the offset wins.
func TestReportTimestampWorkspaceZone(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	rpRun(t, s, "Asia/Tokyo", func(t *testing.T) {
		f := s.Fixture(testserver.FixtureOptions{TimeZone: "Asia/Tokyo"}) // UTC+9, no DST
		rpRunTimestampCases(t, s, f, testserver.T0, []rpTimestampCase{
			// 19:03 in Tokyo is 10:03Z, within 5 minutes; read as UTC it
			// would be 9 hours ahead and ignored.
			{"local, 3 minutes ahead", `"2026-03-04T19:03:00"`, testserver.T0.Add(3 * time.Minute)},
			{"local, an hour ago", `"2026-03-04T18:00:00"`, testserver.T0.Add(-time.Hour)},
			{"local without seconds", `"2026-03-04T18:30"`, testserver.T0.Add(-30 * time.Minute)},
			// 10:00 in Tokyo is 01:00Z: accepted as 01:00Z, not as 10:00Z.
			{"local morning", `"2026-03-04T10:00:00"`, testserver.T0.Add(-9 * time.Hour)},
			{"local, 6 minutes ahead is ignored", `"2026-03-04T19:06:00"`, testserver.T0},
			{"offset wins over the zone", `"2026-03-04T09:00:00Z"`, testserver.T0.Add(-time.Hour)},
			{"explicit +09:00", `"2026-03-04T18:00:00+09:00"`, testserver.T0.Add(-time.Hour)},
		})
	})
	rpRun(t, s, "America/New_York across the DST change", func(t *testing.T) {
		f := s.Fixture(testserver.FixtureOptions{TimeZone: "America/New_York"})
		// The clock moves past 2026-03-08, when New York goes from -05:00
		// to -04:00.
		now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
		s.SetClock(now)
		rpRunTimestampCases(t, s, f, now, []rpTimestampCase{
			{"EDT local", `"2026-03-10T07:00:00"`, now.Add(-time.Hour)},
			{"EST local before the change", `"2026-03-07T07:00:00"`, time.Date(2026, 3, 7, 12, 0, 0, 0, time.UTC)},
		})
	})
}

func TestReportOtherFieldsIgnored(t *testing.T) {
	s, f := startFixture(t)
	job, key := rpFresh(s, f)
	body := `{"status":"failed","job_id":"x","jobId":"y","alert_id":"z","duplicate":true,"superseded":true,` +
		`"ok":false,"message":"disk full","Size_Bytes":"bad","DURATION_SECONDS":-5,"nested":{"a":[1,{"b":null}]},"n":1e400}`
	id := rpAccepted(t, "report", s.Report(job, key, "", body), "failed")
	rpFields(t, "result", rpOnly(s, f.WS, job), map[string]any{"status": "failed", "sizeBytes": nil, "durationSeconds": nil})
	a := rpAlert(s, f.WS, id)
	if strings.Contains(a["summary"].(string), "disk full") {
		t.Errorf("an ignored body field reached the alert summary: %v", a["summary"])
	}
}

func TestReportResponseFields(t *testing.T) {
	s, f := startFixture(t)

	// warn: status echoed as sent ("warn", not "warning"), alert_id the
	// alert opened.
	s.Advance(time.Minute)
	r := s.Report(f.Job, f.ReportKey, "", `{"status":"warn"}`)
	id := rpAccepted(t, "warn", r, "warn")
	alerts := rpAlerts(s, f.WS)
	if len(alerts) != 1 || alerts[0]["id"] != id {
		t.Fatalf("alerts after warn: %v, want one with id %s", alerts, id)
	}
	// failed raises the same alert: same alert_id.
	s.Advance(time.Minute)
	rpWant(t, "failed", s.Report(f.Job, f.ReportKey, "", `{"status":"failed"}`), 200, rpOK("failed", id, false, false))
	// ok: alert_id null although it resolves the alert.
	s.Advance(time.Minute)
	rpWant(t, "ok", s.Report(f.Job, f.ReportKey, "", `{"status":"ok"}`), 200, rpOK("ok", "", false, false))
	// superseded: a timestamp not newer than the latest report.
	rpWant(t, "superseded failed", s.Report(f.Job, f.ReportKey, "", `{"status":"failed","timestamp":"2026-03-04T10:00:00Z"}`), 200, rpOK("failed", "", false, true))
	// duplicate.
	s.Advance(time.Minute)
	rpWant(t, "first with key", s.Report(f.Job, f.ReportKey, "k-1", `{"status":"ok"}`), 200, rpOK("ok", "", false, false))
	rpWant(t, "duplicate", s.Report(f.Job, f.ReportKey, "k-1", `{"status":"warn"}`), 200, rpDup("warn"))
}
