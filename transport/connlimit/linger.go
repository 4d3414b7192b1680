package connlimit

import (
	"io"
	"net"
	"time"
)

// Lingering after a refusal.
const (
	lingerTimeout = 500 * time.Millisecond
	lingerBytes   = 64 << 10
)

// Linger closes c after an answer was written to it: it shuts the sending
// side (the client reads the answer, then the end of the stream), reads
// and drops what the client still sends (at most 64 KiB, for at most half
// a second), then closes. Closing a socket whose received bytes were never
// read sends a reset, which can make the client drop the answer unread.
func Linger(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
	}
	c.SetReadDeadline(time.Now().Add(lingerTimeout))
	io.Copy(io.Discard, io.LimitReader(c, lingerBytes))
	c.Close()
}
