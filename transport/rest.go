package transport

import (
	"strconv"
	"sync"

	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"

	"backupmon/engine"
)

// restRoutes lists the REST API's endpoints (api.md 4.1) and the path
// parameter each names.
var restRoutes = []struct {
	path  string
	ep    engine.Endpoint
	param string
	name  string
}{
	{"/api/v1/workspace", engine.EndpointWorkspace, "", "rest_workspace"},
	{"/api/v1/clients", engine.EndpointClients, "", "rest_clients"},
	{"/api/v1/clients/{clientId}", engine.EndpointClient, "clientId", "rest_client"},
	{"/api/v1/clients/{clientId}/health", engine.EndpointClientHealth, "clientId", "rest_client_health"},
	{"/api/v1/jobs", engine.EndpointJobs, "", "rest_jobs"},
	{"/api/v1/jobs/{jobId}", engine.EndpointJob, "jobId", "rest_job"},
	{"/api/v1/reports", engine.EndpointReports, "", "rest_reports"},
	{"/api/v1/alerts", engine.EndpointAlerts, "", "rest_alerts"},
	{"/api/v1/health", engine.EndpointHealth, "", "rest_health"},
}

func (s *Server) addRESTRoutes(r *router.Router) {
	for _, rt := range restRoutes {
		r.GET(rt.path, s.route(rt.name, s.rest(rt.ep, rt.param)))
	}
}

// bodyPool holds answer buffers: a page is assembled in one, which goes to
// the response without a copy (bodyBuf).
var bodyPool = sync.Pool{New: func() any { b := make(bodyBuf, 0, 16<<10); return &b }}

// bodyBuf is a pooled answer buffer. A page goes to fasthttp without a
// copy (SetBodyRaw) and the buffer is registered as a user value of the
// request: fasthttp calls Close when it resets the request, after the
// response is written, which puts the buffer back in the pool.
type bodyBuf []byte

// Close returns the buffer to the pool, unless it grew past 1 MiB.
func (b *bodyBuf) Close() error {
	if cap(*b) <= 1<<20 {
		*b = (*b)[:0]
		bodyPool.Put(b)
	}
	return nil
}

// msgInactive answers a key of an inactive workspace, in the REST API and
// the assistant server (the Report API has its own, msgSuspended).
const msgInactive = "The workspace is suspended or cancelled, or its trial has ended"

// bodyKey names the answer buffer among the request's user values.
const bodyKey = "backupmon.body"

