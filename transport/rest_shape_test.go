package transport_test

// The nine REST endpoints' shapes and values (api.md 2, decisions.md 4):
// every member present, times in the contract's shape, rates with one
// decimal (checked in the raw bytes) and null with nothing to rate, job
// figures at exact times on the development clock, client and workspace
// health with archived clients left out.

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"backupmon/internal/testserver"
)

// Member lists of the REST objects (decisions.md 4).
var (
	rsJobDetailFields = append(slices.Clone(admJobFields), "recentResults", "unresolvedAlerts")
	rsHealthFields    = []string{"scope", "monitoredJobs", "healthy", "warning", "failed", "missing", "waiting", "paused",
		"openAlerts", "unresolvedAlerts", "backupSuccessRate", "reports", "slaComplianceRate", "clientsNeedingAttention",
		"clients", "period", "timestamp"}
	rsClientHealthFields = append(slices.Clone(rsHealthFields), "clientId", "clientName")
	rsLimitsFields       = []string{"requestsPerMinute", "monthlyQuota", "monthlyUsed", "pageSizeDefault", "pageSizeMax",
		"maxWindowDays", "healthDaysMax", "reportRequestsPerMinute", "reportsPerJobPerDay"}
)

// rsRichData names what rsRich made.
type rsRichData struct {
	f                                             testserver.Fixture
	Globex, Initech, Archived, PausedCo, Umbrella string
	J1, J2, J3, J4, J5, J6, J7, J8, J9, J10       string
	A1, A4, A7, A9, A10                           string
	Results                                       []string // every result id, newest received first
	Clients, Jobs                                 map[string]string
	Now                                           time.Time
}

// rsIdemKey and rsNote are sent in the rich workspace and must never show
// in a REST answer.
const (
	rsIdemKey = "idem-forbidden-7f3a"
	rsNote    = "note-forbidden-c41d"
)

