package transport_test

// Validation of every admin body field (decisions.md 2): each refused body
// answers 400 INVALID_REQUEST with a message naming the field, and changes
// nothing.

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"backupmon/internal/testserver"
)

// admBad is one refused body: raw JSON (a string) or a value to marshal.
type admBad struct {
	name  string
	body  any
	field string
}

// admRun sends each case and checks the 400 and that the workspace's state
// (and the list of workspaces) did not change.
func admRun(t *testing.T, s *testserver.Server, ws, method, path string, cases []admBad) {
	t.Helper()
	before := admState(s, ws)
	for _, c := range cases {
		var body any = c.body
		if str, ok := c.body.(string); ok {
			body = []byte(str)
		}
		r := s.Admin(method, path, body)
		admWantError(t, fmt.Sprintf("%s %s: %s", method, path, c.name), r, 400, "INVALID_REQUEST", c.field)
	}
	admSameState(t, method+" "+path+" refused bodies", before, admState(s, ws))
}

// admNonObjects are bodies that are not a JSON object.
var admNonObjects = []admBad{
	{"array", `[]`, "body"},
	{"array of object", `[{"name":"x"}]`, "body"},
	{"string", `"name"`, "body"},
	{"number", `42`, "body"},
	{"true", `true`, "body"},
	{"null", `null`, "body"},
	{"malformed", `{"name":`, "body"},
	{"malformed quote", `{'name':'x'}`, "body"},
	{"trailing garbage", `{"name":"x"} {}`, "body"},
	{"trailing comma", `{"name":"x",}`, "body"},
}

func admWith(base map[string]any, k string, v any) map[string]any {
	m := map[string]any{}
	for bk, bv := range base {
		m[bk] = bv
	}
	m[k] = v
	return m
}

func admWithout(base map[string]any, k string) map[string]any {
	m := admWith(base, k, nil)
	delete(m, k)
	return m
}

var (
	adm200 = strings.Repeat("n", 200)
	adm201 = strings.Repeat("n", 201)
)

