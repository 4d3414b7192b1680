package transport

import (
	"bytes"
	"errors"
	"net"
	"sync"
	"sync/atomic"

	"github.com/valyala/fasthttp"
)

// Requests the listener cannot read (malformed, a header over 16 KiB, a
// body over 1 MiB, too slow) are answered by fasthttp's ErrorHandler, before
// routing. The answer takes the shape of the path: the Report API's on its
// path, the REST API's elsewhere. But when reading a body fails, fasthttp
// resets the request before the ErrorHandler runs, and the path is gone. So
// headerReceived, called once the header is read and before the body,
// marks the Report API's requests, and the ErrorHandler reads the mark.

// reportMarks holds the headers (one per connection's request context) of
// Report API requests whose body is being read. A map under a mutex rather
// than a sync.Map: inserting a key again after its delete then allocates
// nothing, and the lock is held for a map operation only. n lets every
// other request skip the lock while nothing is marked.
type reportMarks struct {
	mu sync.Mutex
	m  map[*fasthttp.RequestHeader]struct{}
	n  atomic.Int64 // len(m)
}

// mark marks h.
func (r *reportMarks) mark(h *fasthttp.RequestHeader) {
	r.mu.Lock()
	if r.m == nil {
		r.m = make(map[*fasthttp.RequestHeader]struct{})
	}
	if _, ok := r.m[h]; !ok {
		r.m[h] = struct{}{}
		r.n.Add(1)
	}
	r.mu.Unlock()
}

// take removes h's mark and reports whether there was one.
func (r *reportMarks) take(h *fasthttp.RequestHeader) bool {
	if r.n.Load() == 0 {
		return false
	}
	r.mu.Lock()
	_, ok := r.m[h]
	if ok {
		delete(r.m, h)
		r.n.Add(-1)
	}
	r.mu.Unlock()
	return ok
}

// headerReceived is the public listener's HeaderReceived hook, on the
// connection's goroutine after each request's header: it marks Report API
// requests. Any other request takes away a mark its context may still
// carry: one left by a request whose connection ended mid-body, for which
// neither the handler nor the ErrorHandler ran.
func (s *Server) headerReceived(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
	if isReportURI(h.RequestURI()) {
		s.marks.mark(h)
	} else {
		s.marks.take(h)
	}
	return fasthttp.RequestConfig{} // the server's limits
}

// isReportURI reports whether a raw request target (origin form, or
// absolute form with a scheme and host) names /api/v1/jobs/<id>/report.
func isReportURI(uri []byte) bool {
	if i := bytes.IndexAny(uri, "?#"); i >= 0 {
		uri = uri[:i]
	}
	if len(uri) > 0 && uri[0] != '/' {
		i := bytes.Index(uri, []byte("://"))
		if i < 0 {
			return false
		}
		rest := uri[i+3:]
		j := bytes.IndexByte(rest, '/')
		if j < 0 {
			return false
		}
		uri = rest[j:]
	}
	return isReportPath(uri)
}

// publicParseError answers requests fasthttp could not read in the
// contract's shapes: the Report API's for a request headerReceived marked,
// the REST API's (code INVALID_REQUEST) otherwise, including every request
// whose header could not be read, since its path is unknown.
func (s *Server) publicParseError(ctx *fasthttp.RequestCtx, err error) {
	report := s.marks.take(&ctx.Request.Header)
	var small *fasthttp.ErrSmallBuffer
	if errors.As(err, &small) {
		// The header was not read, so headerReceived did not run for
		// this request: a mark can only be a stale one.
		report = false
	}
	setRequestID(ctx)
	status, msg := parseErrorStatus(err)
	if report {
		reportError(ctx, status, msg)
	} else {
		restError(ctx, status, "INVALID_REQUEST", msg, "")
	}
	s.metrics.countRequest("unreadable", status)
}

func (s *Server) adminParseError(ctx *fasthttp.RequestCtx, err error) {
	status, msg := parseErrorStatus(err)
	adminError(ctx, status, "INVALID_REQUEST", msg)
	s.metrics.countRequest("admin_unreadable", status)
}

// parseErrorStatus maps a read error to its status and message.
func parseErrorStatus(err error) (int, string) {
	var small *fasthttp.ErrSmallBuffer
	var netErr net.Error
	switch {
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		return fasthttp.StatusRequestEntityTooLarge, msgBodyTooLarge
	case errors.As(err, &small):
		return fasthttp.StatusRequestHeaderFieldsTooLarge, "Request header too large"
	case errors.As(err, &netErr) && netErr.Timeout():
		return fasthttp.StatusRequestTimeout, "Request timeout"
	}
	return fasthttp.StatusBadRequest, "Malformed HTTP request"
}

// errFraming is the read error of a request that came with both
// Transfer-Encoding and Content-Length.
var errFraming = errors.New("both Transfer-Encoding and Content-Length")

// framed wraps a listener's handler: a request with both Transfer-Encoding
// and Content-Length is answered as malformed, by the listener's error
// handler, and its connection closed (RFC 9112 6.1). fasthttp reads such a
// request by its Transfer-Encoding and then reads on, but a proxy in front
// that went by Content-Length would have sent the rest as part of this
// body: the shape of request smuggling.
func framed(h fasthttp.RequestHandler, refuse func(*fasthttp.RequestCtx, error)) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		if ctx.Request.Header.ContentLength() == -1 && hasContentLength(ctx.Request.Header.RawHeaders()) {
			ctx.SetConnectionClose()
			refuse(ctx, errFraming)
			return
		}
		h(ctx)
	}
}

// hasContentLength reports whether raw header lines hold a Content-Length.
func hasContentLength(raw []byte) bool {
	for len(raw) > 0 {
		line := raw
		if i := bytes.IndexByte(raw, '\n'); i >= 0 {
			line, raw = raw[:i], raw[i+1:]
		} else {
			raw = nil
		}
		const name = "content-length:"
		if len(line) >= len(name) && bytes.EqualFold(line[:len(name)], []byte(name)) {
			return true
		}
	}
	return false
}
