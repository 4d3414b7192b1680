package transport

import (
	"bytes"
	"context"
	"net/http"
	"strconv"

	"github.com/valyala/fasthttp"

	"backupmon/engine"
)

// Assistant answers a request to the assistant-protocol (MCP) endpoint,
// with its status, header and body, for a caller the transport has
// authenticated: key is an assistant key of an active workspace, base the
// scheme and host links should carry.
type Assistant func(r *http.Request, key engine.AssistantKey, base string) (status int, header http.Header, body []byte)

// mcp answers /mcp (decisions.md 12): the bearer key is checked in the
// REST API's order and with its errors, then the request is handed to the
// assistant server as a net/http request built from copies, so nothing of
// ctx outlives this handler.
func (s *Server) mcp(ctx *fasthttp.RequestCtx) {
	token, ok := bearer(ctx.Request.Header.Peek("Authorization"))
	if !ok {
		ctx.Response.Header.Set("WWW-Authenticate", "Bearer")
		restError(ctx, fasthttp.StatusUnauthorized, "UNAUTHORIZED", msgMalformedAuth, "")
		return
	}
	key, check := s.eng.Assistant(engine.HashKey(token))
	switch check {
	case engine.KeyOK:
	case engine.KeyUnknown:
		ctx.Response.Header.Set("WWW-Authenticate", `Bearer error="invalid_token"`)
		restError(ctx, fasthttp.StatusUnauthorized, "UNAUTHORIZED", msgInvalidKey, "")
		return
	case engine.KeyExpired:
		ctx.Response.Header.Set("WWW-Authenticate", `Bearer error="invalid_token"`)
		restError(ctx, fasthttp.StatusUnauthorized, "UNAUTHORIZED", msgKeyExpired, "")
		return
	case engine.KeyInactive:
		restError(ctx, fasthttp.StatusForbidden, "WORKSPACE_INACTIVE", msgInactive, "")
		return
	case engine.KeyWrongType:
		restError(ctx, fasthttp.StatusForbidden, "INSUFFICIENT_SCOPE", "REST and report keys cannot use the assistant server; use an assistant key", "")
		return
	case engine.KeyRateLimited:
		setRetryAfter(ctx, key.RetryAfter)
		restError(ctx, fasthttp.StatusTooManyRequests, "RATE_LIMITED",
			"Rate limit exceeded: "+strconv.Itoa(engine.AssistantPerMinute)+" assistant requests per minute for the workspace; retry after "+strconv.FormatInt(key.RetryAfter, 10)+" seconds", "")
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
	status, header, body := s.assistant(req, key, s.linkBase(ctx))
	for k, vs := range header {
		for _, v := range vs {
			ctx.Response.Header.Add(k, v)
		}
	}
	ctx.SetStatusCode(status)
	ctx.SetBody(body)
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