func TestAdminValidationWorkspace(t *testing.T) {
	s, f := startFixture(t)
	base := map[string]any{"name": "W", "plan": "pro"}

	nameCases := func(body func(string, any) map[string]any) []admBad {
		return []admBad{
			{"name null", body("name", nil), "name"},
			{"name number", body("name", 5), "name"},
			{"name list", body("name", []string{"a"}), "name"},
			{"name object", body("name", map[string]any{}), "name"},
			{"name empty", body("name", ""), "name"},
			{"name blank", body("name", "   "), "name"},
			{"name 201 characters", body("name", adm201), "name"},
		}
	}
	fieldCases := func(body func(string, any) map[string]any) []admBad {
		cs := nameCases(body)
		cs = append(cs,
			admBad{"timeZone unknown", body("timeZone", "Mars/Olympus"), "timeZone"},
			admBad{"timeZone empty", body("timeZone", ""), "timeZone"},
			admBad{"timeZone Local", body("timeZone", "Local"), "timeZone"},
			admBad{"timeZone offset", body("timeZone", "+02:00"), "timeZone"},
			admBad{"timeZone null", body("timeZone", nil), "timeZone"},
			admBad{"timeZone number", body("timeZone", 1), "timeZone"},
			admBad{"plan unknown", body("plan", "gold"), "plan"},
			admBad{"plan case", body("plan", "Pro"), "plan"},
			admBad{"plan null", body("plan", nil), "plan"},
			admBad{"plan number", body("plan", 3), "plan"},
			admBad{"status unknown", body("status", "paused"), "status"},
			admBad{"status empty", body("status", ""), "status"},
			admBad{"status null", body("status", nil), "status"},
			admBad{"status bool", body("status", true), "status"},
			admBad{"trialEndsAt words", body("trialEndsAt", "next week"), "trialEndsAt"},
			admBad{"trialEndsAt date only", body("trialEndsAt", "2026-04-01"), "trialEndsAt"},
			admBad{"trialEndsAt without zone", body("trialEndsAt", "2026-04-01T10:00:00"), "trialEndsAt"},
			admBad{"trialEndsAt number", body("trialEndsAt", 1775037600000), "trialEndsAt"},
			admBad{"trialEndsAt Feb 30", body("trialEndsAt", "2026-02-30T10:00:00Z"), "trialEndsAt"},
			admBad{"unknown field", body("colour", "red"), "colour"},
			admBad{"id is not a field", body("id", "x"), "id"},
		)
		return cs
	}

	create := fieldCases(func(k string, v any) map[string]any { return admWith(base, k, v) })
	create = append(create,
		admBad{"name missing", admWithout(base, "name"), "name"},
		admBad{"plan missing", admWithout(base, "plan"), "plan"},
		admBad{"empty object", `{}`, "name"},
		admBad{"empty body", ``, "body"},
	)
	create = append(create, admNonObjects...)
	admRun(t, s, f.WS, "POST", "/workspaces", create)

	patch := fieldCases(func(k string, v any) map[string]any { return map[string]any{k: v} })
	patch = append(patch,
		// A good field next to a bad one changes nothing.
		admBad{"good name, bad plan", map[string]any{"name": "Changed", "plan": "gold"}, "plan"},
		admBad{"good plan, bad zone", map[string]any{"plan": "growth", "timeZone": "Nowhere/City"}, "timeZone"},
		admBad{"good status, unknown field", map[string]any{"status": "suspended", "owner": "x"}, "owner"},
		admBad{"empty body", ``, "body"},
	)
	patch = append(patch, admNonObjects...)
	admRun(t, s, f.WS, "PATCH", "/workspaces/"+f.WS, patch)

	// The limits themselves are accepted: 200 characters (counted as
	// characters, not bytes), any IANA zone, every plan and status.
	for _, body := range []map[string]any{
		{"name": adm200, "plan": "starter"},
		{"name": strings.Repeat("é", 200), "plan": "growth", "timeZone": "Asia/Kathmandu"},
		{"name": "T", "plan": "trial", "status": "cancelled", "trialEndsAt": "2026-04-01T10:00:00.5+05:30"},
		{"name": "P", "plan": "pro", "status": "suspended", "trialEndsAt": nil, "timeZone": "America/Argentina/Buenos_Aires"},
	} {
		r := s.Admin("POST", "/workspaces", body)
		admWantData(t, fmt.Sprintf("create %.40v", body), r, 201)
	}
}

func TestAdminValidationClient(t *testing.T) {
	s, f := startFixture(t)
	fields := func(body func(string, any) map[string]any) []admBad {
		return []admBad{
			{"name null", body("name", nil), "name"},
			{"name number", body("name", 7), "name"},
			{"name empty", body("name", ""), "name"},
			{"name blank", body("name", "\t "), "name"},
			{"name 201 characters", body("name", adm201), "name"},
			{"status unknown", body("status", "deleted"), "status"},
			{"status case", body("status", "Active"), "status"},
			{"status null", body("status", nil), "status"},
			{"status number", body("status", 0), "status"},
			{"unknown field", body("notes", "x"), "notes"},
		}
	}
	create := fields(func(k string, v any) map[string]any { return admWith(map[string]any{"name": "C"}, k, v) })
	create = append(create, admBad{"name missing", map[string]any{"status": "active"}, "name"}, admBad{"empty body", ``, "body"})
	create = append(create, admNonObjects...)
	admRun(t, s, f.WS, "POST", "/workspaces/"+f.WS+"/clients", create)

	patch := fields(func(k string, v any) map[string]any { return map[string]any{k: v} })
	patch = append(patch,
		admBad{"good name, bad status", map[string]any{"name": "Renamed", "status": "gone"}, "status"},
		admBad{"good status, bad name", map[string]any{"status": "paused", "name": ""}, "name"},
		admBad{"empty body", ``, "body"},
	)
	patch = append(patch, admNonObjects...)
	admRun(t, s, f.WS, "PATCH", "/workspaces/"+f.WS+"/clients/"+f.Client, patch)

	for _, body := range []map[string]any{{"name": adm200}, {"name": "A", "status": "archived"}, {"name": "P", "status": "paused"}} {
		admWantData(t, "create client", s.Admin("POST", "/workspaces/"+f.WS+"/clients", body), 201)
	}
}

