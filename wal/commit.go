package wal

import (
	"fmt"
	"runtime"
	"time"
)

// pending is a request the committer has taken, with the LSN it assigned
// (for a barrier, the LSN of the last record taken before it).
type pending struct {
	Request
	lsn uint64
}

// Start starts the committer goroutine. Records submitted before Start wait
// in the queue. Calling Start again does nothing.
func (l *Log) Start() {
	l.startOnce.Do(func() {
		l.started.Store(true)
		go l.run()
	})
}

// Submit queues rec to be written; done(lsn, nil) is called once it is
// durable. Submit(nil, done) is a barrier: nothing is written, and done is
// called, with the LSN of the last record submitted before it (0 if none),
// once every record submitted before it is durable.
//
// done is called from the committer goroutine, in LSN order, so it must be
// cheap and must not block (nor call Submit, which may block). Submit blocks only while the queue is full (or,
// before Start, until the committer starts and makes room). When the log is
// closed, has failed, or rec has type 0, done is called at once, on the
// caller's goroutine, with ErrClosed, the ErrFailed error, or an error. done
// may be nil.
func (l *Log) Submit(rec Record, done func(lsn uint64, err error)) { l.queue.Submit(rec, done) }

// run is the committer: it takes what is waiting in the queue, up to
// MaxBatch requests, writes it as one batch, and reports, until Close
// closes the queue and it is drained.
func (l *Log) run() {
	defer close(l.stopped)
	for {
		req, ok := <-l.queue.C()
		if !ok {
			return
		}
		l.take(req)
		open := l.gather()
		l.commit()
		clear(l.pending)
		l.pending = l.pending[:0]
		if !open {
			return
		}
	}
}

// gather takes requests that are already waiting, without blocking, until
// the batch holds MaxBatch. It returns false when the queue is closed.
func (l *Log) gather() bool {
	for len(l.pending) < l.opts.MaxBatch {
		select {
		case req, ok := <-l.queue.C():
			if !ok {
				return false
			}
			l.take(req)
		default:
			return true
		}
	}
	return true
}

// take adds req to the batch and assigns its LSN.
func (l *Log) take(req Request) {
	next := l.next.Load()
	p := pending{Request: req, lsn: next - 1}
	if req.Rec != nil {
		p.lsn = next
		l.next.Store(next + 1)
	}
	l.pending = append(l.pending, p)
}

// commit frames the pending records into one batch, writes and fsyncs it,
// and calls every done in order. After a failure nothing is written and
// every done gets the ErrFailed error.
func (l *Log) commit() {
	if err := l.queue.Err(); err != nil {
		l.reject(err)
		return
	}
	b := &l.b
	b.reset()
	var bytes uint64
	for i := range l.pending {
		p := &l.pending[i]
		if p.Rec == nil {
			continue
		}
		l.scratch = appendFrame(l.scratch[:0], p.Rec)
		b.add(p.lsn, l.scratch)
		bytes += uint64(len(l.scratch))
	}
	if n := b.len(); n > 0 {
		if l.opts.BeforeSync != nil {
			l.opts.BeforeSync(b.first, b.last)
		}
		start := time.Now()
		err := l.st.WriteBatch(b)
		took := time.Since(start)
		if err != nil {
			l.reject(l.failStop(fmt.Errorf("write lsn %d..%d: %w", b.first, b.last, err)))
			return
		}
		l.last.Store(b.last)
		l.written.Add(bytes)
		if l.opts.Observe != nil {
			l.opts.Observe(n, took)
		}
	}
	for i := range l.pending {
		p := &l.pending[i]
		call(p.Done, p.lsn, nil)
	}
	// The callbacks woke the batch's waiters onto this goroutine's P. Let
	// them run before the next fsync blocks this P in a system call, where
	// they would wait until the runtime hands the P to another thread.
	runtime.Gosched()
}

// reject calls every pending done with err.
func (l *Log) reject(err error) {
	for i := range l.pending {
		call(l.pending[i].Done, 0, err)
	}
}

// failStop records that the log has failed, so that nothing is written
// again, calls OnFatal once, and returns the error records get from now on.
func (l *Log) failStop(cause error) error {
	err := fmt.Errorf("%w: %w", ErrFailed, cause)
	l.queue.Fail(err)
	l.opts.OnFatal(cause)
	return err
}
