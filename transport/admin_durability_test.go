package transport_test

// Every admin mutation is durable before it answers (decisions.md 2): the
// state survives a clean restart (snapshot) and a recovery from the log
// alone (a copy of the data directory taken while the server runs, as a
// crash would leave it).

import (
	"regexp"
	"testing"
	"time"

	"backupmon/internal/testfs"
	"backupmon/internal/testserver"
)

var admLastUsedRe = regexp.MustCompile(`"lastUsedAt":("[^"]*"|null)`)

func TestAdminMutationsSurviveRestart(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	post := func(path string, body any) map[string]any {
		t.Helper()
		return s.MustAdmin(201, "POST", path, body).Data()
	}
	patch := func(path string, body any) {
		t.Helper()
		s.MustAdmin(200, "PATCH", path, body)
	}
	// Workspaces.
	a := post("/workspaces", map[string]any{"name": "Alpha", "plan": "trial", "timeZone": "Europe/Berlin", "trialEndsAt": "2026-06-01T00:00:00Z"})["id"].(string)
	b := post("/workspaces", map[string]any{"name": "Beta", "plan": "pro"})["id"].(string)
	A, B := "/workspaces/"+a, "/workspaces/"+b
	patch(A, map[string]any{"name": "Alpha MSP", "status": "suspended"})
	patch(A, map[string]any{"status": "active", "timeZone": "Europe/London"})
	patch(B, map[string]any{"plan": "growth", "status": "cancelled"})
	s.Advance(time.Minute)
	// Clients.
	c1 := post(A+"/clients", map[string]any{"name": "One"})["id"].(string)
	c2 := post(A+"/clients", map[string]any{"name": "Two", "status": "paused"})["id"].(string)
	c3 := post(A+"/clients", map[string]any{"name": "Three"})["id"].(string)
	post(B+"/clients", map[string]any{"name": "B client"})
	patch(A+"/clients/"+c1, map[string]any{"name": "One Ltd"})
	patch(A+"/clients/"+c3, map[string]any{"status": "archived"})
	// Jobs.
	job := func(client, name string, mod func(m map[string]any)) string {
		t.Helper()
		return post(A+"/jobs", admJobBody(client, func(m map[string]any) {
			m["name"] = name
			if mod != nil {
				mod(m)
			}
		}))["id"].(string)
	}
	j1 := job(c1, "J1", nil)
	j2 := job(c1, "J2", func(m map[string]any) {
		m["schedule"] = map[string]any{"intervalMinutes": 720, "expectedDays": []string{"mon", "fri"}, "graceMinutes": 30}
		m["slaTarget"] = 99.9
		m["vendor"] = "acronis"
	})
	j3 := job(c2, "J3", nil)
	j4 := job(c1, "J4", nil)
	j5 := job(c3, "J5", nil)
	patch(A+"/jobs/"+j1, map[string]any{"schedule": map[string]any{"intervalMinutes": 360}, "device": map[string]any{"type": "vm", "hostname": "vm7"}})
	patch(A+"/jobs/"+j2, map[string]any{"pausedUntil": admIn(testserver.T0.Add(48 * time.Hour))})
	patch(A+"/jobs/"+j3, map[string]any{"paused": true})
	patch(A+"/jobs/"+j5, map[string]any{"name": "J5 renamed", "slaTarget": 90})
	// Keys.
	rep := post(A+"/keys", map[string]any{"name": "agent", "type": "report"})
	post(A+"/keys", map[string]any{"name": "psa", "type": "rest", "scopes": []string{"jobs:read"}, "expiresAt": "2027-01-01T00:00:00Z"})
	post(A+"/keys", map[string]any{"name": "bot", "type": "assistant", "access": "read-write"})
	gone := post(A+"/keys", map[string]any{"name": "old", "type": "report"})
	if r := s.Admin("DELETE", A+"/keys/"+gone["id"].(string), nil); r.Status != 204 {
		t.Fatalf("revoke: %d %s", r.Status, r.Body)
	}
	// Reports and alert actions.
	key := rep["key"].(string)
	s.Advance(time.Hour)
	a1 := admReport(s, j1, key, "failed").JSON["alert_id"].(string)
	admReport(s, j4, key, "failed")
	s.Advance(time.Minute)
	admReport(s, j5, key, "ok")
	s.MustAdmin(200, "POST", A+"/alerts/"+a1+"/acknowledge", nil)
	s.Advance(time.Minute)
	s.MustAdmin(200, "POST", A+"/alerts/"+a1+"/snooze", map[string]any{"until": admIn(testserver.T0.Add(10 * time.Hour))})
	if r := admReport(s, j3, key, "warn"); r.JSON["alert_id"] != nil { // paused job: no alert
		t.Errorf("report on a paused job opened an alert")
	}
	s.MustAdmin(200, "PATCH", A+"/jobs/"+j1, map[string]any{"slaTarget": 97.5})
	if r := s.Admin("DELETE", A+"/jobs/"+j4, nil); r.Status != 204 {
		t.Fatalf("delete job: %d %s", r.Status, r.Body)
	}
	s.Advance(2 * time.Hour)
	// An alert resolved by the admin.
	a3 := admReport(s, j1, key, "warn").JSON["alert_id"].(string) // raises a1
	if a3 != a1 {
		t.Errorf("warn on a job with an unresolved alert: alert %s, want %s", a3, a1)
	}
	j6 := job(c1, "J6", nil)
	a4 := admReport(s, j6, key, "failed").JSON["alert_id"].(string)
	s.Advance(90 * time.Second)
	s.MustAdmin(200, "POST", A+"/alerts/"+a4+"/resolve", nil)

	clock := func() any { return s.MustAdmin(200, "POST", "/clock", nil).Data()["now"] }
	wantA, wantB, wantClock := admState(s, a), admState(s, b), clock()

	// A copy of the live directory, as a crash would leave it: the log
	// alone must give the same state.
	crashDir := t.TempDir()
	testfs.CopyDir(t, s.Dir, crashDir)

	s.Restart()
	admSameState(t, "A after restart", wantA, admState(s, a))
	admSameState(t, "B after restart", wantB, admState(s, b))
	if c := clock(); c != wantClock {
		t.Errorf("clock after restart %v, want %v", c, wantClock)
	}
	// Changes after a restart, and a second restart.
	post(A+"/clients", map[string]any{"name": "Four"})
	k2 := post(A+"/keys", map[string]any{"name": "after", "type": "report"})
	admReport(s, j6, k2["key"].(string), "ok")
	wantA2 := admState(s, a)
	s.Restart()
	admSameState(t, "A after a second restart", wantA2, admState(s, a))

	// The log alone. lastUsedAt lives in memory and snapshots only (a
	// report's use of a key is not logged); everything else must match.
	c := testserver.Start(t, testserver.Options{Dir: crashDir})
	mask := func(m map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range m {
			out[k] = admLastUsedRe.ReplaceAllString(v, `"lastUsedAt":X`)
		}
		return out
	}
	admSameState(t, "A recovered from the log", mask(wantA), mask(admState(c, a)))
	admSameState(t, "B recovered from the log", mask(wantB), mask(admState(c, b)))
	if now := c.MustAdmin(200, "POST", "/clock", nil).Data()["now"]; now != wantClock {
		t.Errorf("clock recovered from the log %v, want %v", now, wantClock)
	}
}