func TestAdminValidationJobCreate(t *testing.T) {
	s, f := startFixture(t)
	other := s.Fixture(testserver.FixtureOptions{})
	set := func(k string, v any) map[string]any {
		return admJobBody(f.Client, func(m map[string]any) { m[k] = v })
	}
	dev := func(k string, v any) map[string]any {
		return admJobBody(f.Client, func(m map[string]any) { m["device"].(map[string]any)[k] = v })
	}
	devWithout := func(k string) map[string]any {
		return admJobBody(f.Client, func(m map[string]any) { delete(m["device"].(map[string]any), k) })
	}
	sch := func(k string, v any) map[string]any {
		return admJobBody(f.Client, func(m map[string]any) { m["schedule"].(map[string]any)[k] = v })
	}
	without := func(k string) map[string]any { return admJobBody(f.Client, func(m map[string]any) { delete(m, k) }) }
	cases := []admBad{
		{"clientId missing", without("clientId"), "clientId"},
		{"clientId null", set("clientId", nil), "clientId"},
		{"clientId number", set("clientId", 5), "clientId"},
		{"clientId malformed", set("clientId", "nope"), "clientId"},
		{"clientId unknown", set("clientId", "0190b4c8-0000-7000-8000-000000000000"), "clientId"},
		{"clientId of another workspace", set("clientId", other.Client), "clientId"},
		{"name missing", without("name"), "name"},
		{"name null", set("name", nil), "name"},
		{"name number", set("name", 1), "name"},
		{"name empty", set("name", ""), "name"},
		{"name 201 characters", set("name", adm201), "name"},
		{"vendor missing", without("vendor"), "vendor"},
		{"vendor null", set("vendor", nil), "vendor"},
		{"vendor unknown", set("vendor", "bacula"), "vendor"},
		{"vendor case", set("vendor", "Veeam"), "vendor"},
		{"vendor number", set("vendor", 1), "vendor"},
		{"device missing", without("device"), "device"},
		{"device null", set("device", nil), "device"},
		{"device string", set("device", "fs01"), "device"},
		{"device list", set("device", []any{}), "device"},
		{"device.name missing", devWithout("name"), "device.name"},
		{"device.name null", dev("name", nil), "device.name"},
		{"device.name empty", dev("name", ""), "device.name"},
		{"device.name 201 characters", dev("name", adm201), "device.name"},
		{"device.name number", dev("name", 1), "device.name"},
		{"device.type missing", devWithout("type"), "device.type"},
		{"device.type null", dev("type", nil), "device.type"},
		{"device.type unknown", dev("type", "phone"), "device.type"},
		{"device.type case", dev("type", "Server"), "device.type"},
		{"device.hostname missing", devWithout("hostname"), "device.hostname"},
		{"device.hostname null", dev("hostname", nil), "device.hostname"},
		{"device.hostname empty", dev("hostname", ""), "device.hostname"},
		{"device.hostname number", dev("hostname", 1), "device.hostname"},
		{"device.hostname 254 characters", dev("hostname", strings.Repeat("h", 254)), "device.hostname"},
		{"device unknown field", dev("os", "linux"), "device.os"},
		{"schedule missing", without("schedule"), "schedule"},
		{"schedule null", set("schedule", nil), "schedule"},
		{"schedule number", set("schedule", 1440), "schedule"},
		{"intervalMinutes missing", set("schedule", map[string]any{"graceMinutes": 10}), "schedule.intervalMinutes"},
		{"intervalMinutes null", sch("intervalMinutes", nil), "schedule.intervalMinutes"},
		{"intervalMinutes 4", sch("intervalMinutes", 4), "schedule.intervalMinutes"},
		{"intervalMinutes 44641", sch("intervalMinutes", 44641), "schedule.intervalMinutes"},
		{"intervalMinutes 0", sch("intervalMinutes", 0), "schedule.intervalMinutes"},
		{"intervalMinutes negative", sch("intervalMinutes", -60), "schedule.intervalMinutes"},
		{"intervalMinutes fraction", sch("intervalMinutes", 60.5), "schedule.intervalMinutes"},
		{"intervalMinutes string", sch("intervalMinutes", "60"), "schedule.intervalMinutes"},
		{"intervalMinutes bool", sch("intervalMinutes", true), "schedule.intervalMinutes"},
		{"intervalMinutes huge", sch("intervalMinutes", 1e300), "schedule.intervalMinutes"},
		{"graceMinutes -1", sch("graceMinutes", -1), "schedule.graceMinutes"},
		{"graceMinutes 10081", sch("graceMinutes", 10081), "schedule.graceMinutes"},
		{"graceMinutes null", sch("graceMinutes", nil), "schedule.graceMinutes"},
		{"graceMinutes fraction", sch("graceMinutes", 1.5), "schedule.graceMinutes"},
		{"graceMinutes string", sch("graceMinutes", "60"), "schedule.graceMinutes"},
		{"expectedDays empty", sch("expectedDays", []string{}), "schedule.expectedDays"},
		{"expectedDays null", sch("expectedDays", nil), "schedule.expectedDays"},
		{"expectedDays long names", sch("expectedDays", []string{"monday"}), "schedule.expectedDays"},
		{"expectedDays case", sch("expectedDays", []string{"Mon"}), "schedule.expectedDays"},
		{"expectedDays string", sch("expectedDays", "mon"), "schedule.expectedDays"},
		{"expectedDays numbers", sch("expectedDays", []int{1}), "schedule.expectedDays"},
		{"schedule unknown field", sch("timezone", "UTC"), "schedule.timezone"},
		{"slaTarget -0.1", set("slaTarget", -0.1), "slaTarget"},
		{"slaTarget 100.1", set("slaTarget", 100.1), "slaTarget"},
		{"slaTarget null", set("slaTarget", nil), "slaTarget"},
		{"slaTarget string", set("slaTarget", "95"), "slaTarget"},
		{"slaTarget bool", set("slaTarget", true), "slaTarget"},
		{"paused on create", set("paused", true), "paused"},
		{"pausedUntil on create", set("pausedUntil", admIn(testserver.T0.Add(time.Hour))), "pausedUntil"},
		{"unknown field", set("notes", "x"), "notes"},
		{"empty object", `{}`, "clientId"},
		{"empty body", ``, "body"},
	}
	cases = append(cases, admNonObjects...)
	admRun(t, s, f.WS, "POST", "/workspaces/"+f.WS+"/jobs", cases)

	// Boundaries that are accepted.
	for _, body := range []map[string]any{
		sch("intervalMinutes", 5), sch("intervalMinutes", 44640), sch("graceMinutes", 0), sch("graceMinutes", 10080),
		sch("intervalMinutes", 60.0), sch("expectedDays", []string{"mon", "fri"}), set("slaTarget", 0), set("slaTarget", 100),
		set("slaTarget", 99.95), set("name", adm200), dev("hostname", strings.Repeat("h", 253)),
	} {
		r := s.Admin("POST", "/workspaces/"+f.WS+"/jobs", body)
		admWantData(t, fmt.Sprintf("accept %.80s", admJSON(t, body)), r, 201)
	}
	// What was accepted is what is shown.
	r := s.MustAdmin(201, "POST", "/workspaces/"+f.WS+"/jobs", admJobBody(f.Client, func(m map[string]any) {
		m["schedule"] = map[string]any{"intervalMinutes": 5, "graceMinutes": 10080, "expectedDays": []string{"fri", "mon", "mon"}}
		m["slaTarget"] = 0
	}))
	sc := admObj(t, r.Data(), "schedule")
	if sc["intervalMinutes"] != float64(5) || sc["graceMinutes"] != float64(10080) || fmt.Sprint(sc["expectedDays"]) != "[mon fri]" {
		t.Errorf("accepted schedule: %v", sc)
	}
}

