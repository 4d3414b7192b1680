package connlimit

import (
	"io"
	"net"
	"syscall"
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

// ReadArrived reads into p what the client sent already, without waiting:
// 0 when nothing has arrived, or c is not a socket.
func ReadArrived(c net.Conn, p []byte) int {
	sc, ok := c.(syscall.Conn)
	if !ok || len(p) == 0 {
		return 0
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return 0
	}
	n := 0
	rc.Read(func(fd uintptr) bool {
		if m, err := syscall.Read(int(fd), p); err == nil && m > 0 {
			n = m
		}
		return true // one try: never wait for more
	})
	return n
}

// drainArrived drops what the client sent already (at most 64 KiB), so
// that closing c sends the end of the stream rather than a reset.
func drainArrived(c net.Conn) {
	var buf [4096]byte
	for total := 0; total < lingerBytes; {
		n := ReadArrived(c, buf[:])
		if n == 0 {
			return
		}
		total += n
	}
}
