package transport_test

// API keys and the activity log through the admin API (decisions.md 2).

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"backupmon/internal/testserver"
)

func admSorted(list []string) []string {
	list = slices.Clone(list)
	slices.Sort(list)
	return list
}

func TestAdminKeys(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	ws := s.MustAdmin(201, "POST", "/workspaces", map[string]any{"name": "Keys Inc", "plan": "pro"}).Data()["id"].(string)
	client := s.MustAdmin(201, "POST", "/workspaces/"+ws+"/clients", map[string]any{"name": "C"}).Data()["id"].(string)
	job := s.NewJob(ws, client, "J", map[string]any{"intervalMinutes": 60})
	keysPath := "/workspaces/" + ws + "/keys"

	type made struct {
		id, secret, name string
	}
	var keys []made
	create := func(body map[string]any, wantType string, wantScopes []string) map[string]any {
		t.Helper()
		r := s.Admin("POST", keysPath, body)
		admWantData(t, "create key", r, 201)
		k := r.Data()
		admCheckKey(t, "new key", k, true)
		secret, _ := k["key"].(string)
		if !testserver.SecretRe.MatchString(secret) {
			t.Errorf("secret %q is not svc_live_ + 48 lowercase hex", secret)
		}
		if len(secret) >= 16 && k["prefix"] != secret[:16] {
			t.Errorf("prefix %v, want %q", k["prefix"], secret[:16])
		}
		if k["type"] != wantType || k["name"] != body["name"] || k["lastUsedAt"] != nil {
			t.Errorf("new key: %v", k)
		}
		if got := admStrings(t, k["scopes"]); !slices.Equal(admSorted(got), admSorted(wantScopes)) {
			t.Errorf("key %v: scopes %v, want %v", body, got, wantScopes)
		}
		admWantTime(t, "key createdAt", k["createdAt"], testserver.T0)
		for _, o := range keys {
			if o.secret == secret || o.id == k["id"] {
				t.Errorf("key %v repeats an earlier key", k)
			}
		}
		keys = append(keys, made{k["id"].(string), secret, body["name"].(string)})
		return k
	}
	// REST keys: all six scopes by default; workspace:read always added.
	create(map[string]any{"name": "all", "type": "rest"}, "rest", admAllScopes)
	create(map[string]any{"name": "two", "type": "rest", "scopes": []string{"jobs:read", "alerts:read"}}, "rest",
		[]string{"workspace:read", "jobs:read", "alerts:read"})
	create(map[string]any{"name": "none", "type": "rest", "scopes": []string{}}, "rest", []string{"workspace:read"})
	create(map[string]any{"name": "dup", "type": "rest", "scopes": []string{"health:read", "health:read", "workspace:read"}}, "rest",
		[]string{"workspace:read", "health:read"})
	create(map[string]any{"name": "every", "type": "rest", "scopes": admAllScopes}, "rest", admAllScopes)
	// Report and assistant keys have no scopes.
	rep := create(map[string]any{"name": "agent", "type": "report"}, "report", []string{})
	asst := create(map[string]any{"name": "bot", "type": "assistant"}, "assistant", []string{})
	if asst["access"] != "read-only" {
		t.Errorf("assistant access %v, want read-only", asst["access"])
	}
	rw := create(map[string]any{"name": "bot-rw", "type": "assistant", "access": "read-write"}, "assistant", []string{})
	if rw["access"] != "read-write" {
		t.Errorf("assistant access %v, want read-write", rw["access"])
	}
	exp := create(map[string]any{"name": "expiring", "type": "report", "expiresAt": "2026-03-04T12:00:00+01:00"}, "report", []string{})
	if exp["expiresAt"] != "2026-03-04T11:00:00.000Z" {
		t.Errorf("expiresAt %v", exp["expiresAt"])
	}
	create(map[string]any{"name": "nulls", "type": "report", "expiresAt": nil}, "report", []string{})

	// The list: every key, no secrets, oldest first.
	r := s.Admin("GET", keysPath, nil)
	admWantData(t, "list keys", r, 200)
	list := r.List()
	if len(list) != len(keys) {
		t.Fatalf("list has %d keys, want %d", len(list), len(keys))
	}
	for i, k := range list {
		admCheckKey(t, "listed key", k, false)
		if k["id"] != keys[i].id || k["name"] != keys[i].name {
			t.Errorf("list[%d] = %v %v, want %s %s", i, k["id"], k["name"], keys[i].id, keys[i].name)
		}
	}

	// Using a report key sets lastUsedAt.
	s.Advance(90 * time.Second)
	admReport(s, job, rep["key"].(string), "ok")
	for _, k := range s.MustAdmin(200, "GET", keysPath, nil).List() {
		want := any(nil)
		if k["id"] == rep["id"] {
			want = testserver.TS(testserver.T0.Add(90 * time.Second))
		}
		if k["lastUsedAt"] != want {
			t.Errorf("key %v lastUsedAt %v, want %v", k["name"], k["lastUsedAt"], want)
		}
	}

	// An expired key answers 401 on the Report API.
	if r := s.Report(job, exp["key"].(string), "", `{"status":"ok"}`); r.Status != 200 {
		t.Errorf("expiring key before its end: %d %s", r.Status, r.Body)
	}
	s.SetClock(testserver.T0.Add(time.Hour))
	if r := s.Report(job, exp["key"].(string), "", `{"status":"ok"}`); r.Status != 401 || string(r.Body) != `{"error":"API key has expired"}` {
		t.Errorf("expired key: %d %s", r.Status, r.Body)
	}

	// Revoking: 204 with no body, then 401 on the Report API, gone from the
	// list, and a second revoke is 404.
	revokeAt := testserver.T0.Add(time.Hour)
	r = s.Admin("DELETE", keysPath+"/"+rep["id"].(string), nil)
	if r.Status != 204 || len(r.Body) != 0 {
		t.Fatalf("revoke: %d %q", r.Status, r.Body)
	}
	if r := s.Report(job, rep["key"].(string), "", `{"status":"ok"}`); r.Status != 401 || string(r.Body) != `{"error":"Invalid API key"}` {
		t.Errorf("revoked key on the Report API: %d %s", r.Status, r.Body)
	}
	for _, k := range s.MustAdmin(200, "GET", keysPath, nil).List() {
		if k["id"] == rep["id"] {
			t.Errorf("revoked key still listed: %v", k)
		}
	}
	admWantError(t, "second revoke", s.Admin("DELETE", keysPath+"/"+rep["id"].(string), nil), 404, "NOT_FOUND", "")

	// Activity: key.created for each key, key.revoked, newest first (after
	// them come the fixture's job.created and client.created).
	r = s.Admin("GET", "/workspaces/"+ws+"/activity", nil)
	admWantData(t, "activity", r, 200)
	acts := r.List()
	if n := len(acts); n >= 2 && acts[n-1]["type"] == "client.created" && acts[n-2]["type"] == "job.created" {
		acts = acts[:n-2]
	}
	if len(acts) != len(keys)+1 {
		t.Fatalf("activity has %d entries, want %d: %s", len(acts), len(keys)+1, r.Body)
	}
	for i, a := range acts {
		for _, k := range []string{"id", "at", "type", "keyId", "keyName"} {
			if _, ok := a[k].(string); !ok {
				t.Errorf("activity[%d].%s = %#v", i, k, a[k])
			}
		}
		if !admUUIDRe.MatchString(a["id"].(string)) {
			t.Errorf("activity id %v", a["id"])
		}
		admWantTime(t, "activity at", a["at"], time.Time{})
		// Nothing but the contract's members and the actor (decisions.md 11).
		for k := range a {
			if !slices.Contains([]string{"id", "at", "type", "keyId", "keyName", "actor"}, k) {
				t.Errorf("activity[%d] has member %q: %v", i, k, a)
			}
		}
	}
	if a := acts[0]; a["type"] != "key.revoked" || a["keyId"] != rep["id"] || a["keyName"] != "agent" || a["at"] != testserver.TS(revokeAt) {
		t.Errorf("newest entry: %v", a)
	}
	for i, k := range keys {
		a := acts[len(acts)-1-i]
		if a["type"] != "key.created" || a["keyId"] != k.id || a["keyName"] != k.name || a["at"] != testserver.TS(testserver.T0) {
			t.Errorf("entry for key %s: %v", k.name, a)
		}
	}
	ids := map[any]bool{}
	for _, a := range acts {
		if ids[a["id"]] {
			t.Errorf("activity id %v repeated", a["id"])
		}
		ids[a["id"]] = true
	}

	// The secrets are shown nowhere else: not in any admin answer, not in
	// /metrics, not in the logs, not on disk (only their SHA-256 is kept).
	s.Restart()
	var bodies [][]byte
	for _, p := range []string{"/workspaces", "/workspaces/" + ws, keysPath, "/workspaces/" + ws + "/activity", "/workspaces/" + ws + "/jobs",
		"/workspaces/" + ws + "/jobs/" + job, "/workspaces/" + ws + "/clients", "/workspaces/" + ws + "/alerts"} {
		bodies = append(bodies, s.MustAdmin(200, "GET", p, nil).Body)
	}
	bodies = append(bodies, s.Do("GET", s.AdminURL+"/metrics", nil, nil).Body, []byte(s.Logs.String()))
	err := filepath.WalkDir(s.Dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		bodies = append(bodies, b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		sum := sha256.Sum256([]byte(k.secret))
		for i, b := range bodies {
			if bytes.Contains(b, []byte(k.secret)) || bytes.Contains(b, []byte(k.secret[16:])) {
				t.Errorf("secret of key %s found in answer/file %d", k.name, i)
			}
			if bytes.Contains(b, []byte(hex.EncodeToString(sum[:]))) {
				t.Errorf("hex hash of key %s found in answer %d", k.name, i)
			}
		}
	}
	// After the restart the keys still work (or not) as before.
	if r := s.Report(job, keys[6].secret, "", `{"status":"ok"}`); r.Status != 403 {
		t.Errorf("assistant key on the Report API after restart: %d %s", r.Status, r.Body)
	}
	if r := s.Report(job, rep["key"].(string), "", `{"status":"ok"}`); r.Status != 401 {
		t.Errorf("revoked key after restart: %d %s", r.Status, r.Body)
	}
	if r := s.Report(job, keys[9].secret, "", `{"status":"ok"}`); r.Status != 200 {
		t.Errorf("report key after restart: %d %s", r.Status, r.Body)
	}
	if !strings.HasPrefix(keys[9].name, "nulls") {
		t.Fatalf("key order in the test changed: %v", keys[9])
	}
}