func TestAdminValidationJobUpdate(t *testing.T) {
	s, f := startFixture(t)
	other := s.Fixture(testserver.FixtureOptions{})
	path := "/workspaces/" + f.WS + "/jobs/" + f.Job
	cases := []admBad{
		{"name null", map[string]any{"name": nil}, "name"},
		{"name empty", map[string]any{"name": ""}, "name"},
		{"name 201 characters", map[string]any{"name": adm201}, "name"},
		{"name number", map[string]any{"name": 3}, "name"},
		{"vendor unknown", map[string]any{"vendor": "bacula"}, "vendor"},
		{"vendor null", map[string]any{"vendor": nil}, "vendor"},
		{"device null", map[string]any{"device": nil}, "device"},
		{"device string", map[string]any{"device": "x"}, "device"},
		{"device.type unknown", map[string]any{"device": map[string]any{"type": "phone"}}, "device.type"},
		{"device.name empty", map[string]any{"device": map[string]any{"name": ""}}, "device.name"},
		{"device.hostname empty", map[string]any{"device": map[string]any{"hostname": ""}}, "device.hostname"},
		{"device.hostname null", map[string]any{"device": map[string]any{"hostname": nil}}, "device.hostname"},
		{"device unknown field", map[string]any{"device": map[string]any{"os": "x"}}, "device.os"},
		{"schedule null", map[string]any{"schedule": nil}, "schedule"},
		{"schedule list", map[string]any{"schedule": []any{}}, "schedule"},
		{"intervalMinutes 4", map[string]any{"schedule": map[string]any{"intervalMinutes": 4}}, "schedule.intervalMinutes"},
		{"intervalMinutes 44641", map[string]any{"schedule": map[string]any{"intervalMinutes": 44641}}, "schedule.intervalMinutes"},
		{"intervalMinutes null", map[string]any{"schedule": map[string]any{"intervalMinutes": nil}}, "schedule.intervalMinutes"},
		{"graceMinutes -1", map[string]any{"schedule": map[string]any{"graceMinutes": -1}}, "schedule.graceMinutes"},
		{"graceMinutes 10081", map[string]any{"schedule": map[string]any{"graceMinutes": 10081}}, "schedule.graceMinutes"},
		{"expectedDays empty", map[string]any{"schedule": map[string]any{"expectedDays": []string{}}}, "schedule.expectedDays"},
		{"expectedDays unknown day", map[string]any{"schedule": map[string]any{"expectedDays": []string{"mon", "xyz"}}}, "schedule.expectedDays"},
		{"schedule unknown field", map[string]any{"schedule": map[string]any{"every": 5}}, "schedule.every"},
		{"slaTarget -0.1", map[string]any{"slaTarget": -0.1}, "slaTarget"},
		{"slaTarget 100.1", map[string]any{"slaTarget": 100.1}, "slaTarget"},
		{"slaTarget null", map[string]any{"slaTarget": nil}, "slaTarget"},
		{"paused null", map[string]any{"paused": nil}, "paused"},
		{"paused string", map[string]any{"paused": "yes"}, "paused"},
		{"paused number", map[string]any{"paused": 1}, "paused"},
		{"pausedUntil words", map[string]any{"pausedUntil": "tomorrow"}, "pausedUntil"},
		{"pausedUntil number", map[string]any{"pausedUntil": 5}, "pausedUntil"},
		{"pausedUntil past", map[string]any{"pausedUntil": admIn(testserver.T0.Add(-time.Hour))}, "pausedUntil"},
		{"pausedUntil now", map[string]any{"pausedUntil": admIn(testserver.T0)}, "pausedUntil"},
		{"pausedUntil with paused false", map[string]any{"paused": false, "pausedUntil": admIn(testserver.T0.Add(time.Hour))}, "pausedUntil"},
		{"clientId cannot change", map[string]any{"clientId": other.Client}, "clientId"},
		{"unknown field", map[string]any{"ingest": true}, "ingest"},
		// A good field next to a bad one changes nothing.
		{"good name, bad target", map[string]any{"name": "Renamed", "slaTarget": 101}, "slaTarget"},
		{"good pause, bad schedule", map[string]any{"paused": true, "schedule": map[string]any{"intervalMinutes": 1}}, "schedule.intervalMinutes"},
		{"good schedule, bad device", map[string]any{"schedule": map[string]any{"intervalMinutes": 60}, "device": map[string]any{"type": "toaster"}}, "device.type"},
		{"good vendor, bad pausedUntil", map[string]any{"vendor": "datto", "pausedUntil": admIn(testserver.T0.Add(-time.Minute))}, "pausedUntil"},
		{"empty body", ``, "body"},
	}
	cases = append(cases, admNonObjects...)
	admRun(t, s, f.WS, "PATCH", path, cases)

	for _, body := range []map[string]any{
		{"schedule": map[string]any{"intervalMinutes": 5}}, {"schedule": map[string]any{"intervalMinutes": 44640}},
		{"schedule": map[string]any{"graceMinutes": 0}}, {"schedule": map[string]any{"graceMinutes": 10080}},
		{"slaTarget": 0}, {"slaTarget": 100}, {"name": adm200}, {"device": map[string]any{"type": "vm"}},
	} {
		admWantData(t, fmt.Sprintf("accept %s", admJSON(t, body)), s.Admin("PATCH", path, body), 200)
	}
}

