package transport

import (
	"bytes"
	"context"
	"net/http"

	"github.com/valyala/fasthttp"

	"backupmon/engine"
)

// Assistant serves the assistant-protocol (MCP) endpoint for a caller the
// transport has authenticated: key is an assistant key of an active
// workspace, base the scheme and host links should carry.
type Assistant interface {
	Serve(w http.ResponseWriter, r *http.Request, key engine.AssistantKey, base string)
}

// AssistantFunc is a function serving as an Assistant.
type AssistantFunc func(w http.ResponseWriter, r *http.Request, key engine.AssistantKey, base string)

// Serve calls f.
func (f AssistantFunc) Serve(w http.ResponseWriter, r *http.Request, key engine.AssistantKey, base string) {
	f(w, r, key, base)
}

// mcp answers /mcp (decisions.md 12): the bearer key is checked in the
// REST API's order and with its errors, then the request is handed to the
// assistant server as a net/http request built from copies, so nothing of
// ctx outlives this handler.
func (s *Server) mcp(ctx *fasthttp.RequestCtx) {
	token, ok := bearer(ctx.Request.Header.Peek("Authorization"))
	if !ok {
		ctx.Response.Header.Set("WWW-Authenticate", "Bearer")
		restError(ctx, fasthttp.StatusUnauthorized, "UNAUTHORIZED", "Missing or malformed Authorization header", "")
		return
	}
	key, check := s.eng.Assistant(engine.HashKey(token))
	switch check {
	case engine.KeyOK:
	case engine.KeyUnknown:
		ctx.Response.Header.Set("WWW-Authenticate", `Bearer error="invalid_token"`)
		restError(ctx, fasthttp.StatusUnauthorized, "UNAUTHORIZED", "Invalid API key", "")
		return
	case engine.KeyExpired:
		ctx.Response.Header.Set("WWW-Authenticate", `Bearer error="invalid_token"`)
		restError(ctx, fasthttp.StatusUnauthorized, "UNAUTHORIZED", "API key has expired", "")
		return
	case engine.KeyInactive:
		restError(ctx, fasthttp.StatusForbidden, "WORKSPACE_INACTIVE", "The workspace is suspended or cancelled, or its trial has ended", "")
		return
	case engine.KeyWrongType:
		restError(ctx, fasthttp.StatusForbidden, "INSUFFICIENT_SCOPE", "REST and report keys cannot use the assistant server; use an assistant key", "")
		return
	default:
		restError(ctx, fasthttp.StatusServiceUnavailable, "UNAVAILABLE", "The service is stopping; retry", "")
		return
	}
	req, err := http.NewRequestWithContext(context.Background(), string(ctx.Method()), "/mcp", bytes.NewReader(bytes.Clone(ctx.PostBody())))
	if err != nil {
		restError(ctx, fasthttp.StatusBadRequest, "INVALID_REQUEST", "Malformed request", "")
		return
	}
	for k, v := range ctx.Request.Header.All() {
		req.Header.Add(string(k), string(v))
	}
	req.Host = string(ctx.Host())
	req.RemoteAddr = ctx.RemoteAddr().String()
	w := &responseBuffer{header: http.Header{}}
	s.assistant.Serve(w, req, key, s.linkBase(ctx))
	for k, vs := range w.header {
		for _, v := range vs {
			ctx.Response.Header.Add(k, v)
		}
	}
	ctx.SetStatusCode(w.status())
	ctx.SetBody(w.body.Bytes())
}

// linkBase returns the scheme and host dashboard links carry: the public
// URL when configured, else the address the request was sent to.
func (s *Server) linkBase(ctx *fasthttp.RequestCtx) string {
	if s.publicURL != "" {
		return s.publicURL
	}
	scheme := "http://"
	if s.tls != nil {
		scheme = "https://"
	}
	return scheme + string(ctx.Host())
}

// responseBuffer is an http.ResponseWriter that keeps the answer in memory.
type responseBuffer struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func (w *responseBuffer) Header() http.Header { return w.header }

func (w *responseBuffer) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
}

func (w *responseBuffer) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(b)
}

// Flush does nothing: the answer is sent whole when the handler returns.
func (w *responseBuffer) Flush() {}

func (w *responseBuffer) status() int {
	if w.code == 0 {
		return http.StatusOK
	}
	return w.code
}
