package transport_test

// 401, 404 and 409 of the admin API (decisions.md 2).

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"backupmon/internal/testserver"
)

// admRoute is one admin endpoint with a body that would be accepted.
type admRoute struct {
	method, path string
	body         any
}

// admRoutes lists every built admin endpoint of decisions.md 2 for the
// ids given (path templates {wid} {cid} {jid} {kid} {aid}).
func admRoutes(wid, cid, jid, kid, aid string) []admRoute {
	ws := "/workspaces/" + wid
	until := admIn(testserver.T0.Add(24 * time.Hour))
	return []admRoute{
		{"POST", "/workspaces", map[string]any{"name": "X", "plan": "pro"}},
		{"GET", "/workspaces", nil},
		{"GET", ws, nil},
		{"PATCH", ws, map[string]any{"name": "Renamed"}},
		{"POST", ws + "/clients", map[string]any{"name": "C"}},
		{"GET", ws + "/clients", nil},
		{"PATCH", ws + "/clients/" + cid, map[string]any{"name": "Renamed"}},
		{"POST", ws + "/jobs", admJobBody(cid, nil)},
		{"GET", ws + "/jobs", nil},
		{"GET", ws + "/jobs/" + jid, nil},
		{"PATCH", ws + "/jobs/" + jid, map[string]any{"name": "Renamed"}},
		{"DELETE", ws + "/jobs/" + jid, nil},
		{"POST", ws + "/keys", map[string]any{"name": "k", "type": "report"}},
		{"GET", ws + "/keys", nil},
		{"DELETE", ws + "/keys/" + kid, nil},
		{"POST", ws + "/alerts/" + aid + "/acknowledge", nil},
		{"POST", ws + "/alerts/" + aid + "/snooze", map[string]any{"until": until}},
		{"POST", ws + "/alerts/" + aid + "/resolve", nil},
		{"GET", ws + "/alerts", nil},
		{"GET", ws + "/activity", nil},
		{"POST", "/clock", map[string]any{"advanceSeconds": 3600}},
	}
}

func TestAdminUnauthorized(t *testing.T) {
	s, f := startFixture(t)
	aid := admReport(s, f.Job, f.ReportKey, "failed").JSON["alert_id"].(string)
	before := admState(s, f.WS)
	clock := s.MustAdmin(200, "POST", "/clock", nil).Data()["now"]

	headers := map[string]map[string]string{
		"no header":       {},
		"wrong token":     {"Authorization": "Bearer wrong-token"},
		"token prefix":    {"Authorization": "Bearer " + testserver.AdminToken[:len(testserver.AdminToken)-1]},
		"token longer":    {"Authorization": "Bearer " + testserver.AdminToken + "x"},
		"basic scheme":    {"Authorization": "Basic " + testserver.AdminToken},
		"no scheme":       {"Authorization": testserver.AdminToken},
		"two spaces":      {"Authorization": "Bearer  " + testserver.AdminToken},
		"empty bearer":    {"Authorization": "Bearer "},
		"token in header": {"X-Admin-Token": testserver.AdminToken},
	}
	for _, rt := range admRoutes(f.WS, f.Client, f.Job, f.ReportKeyID, aid) {
		for name, h := range headers {
			var body []byte
			if rt.body != nil {
				body = admJSON(t, rt.body)
			}
			h2 := map[string]string{"Content-Type": "application/json"}
			for k, v := range h {
				h2[k] = v
			}
			r := s.Do(rt.method, s.AdminURL+"/admin/v1"+rt.path, h2, body)
			admWantError(t, fmt.Sprintf("%s %s (%s)", rt.method, rt.path, name), r, 401, "UNAUTHORIZED", "")
		}
		// The token in the query string is not a token.
		r := s.Do(rt.method, s.AdminURL+"/admin/v1"+rt.path+"?token="+testserver.AdminToken, nil, nil)
		admWantError(t, rt.method+" "+rt.path+" (token in URL)", r, 401, "UNAUTHORIZED", "")
	}
	admSameState(t, "after unauthorized requests", before, admState(s, f.WS))
	if now := s.MustAdmin(200, "POST", "/clock", nil).Data()["now"]; now != clock {
		t.Errorf("unauthorized clock call moved the clock: %v → %v", clock, now)
	}
	// The scheme word is case-insensitive (RFC 9110): "bearer" works.
	r := s.Do("GET", s.AdminURL+"/admin/v1/workspaces", map[string]string{"Authorization": "bearer " + testserver.AdminToken}, nil)
	admWantData(t, "lowercase bearer", r, 200)
}

