package cluster

import (
	"errors"
	"net"

	"github.com/valyala/fasthttp"

	"backupmon/codec"
)

// A request forwarded to a shard's owner travels as one NATS message: the
// HTTP request as the front read it, and back the answer the owner's
// handlers wrote. Nothing of the front's RequestCtx outlives its handler:
// the message holds copies.

// forwarded is an HTTP request or answer on its way between nodes.
type forwarded struct {
	public bool   // the public listener's (else the admin's)
	method string // request
	uri    string // request: path and query as sent
	remote string // request: the client's address
	status int    // answer
	head   []string
	body   []byte
}

func (m *forwarded) fields(f *codec.Fields) {
	f.Walk(&m.public, &m.method, &m.uri, &m.remote, &m.status)
	codec.Slice(f, &m.head, 1, func(f *codec.Fields, s *string) { f.String(s) })
	f.Blob(&m.body)
}

func (m *forwarded) encode() []byte {
	f := codec.Encoder(make([]byte, 0, 256+len(m.body)))
	m.fields(f)
	return f.Bytes()
}

func decodeForwarded(b []byte) (*forwarded, error) {
	m := &forwarded{}
	f := codec.Decoder(b)
	m.fields(f)
	if err := f.Done(); err != nil {
		return nil, err
	}
	if len(m.head)%2 != 0 {
		return nil, errors.New("forwarded headers: an odd count")
	}
	return m, nil
}

// requestOf copies the request of ctx.
func requestOf(ctx *fasthttp.RequestCtx, public bool) *forwarded {
	m := &forwarded{public: public, method: string(ctx.Method()), uri: string(ctx.Request.RequestURI()),
		remote: ctx.RemoteAddr().String(), body: append([]byte(nil), ctx.Request.Body()...)}
	for k, v := range ctx.Request.Header.All() {
		m.head = append(m.head, string(k), string(v))
	}
	return m
}

// serve runs a forwarded request through h and returns the answer.
func (m *forwarded) serve(h fasthttp.RequestHandler) *forwarded {
	var req fasthttp.Request
	req.Header.DisableNormalizing()
	req.Header.SetMethod(m.method)
	req.SetRequestURI(m.uri)
	for i := 0; i+1 < len(m.head); i += 2 {
		req.Header.Add(m.head[i], m.head[i+1])
	}
	req.SetBody(m.body)
	addr, err := net.ResolveTCPAddr("tcp", m.remote)
	if err != nil {
		addr = &net.TCPAddr{IP: net.IPv4zero}
	}
	var ctx fasthttp.RequestCtx
	ctx.Init(&req, addr, nil)
	h(&ctx)
	out := &forwarded{status: ctx.Response.StatusCode(), body: append([]byte(nil), ctx.Response.Body()...)}
	for k, v := range ctx.Response.Header.All() {
		// fasthttp reports its default Content-Type for an answer that set
		// none; it writes it only with a body: so must the front.
		if string(k) == fasthttp.HeaderContentType && len(out.body) == 0 && string(v) == defaultContentType {
			continue
		}
		out.head = append(out.head, string(k), string(v))
	}
	return out
}

// defaultContentType is fasthttp's Content-Type of an answer that set none.
const defaultContentType = "text/plain; charset=utf-8"

// answer writes a forwarded answer into ctx.
func (m *forwarded) answer(ctx *fasthttp.RequestCtx) {
	ctx.Response.Reset()
	ctx.Response.Header.DisableNormalizing()
	ctx.SetStatusCode(m.status)
	for i := 0; i+1 < len(m.head); i += 2 {
		if string(m.head[i]) == fasthttp.HeaderContentLength {
			continue
		}
		ctx.Response.Header.Add(m.head[i], m.head[i+1])
	}
	ctx.Response.SetBody(m.body)
}
