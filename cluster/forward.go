package cluster

import (
	"errors"
	"net"
	"net/netip"
	"sync"

	"github.com/valyala/fasthttp"

	"backupmon/codec"
)

// A request forwarded to a shard's owner travels as one message (node to
// node over TCP, or over NATS): the HTTP request as the front read it, and back
// the answer the owner's handlers wrote. Both are written straight from
// the request and the answer and read straight into them, with no copy in
// between (a forwarded read once spent a fifth of the nodes' CPU on the
// garbage of its copies). Nothing of the front's RequestCtx outlives its
// handler: the message holds copies of its bytes.
//
// The layout, the same both ways: the public listener's (bool; else the
// admin's), method, URI (path and query as sent), the client's address
// (host:port), status (a signed varint; 0 in a request), the headers (a
// count of strings, then name and value in turn), the body. Strings and
// the body are length-prefixed.

// appendRequest appends the message of the request of ctx to dst.
func appendRequest(dst []byte, ctx *fasthttp.RequestCtx, public bool) []byte {
	dst = codec.AppendBool(dst, public)
	dst = codec.AppendBytes(dst, ctx.Method())
	dst = codec.AppendBytes(dst, ctx.Request.RequestURI())
	var remote [64]byte
	dst = codec.AppendBytes(dst, appendAddr(remote[:0], ctx.RemoteAddr()))
	dst = codec.AppendVarint(dst, 0)
	n := 0
	for range ctx.Request.Header.All() {
		n += 2
	}
	dst = codec.AppendUvarint(dst, uint64(n))
	for k, v := range ctx.Request.Header.All() {
		dst = codec.AppendBytes(dst, k)
		dst = codec.AppendBytes(dst, v)
	}
	return codec.AppendBytes(dst, ctx.Request.Body())
}

// appendAddr appends a client's address as host:port.
func appendAddr(dst []byte, addr net.Addr) []byte {
	if a, ok := addr.(*net.TCPAddr); ok {
		ap := a.AddrPort()
		return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()).AppendTo(dst)
	}
	return append(dst, addr.String()...)
}

// appendAnswer appends the message of the answer resp to dst.
func appendAnswer(dst []byte, resp *fasthttp.Response) []byte {
	dst = codec.AppendBool(dst, false)
	dst = codec.AppendBytes(dst, nil)
	dst = codec.AppendBytes(dst, nil)
	dst = codec.AppendBytes(dst, nil)
	dst = codec.AppendVarint(dst, int64(resp.StatusCode()))
	body := resp.Body()
	// fasthttp reports its default Content-Type for an answer that set
	// none; it writes it only with a body: so must the front.
	skip := func(k, v []byte) bool {
		return len(body) == 0 && string(k) == fasthttp.HeaderContentType && string(v) == defaultContentType
	}
	n := 0
	for k, v := range resp.Header.All() {
		if !skip(k, v) {
			n += 2
		}
	}
	dst = codec.AppendUvarint(dst, uint64(n))
	for k, v := range resp.Header.All() {
		if !skip(k, v) {
			dst = codec.AppendBytes(dst, k)
			dst = codec.AppendBytes(dst, v)
		}
	}
	return codec.AppendBytes(dst, body)
}

// defaultContentType is fasthttp's Content-Type of an answer that set none.
const defaultContentType = "text/plain; charset=utf-8"

// message is a forwarded request or answer read in place: its slices are
// parts of the message's bytes.
type message struct {
	public              bool
	method, uri, remote []byte
	status              int
	head                [][]byte // name, value, name, value…
	body                []byte
}

// read reads a message; head reuses the array of m.head.
func (m *message) read(b []byte) error {
	var r codec.Reader
	r.Reset(b)
	m.public = r.Bool()
	m.method, m.uri, m.remote = r.View(), r.View(), r.View()
	m.status = r.Int()
	n := r.Uvarint()
	if n%2 != 0 || n > uint64(r.Len()) {
		return errors.New("forwarded message: a bad header count")
	}
	m.head = m.head[:0]
	for range n {
		m.head = append(m.head, r.View())
	}
	m.body = r.View()
	return r.Done()
}

// answerInto writes a forwarded answer into ctx; it returns an error, and
// leaves ctx as it was, when the message does not read.
func answerInto(b []byte, ctx *fasthttp.RequestCtx) error {
	m := messages.Get().(*message)
	defer messages.Put(m)
	if err := m.read(b); err != nil {
		return err
	}
	ctx.Response.Reset()
	ctx.Response.Header.DisableNormalizing()
	ctx.SetStatusCode(m.status)
	for i := 0; i+1 < len(m.head); i += 2 {
		if string(m.head[i]) == fasthttp.HeaderContentLength {
			continue
		}
		ctx.Response.Header.AddBytesKV(m.head[i], m.head[i+1])
	}
	ctx.Response.SetBody(m.body)
	return nil
}

// runForwarded runs the forwarded request b through the handler pick
// returns for its listener, and appends the answer's message to dst.
func runForwarded(dst, b []byte, pick func(public bool) fasthttp.RequestHandler) ([]byte, error) {
	m := messages.Get().(*message)
	defer messages.Put(m)
	if err := m.read(b); err != nil {
		return dst, err
	}
	c := contexts.Get().(*owned)
	defer c.release()
	var addr net.Addr = &net.TCPAddr{IP: net.IPv4zero}
	if ap, err := netip.ParseAddrPort(string(m.remote)); err == nil {
		addr = net.TCPAddrFromAddrPort(ap)
	}
	// Init copies a request into the context's: the empty one, and the
	// message's goes straight into the context's own.
	c.ctx.Init(&c.empty, addr, nil)
	req := &c.ctx.Request
	req.Header.DisableNormalizing()
	req.Header.SetMethodBytes(m.method)
	req.SetRequestURIBytes(m.uri)
	for i := 0; i+1 < len(m.head); i += 2 {
		req.Header.AddBytesKV(m.head[i], m.head[i+1])
	}
	req.SetBody(m.body)
	pick(m.public)(&c.ctx)
	return appendAnswer(dst, &c.ctx.Response), nil
}

// owned is a request context the owner reuses for forwarded requests.
type owned struct {
	empty fasthttp.Request // stays empty: what Init copies
	ctx   fasthttp.RequestCtx
}

func (c *owned) release() {
	c.ctx.Request.Reset()
	c.ctx.Response.Reset()
	c.ctx.ResetUserValues()
	contexts.Put(c)
}

var (
	messages = sync.Pool{New: func() any { return new(message) }}
	contexts = sync.Pool{New: func() any { return new(owned) }}
	// envelopes are the buffers messages are written into; one larger than
	// maxPooledEnvelope is left to the collector.
	envelopes = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}
)

const maxPooledEnvelope = 256 << 10

// envelope returns a buffer for a message, and a function that gives it
// back once the message is sent; the buffer grows in place (*p).
func envelope() (p *[]byte, done func()) {
	p = envelopes.Get().(*[]byte)
	*p = (*p)[:0]
	return p, func() {
		if cap(*p) <= maxPooledEnvelope {
			envelopes.Put(p)
		}
	}
}
