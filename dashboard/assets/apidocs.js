// The API reference at /api/v1/docs: Swagger UI (vendored, see
// VENDORED.md) over the server's own OpenAPI document. A reference to read:
// no "Try it out" (no key is typed into this page) and no validator badge
// (it would send the document to validator.swagger.io).
window.addEventListener("DOMContentLoaded", function () {
  window.ui = SwaggerUIBundle({
    url: "/api/v1/openapi.json",
    dom_id: "#swagger-ui",
    deepLinking: true,
    validatorUrl: null,
    supportedSubmitMethods: [],
    defaultModelsExpandDepth: 0,
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout"
  });
});