// rsRich builds a workspace (plan pro, UTC) with a job in each status,
// alerts in each status, an archived and a paused client, results inside
// and outside a day, and leaves the clock at Now = T0 + 1h03m00.5s:
//
//	Globex:      J1 Nightly backup (ok, ok, failed: failed, open alert A1),
//	             J2 Mail server (acronis vm; ok dated T0−3d with duration
//	             and size, then ok: healthy), J3 Waiting job (no report; shares
//	             J1's device by hostname)
//	Initech:     J4 Warn job (warn: warning, A4 acknowledged), J5 Paused job
//	             (paused), J6 Hourly job (ok at T0+1m, hourly, grace 0: missing,
//	             late by 2 minutes)
//	Archived Co: J7 Archived job (failed, open A7; then the client archived)
//	Paused Co:   J8 Paused client job (the client paused)
//	Umbrella:    J9 Recovered job (failed, then ok: A9 resolved after 180 s),
//	             J10 Snoozed job (warn: A10 snoozed until T0+5h)
func rsRich(s *testserver.Server, plan string) rsRichData {
	s.T.Helper()
	d := rsRichData{f: s.Fixture(testserver.FixtureOptions{Plan: plan})}
	f := d.f
	ws := f.WS
	s.SetClock(testserver.T0)
	d.Globex, d.J1 = f.Client, f.Job
	d.Initech = s.NewClient(ws, "Initech")
	d.Archived = s.NewClient(ws, "Archived Co")
	d.PausedCo = s.NewClient(ws, "Paused Co")
	d.Umbrella = s.NewClient(ws, "Umbrella")
	d.J2 = rsJob(s, ws, d.Globex, "Mail server", func(m map[string]any) {
		m["vendor"] = "acronis"
		m["device"] = map[string]any{"name": "Mail VM", "type": "vm", "hostname": "mail01"}
	})
	d.J3 = rsJob(s, ws, d.Globex, "Waiting job", func(m map[string]any) {
		m["device"] = map[string]any{"name": "File server", "type": "server", "hostname": "fs01"}
	})
	d.J4 = rsJob(s, ws, d.Initech, "Warn job", nil)
	d.J5 = rsJob(s, ws, d.Initech, "Paused job", nil)
	d.J6 = rsJob(s, ws, d.Initech, "Hourly job", func(m map[string]any) {
		m["schedule"] = map[string]any{"intervalMinutes": 60, "graceMinutes": 0}
	})
	d.J7 = rsJob(s, ws, d.Archived, "Archived job", nil)
	d.J8 = rsJob(s, ws, d.PausedCo, "Paused client job", nil)
	d.J9 = rsJob(s, ws, d.Umbrella, "Recovered job", nil)
	d.J10 = rsJob(s, ws, d.Umbrella, "Snoozed job", nil)
	d.Clients = map[string]string{d.Globex: "Globex", d.Initech: "Initech", d.Archived: "Archived Co", d.PausedCo: "Paused Co", d.Umbrella: "Umbrella"}
	d.Jobs = map[string]string{d.J1: "Nightly backup", d.J2: "Mail server", d.J3: "Waiting job", d.J4: "Warn job", d.J5: "Paused job",
		d.J6: "Hourly job", d.J7: "Archived job", d.J8: "Paused client job", d.J9: "Recovered job", d.J10: "Snoozed job"}

	key := f.ReportKey
	var results []string // oldest first
	send := func(job, idem, body string) string {
		s.T.Helper()
		r := s.Report(job, key, idem, body)
		if r.Status != 200 || r.JSON["superseded"] != false {
			s.T.Fatalf("report %s: %d %s", body, r.Status, r.Body)
		}
		h := rpHistory(s, ws, job)
		results = append(results, h[0]["id"].(string))
		id, _ := r.JSON["alert_id"].(string)
		return id
	}
	// T0
	send(d.J2, "", `{"status":"ok","timestamp":"`+admIn(testserver.T0.Add(-72*time.Hour))+`","duration_seconds":600,"size_bytes":1234}`)
	d.A7 = send(d.J7, "", `{"status":"failed"}`)
	d.A9 = send(d.J9, "", `{"status":"failed","size_bytes":0}`)
	d.A10 = send(d.J10, "", `{"status":"warn"}`)
	// T0+1m
	s.SetClock(testserver.T0.Add(time.Minute))
	send(d.J1, rsIdemKey, `{"status":"ok"}`)
	d.A4 = send(d.J4, "", `{"status":"warn"}`)
	send(d.J6, "", `{"status":"ok"}`)
	// T0+2m
	s.SetClock(testserver.T0.Add(2 * time.Minute))
	send(d.J1, "", `{"status":"ok"}`)
	send(d.J2, "", `{"status":"ok"}`)
	// T0+3m
	s.SetClock(testserver.T0.Add(3 * time.Minute))
	d.A1 = send(d.J1, "", `{"status":"failed"}`)
	send(d.J9, "", `{"status":"ok"}`)
	base := "/workspaces/" + ws
	s.MustAdmin(200, "POST", base+"/alerts/"+d.A10+"/snooze", map[string]any{"until": admIn(testserver.T0.Add(5 * time.Hour)), "note": rsNote})
	// T0+4m
	s.SetClock(testserver.T0.Add(4 * time.Minute))
	s.MustAdmin(200, "POST", base+"/alerts/"+d.A4+"/acknowledge", map[string]any{"note": rsNote})
	s.MustAdmin(200, "PATCH", base+"/clients/"+d.Archived, map[string]any{"status": "archived"})
	s.MustAdmin(200, "PATCH", base+"/clients/"+d.PausedCo, map[string]any{"status": "paused"})
	s.MustAdmin(200, "PATCH", base+"/jobs/"+d.J5, map[string]any{"paused": true})
	d.Now = testserver.T0.Add(time.Hour + 3*time.Minute + 500*time.Millisecond)
	s.SetClock(d.Now)
	slices.Reverse(results)
	d.Results = results
	return d
}

