package transport_test

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"backupmon/internal/testserver"
)

// The vendored files' SHA-256 (dashboard/assets/VENDORED.md).
var apiDocsSHA256 = map[string]string{
	"swagger-ui-bundle.js": "e6a898692f2d768e807c3ba4626068a69a2c5dd960dd6c76f3e4d3a3de180af2",
	"swagger-ui.css":       "5ed08757e53da3e026d6cbecc61fe5d43585c9560b302d534ad56692519a273d",
}

// GET /api/v1/docs serves the API reference page, which loads the
// vendored Swagger UI from the server itself and the OpenAPI document the
// server serves; none of them needs a key, and each answers with its
// content type.
func TestAPIDocs(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	page := s.Do("GET", s.PublicURL+"/api/v1/docs", nil, nil)
	if page.Status != 200 || page.Header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Fatalf("GET /api/v1/docs: %d %q", page.Status, page.Header.Get("Content-Type"))
	}
	body := string(page.Body)
	for _, h := range []struct{ name, want string }{
		{"Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'; object-src 'none'"},
		{"X-Content-Type-Options", "nosniff"},
		{"X-Frame-Options", "DENY"},
	} {
		if got := page.Header.Get(h.name); got != h.want {
			t.Errorf("page %s: %q, want %q", h.name, got, h.want)
		}
	}
	if !strings.Contains(body, `<div id="swagger-ui"></div>`) || !strings.Contains(body, `<a href="/api/v1/openapi.json">`) {
		t.Errorf("the page has no place for the reference:\n%s", body)
	}
	// Every file the page loads, found in the page, with its content type.
	files := map[string]string{
		"swagger-ui-bundle.js": "text/javascript; charset=utf-8",
		"swagger-ui.css":       "text/css; charset=utf-8",
		"apidocs.js":           "text/javascript; charset=utf-8",
	}
	for name, ctype := range files {
		t.Run(name, func(t *testing.T) {
			i := strings.Index(body, `"/api/v1/docs/`+name+`?v=`)
			if i < 0 {
				t.Fatalf("the page does not load %s:\n%s", name, body)
			}
			src := body[i+1:]
			src = src[:strings.IndexByte(src, '"')]
			r := s.Do("GET", s.PublicURL+src, nil, nil)
			if r.Status != 200 || r.Header.Get("Content-Type") != ctype || len(r.Body) == 0 {
				t.Fatalf("GET %s: %d %q, %d bytes", src, r.Status, r.Header.Get("Content-Type"), len(r.Body))
			}
			if got := r.Header.Get("Cache-Control"); got != "public, max-age=31536000, immutable" {
				t.Errorf("Cache-Control %q", got)
			}
			sum := sha256.Sum256(r.Body)
			if want, ok := apiDocsSHA256[name]; ok && hex.EncodeToString(sum[:]) != want {
				t.Errorf("%s is not the vendored copy: SHA-256 %x", name, sum)
			}
			if name == "apidocs.js" && !strings.Contains(string(r.Body), `url: "/api/v1/openapi.json"`) {
				t.Errorf("apidocs.js does not read the server's document:\n%s", r.Body)
			}
		})
	}
	if r := s.Do("GET", s.PublicURL+"/api/v1/openapi.json", nil, nil); r.Status != 200 || r.JSON["openapi"] != "3.1.0" {
		t.Errorf("the document the page reads: %d", r.Status)
	}
	// Other methods and names: the API's errors.
	if r := s.Do("POST", s.PublicURL+"/api/v1/docs", nil, nil); r.Status != 405 {
		t.Errorf("POST /api/v1/docs: %d", r.Status)
	}
	for _, p := range []string{"/api/v1/docs/", "/api/v1/docs/other.js", "/api/v1/docs/swagger-ui.css/x", "/api/v1/docs/..%2fopenapi.json", "/api/v1/docs/index.html"} {
		if r := s.Do("GET", s.PublicURL+p, nil, nil); r.Status != 404 || r.JSON["error"] == nil {
			t.Errorf("GET %s: %d %s, want the API's 404", p, r.Status, r.Body)
		}
	}
}
