package transport_test

// Access to the REST API (api.md 5, 7.1; decisions.md 3): the key (401),
// the workspace (403 WORKSPACE_INACTIVE), the plan (403 PLAN_REQUIRED) and
// the scope (403 INSUFFICIENT_SCOPE), in that order and before the limits,
// the parameters and the resource; the first use of a REST key in the
// activity log; lastUsedAt.

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"backupmon/internal/testserver"
)

// rsPaths returns the nine REST paths with real ids, and the scope each
// needs (api.md 5.8).
func rsPaths(client, job string) map[string]string {
	return map[string]string{
		"/workspace":                     "workspace:read",
		"/clients":                       "clients:read",
		"/clients/" + client:             "clients:read",
		"/clients/" + client + "/health": "health:read",
		"/jobs":                          "jobs:read",
		"/jobs/" + job:                   "jobs:read",
		"/reports":                       "reports:read",
		"/alerts":                        "alerts:read",
		"/health":                        "health:read",
	}
}

// rsMsg checks error.message exactly.
func rsMsg(t *testing.T, what string, r testserver.Response, msg string) {
	t.Helper()
	e, _ := r.JSON["error"].(map[string]any)
	if e["message"] != msg {
		t.Errorf("%s: message %v, want %q", what, e["message"], msg)
	}
}

func rsRandomKey() string {
	b := make([]byte, 24)
	rand.Read(b)
	return "svc_live_" + hex.EncodeToString(b)
}

func TestRESTUnauthorized(t *testing.T) {
	s, f := startFixture(t)
	base := "/workspaces/" + f.WS
	revoked, revokedID := s.NewKey(f.WS, "rest", nil)
	s.MustAdmin(204, "DELETE", base+"/keys/"+revokedID, nil)
	expiresAt := testserver.T0.Add(time.Hour)
	expiring, _ := s.NewKey(f.WS, "rest", map[string]any{"expiresAt": admIn(expiresAt)})
	paths := rsPaths(f.Client, f.Job)
	const (
		malformed = "Missing or malformed Authorization header"
		invalid   = "Invalid API key"
		expired   = "API key has expired"
	)

	for path := range paths {
		for _, c := range []struct {
			auth string // "-" for no header
			msg  string
		}{
			{"-", malformed},
			{"", malformed},
			{"Bearer", malformed},
			{"Bearer ", malformed},
			{"Bearer  " + f.RestKey, malformed},
			{"Bearer " + f.RestKey + " x", malformed},
			{"Bearer\t" + f.RestKey, malformed},
			{"Bearer" + f.RestKey, malformed},
			{"Basic " + f.RestKey, malformed},
			{"Token " + f.RestKey, malformed},
			{f.RestKey, malformed},
			{"Bearer " + rsRandomKey(), invalid},
			{"Bearer " + strings.ToUpper(f.RestKey), invalid},
			{"Bearer " + f.RestKey[:len(f.RestKey)-1], invalid},
			{"Bearer abc", invalid},
			{"Bearer " + testserver.AdminToken, invalid},
			{"Bearer " + revoked, invalid},
		} {
			h := map[string]string{}
			if c.auth != "-" {
				h["Authorization"] = c.auth
			}
			r := rsDo(s, "GET", path, h)
			rsWantErr(t, path+" with "+strings.ReplaceAll(c.auth, f.RestKey, "<key>"), r, 401, "UNAUTHORIZED", "")
			rsMsg(t, path+" "+c.auth, r, c.msg)
		}
		// The key in the URL is not read (api.md 5.2).
		r := rsGet(s, "", path+"?key="+f.RestKey)
		rsWantErr(t, path+" key in the URL", r, 401, "UNAUTHORIZED", "")
		rsMsg(t, path+" key in the URL", r, malformed)
		// The scheme in any letter case.
		for _, scheme := range []string{"bearer", "BEARER", "bEaReR"} {
			if r := rsDo(s, "GET", path, map[string]string{"Authorization": scheme + " " + f.RestKey}); r.Status != 200 {
				t.Errorf("%s with scheme %s: %d %s", path, scheme, r.Status, r.Body)
			}
		}
	}
	s.Advance(time.Minute)

	rpRun(t, s, "expiry", func(t *testing.T) {
		s.SetClock(expiresAt.Add(-time.Millisecond))
		if r := rsGet(s, expiring, "/workspace"); r.Status != 200 {
			t.Errorf("a millisecond before expiry: %d %s", r.Status, r.Body)
		}
		s.SetClock(expiresAt)
		for path := range paths {
			r := rsGet(s, expiring, path)
			rsWantErr(t, path+" expired", r, 401, "UNAUTHORIZED", "")
			rsMsg(t, path+" expired", r, expired)
		}
	})

	rpRun(t, s, "401 comes first", func(t *testing.T) {
		// A suspended workspace, a bad parameter, an unknown client: the
		// key is checked before all of them.
		s.MustAdmin(200, "PATCH", base, map[string]any{"status": "suspended"})
		for _, p := range []string{"/clients/nope", "/jobs?limit=0", "/clients/nope?x=1", "/health?days=0"} {
			rsWantErr(t, "revoked "+p, rsGet(s, revoked, p), 401, "UNAUTHORIZED", "")
			rsWantErr(t, "expired "+p, rsGet(s, expiring, p), 401, "UNAUTHORIZED", "")
			rsWantErr(t, "no key "+p, rsGet(s, "", p), 401, "UNAUTHORIZED", "")
		}
	})
}

