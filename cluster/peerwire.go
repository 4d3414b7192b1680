package cluster

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// The wire between two nodes. A front keeps one TCP connection to each
// peer and sends every request it forwards there as a frame with an id;
// the owner runs the requests at once, each as it comes, and sends each
// answer back as a frame with the request's id, in the order they finish.
// The frames waiting on one side at a moment go out in one write, as the
// shard writer packs records into one message: at the peak hour a write
// carries several requests, and a read several answers, where one HTTP
// exchange per request cost each side a write, a read and a wake-up.
//
//	hello:   u32 n, then n bytes: peerHello and the cluster's peer secret
//	request: u32 n, u64 id, u16 shard, then the request's message (n-10 bytes)
//	answer:  u32 n, u64 id, then the answer's message (n-8 bytes)
//
// Integers are big-endian; the messages are forward.go's.

// peerHello starts the first frame of a connection, before the secret.
const peerHello = "backupmon-peer 1 "

const (
	requestHead = 8 + 2 // id, shard
	answerHead  = 8     // id
)

// errFrame is a frame that does not read: the connection is dropped.
var errFrame = errors.New("peer frame does not read")

// appendRequestFrame appends the frame of request id for shard.
func appendRequestFrame(dst []byte, id uint64, shard int, req []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(requestHead+len(req)))
	dst = binary.BigEndian.AppendUint64(dst, id)
	dst = binary.BigEndian.AppendUint16(dst, uint16(shard))
	return append(dst, req...)
}

// appendAnswerFrame appends the frame of the answer to request id.
func appendAnswerFrame(dst []byte, id uint64, answer []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(answerHead+len(answer)))
	dst = binary.BigEndian.AppendUint64(dst, id)
	return append(dst, answer...)
}

// readFrame reads the next frame from r into buf (grown as needed) and
// returns it without its length. It returns errFrame for a frame shorter
// than min or longer than peerBodyLimit, or the error of the read.
func readFrame(r *bufio.Reader, buf []byte, min int) ([]byte, error) {
	return readFrameWithin(r, buf, min, peerBodyLimit+requestHead)
}

// readFrameWithin is readFrame for a frame of at most max bytes: errFrame
// for a longer one, before anything is set aside for it.
func readFrameWithin(r io.Reader, buf []byte, min, max int) ([]byte, error) {
	var size [4]byte
	if _, err := io.ReadFull(r, size[:]); err != nil {
		return buf, err
	}
	n := int(binary.BigEndian.Uint32(size[:]))
	if n < min || n > max {
		return buf, fmt.Errorf("%w: %d bytes", errFrame, n)
	}
	if cap(buf) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if _, err := io.ReadFull(r, buf); err != nil {
		return buf, err
	}
	return buf, nil
}

// sender writes the frames of one side of a connection. Whoever has a
// frame appends it under the lock; if no one is writing, it writes itself:
// everything appended up to then, and again what others appended while
// it wrote, so that frames that come together leave in one write and no
// goroutine is woken to write them.
type sender struct {
	conn net.Conn

	mu      sync.Mutex
	out     []byte // frames waiting for the next write
	spare   []byte // the buffer of the last write, for the one after
	writing bool
	failed  error // what ended the connection
}

func newSender(conn net.Conn) *sender {
	return &sender{conn: conn, out: make([]byte, 0, 16<<10), spare: make([]byte, 0, 16<<10)}
}

// peerWriteWait bounds one write to a peer: a peer that takes no bytes for
// that long (stopped, or its network gone) loses the connection.
const peerWriteWait = 10 * time.Second

// maxPeerBacklog bounds the bytes waiting behind a write in progress: a
// peer that stopped reading (stopped, or its network gone) is not sent
// more until it reads again (errPeerBacklog).
const maxPeerBacklog = 8 << 20

// errPeerBacklog is a frame refused because too much waits behind a write
// that does not finish: the connection stays, the frame is not sent.
var errPeerBacklog = errors.New("peer connection backlogged")

// errSenderClosed ends a sender that was closed, not failed.
var errSenderClosed = errors.New("peer connection closed")

// send appends a frame (add appends it to the buffer it is given) and
// writes it, with whatever else is waiting, unless another caller is
// writing (then that one writes it). It returns the error that ended the
// connection when it has ended or this write ended it.
func (s *sender) send(add func([]byte) []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed != nil {
		return s.failed
	}
	if s.writing && len(s.out) > maxPeerBacklog {
		return errPeerBacklog
	}
	s.out = add(s.out)
	if s.writing {
		return nil
	}
	s.writing = true
	for len(s.out) > 0 && s.failed == nil {
		buf := s.out
		s.out = s.spare[:0]
		s.mu.Unlock()
		s.conn.SetWriteDeadline(time.Now().Add(peerWriteWait))
		_, err := s.conn.Write(buf)
		s.mu.Lock()
		if cap(buf) > 4<<20 { // a large answer: do not keep its memory
			buf = make([]byte, 0, 16<<10)
		}
		s.spare = buf
		if err != nil && s.failed == nil {
			s.failed = fmt.Errorf("write to peer %s: %w", s.conn.RemoteAddr(), err)
			s.conn.Close()
		}
	}
	s.writing = false
	return s.failed
}

// close ends the sender with err (errSenderClosed when nil): frames not
// yet written are dropped, the connection is closed.
func (s *sender) close(err error) {
	s.mu.Lock()
	if s.failed == nil {
		if err == nil {
			err = errSenderClosed
		}
		s.failed = err
	}
	s.mu.Unlock()
	s.conn.Close()
}