func TestAdminValidationKeys(t *testing.T) {
	s, f := startFixture(t)
	rest := map[string]any{"name": "k", "type": "rest"}
	set := func(base map[string]any, k string, v any) map[string]any { return admWith(base, k, v) }
	cases := []admBad{
		{"name missing", map[string]any{"type": "rest"}, "name"},
		{"name null", set(rest, "name", nil), "name"},
		{"name empty", set(rest, "name", ""), "name"},
		{"name 201 characters", set(rest, "name", adm201), "name"},
		{"name number", set(rest, "name", 1), "name"},
		{"type missing", map[string]any{"name": "k"}, "type"},
		{"type null", set(rest, "type", nil), "type"},
		{"type unknown", set(rest, "type", "admin"), "type"},
		{"type case", set(rest, "type", "REST"), "type"},
		{"type number", set(rest, "type", 1), "type"},
		{"scopes string", set(rest, "scopes", "jobs:read"), "scopes"},
		{"scopes null", set(rest, "scopes", nil), "scopes"},
		{"scopes unknown", set(rest, "scopes", []string{"jobs:write"}), "scopes"},
		{"scopes numbers", set(rest, "scopes", []int{1}), "scopes"},
		{"scopes on a report key", map[string]any{"name": "k", "type": "report", "scopes": []string{"jobs:read"}}, "scopes"},
		{"scopes on an assistant key", map[string]any{"name": "k", "type": "assistant", "scopes": []string{"jobs:read"}}, "scopes"},
		{"expiresAt words", set(rest, "expiresAt", "never"), "expiresAt"},
		{"expiresAt without zone", set(rest, "expiresAt", "2027-01-01T00:00:00"), "expiresAt"},
		{"expiresAt past", set(rest, "expiresAt", admIn(testserver.T0.Add(-time.Second))), "expiresAt"},
		{"expiresAt now", set(rest, "expiresAt", admIn(testserver.T0)), "expiresAt"},
		{"expiresAt number", set(rest, "expiresAt", 1), "expiresAt"},
		{"access on a rest key", set(rest, "access", "read-write"), "access"},
		{"access unknown", map[string]any{"name": "k", "type": "assistant", "access": "admin"}, "access"},
		{"unknown field", set(rest, "secret", "x"), "secret"},
		{"key is not a field", set(rest, "key", "svc_live_"+strings.Repeat("0", 48)), "key"},
		{"empty body", ``, "body"},
	}
	cases = append(cases, admNonObjects...)
	admRun(t, s, f.WS, "POST", "/workspaces/"+f.WS+"/keys", cases)
}

