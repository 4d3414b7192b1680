package transport_test

// Helpers shared by the admin API tests (admin_*_test.go). Every name starts
// with "adm" so that the files of other test authors in this package cannot
// collide with them.

import (
	"encoding/json"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"backupmon/internal/testserver"
)

// admIn formats t as an input timestamp (RFC 3339 with milliseconds).
func admIn(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z07:00") }

// admWantError checks an admin error answer: the status, the shape
// {"error":{"code","message"}} and, when field is not empty, that the message
// names the field.
func admWantError(t *testing.T, what string, r testserver.Response, status int, code, field string) {
	t.Helper()
	if r.Status != status {
		t.Errorf("%s: status %d, want %d: %s", what, r.Status, status, r.Body)
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
		t.Errorf("%s: Content-Type %q", what, ct)
	}
	e, ok := r.JSON["error"].(map[string]any)
	if !ok || len(r.JSON) != 1 {
		t.Errorf("%s: answer is not {\"error\":{...}}: %s", what, r.Body)
		return
	}
	admWantKeys(t, what+": error", e, "code", "message")
	if e["code"] != code {
		t.Errorf("%s: code %v, want %s: %s", what, e["code"], code, r.Body)
	}
	msg, _ := e["message"].(string)
	if msg == "" {
		t.Errorf("%s: empty message: %s", what, r.Body)
	}
	if field != "" && !strings.Contains(msg, field) {
		t.Errorf("%s: message %q does not name the field %q", what, msg, field)
	}
}

// admKeysOf returns the sorted member names of m.
func admKeysOf(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// admWantKeys checks that m has exactly the members keys.
func admWantKeys(t testing.TB, what string, m map[string]any, keys ...string) {
	t.Helper()
	want := slices.Clone(keys)
	slices.Sort(want)
	if got := admKeysOf(m); !slices.Equal(got, want) {
		t.Errorf("%s: members %v, want %v", what, got, want)
	}
}

// admObj returns m[k] as an object, failing the test when it is not one.
func admObj(t testing.TB, m map[string]any, k string) map[string]any {
	t.Helper()
	v, ok := m[k].(map[string]any)
	if !ok {
		t.Fatalf("member %q is not an object: %#v", k, m[k])
	}
	return v
}

// admList returns m[k] as a list of objects.
func admList(t testing.TB, m map[string]any, k string) []map[string]any {
	t.Helper()
	raw, ok := m[k].([]any)
	if !ok {
		t.Fatalf("member %q is not a list: %#v", k, m[k])
	}
	out := make([]map[string]any, len(raw))
	for i, v := range raw {
		out[i], _ = v.(map[string]any)
	}
	return out
}

// admStrings returns a JSON list of strings as a Go slice.
func admStrings(t *testing.T, v any) []string {
	t.Helper()
	raw, ok := v.([]any)
	if !ok {
		t.Fatalf("not a list: %#v", v)
	}
	out := make([]string, len(raw))
	for i, s := range raw {
		out[i], ok = s.(string)
		if !ok {
			t.Fatalf("not a list of strings: %#v", v)
		}
	}
	return out
}

// admWantTime checks that v is a contract timestamp, equal to want unless
// want is zero.
func admWantTime(t *testing.T, what string, v any, want time.Time) {
	t.Helper()
	s, ok := v.(string)
	if !ok || !testserver.TimeRe.MatchString(s) {
		t.Errorf("%s: %#v is not a contract timestamp", what, v)
		return
	}
	if !want.IsZero() && s != testserver.TS(want) {
		t.Errorf("%s: %s, want %s", what, s, testserver.TS(want))
	}
}

// admWantData checks a success answer {"data": ...} with status and the JSON
// content type.
func admWantData(t *testing.T, what string, r testserver.Response, status int) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("%s: status %d, want %d: %s", what, r.Status, status, r.Body)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
		t.Errorf("%s: Content-Type %q", what, ct)
	}
	if _, ok := r.JSON["data"]; !ok || len(r.JSON) != 1 {
		t.Errorf("%s: answer is not {\"data\": ...}: %s", what, r.Body)
	}
}

