package transport

import (
	"bytes"
	"crypto/tls"
	"net"
	"strconv"
	"time"

	"backupmon/jsonx"
	"backupmon/transport/connlimit"
)

// Connection limits of the HTTP listeners (decisions.md, connection
// limits), unless Config says otherwise. The public listener's total keeps
// thousands of report clients and browsers with keep-alive connections;
// its per-address limit is what one host, or one office behind one
// address, needs many times over. The admin listener serves operators,
// the CLI and a metrics scraper.
const (
	DefaultPublicConns           = 8192
	DefaultPublicConnsPerAddress = 256
	DefaultAdminConns            = 128
	DefaultAdminConnsPerAddress  = 64
)

// The answer to a connection over a limit.
const (
	msgTooManyConns  = "Too many connections, try again later"
	refusedRetry     = 5                      // Retry-After, seconds
	headWait         = 200 * time.Millisecond // for the request line, to know the path's shape
	maxRefusalHeader = 4 << 10
)

// limits returns l with its zero fields set to the defaults.
func limits(l connlimit.Limits, total, perAddress int) connlimit.Limits {
	if l.Total <= 0 {
		l.Total = total
	}
	if l.PerAddress <= 0 {
		l.PerAddress = perAddress
	}
	return l
}

// limitPublic wraps the public listener's socket in its connection limits.
func (s *Server) limitPublic(ln net.Listener) *connlimit.Listener {
	return connlimit.New(ln, connlimit.Options{Limits: s.publicConns, Name: "public", Logger: s.log,
		Refuse:  s.refusePublic,
		Refused: func(reason string) { s.metrics.ObserveRefused("public", reason) }})
}

// limitAdmin wraps the admin listener's socket in its connection limits.
func (s *Server) limitAdmin(ln net.Listener) *connlimit.Listener {
	return connlimit.New(ln, connlimit.Options{Limits: s.adminConns, Name: "admin", Logger: s.log,
		Refuse: func(c net.Conn, _ bool) {
			c.Write(refusal(`{"error":{"code":"UNAVAILABLE","message":"`+msgTooManyConns+`"}}`, nil))
		},
		Refused: func(reason string) { s.metrics.ObserveRefused("admin", reason) }})
}

// refusePublic answers a public connection over a limit with 503 in the
// shape of its path, as requests the listener cannot read are answered:
// the Report API's when the request line arrived (within headWait when
// the refusal may wait, else already) and names the Report API, the REST
// API's otherwise. Over TLS, a refusal that may not wait closes the
// connection without an answer (it would need a handshake).
func (s *Server) refusePublic(c net.Conn, wait bool) {
	var target []byte
	switch {
	case s.tls != nil && !wait:
		return
	case s.tls != nil:
		tc := tls.Server(c, s.tls)
		if err := tc.Handshake(); err != nil {
			return
		}
		defer tc.CloseWrite()
		c = tc
		target = requestTarget(c)
	case wait:
		target = requestTarget(c)
	default:
		var buf [maxRefusalHeader]byte
		target = requestLineTarget(buf[:connlimit.ReadArrived(c, buf[:])])
	}
	if target != nil && isReportURI(target) {
		b := append([]byte(`{"error":`), jsonx.AppendString(nil, msgTooManyConns)...)
		c.Write(refusal(string(append(b, '}')), nil))
		return
	}
	id := nextRequestID()
	body := `{"error":{"code":"UNAVAILABLE","message":"` + msgTooManyConns + `","requestId":"` + string(id[:]) + `"}}`
	c.Write(refusal(body, id[:]))
}

// requestTarget reads what the client sends first, for at most headWait,
// and returns the target of its request line; nil when it did not come.
func requestTarget(c net.Conn) []byte {
	c.SetReadDeadline(time.Now().Add(headWait))
	buf := make([]byte, 0, maxRefusalHeader)
	for len(buf) < cap(buf) {
		n, err := c.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if target := requestLineTarget(buf); target != nil {
			return target
		}
		if err != nil {
			break
		}
	}
	return nil
}

// requestLineTarget returns the target of the request line that begins
// b, nil when b does not hold it whole.
func requestLineTarget(b []byte) []byte {
	if sp := bytes.IndexByte(b, ' '); sp >= 0 {
		rest := b[sp+1:]
		if end := bytes.IndexAny(rest, " \r\n"); end >= 0 {
			return rest[:end]
		}
	}
	return nil
}

// refusal returns a whole 503 response with a JSON body; id, when not nil,
// is its X-Request-Id.
func refusal(body string, id []byte) []byte {
	b := make([]byte, 0, 256+len(body))
	b = append(b, "HTTP/1.1 503 Service Unavailable\r\nContent-Type: "+contentTypeJSON+"\r\nContent-Length: "...)
	b = strconv.AppendInt(b, int64(len(body)), 10)
	b = append(b, "\r\nRetry-After: "...)
	b = strconv.AppendInt(b, refusedRetry, 10)
	if id != nil {
		b = append(b, "\r\n"+headerRequestID+": "...)
		b = append(b, id...)
	}
	b = append(b, "\r\nConnection: close\r\n\r\n"...)
	return append(b, body...)
}
