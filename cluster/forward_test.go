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
			req := appendRequest(nil, front, true)
			ans, err := runForwarded(nil, req, func(public bool) fasthttp.RequestHandler {
				if !public {
					t.Fatal("the public listener's request ran as the admin's")
				}
				return tc.h
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := answerInto(ans, front); err != nil {
				t.Fatal(err)
			}

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

// TestBadMessages: a message that does not read is an error, and the
// answer it was to become is left as it was.
func TestBadMessages(t *testing.T) {
	good := appendAnswer(nil, func() *fasthttp.Response {
		var r fasthttp.Response
		r.SetStatusCode(201)
		r.Header.Set("X-A", "1")
		r.SetBodyString("body")
		return &r
	}())
	for _, tc := range []struct {
		name string
		msg  []byte
	}{
		{"empty", nil},
		{"cut short", good[:len(good)-2]},
		{"trailing bytes", append(append([]byte(nil), good...), 0)},
		{"odd header count", []byte{0, 0, 0, 0, 0, 1, 1, 'a', 0}},
		{"header count past the end", []byte{0, 0, 0, 0, 0, 100, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := &fasthttp.RequestCtx{}
			ctx.SetStatusCode(418)
			ctx.SetBodyString("as it was")
			if err := answerInto(tc.msg, ctx); err == nil {
				t.Fatal("read without an error")
			}
			if ctx.Response.StatusCode() != 418 || string(ctx.Response.Body()) != "as it was" {
				t.Fatalf("the answer changed: %d %q", ctx.Response.StatusCode(), ctx.Response.Body())
			}
			if _, err := runForwarded(nil, tc.msg, func(bool) fasthttp.RequestHandler {
				t.Fatal("a request that does not read ran")
				return nil
			}); err == nil {
				t.Fatal("runForwarded: no error")
			}
		})
	}
	ctx := &fasthttp.RequestCtx{}
	if err := answerInto(good, ctx); err != nil || ctx.Response.StatusCode() != 201 || string(ctx.Response.Body()) != "body" || string(ctx.Response.Header.Peek("X-A")) != "1" {
		t.Fatalf("the good message: %v %d %q", err, ctx.Response.StatusCode(), ctx.Response.Body())
	}
}

// FuzzMessageRead: reading any bytes as a message fails or succeeds, and
// never panics.
func FuzzMessageRead(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0})
	f.Add(appendRequest(nil, func() *fasthttp.RequestCtx {
		ctx := &fasthttp.RequestCtx{}
		ctx.Request.SetRequestURI("/api/v1/jobs")
		ctx.Request.Header.Set("Authorization", "Bearer x")
		return ctx
	}(), true))
	f.Fuzz(func(t *testing.T, b []byte) {
		var m message
		if m.read(b) == nil && len(m.head)%2 != 0 {
			t.Fatalf("an odd header list read: %q", b)
		}
	})
}

// BenchmarkForward: a request's way through the message layer: written
// at the front, run at the owner, its answer written back into the
// front's context.
func BenchmarkForward(b *testing.B) {
	h := func(ctx *fasthttp.RequestCtx) {
		ctx.SetContentType("application/json")
		ctx.Response.Header.Set("X-RateLimit-Remaining", "299")
		ctx.SetBodyString(`{"data":[{"id":"j1","name":"nightly","status":"ok"}]}`)
	}
	pick := func(bool) fasthttp.RequestHandler { return h }
	var req fasthttp.Request
	req.SetRequestURI("/api/v1/jobs?limit=50")
	req.Header.Set("Authorization", "Bearer svc_live_0123456789abcdef")
	req.Header.Set("User-Agent", "bench")
	front := &fasthttp.RequestCtx{}
	front.Init(&req, &net.TCPAddr{IP: net.IPv4(192, 0, 2, 7), Port: 40000}, nil)
	b.ReportAllocs()
	for b.Loop() {
		buf, done := envelope()
		*buf = appendRequest(*buf, front, true)
		ans, done2 := envelope()
		var err error
		if *ans, err = runForwarded(*ans, *buf, pick); err != nil {
			b.Fatal(err)
		}
		if err := answerInto(*ans, front); err != nil {
			b.Fatal(err)
		}
		done2()
		done()
	}
}
