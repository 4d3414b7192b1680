package transport_test

// Routing of the REST API (api.md 4, 5.2; decisions.md 3): only GET, 405
// with Allow: GET for every other method before the key is checked, 404 for
// unknown paths, no CORS, a request id on every answer.

import (
	"bytes"
	"strings"
	"testing"

	"backupmon/docs"
	"backupmon/internal/testserver"
)

func TestRESTMethods(t *testing.T) {
	s, f := startFixture(t)
	auths := []map[string]string{
		nil,
		rsAuth(f.RestKey),
		rsAuth(rsRandomKey()),
		{"Authorization": "Basic x"},
		rsAuth(f.ReportKey),
	}
	for path := range rsPaths(f.Client, f.Job) {
		for _, m := range []string{"POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE"} {
			for _, h := range auths {
				for _, p := range []string{path, path + "?bogus=1"} {
					r := rsDo(s, m, p, h)
					rsWantErr(t, m+" "+p, r, 405, "METHOD_NOT_ALLOWED", "")
					if a := r.Header.Values("Allow"); len(a) != 1 || a[0] != "GET" {
						t.Errorf("%s %s: Allow %q, want GET", m, p, a)
					}
				}
			}
		}
		r := rsDo(s, "HEAD", path, rsAuth(f.RestKey))
		if r.Status != 405 || r.Header.Get("Allow") != "GET" || len(r.Body) != 0 {
			t.Errorf("HEAD %s: %d Allow %q body %q", path, r.Status, r.Header.Get("Allow"), r.Body)
		}
		// A body on another method changes nothing.
		req := s.Do("POST", s.PublicURL+rsPrefix+path, map[string]string{"Authorization": "Bearer " + f.RestKey,
			"Content-Type": "application/json"}, []byte(`{"status":"ok"}`))
		rsCheck(t, "POST", path, req)
		rsWantErr(t, "POST with a body "+path, req, 405, "METHOD_NOT_ALLOWED", "")
	}
	// Nothing was counted or used: the key has not been used yet.
	for _, k := range s.MustAdmin(200, "GET", "/workspaces/"+f.WS+"/keys", nil).List() {
		if k["lastUsedAt"] != nil {
			t.Errorf("key %v used by refused methods", k["name"])
		}
	}
}

func TestRESTUnknownPaths(t *testing.T) {
	s, f := startFixture(t)
	for _, p := range []string{
		"/api/v1", "/api/v1/", "/api/v1/nope", "/api/v1/clients/", "/api/v1/jobs/", "/api/v1/health/", "/api/v1/workspace/",
		"/api/v1/Clients", "/api/v1/JOBS", "/api/v1/client", "/api/v1/job/" + f.Job, "/api/v1/clients/" + f.Client + "/jobs",
		"/api/v1/clients/" + f.Client + "/health/", "/api/v1/clients/" + f.Client + "/healths", "/api/v1/jobs/" + f.Job + "/results",
		"/api/v1/jobs/" + f.Job + "/alerts", "/api/v1/workspace/" + f.WS, "/api/v1/reports/x", "/api/v1/alerts/x",
		"/api/v1/health/x", "/api/v2/jobs", "/api/jobs", "/jobs", "/", "/api/v1/openapi", "/api/v1/jobs//x",
	} {
		for _, h := range []map[string]string{nil, rsAuth(f.RestKey)} {
			for _, m := range []string{"GET", "POST"} {
				r := s.Do(m, s.PublicURL+p, h, nil)
				rel := "outside:" + p // not below /api/v1: the error schema
				if strings.HasPrefix(p, rsPrefix) {
					rel = strings.TrimPrefix(p, rsPrefix)
				}
				rsCheck(t, m, rel, r)
				rsWantErr(t, m+" "+p, r, 404, "NOT_FOUND", "")
				rsHeaders(t, p, r, map[string]string{"X-RateLimit-Limit": "", "Allow": ""})
			}
		}
	}
	// An empty id segment reaches the endpoint: no such client.
	rsWantErr(t, "empty client id", rsGet(s, f.RestKey, "/clients//health"), 404, "NOT_FOUND", "")
	for _, k := range s.MustAdmin(200, "GET", "/workspaces/"+f.WS+"/keys", nil).List() {
		if k["name"] == "psa" && k["lastUsedAt"] == nil {
			t.Errorf("the key reached the endpoint but is not marked used")
		}
	}
}