func TestRESTWorkspaceAndPlan(t *testing.T) {
	s, f := startFixture(t)
	base := "/workspaces/" + f.WS
	paths := rsPaths(f.Client, f.Job)
	noScope, _ := s.NewKey(f.WS, "rest", map[string]any{"scopes": []string{}})
	patch := func(body map[string]any) {
		t.Helper()
		s.MustAdmin(200, "PATCH", base, body)
	}
	every := func(what string, key string, status int, code string) {
		t.Helper()
		for path := range paths {
			if status == 200 {
				// Past these checks: the data, or the parameter error.
				if r := rsGet(s, key, path); r.Status != 200 {
					t.Errorf("%s: %s: %d %s", what, path, r.Status, r.Body)
				}
				rsWantErr(t, what+": "+path, rsGet(s, key, path+"?bogus=1"), 400, "INVALID_PARAMETER", "bogus")
				continue
			}
			for _, p := range []string{path, path + "?bogus=1"} {
				rsWantErr(t, what+": "+p, rsGet(s, key, p), status, code, "")
			}
		}
		if status != 200 {
			// Before the resource too.
			for _, p := range []string{"/clients/nope", "/jobs/nope", "/clients/nope/health?days=0"} {
				rsWantErr(t, what+": "+p, rsGet(s, key, p), status, code, "")
			}
		}
	}
	for _, c := range []struct {
		what   string
		body   map[string]any
		status int
		code   string
	}{
		{"pro", map[string]any{"plan": "pro"}, 200, ""},
		{"growth", map[string]any{"plan": "growth"}, 200, ""},
		{"trial without an end", map[string]any{"plan": "trial"}, 200, ""},
		{"trial running", map[string]any{"plan": "trial", "trialEndsAt": admIn(testserver.T0.Add(time.Hour))}, 200, ""},
		{"starter", map[string]any{"plan": "starter", "trialEndsAt": nil}, 403, "PLAN_REQUIRED"},
		{"suspended starter", map[string]any{"status": "suspended"}, 403, "WORKSPACE_INACTIVE"},
		{"cancelled starter", map[string]any{"status": "cancelled"}, 403, "WORKSPACE_INACTIVE"},
		{"cancelled pro", map[string]any{"plan": "pro"}, 403, "WORKSPACE_INACTIVE"},
		{"suspended growth", map[string]any{"plan": "growth", "status": "suspended"}, 403, "WORKSPACE_INACTIVE"},
		{"active again", map[string]any{"status": "active"}, 200, ""},
	} {
		s.Advance(time.Minute)
		patch(c.body)
		every(c.what, f.RestKey, c.status, c.code)
		if c.status != 200 {
			// The workspace and the plan come before the key's type and
			// scope.
			every(c.what+", report key", f.ReportKey, c.status, c.code)
			every(c.what+", assistant key", f.AsstKey, c.status, c.code)
			every(c.what+", key without scopes", noScope, c.status, c.code)
		}
	}

	rpRun(t, s, "trial ends", func(t *testing.T) {
		end := rpNow(s).Add(time.Hour)
		patch(map[string]any{"plan": "trial", "trialEndsAt": admIn(end)})
		s.SetClock(end.Add(-time.Millisecond))
		every("a millisecond before the trial ends", f.RestKey, 200, "")
		s.SetClock(end)
		every("trial ended", f.RestKey, 403, "WORKSPACE_INACTIVE")
		every("trial ended, report key", f.ReportKey, 403, "WORKSPACE_INACTIVE")
		// An ended trial on Starter: the workspace comes first.
		patch(map[string]any{"plan": "starter"})
		every("starter, trial date passed", f.RestKey, 403, "PLAN_REQUIRED")
		patch(map[string]any{"plan": "trial", "status": "suspended"})
		every("suspended ended trial", f.RestKey, 403, "WORKSPACE_INACTIVE")
		patch(map[string]any{"plan": "growth", "status": "active"})
		every("growth", f.RestKey, 200, "")
	})
}