// Member lists of the admin records.
var (
	admWorkspaceFields = []string{"id", "name", "timeZone", "plan", "status", "trialEndsAt", "createdAt"}
	admClientFields    = []string{"id", "name", "status", "needsAttention", "openAlerts", "jobs", "sla", "createdAt"}
	admClientJobs      = []string{"total", "healthy", "warning", "failed", "missing", "waiting", "paused"}
	admClientSLA       = []string{"successRate", "reports", "periodDays", "jobsMeetingTarget", "jobsBelowTarget"}
	admJobFields       = []string{"id", "name", "clientId", "clientName", "device", "vendor", "vendorName", "status", "late",
		"lastResult", "lastReportAt", "lastSuccessAt", "lastFailureAt", "failureStreak", "paused", "pausedUntil",
		"schedule", "sla", "createdAt"}
	// The admin views add the job's ingest address, which REST never shows.
	admJobAdminFields  = append(slices.Clone(admJobFields), "ingestAddress")
	admJobDetailFields = append(slices.Clone(admJobFields), "unresolvedAlerts", "history") // no recentResults: history holds them (decisions.md)
	admDeviceFields    = []string{"id", "name", "type", "hostname"}
	admScheduleFields  = []string{"intervalMinutes", "expectedDays", "graceMinutes", "nextExpectedAt"}
	admJobSLAFields    = []string{"target", "successRate", "met", "reports", "periodDays"}
	admKeyFields       = []string{"id", "name", "type", "prefix", "scopes", "createdAt", "expiresAt", "lastUsedAt"}
	admResultFields    = []string{"id", "jobId", "jobName", "clientId", "vendor", "status", "completedAt", "startedAt",
		"receivedAt", "durationSeconds", "sizeBytes"}
	admAlertFields = []string{"id", "type", "severity", "status", "clientId", "jobId", "jobName", "summary", "createdAt",
		"acknowledgedAt", "snoozedUntil", "resolvedAt", "recoverySeconds", "ai"}
	admAllScopes = []string{"workspace:read", "clients:read", "jobs:read", "reports:read", "alerts:read", "health:read"}
	admAllDays   = []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"}
)

var admIngestRe = regexp.MustCompile(`^[a-z2-7]{20}@ingest\.localhost$`)

// admCheckAdminJob checks an admin job view: the job object of
// admCheckJob plus its ingest address (decisions.md 10).
func admCheckAdminJob(t *testing.T, what string, j map[string]any, detail bool) {
	t.Helper()
	if a, _ := j["ingestAddress"].(string); !admIngestRe.MatchString(a) {
		t.Errorf("%s.ingestAddress: %#v is not 20 lowercase base32 characters at ingest.localhost", what, j["ingestAddress"])
	}
	rest := maps.Clone(j)
	delete(rest, "ingestAddress")
	admCheckJob(t, what, rest, detail)
}

// admCheckJob checks the job object of api.md 2.5: every member present,
// of its type, nothing more (detail adds the admin view's collections).
func admCheckJob(t *testing.T, what string, j map[string]any, detail bool) {
	t.Helper()
	if detail {
		admWantKeys(t, what, j, admJobDetailFields...)
	} else {
		admWantKeys(t, what, j, admJobFields...)
	}
	admWantKeys(t, what+".device", admObj(t, j, "device"), admDeviceFields...)
	admWantKeys(t, what+".schedule", admObj(t, j, "schedule"), admScheduleFields...)
	admWantKeys(t, what+".sla", admObj(t, j, "sla"), admJobSLAFields...)
	for _, k := range []string{"id", "name", "clientId", "clientName", "vendor", "vendorName", "status", "lastResult"} {
		if _, ok := j[k].(string); !ok {
			t.Errorf("%s.%s: %#v is not a string", what, k, j[k])
		}
	}
	for _, k := range []string{"lastReportAt", "lastSuccessAt", "lastFailureAt", "pausedUntil"} {
		if j[k] != nil {
			admWantTime(t, what+"."+k, j[k], time.Time{})
		}
	}
	admWantTime(t, what+".createdAt", j["createdAt"], time.Time{})
	admWantTime(t, what+".schedule.nextExpectedAt", admObj(t, j, "schedule")["nextExpectedAt"], time.Time{})
	if _, ok := j["paused"].(bool); !ok {
		t.Errorf("%s.paused: %#v is not a boolean", what, j["paused"])
	}
	if _, ok := j["failureStreak"].(float64); !ok {
		t.Errorf("%s.failureStreak: %#v is not a number", what, j["failureStreak"])
	}
	if detail {
		for _, r := range admList(t, j, "history") {
			admWantKeys(t, what+".history[]", r, append(slices.Clone(admResultFields), "source")...)
		}
		for _, a := range admList(t, j, "unresolvedAlerts") {
			admWantKeys(t, what+".unresolvedAlerts[]", a, admAlertFields...)
		}
	}
}

