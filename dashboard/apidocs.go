package dashboard

import (
	_ "embed"
	"path"

	"github.com/valyala/fasthttp"
)

// The API reference: GET /api/v1/docs renders the OpenAPI document
// (/api/v1/openapi.json) with Swagger UI, vendored from npm and served from
// the binary (assets/VENDORED.md), never from a CDN. The transport routes
// the page and its files to the handlers here.

// APIDocsPath is the reference page's address; APIDocsFiles the address
// of its files, {name} one of them.
const (
	APIDocsPath  = "/api/v1/docs"
	APIDocsFiles = "/api/v1/docs/{name}"
)

var (
	//go:embed assets/swagger-ui-bundle.js
	swaggerJS []byte
	//go:embed assets/swagger-ui.css
	swaggerCSS []byte
	//go:embed assets/apidocs.js
	apiDocsJS []byte
)

// apiDocsFiles are the page's files by name: body and content type.
var apiDocsFiles = map[string]asset{
	"swagger-ui-bundle.js": {body: swaggerJS, ctype: "text/javascript; charset=utf-8", tag: fingerprint(swaggerJS)},
	"swagger-ui.css":       {body: swaggerCSS, ctype: "text/css; charset=utf-8", tag: fingerprint(swaggerCSS)},
	"apidocs.js":           {body: apiDocsJS, ctype: "text/javascript; charset=utf-8", tag: fingerprint(apiDocsJS)},
}

// apiDocsFile returns the address of one of the page's files with its
// fingerprint, so that it can be cached for ever.
func apiDocsFile(name string) string {
	return APIDocsPath + "/" + name + "?v=" + apiDocsFiles[name].tag
}

// apiDocsPage is the reference page: Swagger UI, started by apidocs.js,
// reads the document and renders it into #swagger-ui.
var apiDocsPage = []byte(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>API reference · backupmon</title>
<link rel="stylesheet" href="` + apiDocsFile("swagger-ui.css") + `">
<script src="` + apiDocsFile("swagger-ui-bundle.js") + `" defer></script>
<script src="` + apiDocsFile("apidocs.js") + `" defer></script>
</head>
<body>
<p style="margin:1rem 1.25rem 0;font:15px/1.5 system-ui,sans-serif"><a href="/">← backupmon dashboard</a> · the REST API and the Report API, from <a href="/api/v1/openapi.json">/api/v1/openapi.json</a></p>
<div id="swagger-ui"></div>
</body>
</html>
`)

// apiDocsPolicy is the page's Content-Security-Policy: the dashboard's,
// plus the inline styles Swagger UI's components set and data: images (its
// icons).
const apiDocsPolicy = "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'; object-src 'none'"

// ServeAPIDocs answers GET /api/v1/docs with the API reference page. It
// needs no key, as the document it shows needs none.
func ServeAPIDocs(ctx *fasthttp.RequestCtx) {
	h := &ctx.Response.Header
	h.Set("Content-Security-Policy", apiDocsPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cache-Control", "no-cache")
	ctx.SetStatusCode(fasthttp.StatusOK)
	ctx.SetContentType("text/html; charset=utf-8")
	ctx.Response.SetBodyRaw(apiDocsPage)
}

// ServeAPIDocsFile answers GET /api/v1/docs/{name} with one of the page's
// files, cacheable for ever (the page asks for them with their
// fingerprints); an unknown name gets the API's 404 from notFound.
func ServeAPIDocsFile(notFound fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		name, _ := ctx.UserValue("name").(string)
		f, ok := apiDocsFiles[name]
		if !ok || path.Base(name) != name {
			notFound(ctx)
			return
		}
		h := &ctx.Response.Header
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
		ctx.SetStatusCode(fasthttp.StatusOK)
		ctx.SetContentType(f.ctype)
		ctx.Response.SetBodyRaw(f.body)
	}
}
