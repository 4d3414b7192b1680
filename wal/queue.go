package wal

import (
	"sync/atomic"

	"backupmon/intake"
)

// Request is one record handed to a log with its callback; a nil Rec is a
// barrier. It is sent by value so that submitting does not allocate.
type Request struct {
	Rec  Record
	Done func(lsn uint64, err error)
}

// Queue is the door of a log's requests, shared by this package's Log and
// by jslog's: requests go in until the log closes or fails, and the first
// failure is kept and given to every request after it.
type Queue struct {
	in     *intake.Intake[Request]
	fail   atomic.Pointer[error]
	closed error // what requests get once the queue is closed
}

// NewQueue returns an open queue holding size requests; requests made
// after Close get closed.
func NewQueue(size int, closed error) *Queue {
	return &Queue{in: intake.New[Request](size), closed: closed}
}

// C is the queue its log's one receiver takes requests from; it is closed
// by Close.
func (q *Queue) C() <-chan Request { return q.in.C }

// Submit queues rec with done, waiting while the queue is full. When rec
// has type 0, the log has failed, or the queue is closed, done is called at
// once, on the caller's goroutine, with an error, the failure, or the
// closed error. done may be nil.
func (q *Queue) Submit(rec Record, done func(lsn uint64, err error)) {
	if rec != nil && rec.Type() == 0 {
		call(done, 0, errZeroType)
		return
	}
	if err := q.Err(); err != nil {
		call(done, 0, err)
		return
	}
	if !q.in.Send(Request{Rec: rec, Done: done}) {
		call(done, 0, q.closed)
	}
}

// Fail records err as the log's failure unless one is recorded already,
// and reports whether it was the first.
func (q *Queue) Fail(err error) bool { return q.fail.CompareAndSwap(nil, &err) }

// Err returns the log's failure, or nil while it has none.
func (q *Queue) Err() error {
	if p := q.fail.Load(); p != nil {
		return *p
	}
	return nil
}

// Close closes the queue and reports true, or false when it was closed
// already.
func (q *Queue) Close() bool { return q.in.Close() }

// call calls done if it is not nil.
func call(done func(uint64, error), lsn uint64, err error) {
	if done != nil {
		done(lsn, err)
	}
}