func TestRESTScopes(t *testing.T) {
	s, f := startFixture(t)
	paths := rsPaths(f.Client, f.Job)
	scoped := map[string]string{}
	for _, sc := range admAllScopes {
		k, _ := s.NewKey(f.WS, "rest", map[string]any{"scopes": []string{sc}})
		scoped[sc] = k
	}
	none, _ := s.NewKey(f.WS, "rest", map[string]any{"scopes": []string{}})
	scoped[""] = none
	two, _ := s.NewKey(f.WS, "rest", map[string]any{"scopes": []string{"jobs:read", "alerts:read"}})

	for path, need := range paths {
		for sc, key := range scoped {
			r := rsGet(s, key, path)
			if sc == need || need == "workspace:read" {
				if r.Status != 200 {
					t.Errorf("%s with %q: %d %s", path, sc, r.Status, r.Body)
				}
				continue
			}
			rsWantErr(t, path+" with "+sc, r, 403, "INSUFFICIENT_SCOPE", "")
			if e, _ := r.JSON["error"].(map[string]any); !strings.Contains(e["message"].(string), need) {
				t.Errorf("%s with %q: message %v does not name %s", path, sc, e["message"], need)
			}
		}
		r := rsGet(s, two, path)
		if need == "jobs:read" || need == "alerts:read" || need == "workspace:read" {
			if r.Status != 200 {
				t.Errorf("%s with jobs and alerts: %d", path, r.Status)
			}
		} else {
			rsWantErr(t, path+" with jobs and alerts", r, 403, "INSUFFICIENT_SCOPE", "")
		}
		// Report and assistant keys read nothing, not even /workspace.
		for _, k := range []string{f.ReportKey, f.AsstKey} {
			rsWantErr(t, path+" report/assistant key", rsGet(s, k, path), 403, "INSUFFICIENT_SCOPE", "")
		}
	}
	// /workspace shows each key's scopes, workspace:read always.
	for sc, key := range scoped {
		k := admObj(t, rsData(t, "workspace", rsGet(s, key, "/workspace")), "key")
		got := admStrings(t, k["scopes"])
		want := []string{"workspace:read"}
		if sc != "" && sc != "workspace:read" {
			want = append(want, sc)
		}
		if strings.Join(admSorted(got), ",") != strings.Join(admSorted(want), ",") {
			t.Errorf("key %q shows scopes %v", sc, got)
		}
	}

	rpRun(t, s, "the scope comes before the limits, parameters and resource", func(t *testing.T) {
		for _, p := range []string{"/jobs?limit=0", "/jobs?bogus=1", "/jobs/nope", "/jobs/nope?bogus=1", "/health?days=0",
			"/clients/nope/health", "/reports?cursor=bad"} {
			rsWantErr(t, "no scope "+p, rsGet(s, none, p), 403, "INSUFFICIENT_SCOPE", "")
			rsWantErr(t, "report key "+p, rsGet(s, f.ReportKey, p), 403, "INSUFFICIENT_SCOPE", "")
		}
		// Parameters before the resource.
		for _, c := range []struct{ path, param string }{
			{"/jobs/nope?bogus=1", "bogus"}, {"/clients/nope?limit=5", "limit"}, {"/clients/nope/health?days=0", "days"},
			{"/clients/nope/health?days=1&days=1", "days"}, {"/jobs/nope?cursor=x", "cursor"},
		} {
			rsWantErr(t, c.path, rsGet(s, f.RestKey, c.path), 400, "INVALID_PARAMETER", c.param)
		}
		rsWantErr(t, "unknown client", rsGet(s, f.RestKey, "/clients/nope/health?days=5"), 404, "NOT_FOUND", "")
	})
}

