// Package docs holds the project's documents; it embeds the OpenAPI document the server serves.
package docs

import _ "embed"

// OpenAPI is docs/openapi.json: the OpenAPI 3.1 document of the REST API and
// the Report API, served at GET /api/v1/openapi.json.
//
//go:embed openapi.json
var OpenAPI []byte
