package transport

import (
	crand "crypto/rand"
	"encoding/hex"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/valyala/fasthttp"

	"backupmon/jsonx"
)

// contentTypeJSON is the Content-Type of every JSON response (decisions.md 3).
const contentTypeJSON = "application/json; charset=utf-8"

const headerRequestID = "X-Request-Id"

// Request ids: a random prefix per process and a counter, 24 hex characters
// in all, unique across restarts in practice.
var (
	requestIDHeader = []byte(headerRequestID)
	requestIDPrefix = func() (p [12]byte) {
		var b [6]byte
		if _, err := crand.Read(b[:]); err != nil {
			panic("transport: no randomness for request ids: " + err.Error())
		}
		hex.Encode(p[:], b[:])
		return p
	}()
	requestIDCount atomic.Uint64
)

// setRequestID gives the request its id, in the X-Request-Id header.
func setRequestID(ctx *fasthttp.RequestCtx) {
	id := nextRequestID()
	ctx.Response.Header.SetBytesKV(requestIDHeader, id[:])
}

// nextRequestID returns a new request id: the process's prefix and the
// next count, in hex.
func nextRequestID() [24]byte {
	var buf [24]byte
	copy(buf[:12], requestIDPrefix[:])
	n := requestIDCount.Add(1)
	const digits = "0123456789abcdef"
	for i := 23; i >= 12; i-- {
		buf[i] = digits[n&0xf]
		n >>= 4
	}
	return buf
}

// requestID returns the id setRequestID gave the request.
func requestID(ctx *fasthttp.RequestCtx) []byte {
	return ctx.Response.Header.Peek(headerRequestID)
}

// writeJSON answers with status and an already encoded JSON body.
func writeJSON(ctx *fasthttp.RequestCtx, status int, body []byte) {
	ctx.SetStatusCode(status)
	ctx.SetContentType(contentTypeJSON)
	ctx.SetBody(body)
}

// restError answers in the REST API's error shape (api.md 7.1):
// {"error":{"code","message","parameter"?,"requestId"}}.
func restError(ctx *fasthttp.RequestCtx, status int, code, message, parameter string) {
	b := make([]byte, 0, 160)
	b = append(b, `{"error":{"code":`...)
	b = jsonx.AppendString(b, code)
	b = append(b, `,"message":`...)
	b = jsonx.AppendString(b, message)
	if parameter != "" || code == "INVALID_PARAMETER" { // a parameter's name may be empty ("?=1")
		b = append(b, `,"parameter":`...)
		b = jsonx.AppendString(b, parameter)
	}
	b = append(b, `,"requestId":"`...)
	b = append(b, requestID(ctx)...)
	b = append(b, `"}}`...)
	writeJSON(ctx, status, b)
}

// reportError answers in the Report API's error shape (api.md 7.2):
// {"error":"<message>"}.
func reportError(ctx *fasthttp.RequestCtx, status int, message string) {
	b := make([]byte, 0, 96)
	b = append(b, `{"error":`...)
	b = jsonx.AppendString(b, message)
	b = append(b, '}')
	writeJSON(ctx, status, b)
}

// adminError answers in the admin API's error shape (decisions.md 2):
// {"error":{"code","message"}}.
func adminError(ctx *fasthttp.RequestCtx, status int, code, message string) {
	b := make([]byte, 0, 128)
	b = append(b, `{"error":{"code":`...)
	b = jsonx.AppendString(b, code)
	b = append(b, `,"message":`...)
	b = jsonx.AppendString(b, message)
	b = append(b, `}}`...)
	writeJSON(ctx, status, b)
}

func setRetryAfter(ctx *fasthttp.RequestCtx, seconds int64) {
	ctx.Response.Header.Set("Retry-After", strconv.FormatInt(seconds, 10))
}

// dropOptionsFromAllow removes OPTIONS from the Allow header the router set:
// OPTIONS is answered with 405 like any method a path does not take.
func dropOptionsFromAllow(ctx *fasthttp.RequestCtx) {
	var kept []string
	for _, m := range strings.Split(string(ctx.Response.Header.Peek("Allow")), ",") {
		if m = strings.TrimSpace(m); m != "" && m != fasthttp.MethodOptions {
			kept = append(kept, m)
		}
	}
	ctx.Response.Header.Set("Allow", strings.Join(kept, ", "))
}