func TestRESTFirstUse(t *testing.T) {
	s, f := startFixture(t)
	base := "/workspaces/" + f.WS
	key, keyID := s.NewKey(f.WS, "rest", map[string]any{"name": "poller", "scopes": []string{"jobs:read"}})
	firstUses := func() []map[string]any {
		t.Helper()
		var out []map[string]any
		for _, a := range s.MustAdmin(200, "GET", base+"/activity", nil).List() {
			if a["type"] == "key.first_used" && a["keyId"] == keyID {
				out = append(out, a)
			}
		}
		return out
	}
	lastUsed := func() any {
		t.Helper()
		for _, k := range s.MustAdmin(200, "GET", base+"/keys", nil).List() {
			if k["id"] == keyID {
				return k["lastUsedAt"]
			}
		}
		t.Fatalf("key %s not listed", keyID)
		return nil
	}
	// Refused before the key was of use: no entry, no lastUsedAt.
	rsWantErr(t, "no scope", rsGet(s, key, "/alerts"), 403, "INSUFFICIENT_SCOPE", "")
	s.MustAdmin(200, "PATCH", base, map[string]any{"status": "suspended"})
	rsWantErr(t, "suspended", rsGet(s, key, "/jobs"), 403, "WORKSPACE_INACTIVE", "")
	s.MustAdmin(200, "PATCH", base, map[string]any{"status": "active"})
	if n := len(firstUses()); n != 0 {
		t.Errorf("%d key.first_used entries after refused requests", n)
	}
	if lu := lastUsed(); lu != nil {
		t.Errorf("lastUsedAt %v after refused requests", lu)
	}

	first := testserver.T0.Add(90 * time.Second)
	s.SetClock(first)
	rsItems(t, "jobs", rsGet(s, key, "/jobs"))
	for i := 0; i < 3; i++ {
		s.Advance(time.Minute)
		rsGet(s, key, "/jobs/"+f.Job)
	}
	uses := firstUses()
	if len(uses) != 1 {
		t.Fatalf("%d key.first_used entries, want 1", len(uses))
	}
	rpFields(t, "key.first_used", uses[0], map[string]any{"at": testserver.TS(first), "keyName": "poller", "actor": "key:" + key[:16]})
	if lu := lastUsed(); lu != testserver.TS(first.Add(3*time.Minute)) {
		t.Errorf("lastUsedAt %v, want %s", lu, testserver.TS(first.Add(3*time.Minute)))
	}
	w := admObj(t, rsData(t, "workspace", rsGet(s, key, "/workspace")), "key")
	rpFields(t, "workspace key", w, map[string]any{"id": keyID, "name": "poller", "lastUsedAt": testserver.TS(first.Add(3 * time.Minute))})
	// Other keys' first uses are their own; the report key writes none.
	admReport(s, f.Job, f.ReportKey, "ok")
	rsGet(s, f.RestKey, "/health")

	s.Restart()
	s.Advance(time.Minute)
	rsGet(s, key, "/jobs")
	if n := len(firstUses()); n != 1 {
		t.Errorf("%d key.first_used entries after a restart and another use, want 1", n)
	}
	if lu := lastUsed(); lu != testserver.TS(first.Add(4*time.Minute)) {
		t.Errorf("lastUsedAt after the restart %v", lu)
	}
	var restUses, reportUses int
	for _, a := range s.MustAdmin(200, "GET", base+"/activity", nil).List() {
		if a["type"] == "key.first_used" {
			if strings.HasPrefix(a["actor"].(string), "key:"+f.ReportKey[:16]) {
				reportUses++
			} else {
				restUses++
			}
		}
	}
	if restUses != 2 || reportUses != 0 {
		t.Errorf("first uses: %d of REST keys (want 2), %d of the report key (want 0)", restUses, reportUses)
	}
}