// rest serves one REST endpoint: the key is read here, the parameters
// parsed, and the workspace's actor does every check in the contract's
// order and writes the data.
func (s *Server) rest(ep engine.Endpoint, param string) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		token, ok := bearer(ctx.Request.Header.Peek("Authorization"))
		if !ok {
			restError(ctx, fasthttp.StatusUnauthorized, "UNAUTHORIZED", msgMalformedAuth, "")
			return
		}
		q := engine.RESTQuery{Endpoint: ep}
		if param != "" {
			q.PathID = pathParam(ctx, param)
		}
		hash := s.parseQuery(ctx.QueryArgs(), &q, s.eng.Now())

		bp := bodyPool.Get().(*bodyBuf)
		buf := append((*bp)[:0], `{"data":`...)
		ans := s.eng.REST(engine.HashKey(token), &q, buf)
		if ans.HasLimits {
			setLimitHeaders(ctx, &ans.Limits)
		}
		switch ans.Outcome {
		case engine.RESTOK:
			b := ans.Body
			if ans.List {
				b = append(b, `,"pagination":{"nextCursor":`...)
				if ans.HasMore {
					b = append(b, '"')
					b = append(b, s.cursors.encode(cursor{workspace: q.Workspace, endpoint: ep, filters: hash, hasWindow: q.HasWindow, from: q.From, to: q.To, pos: ans.Next})...)
					b = append(b, `","hasMore":true}`...)
				} else {
					b = append(b, `null,"hasMore":false}`...)
				}
			}
			b = append(b, '}')
			ctx.SetStatusCode(fasthttp.StatusOK)
			ctx.SetContentType(contentTypeJSON)
			ctx.Response.SetBodyRaw(b)
			*bp = b
			ctx.SetUserValue(bodyKey, bp) // Close, after the write, pools it
			return
		case engine.RESTUnauthorized:
			restError(ctx, fasthttp.StatusUnauthorized, "UNAUTHORIZED", msgInvalidKey, "")
		case engine.RESTKeyExpired:
			restError(ctx, fasthttp.StatusUnauthorized, "UNAUTHORIZED", msgKeyExpired, "")
		case engine.RESTWorkspaceInactive:
			restError(ctx, fasthttp.StatusForbidden, "WORKSPACE_INACTIVE", msgInactive, "")
		case engine.RESTPlanRequired:
			restError(ctx, fasthttp.StatusForbidden, "PLAN_REQUIRED", "The workspace's plan has no REST API; it needs Growth or Pro", "")
		case engine.RESTWrongKeyType:
			restError(ctx, fasthttp.StatusForbidden, "INSUFFICIENT_SCOPE", "Report and assistant keys cannot read the REST API; use a REST key", "")
		case engine.RESTInsufficientScope:
			restError(ctx, fasthttp.StatusForbidden, "INSUFFICIENT_SCOPE", "The API key lacks the "+ep.Scope()+" scope", "")
		case engine.RESTRateLimited:
			setRetryAfter(ctx, ans.Limits.RetryAfter)
			restError(ctx, fasthttp.StatusTooManyRequests, "RATE_LIMITED",
				"Rate limit exceeded: "+strconv.FormatInt(ans.Limits.PerMinute, 10)+" requests per minute; retry after "+strconv.FormatInt(ans.Limits.RetryAfter, 10)+" seconds", "")
		case engine.RESTQuotaExceeded:
			setRetryAfter(ctx, ans.Limits.RetryAfter)
			restError(ctx, fasthttp.StatusTooManyRequests, "QUOTA_EXCEEDED",
				"Monthly quota of "+strconv.FormatInt(ans.Limits.QuotaLimit, 10)+" requests used up; it resets on the 1st (UTC)", "")
		case engine.RESTBadParam:
			msg := q.BadMessage
			if msg == "" { // the engine found a cursor of another workspace
				msg = msgBadCursor
			}
			restError(ctx, fasthttp.StatusBadRequest, "INVALID_PARAMETER", msg, q.BadParam)
		case engine.RESTNotFound:
			if ep == engine.EndpointJob {
				restError(ctx, fasthttp.StatusNotFound, "NOT_FOUND", "Job not found", "")
			} else {
				restError(ctx, fasthttp.StatusNotFound, "NOT_FOUND", "Client not found", "")
			}
		default:
			restError(ctx, fasthttp.StatusInternalServerError, "INTERNAL_ERROR", "Internal server error; retry", "")
		}
		// An error answer was copied (restError): the buffer goes back now.
		if ans.Body != nil {
			buf = ans.Body
		}
		*bp = buf
		bp.Close()
	}
}

// The limit headers' names as api.md 8.1 spells them. fasthttp's Set
// normalizes a name (X-Ratelimit-Limit), so they are set with SetCanonical,
// which takes the bytes as they are.
var (
	hdrRateLimit      = []byte("X-RateLimit-Limit")
	hdrRateRemaining  = []byte("X-RateLimit-Remaining")
	hdrRateReset      = []byte("X-RateLimit-Reset")
	hdrQuotaLimit     = []byte("X-Quota-Limit")
	hdrQuotaRemaining = []byte("X-Quota-Remaining")
	hdrQuotaReset     = []byte("X-Quota-Reset")
)

// setLimitHeaders writes the rate-limit headers (api.md 8.1).
func setLimitHeaders(ctx *fasthttp.RequestCtx, l *engine.RESTLimits) {
	h := &ctx.Response.Header
	var buf [20]byte // SetCanonical copies the value
	h.SetCanonical(hdrRateLimit, strconv.AppendInt(buf[:0], l.PerMinute, 10))
	h.SetCanonical(hdrRateRemaining, strconv.AppendInt(buf[:0], l.Remaining, 10))
	h.SetCanonical(hdrRateReset, strconv.AppendInt(buf[:0], l.Reset, 10))
	if l.Quota {
		h.SetCanonical(hdrQuotaLimit, strconv.AppendInt(buf[:0], l.QuotaLimit, 10))
		h.SetCanonical(hdrQuotaRemaining, strconv.AppendInt(buf[:0], l.QuotaRemaining, 10))
		h.SetCanonical(hdrQuotaReset, strconv.AppendInt(buf[:0], l.QuotaReset, 10))
	}
}
