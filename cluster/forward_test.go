package cluster

import (
	"bytes"
	"net"
	"testing"

	"github.com/valyala/fasthttp"
)

// TestForwardedAnswerIsTheOwners: an answer that went through the
// forwarding envelope (request copied, encoded, decoded, run at the owner,
// answer encoded, decoded, written at the front) is byte for byte the one
// the owner's handler writes when it serves the request itself.
func TestForwardedAnswerIsTheOwners(t *testing.T) {
	handlers := []struct {
		name string
		h    fasthttp.RequestHandler
	}{
		{"json", func(ctx *fasthttp.RequestCtx) {
			ctx.SetStatusCode(200)
			ctx.SetContentType("application/json")
			ctx.Response.Header.Set("X-RateLimit-Remaining", "299")
			ctx.SetBody([]byte(`{"data":[]}`))
		}},
		{"redirect with cookies, no body", func(ctx *fasthttp.RequestCtx) {
			ctx.Response.Header.Set("Location", "/")
			ctx.Response.Header.Add("Set-Cookie", "__Host-session=abc; path=/; HttpOnly")
			ctx.Response.Header.Add("Set-Cookie", "__Host-device=def; path=/")
			ctx.SetStatusCode(303)
		}},
		{"no content", func(ctx *fasthttp.RequestCtx) { ctx.SetStatusCode(204) }},
		{"plain text default", func(ctx *fasthttp.RequestCtx) { ctx.SetBodyString("ok") }},
		{"echo of the request", func(ctx *fasthttp.RequestCtx) {
			ctx.SetContentType("text/plain")
			ctx.SetBodyString(string(ctx.Method()) + " " + string(ctx.Request.RequestURI()) + " " +
				string(ctx.Request.Header.Peek("Authorization")) + " " + string(ctx.Request.Body()) + " " + ctx.RemoteIP().String())
		}},
	}
	for _, tc := range handlers {
		t.Run(tc.name, func(t *testing.T) {
			newCtx := func() *fasthttp.RequestCtx {
				var req fasthttp.Request
				req.Header.SetMethod("POST")
				req.SetRequestURI("/api/v1/jobs/j1/report?x=1&x=2")
				req.Header.Set("Authorization", "Bearer svc_live_abc")
				req.Header.SetContentType("application/json")
				req.SetBodyString(`{"status":"ok"}`)
				ctx := &fasthttp.RequestCtx{}
				ctx.Init(&req, &net.TCPAddr{IP: net.IPv4(192, 0, 2, 7), Port: 40000}, nil)
				return ctx
			}
			direct := newCtx()
			tc.h(direct)

			front := newCtx()
			msg, err := decodeForwarded(requestOf(front, true).encode())
			if err != nil {
				t.Fatal(err)
			}
			ans, err := decodeForwarded(msg.serve(tc.h).encode())
			if err != nil {
				t.Fatal(err)
			}
			ans.answer(front)

			want, got := wire(t, direct), wire(t, front)
			if !bytes.Equal(got, want) {
				t.Fatalf("forwarded answer:\n%s\nthe owner's:\n%s", got, want)
			}
		})
	}
}

// wire returns the answer of ctx as it goes on the wire (Response.WriteTo
// writes no Date).
func wire(t *testing.T, ctx *fasthttp.RequestCtx) []byte {
	t.Helper()
	ctx.Response.Header.DisableNormalizing()
	var b bytes.Buffer
	if _, err := ctx.Response.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