func TestRESTShapes(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	d := rsRich(s, "pro")
	key := d.f.RestKey
	ts := func(d time.Duration) string { return testserver.TS(testserver.T0.Add(d)) }
	m := time.Minute

	rpRun(t, s, "workspace", func(t *testing.T) {
		r := rsGet(s, key, "/workspace")
		data := rsData(t, "workspace", r)
		admWantKeys(t, "workspace", data, "workspace", "key", "limits")
		w := admObj(t, data, "workspace")
		admWantKeys(t, "workspace.workspace", w, admWorkspaceFields...)
		rpFields(t, "workspace.workspace", w, map[string]any{"id": d.f.WS, "name": "Acme IT", "timeZone": "UTC", "plan": "pro",
			"status": "active", "trialEndsAt": nil, "createdAt": testserver.TS(testserver.T0)})
		k := admObj(t, data, "key")
		admWantKeys(t, "workspace.key", k, admKeyFields...)
		var keyID string
		for _, l := range s.MustAdmin(200, "GET", "/workspaces/"+d.f.WS+"/keys", nil).List() {
			if l["name"] == "psa" {
				keyID = l["id"].(string)
			}
		}
		rpFields(t, "workspace.key", k, map[string]any{"id": keyID, "name": "psa", "prefix": key[:16], "type": "rest",
			"createdAt": testserver.TS(testserver.T0), "expiresAt": nil, "lastUsedAt": testserver.TS(d.Now)})
		if got := admStrings(t, k["scopes"]); !slices.Equal(admSorted(got), admSorted(admAllScopes)) {
			t.Errorf("scopes %v", got)
		}
		l := admObj(t, data, "limits")
		admWantKeys(t, "workspace.limits", l, rsLimitsFields...)
		rpFields(t, "workspace.limits", l, map[string]any{"requestsPerMinute": 300, "monthlyQuota": nil, "monthlyUsed": nil,
			"pageSizeDefault": 50, "pageSizeMax": 100, "maxWindowDays": 93, "healthDaysMax": 90, "reportRequestsPerMinute": 60,
			"reportsPerJobPerDay": 100})
		if !strings.Contains(string(r.Body), `"monthlyQuota":null,"monthlyUsed":null`) {
			t.Errorf("Pro quota members not null: %s", r.Body)
		}
	})

	// The clients, as listed and one by one.
	wantClients := map[string]map[string]any{
		d.Globex: {"name": "Globex", "status": "active", "needsAttention": true, "openAlerts": 1,
			"jobs": map[string]any{"total": 3, "healthy": 1, "warning": 0, "failed": 1, "missing": 0, "waiting": 1, "paused": 0},
			"sla":  map[string]any{"successRate": "80.0", "reports": 5, "periodDays": 30, "jobsMeetingTarget": 1, "jobsBelowTarget": 1}},
		d.Initech: {"name": "Initech", "status": "active", "needsAttention": true, "openAlerts": 1,
			"jobs": map[string]any{"total": 3, "healthy": 0, "warning": 1, "failed": 0, "missing": 1, "waiting": 0, "paused": 1},
			"sla":  map[string]any{"successRate": "50.0", "reports": 2, "periodDays": 30, "jobsMeetingTarget": 1, "jobsBelowTarget": 1}},
		d.Archived: {"name": "Archived Co", "status": "archived", "needsAttention": true, "openAlerts": 1,
			"jobs": map[string]any{"total": 1, "healthy": 0, "warning": 0, "failed": 0, "missing": 0, "waiting": 0, "paused": 1},
			"sla":  map[string]any{"successRate": "0.0", "reports": 1, "periodDays": 30, "jobsMeetingTarget": 0, "jobsBelowTarget": 1}},
		d.PausedCo: {"name": "Paused Co", "status": "paused", "needsAttention": false, "openAlerts": 0,
			"jobs": map[string]any{"total": 1, "healthy": 0, "warning": 0, "failed": 0, "missing": 0, "waiting": 0, "paused": 1},
			"sla":  map[string]any{"successRate": "null", "reports": 0, "periodDays": 30, "jobsMeetingTarget": 0, "jobsBelowTarget": 0}},
		d.Umbrella: {"name": "Umbrella", "status": "active", "needsAttention": false, "openAlerts": 0,
			"jobs": map[string]any{"total": 2, "healthy": 1, "warning": 1, "failed": 0, "missing": 0, "waiting": 0, "paused": 0},
			"sla":  map[string]any{"successRate": "33.3", "reports": 3, "periodDays": 30, "jobsMeetingTarget": 0, "jobsBelowTarget": 2}},
	}
	checkClient := func(t *testing.T, what string, c map[string]any, raw []byte) {
		t.Helper()
		admCheckClient(t, what, c)
		w, ok := wantClients[c["id"].(string)]
		if !ok {
			t.Fatalf("%s: unknown client %v", what, c["id"])
		}
		rpFields(t, what, c, map[string]any{"name": w["name"], "status": w["status"], "needsAttention": w["needsAttention"],
			"openAlerts": w["openAlerts"], "createdAt": testserver.TS(testserver.T0)})
		rpFields(t, what+".jobs", admObj(t, c, "jobs"), w["jobs"].(map[string]any))
		sla := w["sla"].(map[string]any)
		rate := sla["successRate"].(string)
		rpFields(t, what+".sla", admObj(t, c, "sla"), map[string]any{"reports": sla["reports"], "periodDays": 30,
			"jobsMeetingTarget": sla["jobsMeetingTarget"], "jobsBelowTarget": sla["jobsBelowTarget"]})
		if raw != nil {
			if got := rsRaw(raw, "successRate"); got != rate {
				t.Errorf("%s: raw successRate %s, want %s", what, got, rate)
			}
		}
	}
	rpRun(t, s, "clients", func(t *testing.T) {
		r := rsGet(s, key, "/clients")
		items := rsItems(t, "clients", r)
		rsWantIDs(t, "client order", rsIDs(items), rsSortedByName(d.Clients))
		for _, c := range items {
			raw, _ := json.Marshal(c)
			checkClient(t, "listed client "+c["name"].(string), c, nil)
			one := rsGet(s, key, "/clients/"+c["id"].(string))
			got := rsData(t, "client", one)
			if !reflect.DeepEqual(got, c) {
				t.Errorf("client %s alone differs from the list:\n%s\n%s", c["name"], one.Body, raw)
			}
			checkClient(t, "client "+c["name"].(string), got, one.Body)
		}
	})

	wantJobs := map[string]map[string]any{
		d.J1: {"clientId": d.Globex, "clientName": "Globex", "vendor": "veeam", "vendorName": "Veeam Backup & Replication",
			"status": "failed", "late": nil, "lastResult": "failed", "lastReportAt": ts(3 * m), "lastSuccessAt": ts(2 * m),
			"lastFailureAt": ts(3 * m), "failureStreak": 1, "paused": false, "pausedUntil": nil},
		d.J2: {"clientId": d.Globex, "clientName": "Globex", "vendor": "acronis", "vendorName": "Acronis Cyber Protect",
			"status": "healthy", "late": nil, "lastResult": "ok", "lastReportAt": ts(2 * m), "lastSuccessAt": ts(2 * m),
			"lastFailureAt": nil, "failureStreak": 0, "paused": false, "pausedUntil": nil},
		d.J3: {"clientId": d.Globex, "status": "waiting", "late": nil, "lastResult": "none", "lastReportAt": nil,
			"lastSuccessAt": nil, "lastFailureAt": nil, "failureStreak": 0, "paused": false, "pausedUntil": nil},
		d.J4: {"clientId": d.Initech, "clientName": "Initech", "status": "warning", "late": nil, "lastResult": "warning",
			"lastReportAt": ts(m), "lastSuccessAt": nil, "lastFailureAt": nil, "failureStreak": 0, "paused": false},
		d.J5: {"clientId": d.Initech, "status": "paused", "late": nil, "lastResult": "none", "paused": true, "pausedUntil": nil},
		d.J6: {"clientId": d.Initech, "status": "missing", "lastResult": "ok", "lastReportAt": ts(m), "lastSuccessAt": ts(m),
			"paused": false},
		d.J7: {"clientId": d.Archived, "clientName": "Archived Co", "status": "paused", "late": nil, "lastResult": "failed",
			"failureStreak": 1, "paused": true, "pausedUntil": nil},
		d.J8: {"clientId": d.PausedCo, "status": "paused", "late": nil, "lastResult": "none", "paused": true, "pausedUntil": nil},
		d.J9: {"clientId": d.Umbrella, "status": "healthy", "lastResult": "ok", "lastReportAt": ts(3 * m), "lastSuccessAt": ts(3 * m),
			"lastFailureAt": testserver.TS(testserver.T0), "failureStreak": 0},
		d.J10: {"clientId": d.Umbrella, "status": "warning", "lastResult": "warning", "lastReportAt": testserver.TS(testserver.T0)},
	}
	wantSLA := map[string]string{d.J1: `66.7,"met":false,"reports":3`, d.J2: `100.0,"met":true,"reports":2`,
		d.J3: `null,"met":false,"reports":0`, d.J4: `0.0,"met":false,"reports":1`, d.J6: `100.0,"met":true,"reports":1`,
		d.J9: `50.0,"met":false,"reports":2`, d.J10: `0.0,"met":false,"reports":1`}
	checkJob := func(t *testing.T, what string, j map[string]any, raw []byte) {
		t.Helper()
		admWantKeys(t, what+".device", admObj(t, j, "device"), admDeviceFields...)
		admWantKeys(t, what+".schedule", admObj(t, j, "schedule"), admScheduleFields...)
		admWantKeys(t, what+".sla", admObj(t, j, "sla"), admJobSLAFields...)
		id := j["id"].(string)
		rpFields(t, what, j, wantJobs[id])
		rpFields(t, what, j, map[string]any{"name": d.Jobs[id], "createdAt": testserver.TS(testserver.T0)})
		rpFields(t, what+".sla", admObj(t, j, "sla"), map[string]any{"target": 95, "periodDays": 30})
		if w, ok := wantSLA[id]; ok && raw != nil && !strings.Contains(string(raw), `"sla":{"target":95.0,"successRate":`+w+`,"periodDays":30}`) {
			t.Errorf("%s: sla, want successRate %s: %s", what, w, raw)
		}
	}
	rpRun(t, s, "jobs", func(t *testing.T) {
		r := rsGet(s, key, "/jobs")
		items := rsItems(t, "jobs", r)
		rsWantIDs(t, "job order", rsIDs(items), rsSortedByName(d.Jobs))
		for _, j := range items {
			admCheckJob(t, "listed job", j, false)
			checkJob(t, "listed "+j["name"].(string), j, nil)
		}
		// Exact members of a few.
		byID := map[string]map[string]any{}
		for _, j := range items {
			byID[j["id"].(string)] = j
		}
		j1, j2, j3, j6 := byID[d.J1], byID[d.J2], byID[d.J3], byID[d.J6]
		rpFields(t, "J1.schedule", admObj(t, j1, "schedule"), map[string]any{"intervalMinutes": 1440, "graceMinutes": 60,
			"nextExpectedAt": ts(24*time.Hour + 3*m)})
		if got := admStrings(t, admObj(t, j1, "schedule")["expectedDays"]); !slices.Equal(got, admAllDays) {
			t.Errorf("expectedDays %v", got)
		}
		dev1, dev3 := admObj(t, j1, "device"), admObj(t, j3, "device")
		if dev1["id"] != dev3["id"] || !rpUUIDRe.MatchString(dev1["id"].(string)) {
			t.Errorf("J1 and J3 share hostname fs01 but not the device: %v %v", dev1, dev3)
		}
		rpFields(t, "J1.device", dev1, map[string]any{"name": "File server", "type": "server", "hostname": "fs01"})
		rpFields(t, "J2.device", admObj(t, j2, "device"), map[string]any{"name": "Mail VM", "type": "vm", "hostname": "mail01"})
		if admObj(t, j2, "device")["id"] == dev1["id"] {
			t.Errorf("J2 has J1's device")
		}
		// J6: reported at T0+1m, hourly, no grace: due T0+61m, missing and
		// late by two whole minutes at Now (T0+63m00.5s).
		late := admObj(t, j6, "late")
		admWantKeys(t, "J6.late", late, "dueAt", "minutes")
		rpFields(t, "J6.late", late, map[string]any{"dueAt": ts(61 * m), "minutes": 2})
		rpFields(t, "J6.schedule", admObj(t, j6, "schedule"), map[string]any{"intervalMinutes": 60, "graceMinutes": 0, "nextExpectedAt": ts(61 * m)})

		for id := range d.Jobs {
			one := rsGet(s, key, "/jobs/"+id)
			got := rsData(t, "job", one)
			admWantKeys(t, "job detail", got, rsJobDetailFields...)
			checkJob(t, "job "+d.Jobs[id], got, one.Body)
			// The job part equals the listed object.
			part := map[string]any{}
			for k, v := range got {
				if k != "recentResults" && k != "unresolvedAlerts" {
					part[k] = v
				}
			}
			if !reflect.DeepEqual(part, byID[id]) {
				t.Errorf("job %s alone differs from the list: %s", d.Jobs[id], one.Body)
			}
		}
	})

	rpRun(t, s, "job details", func(t *testing.T) {
		j1 := rsData(t, "J1", rsGet(s, key, "/jobs/"+d.J1))
		rr := admList(t, j1, "recentResults")
		var want []string
		for _, h := range rpHistory(s, d.f.WS, d.J1) {
			want = append(want, h["id"].(string))
		}
		rsWantIDs(t, "J1 recentResults", rsIDs(rr), want)
		for i, st := range []string{"failed", "ok", "ok"} {
			admWantKeys(t, "recent result", rr[i], admResultFields...)
			rpFields(t, "J1 result", rr[i], map[string]any{"jobId": d.J1, "jobName": "Nightly backup", "clientId": d.Globex,
				"vendor": "veeam", "status": st, "receivedAt": ts(time.Duration(3-i) * m), "completedAt": ts(time.Duration(3-i) * m),
				"startedAt": nil, "durationSeconds": nil, "sizeBytes": nil})
		}
		ua := admList(t, j1, "unresolvedAlerts")
		if len(ua) != 1 || ua[0]["id"] != d.A1 {
			t.Fatalf("J1 unresolvedAlerts %v, want [%s]", rsIDs(ua), d.A1)
		}
		// J9's alert was resolved: none unresolved.
		j9 := rsData(t, "J9", rsGet(s, key, "/jobs/"+d.J9))
		if ua := admList(t, j9, "unresolvedAlerts"); len(ua) != 0 {
			t.Errorf("J9 unresolvedAlerts %v", ua)
		}
		// J3 never reported: both lists empty, not null.
		r := rsGet(s, key, "/jobs/"+d.J3)
		if !strings.Contains(string(r.Body), `"recentResults":[],"unresolvedAlerts":[]`) {
			t.Errorf("J3: %s", r.Body)
		}
	})

	rpRun(t, s, "reports", func(t *testing.T) {
		items := rsItems(t, "reports", rsGet(s, key, "/reports"))
		rsWantIDs(t, "results newest first", rsIDs(items), d.Results)
		for _, it := range items {
			admWantKeys(t, "result", it, admResultFields...)
			if !rpUUIDRe.MatchString(it["id"].(string)) {
				t.Errorf("result id %v", it["id"])
			}
		}
		// The first result of J2: dated three days back, with a duration and
		// a size; J9's first sent size 0, which is not recorded.
		last := items[len(items)-1]
		rpFields(t, "J2 dated result", last, map[string]any{"jobId": d.J2, "jobName": "Mail server", "clientId": d.Globex,
			"vendor": "acronis", "status": "ok", "completedAt": testserver.TS(testserver.T0.Add(-72 * time.Hour)),
			"startedAt": testserver.TS(testserver.T0.Add(-72*time.Hour - 600*time.Second)), "receivedAt": testserver.TS(testserver.T0), "durationSeconds": 600,
			"sizeBytes": 1234})
		for _, it := range items {
			if it["jobId"] == d.J9 && it["status"] == "failed" {
				rpFields(t, "J9 failed result", it, map[string]any{"sizeBytes": nil, "durationSeconds": nil, "startedAt": nil})
			}
		}
	})

	rpRun(t, s, "alerts", func(t *testing.T) {
		items := rsItems(t, "alerts", rsGet(s, key, "/alerts"))
		// J6 turned missing at its due time (T0+61m, no grace): its missing
		// alert is the newest.
		if len(items) == 0 {
			t.Fatal("no alerts")
		}
		a6 := items[0]["id"].(string)
		rsWantIDs(t, "alerts newest first", rsIDs(items), []string{a6, d.A1, d.A4, d.A10, d.A9, d.A7})
		byID := map[any]map[string]any{}
		for _, a := range items {
			admWantKeys(t, "alert", a, admAlertFields...)
			byID[a["id"]] = a
		}
		rpFields(t, "A6", byID[a6], map[string]any{"type": "missing", "severity": "critical", "status": "open", "clientId": d.Initech,
			"jobId": d.J6, "jobName": "Hourly job", "createdAt": ts(61 * m), "acknowledgedAt": nil, "snoozedUntil": nil,
			"resolvedAt": nil, "recoverySeconds": nil, "ai": nil,
			"summary": "No backup report received: one was due at " + ts(61*m) + " and 0 minutes of grace have passed"})
		failed := "Backup failed (reported through the Report API)"
		warned := "Backup completed with warnings (reported through the Report API)"
		rpFields(t, "A1", byID[d.A1], map[string]any{"type": "failed", "severity": "critical", "status": "open", "clientId": d.Globex,
			"jobId": d.J1, "jobName": "Nightly backup", "summary": failed, "createdAt": ts(3 * m), "acknowledgedAt": nil,
			"snoozedUntil": nil, "resolvedAt": nil, "recoverySeconds": nil, "ai": nil})
		rpFields(t, "A4", byID[d.A4], map[string]any{"type": "warning", "severity": "warning", "status": "acknowledged",
			"clientId": d.Initech, "jobId": d.J4, "summary": warned, "createdAt": ts(m), "acknowledgedAt": ts(4 * m),
			"snoozedUntil": nil, "resolvedAt": nil, "recoverySeconds": nil})
		rpFields(t, "A10", byID[d.A10], map[string]any{"type": "warning", "severity": "warning", "status": "snoozed",
			"jobId": d.J10, "jobName": "Snoozed job", "createdAt": testserver.TS(testserver.T0), "acknowledgedAt": nil, "snoozedUntil": ts(5 * time.Hour),
			"resolvedAt": nil, "recoverySeconds": nil})
		rpFields(t, "A9", byID[d.A9], map[string]any{"type": "failed", "severity": "critical", "status": "resolved",
			"createdAt": testserver.TS(testserver.T0), "resolvedAt": ts(3 * m), "recoverySeconds": 180, "snoozedUntil": nil})
		rpFields(t, "A7", byID[d.A7], map[string]any{"status": "open", "clientId": d.Archived, "jobId": d.J7, "jobName": "Archived job"})
		// /jobs/{id} shows the same alert objects.
		for _, j := range []string{d.J1, d.J4, d.J10} {
			ua := admList(t, rsData(t, "job", rsGet(s, key, "/jobs/"+j)), "unresolvedAlerts")
			if len(ua) != 1 || !reflect.DeepEqual(ua[0], byID[ua[0]["id"]]) {
				t.Errorf("job %s unresolvedAlerts %v differ from /alerts", d.Jobs[j], ua)
			}
		}
	})

	rpRun(t, s, "health", func(t *testing.T) {
		period := func(days int) map[string]any {
			return map[string]any{"from": testserver.TS(d.Now.Add(-time.Duration(days) * 24 * time.Hour)), "to": testserver.TS(d.Now), "days": days}
		}
		for _, c := range []struct {
			query           string
			days            int
			reports         int
			success, sla    string
			fromDaysBackRaw string
		}{
			{"", 30, 10, "60.0", "33.3", ""},
			{"?days=30", 30, 10, "60.0", "33.3", ""},
			{"?days=1", 1, 9, "55.6", "33.3", ""},
			{"?days=90", 90, 10, "60.0", "33.3", ""},
		} {
			r := rsGet(s, key, "/health"+c.query)
			h := rsData(t, "health", r)
			admWantKeys(t, "health", h, rsHealthFields...)
			rpFields(t, "health"+c.query, h, map[string]any{"scope": "workspace", "monitoredJobs": 9, "healthy": 2, "warning": 2,
				"failed": 1, "missing": 1, "waiting": 1, "paused": 2, "openAlerts": 2, "unresolvedAlerts": 4, "reports": c.reports,
				"clientsNeedingAttention": 2, "clients": 4, "timestamp": testserver.TS(d.Now)})
			rpFields(t, "health.period", admObj(t, h, "period"), period(c.days))
			admWantKeys(t, "health.period", admObj(t, h, "period"), "from", "to", "days")
			if got := rsRaw(r.Body, "backupSuccessRate"); got != c.success {
				t.Errorf("health%s: backupSuccessRate %s, want %s", c.query, got, c.success)
			}
			if got := rsRaw(r.Body, "slaComplianceRate"); got != c.sla {
				t.Errorf("health%s: slaComplianceRate %s, want %s", c.query, got, c.sla)
			}
			// monitoredJobs is the sum of the six counts.
			sum := 0.0
			for _, k := range []string{"healthy", "warning", "failed", "missing", "waiting", "paused"} {
				sum += h[k].(float64)
			}
			if sum != h["monitoredJobs"] {
				t.Errorf("monitoredJobs %v, sum of counts %v", h["monitoredJobs"], sum)
			}
		}
		for _, c := range []struct {
			id           string
			want         map[string]any
			success, sla string
		}{
			{d.Globex, map[string]any{"monitoredJobs": 3, "healthy": 1, "warning": 0, "failed": 1, "missing": 0, "waiting": 1,
				"paused": 0, "openAlerts": 1, "unresolvedAlerts": 1, "reports": 5, "clientsNeedingAttention": 1}, "80.0", "50.0"},
			{d.Initech, map[string]any{"monitoredJobs": 3, "healthy": 0, "warning": 1, "failed": 0, "missing": 1, "waiting": 0,
				"paused": 1, "openAlerts": 1, "unresolvedAlerts": 2, "reports": 2, "clientsNeedingAttention": 1}, "50.0", "50.0"},
			{d.PausedCo, map[string]any{"monitoredJobs": 1, "healthy": 0, "warning": 0, "failed": 0, "missing": 0, "waiting": 0,
				"paused": 1, "openAlerts": 0, "unresolvedAlerts": 0, "reports": 0, "clientsNeedingAttention": 0}, "null", "null"},
			{d.Umbrella, map[string]any{"monitoredJobs": 2, "healthy": 1, "warning": 1, "openAlerts": 0, "unresolvedAlerts": 1,
				"reports": 3, "clientsNeedingAttention": 0}, "33.3", "0.0"},
			// An archived client's own health still answers, for that client.
			{d.Archived, map[string]any{"monitoredJobs": 1, "paused": 1, "openAlerts": 1, "unresolvedAlerts": 1, "reports": 1,
				"clientsNeedingAttention": 1}, "0.0", "0.0"},
		} {
			r := rsGet(s, key, "/clients/"+c.id+"/health")
			h := rsData(t, "client health", r)
			admWantKeys(t, "client health", h, rsClientHealthFields...)
			name := d.Clients[c.id]
			rpFields(t, name+" health", h, c.want)
			rpFields(t, name+" health", h, map[string]any{"scope": "client", "clientId": c.id, "clientName": name, "clients": 1,
				"timestamp": testserver.TS(d.Now)})
			rpFields(t, name+" health.period", admObj(t, h, "period"), period(30))
			if got := rsRaw(r.Body, "backupSuccessRate"); got != c.success {
				t.Errorf("%s: backupSuccessRate %s, want %s", name, got, c.success)
			}
			if got := rsRaw(r.Body, "slaComplianceRate"); got != c.sla {
				t.Errorf("%s: slaComplianceRate %s, want %s", name, got, c.sla)
			}
		}
		h := rsData(t, "client health days", rsGet(s, key, "/clients/"+d.Globex+"/health?days=1"))
		rpFields(t, "Globex health days=1", h, map[string]any{"reports": 4})
		rpFields(t, "Globex health days=1", admObj(t, h, "period"), period(1))
	})
}