func TestAdminValidationAlertActions(t *testing.T) {
	s, f := startFixture(t)
	aid := admReport(s, f.Job, f.ReportKey, "failed").JSON["alert_id"].(string)
	base := "/workspaces/" + f.WS + "/alerts/" + aid
	admRun(t, s, f.WS, "POST", base+"/snooze", append([]admBad{
		{"until missing", map[string]any{}, "until"},
		{"no body", ``, "until"},
		{"until null", map[string]any{"until": nil}, "until"},
		{"until words", map[string]any{"until": "later"}, "until"},
		{"until number", map[string]any{"until": 3600}, "until"},
		{"until without zone", map[string]any{"until": "2026-03-04T12:00:00"}, "until"},
		{"until past", map[string]any{"until": admIn(testserver.T0.Add(-time.Minute))}, "until"},
		{"until now", map[string]any{"until": admIn(testserver.T0)}, "until"},
		{"unknown field", map[string]any{"until": admIn(testserver.T0.Add(time.Hour)), "for": 60}, "for"},
	}, admNonObjects...))
	for _, action := range []string{"acknowledge", "resolve"} {
		admRun(t, s, f.WS, "POST", base+"/"+action, append([]admBad{
			{"unknown field", map[string]any{"until": admIn(testserver.T0.Add(time.Hour))}, "until"},
			{"note number", map[string]any{"note": 5}, "note"},
			{"note too long", map[string]any{"note": strings.Repeat("x", 1001)}, "note"},
		}, admNonObjects...))
	}
}

