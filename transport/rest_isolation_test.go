package transport_test

// What the REST API never shows (api.md 1.5, 1.7, 5.4, 5.9): no secret or
// forbidden content in any answer, and nothing of another workspace.

import (
	"bytes"
	"encoding/base64"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"backupmon/internal/testserver"
)

// rsEveryPath lists a workspace's REST reads: every endpoint, each client
// and job by id, and the list filters.
func rsEveryPath(d rsRichData) []string {
	paths := []string{"/workspace", "/clients", "/jobs", "/reports", "/alerts", "/health", "/health?days=1", "/health?days=90",
		"/clients?status=archived", "/clients?needsAttention=true", "/clients?search=co", "/jobs?status=missing",
		"/jobs?lastResult=none", "/jobs?vendor=acronis", "/jobs?search=job", "/reports?status=failed", "/reports?from=2026-02-01",
		"/alerts?status=unresolved", "/alerts?status=resolved", "/alerts?status=snoozed", "/alerts?severity=warning",
		"/alerts?from=2026-03-01"}
	for id := range d.Clients {
		paths = append(paths, "/clients/"+id, "/clients/"+id+"/health", "/jobs?clientId="+id, "/reports?clientId="+id,
			"/alerts?clientId="+id)
	}
	for id := range d.Jobs {
		paths = append(paths, "/jobs/"+id, "/reports?jobId="+id, "/alerts?jobId="+id)
	}
	return paths
}

// rsIngestTokenRe is the shape of ingest tokens (decisions.md 10: 20
// lowercase base32 characters).
var rsIngestTokenRe = regexp.MustCompile(`[a-z2-7]{20}`)

