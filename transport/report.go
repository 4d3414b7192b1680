package transport

import (
	"net/url"

	"github.com/valyala/fasthttp"

	"backupmon/engine"
)

// report serves POST /api/v1/jobs/{jobId}/report (api.md 4.3). The
// authorization header is read here; every other check happens in the
// workspace's actor, in the contract's order.
func (s *Server) report(ctx *fasthttp.RequestCtx) {
	token, ok := bearer(ctx.Request.Header.Peek("Authorization"))
	if !ok {
		reportError(ctx, fasthttp.StatusUnauthorized, msgMalformedAuth)
		return
	}
	hash := engine.HashKey(token)
	in := &engine.ReportInput{JobID: pathParam(ctx, "jobId")}
	body := ctx.PostBody()
	var status, problem string
	problemStatus := fasthttp.StatusBadRequest
	if len(body) > maxReportBody {
		problem, problemStatus = msgBodyTooLarge, fasthttp.StatusRequestEntityTooLarge
	} else {
		status, problem = parseReportBody(body, string(ctx.Request.Header.Peek("Idempotency-Key")), in)
	}
	in.BadBody = problem != ""

	r := s.eng.Report(hash, in)
	switch r.Outcome {
	case engine.ReportRecorded, engine.ReportDuplicate:
		if r.Outcome == engine.ReportRecorded {
			s.metrics.reportsIngested.Inc()
		}
		var buf [128]byte // the answer fits; SetBody copies it
		b := append(buf[:0], `{"ok":true,"status":"`...)
		b = append(b, status...)
		b = append(b, `","alert_id":`...)
		if r.AlertID.IsZero() {
			b = append(b, "null"...)
		} else {
			b = append(b, '"')
			b = r.AlertID.AppendTo(b)
			b = append(b, '"')
		}
		if r.Outcome == engine.ReportDuplicate {
			b = append(b, `,"duplicate":true`...)
		} else {
			b = append(b, `,"duplicate":false`...)
		}
		if r.Superseded {
			b = append(b, `,"superseded":true}`...)
		} else {
			b = append(b, `,"superseded":false}`...)
		}
		writeJSON(ctx, fasthttp.StatusOK, b)
	case engine.ReportInvalidKey:
		reportError(ctx, fasthttp.StatusUnauthorized, msgInvalidKey)
	case engine.ReportKeyExpired:
		reportError(ctx, fasthttp.StatusUnauthorized, msgKeyExpired)
	case engine.ReportWrongKeyType:
		reportError(ctx, fasthttp.StatusForbidden, msgWrongKeyType)
	case engine.ReportWorkspaceInactive:
		reportError(ctx, fasthttp.StatusForbidden, msgSuspended)
	case engine.ReportRateLimited:
		setRetryAfter(ctx, r.RetryAfter)
		reportError(ctx, fasthttp.StatusTooManyRequests, msgReportRateLimit)
	case engine.ReportJobNotFound:
		reportError(ctx, fasthttp.StatusNotFound, msgJobNotFound)
	case engine.ReportBadBody:
		reportError(ctx, problemStatus, problem)
	case engine.ReportInFlight:
		setRetryAfter(ctx, r.RetryAfter)
		reportError(ctx, fasthttp.StatusServiceUnavailable, msgInFlight)
	case engine.ReportCapReached:
		setRetryAfter(ctx, r.RetryAfter)
		reportError(ctx, fasthttp.StatusTooManyRequests, msgDailyCap)
	case engine.ReportUnavailable:
		setRetryAfter(ctx, readOnlyRetry)
		reportError(ctx, fasthttp.StatusServiceUnavailable, msgReadOnly)
	default:
		reportError(ctx, fasthttp.StatusInternalServerError, msgNotRecorded)
	}
}

// bearer returns the token of an "Authorization: Bearer <token>" header: the
// scheme (any case), exactly one space, and a token without spaces.
func bearer(h []byte) ([]byte, bool) {
	const scheme = "bearer "
	if len(h) <= len(scheme) {
		return nil, false
	}
	for i := 0; i < len(scheme)-1; i++ {
		c := h[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != scheme[i] {
			return nil, false
		}
	}
	if h[len(scheme)-1] != ' ' {
		return nil, false
	}
	token := h[len(scheme):]
	for _, c := range token {
		if c <= ' ' || c == 0x7f {
			return nil, false
		}
	}
	return token, true
}

// pathParam returns a path parameter, unescaped (the router matches the raw
// path). A parameter that does not unescape reads as empty, which names
// nothing.
func pathParam(ctx *fasthttp.RequestCtx, name string) string {
	raw, _ := ctx.UserValue(name).(string)
	// The router hands out a copy, and unescaping makes a new string, so
	// nothing here points into the request's buffers.
	v, err := url.PathUnescape(raw)
	if err != nil {
		return ""
	}
	return v
}