func TestAdminValidationClock(t *testing.T) {
	s, f := startFixture(t)
	now := func() any { return s.MustAdmin(200, "POST", "/clock", nil).Data()["now"] }
	if now() != testserver.TS(testserver.T0) {
		t.Fatalf("clock: %v", now())
	}
	admRun(t, s, f.WS, "POST", "/clock", append([]admBad{
		{"set words", map[string]any{"set": "noon"}, "set"},
		{"set null", map[string]any{"set": nil}, "set"},
		{"set number", map[string]any{"set": 1}, "set"},
		{"set without zone", map[string]any{"set": "2026-03-05T10:00:00"}, "set"},
		{"advanceSeconds negative", map[string]any{"advanceSeconds": -1}, "advanceSeconds"},
		{"advanceSeconds string", map[string]any{"advanceSeconds": "60"}, "advanceSeconds"},
		{"advanceSeconds fraction", map[string]any{"advanceSeconds": 1.5}, "advanceSeconds"},
		{"advanceSeconds null", map[string]any{"advanceSeconds": nil}, "advanceSeconds"},
		{"good set, bad advance", map[string]any{"set": admIn(testserver.T0.Add(time.Hour)), "advanceSeconds": -5}, "advanceSeconds"},
		{"unknown field", map[string]any{"advance": 60}, "advance"},
	}, admNonObjects...))
	if now() != testserver.TS(testserver.T0) {
		t.Errorf("refused clock bodies moved the clock to %v", now())
	}
}