func TestRESTForbiddenContent(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	d := rsRich(s, "pro")
	f := d.f
	base := "/workspaces/" + f.WS
	// More keys of each kind, one revoked, one expiring.
	extra, _ := s.NewKey(f.WS, "rest", map[string]any{"scopes": []string{"jobs:read"}})
	_, revokedID := s.NewKey(f.WS, "report", nil)
	s.MustAdmin(204, "DELETE", base+"/keys/"+revokedID, nil)
	s.NewKey(f.WS, "assistant", map[string]any{"access": "read-write"})
	s.NewKey(f.WS, "rest", map[string]any{"expiresAt": admIn(d.Now.Add(time.Hour))})
	var prefixes []string // of every key but the REST key reading
	for _, k := range s.MustAdmin(200, "GET", base+"/keys", nil).List() {
		if k["prefix"] != f.RestKey[:16] {
			prefixes = append(prefixes, k["prefix"].(string))
		}
	}
	if len(prefixes) < 5 {
		t.Fatalf("%d other keys", len(prefixes))
	}
	// The ingest tokens the server stored for the jobs: found in its data
	// directory, since no answer of any API shows them yet.
	tokens := map[string]bool{}
	err := filepath.WalkDir(s.Dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		for _, m := range rsIngestTokenRe.FindAll(b, -1) {
			tokens[string(m)] = true
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(tokens) < len(d.Jobs) {
		t.Fatalf("found %d ingest tokens in the data directory, want at least %d", len(tokens), len(d.Jobs))
	}

	forbidden := map[string]string{
		"the idempotency key":   rsIdemKey,
		"an alert action note":  rsNote,
		"the report key":        f.ReportKey,
		"the assistant key":     f.AsstKey,
		"another REST key":      extra,
		"the admin token":       testserver.AdminToken,
		"a report source":       "api:" + f.ReportKeyPrefix,
		"the report key prefix": f.ReportKeyPrefix,
		"the REST key's secret": f.RestKey[16:],
	}
	for _, p := range prefixes {
		forbidden["the prefix of another key"] = p
	}
	var bodies int
	check := func(what string, body []byte) {
		t.Helper()
		bodies++
		for name, v := range forbidden {
			if bytes.Contains(body, []byte(v)) {
				t.Errorf("%s shows %s: %s", what, name, body)
			}
		}
		for tok := range tokens {
			if bytes.Contains(body, []byte(tok)) {
				t.Errorf("%s shows an ingest token %s", what, tok)
			}
		}
		// rsCheck has checked the rest: no svc_live_ secret, no "api:" or
		// "email:" source, no e-mail address, no member named like a
		// password, secret, token, ingest address, e-mail, source,
		// idempotency key, note, history, hash, webhook, contact, subject,
		// sender, billing, prompt, user or actor.
	}
	for _, p := range rsEveryPath(d) {
		for _, l := range []int{1, 100} {
			sep := "?"
			if strings.Contains(p, "?") {
				sep = "&"
			}
			q := p
			if !strings.HasPrefix(p, "/workspace") && !strings.Contains(p, "health") && !strings.HasPrefix(p, "/clients/") &&
				!strings.HasPrefix(p, "/jobs/") {
				q = p + sep + "limit=" + strconv.Itoa(l)
			}
			r := rsGet(s, f.RestKey, q)
			if r.Status != 200 {
				t.Errorf("%s: %d %s", q, r.Status, r.Body)
			}
			check(q, r.Body)
			if pg, ok := r.JSON["pagination"].(map[string]any); ok {
				if next, _ := pg["nextCursor"].(string); next != "" {
					raw, err := base64.RawURLEncoding.DecodeString(next)
					if err != nil {
						t.Errorf("%s: cursor %q: %v", q, next, err)
					}
					check(q+" cursor", raw)
				}
			}
		}
	}
	// Errors too.
	for _, p := range []string{"/jobs?bogus=" + rsIdemKey, "/clients/" + rsIdemKey, "/jobs?search=" + strings.Repeat("x", 101)} {
		check(p, rsGet(s, f.RestKey, p).Body)
	}
	check("report key", rsGet(s, f.ReportKey, "/jobs").Body)
	if bodies < 100 {
		t.Errorf("only %d bodies checked", bodies)
	}
}

func TestRESTCrossWorkspace(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	a := rsRich(s, "pro")
	// A's answers before B exists.
	before := map[string]string{}
	for _, p := range rsEveryPath(a) {
		before[p] = string(rsGet(s, a.f.RestKey, p).Body)
	}
	b := rsRich(s, "pro")
	if a.Now != b.Now || rpNow(s) != a.Now {
		t.Fatalf("the two workspaces' clocks differ")
	}

	for _, c := range []struct {
		what        string
		mine, other rsRichData
	}{{"A reading B", a, b}, {"B reading A", b, a}} {
		key := c.mine.f.RestKey
		theirs := map[string]bool{c.other.f.WS: true}
		for id := range c.other.Clients {
			theirs[id] = true
		}
		for id := range c.other.Jobs {
			theirs[id] = true
		}
		for _, id := range append(c.other.Results, c.other.A1, c.other.A4, c.other.A7, c.other.A9, c.other.A10) {
			theirs[id] = true
		}
		// Their ids in paths: 404; in filters: empty lists.
		for id := range c.other.Clients {
			rsWantErr(t, c.what+": client", rsGet(s, key, "/clients/"+id), 404, "NOT_FOUND", "")
			rsWantErr(t, c.what+": client health", rsGet(s, key, "/clients/"+id+"/health"), 404, "NOT_FOUND", "")
			rsWantErr(t, c.what+": client health with days", rsGet(s, key, "/clients/"+id+"/health?days=5"), 404, "NOT_FOUND", "")
			for _, p := range []string{"/jobs?clientId=", "/reports?clientId=", "/alerts?clientId=", "/alerts?status=unresolved&clientId="} {
				if items := rsItems(t, p, rsGet(s, key, p+id)); len(items) != 0 {
					t.Errorf("%s: %s%s lists %d items", c.what, p, id, len(items))
				}
			}
		}
		for id := range c.other.Jobs {
			rsWantErr(t, c.what+": job", rsGet(s, key, "/jobs/"+id), 404, "NOT_FOUND", "")
			for _, p := range []string{"/reports?jobId=", "/alerts?jobId=", "/alerts?status=unresolved&jobId=",
				"/reports?clientId=" + c.mine.Globex + "&jobId="} {
				if items := rsItems(t, p, rsGet(s, key, p+id)); len(items) != 0 {
					t.Errorf("%s: %s%s lists %d items", c.what, p, id, len(items))
				}
			}
		}
		// Their result and alert ids are not clients or jobs here either.
		rsWantErr(t, c.what+": result id", rsGet(s, key, "/jobs/"+c.other.Results[0]), 404, "NOT_FOUND", "")
		rsWantErr(t, c.what+": workspace id", rsGet(s, key, "/clients/"+c.other.f.WS), 404, "NOT_FOUND", "")
		// Every list, every page: nothing of theirs; every id and value
		// of each answer is the workspace's own.
		for _, p := range rsEveryPath(c.mine) {
			r := rsGet(s, key, p)
			for id := range theirs {
				if bytes.Contains(r.Body, []byte(id)) {
					t.Errorf("%s: %s shows %s", c.what, p, id)
				}
			}
			if strings.HasPrefix(p, "/workspace") {
				continue
			}
			if c.mine.f.WS == a.f.WS && before[p] != string(r.Body) {
				t.Errorf("%s: %s changed when B was made:\nbefore %s\nafter  %s", c.what, p, before[p], r.Body)
			}
		}
		for _, p := range []string{"/clients", "/jobs", "/reports", "/alerts?status=unresolved"} {
			for _, it := range rsWalk(s, key, p, 2) {
				id, _ := it["id"].(string)
				cid, _ := it["clientId"].(string)
				jid, _ := it["jobId"].(string)
				if theirs[id] || theirs[cid] || theirs[jid] {
					t.Errorf("%s: %s lists %v", c.what, p, it)
				}
			}
		}
	}
}