// TestRESTRates checks the one-decimal rates, rounded half away from zero,
// and an SLA met at exactly its target.
func TestRESTRates(t *testing.T) {
	s, f := startFixture(t)
	key2, _ := s.NewKey(f.WS, "report", nil)
	// 1 ok of 16: 6.25 → 6.3 (half away from zero; a float %.1f gives 6.2).
	for i := 0; i < 16; i++ {
		s.Advance(time.Second)
		st := "failed"
		if i == 0 {
			st = "ok"
		}
		admReport(s, f.Job, f.ReportKey, st)
	}
	// 2 ok of 3 on a job whose target is 66.7: met, exactly at the target.
	exact := s.NewJob(f.WS, f.Client, "Exact", testserver.Daily())
	s.MustAdmin(200, "PATCH", "/workspaces/"+f.WS+"/jobs/"+exact, map[string]any{"slaTarget": 66.7})
	for _, st := range []string{"ok", "failed", "ok"} {
		s.Advance(time.Second)
		admReport(s, exact, key2, st)
	}
	// A warning does not count as a success.
	warned := s.NewJob(f.WS, f.Client, "Warned", testserver.Daily())
	for _, st := range []string{"warn", "ok"} {
		s.Advance(time.Second)
		admReport(s, warned, key2, st)
	}
	r := rsGet(s, f.RestKey, "/jobs/"+f.Job)
	if !strings.Contains(string(r.Body), `"sla":{"target":95.0,"successRate":6.3,"met":false,"reports":16,"periodDays":30}`) {
		t.Errorf("1 of 16: %s", r.Body)
	}
	r = rsGet(s, f.RestKey, "/jobs/"+exact)
	if !strings.Contains(string(r.Body), `"sla":{"target":66.7,"successRate":66.7,"met":true,"reports":3,"periodDays":30}`) {
		t.Errorf("2 of 3 at target 66.7: %s", r.Body)
	}
	r = rsGet(s, f.RestKey, "/jobs/"+warned)
	if !strings.Contains(string(r.Body), `"successRate":50.0,"met":false,"reports":2`) {
		t.Errorf("warn and ok: %s", r.Body)
	}
	// Client and workspace: 1+2+1 ok of 21 = 19.047… → 19.0; SLA: only
	// Exact meets its target, 1 of 3 → 33.3.
	r = rsGet(s, f.RestKey, "/clients/"+f.Client)
	if got := rsRaw(r.Body, "successRate"); got != "19.0" {
		t.Errorf("client successRate %s: %s", got, r.Body)
	}
	r = rsGet(s, f.RestKey, "/health")
	if rsRaw(r.Body, "backupSuccessRate") != "19.0" || rsRaw(r.Body, "slaComplianceRate") != "33.3" || rsRaw(r.Body, "reports") != "21" {
		t.Errorf("health: %s", r.Body)
	}
	// A result counts while completedAt > now − 30 days (docs/decisions.md,
	// Periods): a millisecond before the latest leaves, it still counts;
	// once every result has left, nothing is left to rate: null, never 100.
	latest := rpNow(s)
	s.SetClock(latest.Add(30*24*time.Hour - time.Millisecond))
	r = rsGet(s, f.RestKey, "/jobs/"+warned)
	if !strings.Contains(string(r.Body), `"successRate":100.0,"met":true,"reports":1`) {
		t.Errorf("the latest ok alone, a millisecond before it leaves: %s", r.Body)
	}
	s.SetClock(latest.Add(30 * 24 * time.Hour))
	r = rsGet(s, f.RestKey, "/jobs/"+exact)
	if !strings.Contains(string(r.Body), `"successRate":null,"met":false,"reports":0`) {
		t.Errorf("after 30 days: %s", r.Body)
	}
	r = rsGet(s, f.RestKey, "/health")
	if rsRaw(r.Body, "backupSuccessRate") != "null" || rsRaw(r.Body, "slaComplianceRate") != "null" || rsRaw(r.Body, "reports") != "0" {
		t.Errorf("health after 30 days: %s", r.Body)
	}
	r = rsGet(s, f.RestKey, "/clients/"+f.Client)
	if !strings.Contains(string(r.Body), `"sla":{"successRate":null,"reports":0,"periodDays":30,"jobsMeetingTarget":0,"jobsBelowTarget":0}`) {
		t.Errorf("client after 30 days: %s", r.Body)
	}
}