func TestAdminNotFound(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	a := s.Fixture(testserver.FixtureOptions{})
	b := s.Fixture(testserver.FixtureOptions{})
	aAlert := admReport(s, a.Job, a.ReportKey, "failed").JSON["alert_id"].(string)
	bAlert := admReport(s, b.Job, b.ReportKey, "failed").JSON["alert_id"].(string)
	stateA, stateB := admState(s, a.WS), admState(s, b.WS)

	const unknown = "0190b4c8-1111-7000-8000-000000000000"
	malformed := []string{"nope", "123", "0190b4c8-1111-7000-8000-00000000000g", "0190b4c8111170008000000000000000", "%20", "..."}

	check := func(what string, routes []admRoute, skip func(admRoute) bool) {
		t.Helper()
		for _, rt := range routes {
			if skip(rt) {
				continue
			}
			r := s.Admin(rt.method, rt.path, rt.body)
			admWantError(t, fmt.Sprintf("%s: %s %s", what, rt.method, rt.path), r, 404, "NOT_FOUND", "")
		}
	}
	global := func(rt admRoute) bool { return !strings.HasPrefix(rt.path, "/workspaces/") }

	// Unknown and malformed workspace ids, on every workspace route.
	check("unknown workspace", admRoutes(unknown, a.Client, a.Job, a.ReportKeyID, aAlert), global)
	for _, m := range malformed {
		check("malformed workspace "+m, admRoutes(m, a.Client, a.Job, a.ReportKeyID, aAlert), global)
	}
	// Unknown and malformed ids of the things in a workspace.
	hasID := func(id string) func(admRoute) bool {
		return func(rt admRoute) bool { return !strings.Contains(rt.path, "/"+id) }
	}
	for _, id := range append([]string{unknown}, malformed...) {
		check("client "+id, admRoutes(a.WS, id, a.Job, a.ReportKeyID, aAlert), hasID(id))
		check("job "+id, admRoutes(a.WS, a.Client, id, a.ReportKeyID, aAlert), hasID(id))
		check("key "+id, admRoutes(a.WS, a.Client, a.Job, id, aAlert), hasID(id))
		check("alert "+id, admRoutes(a.WS, a.Client, a.Job, a.ReportKeyID, id), hasID(id))
	}
	// Ids of workspace A used under workspace B (and the other way round).
	check("A's client under B", admRoutes(b.WS, a.Client, b.Job, b.ReportKeyID, bAlert), hasID(a.Client))
	check("A's job under B", admRoutes(b.WS, b.Client, a.Job, b.ReportKeyID, bAlert), hasID(a.Job))
	check("A's key under B", admRoutes(b.WS, b.Client, b.Job, a.ReportKeyID, bAlert), hasID(a.ReportKeyID))
	check("A's alert under B", admRoutes(b.WS, b.Client, b.Job, b.ReportKeyID, aAlert), hasID(aAlert))
	check("B's job under A", admRoutes(a.WS, a.Client, b.Job, a.ReportKeyID, aAlert), hasID(b.Job))

	// Nothing changed in either workspace (the workspace list is compared
	// too: no workspace was created).
	admSameState(t, "workspace A", stateA, admState(s, a.WS))
	admSameState(t, "workspace B", stateB, admState(s, b.WS))

	// Paths that do not exist at all.
	for _, p := range []string{"/nothing", "/workspaces/" + a.WS + "/bogus", "/workspaces/" + a.WS + "/jobs/" + a.Job + "/history",
		"/workspaces/" + a.WS + "/alerts/" + aAlert, "/workspaces/", "/workspace"} {
		admWantError(t, "GET "+p, s.Admin("GET", p, nil), 404, "NOT_FOUND", "")
	}
	admWantError(t, "GET /", s.Do("GET", s.AdminURL+"/", map[string]string{"Authorization": "Bearer " + testserver.AdminToken}, nil), 404, "NOT_FOUND", "")
}

func TestAdminConflictOnResolvedAlert(t *testing.T) {
	s, f := startFixture(t)
	until := map[string]any{"until": admIn(testserver.T0.Add(48 * time.Hour))}

	// Resolved through the admin API.
	a1 := admReport(s, f.Job, f.ReportKey, "failed").JSON["alert_id"].(string)
	s.MustAdmin(200, "POST", "/workspaces/"+f.WS+"/alerts/"+a1+"/resolve", nil)
	// Resolved by an ok report.
	s.Advance(time.Minute)
	a2 := admReport(s, f.Job, f.ReportKey, "warn").JSON["alert_id"].(string)
	if a2 == a1 {
		t.Fatalf("a new problem after a resolve reused the resolved alert %s", a1)
	}
	s.Advance(time.Minute)
	admReport(s, f.Job, f.ReportKey, "ok")

	before := admState(s, f.WS)
	for _, aid := range []string{a1, a2} {
		for _, action := range []string{"acknowledge", "snooze", "resolve"} {
			var body any
			if action == "snooze" {
				body = until
			}
			r := s.Admin("POST", "/workspaces/"+f.WS+"/alerts/"+aid+"/"+action, body)
			admWantError(t, action+" resolved alert "+aid, r, 409, "CONFLICT", "")
		}
	}
	admSameState(t, "after conflicts", before, admState(s, f.WS))
}