// admCheckClient checks the client record of decisions.md 4.2.
func admCheckClient(t *testing.T, what string, c map[string]any) {
	t.Helper()
	admWantKeys(t, what, c, admClientFields...)
	admWantKeys(t, what+".jobs", admObj(t, c, "jobs"), admClientJobs...)
	sla := admObj(t, c, "sla")
	admWantKeys(t, what+".sla", sla, admClientSLA...)
	if sla["periodDays"] != float64(30) {
		t.Errorf("%s.sla.periodDays = %v, want 30", what, sla["periodDays"])
	}
	admWantTime(t, what+".createdAt", c["createdAt"], time.Time{})
}

// admCheckKey checks a key record; withSecret says whether it is the
// creation answer (which alone carries `key`).
func admCheckKey(t *testing.T, what string, k map[string]any, withSecret bool) {
	t.Helper()
	want := slices.Clone(admKeyFields)
	if withSecret {
		want = append(want, "key")
	}
	if k["type"] == "assistant" {
		// decisions.md 12: assistant keys carry their access.
		want = append(want, "access")
	}
	admWantKeys(t, what, k, want...)
	admWantTime(t, what+".createdAt", k["createdAt"], time.Time{})
	if k["expiresAt"] != nil {
		admWantTime(t, what+".expiresAt", k["expiresAt"], time.Time{})
	}
	if k["lastUsedAt"] != nil {
		admWantTime(t, what+".lastUsedAt", k["lastUsedAt"], time.Time{})
	}
}

// admState reads every admin list of a workspace (and each job's view)
// as raw bodies, to compare before and after a refused request.
func admState(s *testserver.Server, ws string) map[string]string {
	s.T.Helper()
	st := map[string]string{}
	for _, p := range []string{"/workspaces", "/workspaces/" + ws, "/workspaces/" + ws + "/clients", "/workspaces/" + ws + "/jobs",
		"/workspaces/" + ws + "/keys", "/workspaces/" + ws + "/alerts", "/workspaces/" + ws + "/activity",
		"/workspaces/" + ws + "/channels", "/workspaces/" + ws + "/escalations", "/workspaces/" + ws + "/deliveries"} {
		st[p] = string(s.MustAdmin(200, "GET", p, nil).Body)
	}
	for _, j := range s.MustAdmin(200, "GET", "/workspaces/"+ws+"/jobs", nil).List() {
		p := "/workspaces/" + ws + "/jobs/" + j["id"].(string)
		st[p] = string(s.MustAdmin(200, "GET", p, nil).Body)
	}
	return st
}

// admSameState reports every difference between two admState readings.
func admSameState(t *testing.T, what string, before, after map[string]string) {
	t.Helper()
	for p, b := range before {
		if a, ok := after[p]; !ok {
			t.Errorf("%s: %s is gone", what, p)
		} else if a != b {
			t.Errorf("%s: %s changed:\nbefore %s\nafter  %s", what, p, b, a)
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			t.Errorf("%s: %s appeared", what, p)
		}
	}
}

// admJSON marshals v for a request body.
func admJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// admJobBody is a valid job create body; change edits it before it is sent.
func admJobBody(client string, change func(m map[string]any)) map[string]any {
	return testserver.JobBody(client, "Nightly", testserver.Daily(), change)
}

// admReport sends a report and requires 200.
func admReport(s *testserver.Server, job, key, status string) testserver.Response {
	s.T.Helper()
	r := s.Report(job, key, "", `{"status":"`+status+`"}`)
	if r.Status != 200 {
		s.T.Fatalf("report %s on %s: %d %s", status, job, r.Status, r.Body)
	}
	return r
}
