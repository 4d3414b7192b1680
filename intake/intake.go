// Package intake is the door of a queue that several goroutines send to
// and one receives from, closed once: a workspace actor's inbox, and the
// request queues of the logs (wal on disk, jslog on JetStream).
package intake

import "sync"

// Intake is the door of a queue: values go in while it is open, and it
// closes once, after which none goes in; the receiver drains what got in.
type Intake[T any] struct {
	mu     sync.RWMutex // read-held while sending on C, write-held to close it
	closed bool
	// C is the queue: its one receiver ranges over it.
	C chan T
}

// New returns an open intake whose queue holds size values.
func New[T any](size int) *Intake[T] { return &Intake[T]{C: make(chan T, size)} }

// Send puts v on the queue, waiting while it is full, and reports true;
// it reports false, sending nothing, once the intake is closed.
func (in *Intake[T]) Send(v T) bool {
	in.mu.RLock()
	defer in.mu.RUnlock()
	if in.closed {
		return false
	}
	in.C <- v
	return true
}

// Close closes the queue and reports true, or false when it was closed
// already.
func (in *Intake[T]) Close() bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.closed {
		return false
	}
	in.closed = true
	close(in.C)
	return true
}