func TestRESTNoCORS(t *testing.T) {
	s, f := startFixture(t)
	origin := map[string]string{"Authorization": "Bearer " + f.RestKey, "Origin": "https://app.example"}
	ids := map[string]bool{}
	for path := range rsPaths(f.Client, f.Job) {
		r := rsDo(s, "GET", path, origin)
		if r.Status != 200 {
			t.Errorf("GET %s with Origin: %d %s", path, r.Status, r.Body)
		}
		// rsCheck refuses any Access-Control-* header; Vary is not set either.
		if v := r.Header.Get("Vary"); strings.Contains(strings.ToLower(v), "origin") {
			t.Errorf("%s: Vary %q", path, v)
		}
		pre := rsDo(s, "OPTIONS", path, map[string]string{"Origin": "https://app.example", "Access-Control-Request-Method": "GET",
			"Access-Control-Request-Headers": "authorization"})
		rsWantErr(t, "preflight "+path, pre, 405, "METHOD_NOT_ALLOWED", "")
		for _, x := range []testserver.Response{r, pre} {
			id := x.Header.Get("X-Request-Id")
			if ids[id] {
				t.Errorf("request id %s repeated", id)
			}
			ids[id] = true
		}
	}
}

// The OpenAPI document (api.md 9) is served as it is embedded, without a
// key, with any key or a bad one; other methods answer 405 like the REST
// paths do.
func TestOpenAPIServed(t *testing.T) {
	s, f := startFixture(t)
	for _, h := range []map[string]string{nil, rsAuth(f.RestKey), rsAuth(f.ReportKey), rsAuth(rsRandomKey()), {"Authorization": "Basic x"}} {
		// Not rsDo: the document is not a REST answer (it names the fields
		// the answers carry, and holds examples that are not contract times).
		r, err := rsSend(s, "GET", "/openapi.json", h)
		if err != nil {
			t.Fatal(err)
		}
		if !rpRequestIDRe.MatchString(r.Header.Get("X-Request-Id")) {
			t.Errorf("X-Request-Id %q", r.Header.Get("X-Request-Id"))
		}
		if r.Status != 200 {
			t.Fatalf("GET /openapi.json %v: %d %s", h, r.Status, r.Body)
		}
		if !bytes.Equal(r.Body, docs.OpenAPI) {
			t.Errorf("GET /openapi.json: body is not docs/openapi.json (%d bytes, want %d)", len(r.Body), len(docs.OpenAPI))
		}
		if ct := r.Header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
			t.Errorf("Content-Type %q", ct)
		}
		if r.JSON["openapi"] != "3.1.0" {
			t.Errorf("openapi %v", r.JSON["openapi"])
		}
		rsHeaders(t, "/openapi.json", r, map[string]string{"X-RateLimit-Limit": "", "X-Quota-Limit": ""})
	}
	for _, m := range []string{"POST", "PUT", "DELETE", "OPTIONS"} {
		r := rsDo(s, m, "/openapi.json", nil)
		rsWantErr(t, m+" /openapi.json", r, 405, "METHOD_NOT_ALLOWED", "")
		if a := r.Header.Get("Allow"); a != "GET" {
			t.Errorf("%s /openapi.json: Allow %q", m, a)
		}
	}
	// Serving the document uses no key: the report key was never used.
	for _, k := range s.MustAdmin(200, "GET", "/workspaces/"+f.WS+"/keys", nil).List() {
		if k["lastUsedAt"] != nil {
			t.Errorf("key %v used by GET /openapi.json", k["name"])
		}
	}
}
