package smtpin

import (
	"errors"
	"io"
	"sync"
	"sync/atomic"

	"github.com/emersion/go-smtp"
)

// sessionShare is the most of its message a session may hold whatever the
// others hold: report e-mails are 10 to 60 KB.
const sessionShare = 64 << 10

// dataOverhead is what go-smtp holds for a session reading a message
// besides its bytes (its reader's state: about 1 KiB measured), set aside
// with each session's share so that the budget bounds the memory of the
// messages being read, not only their bytes.
const dataOverhead = 2 << 10

// errBusy refuses a message the memory budget cannot take now; the sender
// retries later (RFC 3463 X.3.1: mail system full).
var errBusy = &smtp.SMTPError{Code: 452, EnhancedCode: smtp.EnhancedCode{4, 3, 1}, Message: "Too much mail in progress, try again later"}

// budget is the byte budget of the messages being received, across
// sessions (Config.MessageMemory). Each session may hold the first share
// bytes of its message without drawing on it: (share + dataOverhead) ×
// sessions is set aside for that, the rest is drawn by the messages that
// grow past their share, as they grow. A buffer counts by its capacity.
type budget struct {
	share int64
	free  atomic.Int64 // the shared rest not drawn
	pool  sync.Pool    // *[]byte of capacity share
}

// newBudget splits total for sessions: each session's share is 64 KiB, or
// less when that would set aside more than half of total.
func newBudget(total int64, sessions int) *budget {
	share := min(int64(sessionShare), total/int64(2*sessions))
	share = max(share&^1023, 1024)
	b := &budget{share: share}
	b.free.Store(max(total-(share+dataOverhead)*int64(sessions), 0))
	b.pool.New = func() any { buf := make([]byte, 0, share); return &buf }
	return b
}

// take draws n bytes from the shared rest; false, drawing nothing, when
// fewer are left.
func (b *budget) take(n int64) bool {
	for {
		f := b.free.Load()
		if f < n {
			return false
		}
		if b.free.CompareAndSwap(f, f-n) {
			return true
		}
	}
}

// mayTake reports whether a message of size bytes (0: not declared) would
// find room now.
func (b *budget) mayTake(size int64) bool {
	return size <= b.share || b.free.Load() >= size-b.share
}

// read reads a message from r into memory paid for by the budget. It
// returns the bytes, the function that gives them back (to call once done
// with them, whatever the error), and errBusy when the budget could not
// take the next part of the message, or r's error.
func (b *budget) read(r io.Reader) ([]byte, func(), error) {
	pooled := b.pool.Get().(*[]byte)
	buf := (*pooled)[:0]
	var drawn int64 // of the shared rest, for buf's capacity past the share
	release := func() {
		b.free.Add(drawn)
		drawn = 0
		if pooled != nil {
			*pooled = (*pooled)[:0]
			b.pool.Put(pooled)
			pooled = nil
		}
	}
	for {
		if len(buf) == cap(buf) {
			// Past the largest message go-smtp lets through, and
			// room to see the end of the data.
			newCap := min(2*cap(buf), MaxMessageBytes+4096)
			if newCap <= len(buf) {
				return nil, release, &smtp.SMTPError{Code: 552, EnhancedCode: smtp.EnhancedCode{5, 3, 4}, Message: "Max message size exceeded"}
			}
			need := int64(newCap) - b.share - drawn
			if !b.take(need) {
				return nil, release, errBusy
			}
			drawn += need
			grown := make([]byte, len(buf), newCap)
			copy(grown, buf)
			buf = grown
			if pooled != nil { // the share's buffer is free again
				b.pool.Put(pooled)
				pooled = nil
			}
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) {
			return buf, release, nil
		}
		if err != nil {
			return buf, release, err
		}
	}
}

// MinMessageMemory returns the least Config.MessageMemory with which a
// message of MaxMessageBytes can still be received beside the shares of
// sessions sessions.
func MinMessageMemory(sessions int) int64 {
	return 2 * (MaxMessageBytes + 4096 + dataOverhead*int64(sessions))
}
