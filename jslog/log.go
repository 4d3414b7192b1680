// Package jslog is the engine's log on a NATS JetStream stream, for the
// cluster mode: the records waiting at a moment go out as one message (group
// commit), each message published with the stream's expected last sequence,
// so that an append by a writer whose lease was taken over fails.
package jslog

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"backupmon/wal"
)

// Options configure a Log.
type Options struct {
	// JS is the JetStream context; Stream names the shard's stream and
	// Subject the subject its messages are published to.
	JS      jetstream.JetStream
	Stream  string
	Subject string
	// Epoch is this writer's epoch: the revision of the lease it holds.
	// Start publishes a takeover marker with it, which fences every older
	// writer.
	Epoch uint64
	// Window is the most messages in flight (default 4: while they wait
	// for their acknowledgements the records that come meanwhile gather
	// into the next message). While a message of at least BatchFrom
	// records is in flight (default 2), the next waits for its
	// acknowledgement (turns.go): under load, fewer and fuller messages
	// (bench/RESULTS.md). MaxRecords and MaxBytes bound one message
	// (default 1024 records, 900 KiB).
	Window     int
	BatchFrom  int
	MaxRecords int
	MaxBytes   int
	// AckTimeout bounds the resolution of a message whose
	// acknowledgement did not come within 2 s (default 10 s, resolve.go):
	// past it the outcome is unknown, and the log fails.
	AckTimeout time.Duration
	// OnFatal is called once when an append fails (a stale writer fenced
	// off, an outcome still unknown after AckTimeout): the log accepts nothing more and the
	// shard must be rebuilt from the stream. Default: log it.
	OnFatal func(error)
	// Observe is called after each acknowledged message with its records
	// and the time from publish to acknowledgement (metrics).
	Observe func(records int, took time.Duration)
	Logger  *slog.Logger
	// Mark is the last sequence an owner of the shard is known to have
	// had acknowledged (0: none known; the cluster keeps it apart from
	// the stream). A stream that ends before it has lost acknowledged
	// messages: Replay refuses it with ErrBroken.
	Mark uint64
}

func (o Options) withDefaults() Options {
	if o.Window <= 0 {
		o.Window = 4
	}
	if o.BatchFrom <= 0 {
		o.BatchFrom = 2
	}
	if o.MaxRecords <= 0 || o.MaxRecords > maxRecords {
		o.MaxRecords = maxRecords
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = 900 << 10
	}
	if o.AckTimeout <= 0 {
		o.AckTimeout = 10 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.OnFatal == nil {
		logger := o.Logger
		o.OnFatal = func(err error) { logger.Error("jslog: append failed", "err", err) }
	}
	return o
}

// Errors of a Log.
var (
	// ErrClosed is given to the records submitted after Close.
	ErrClosed = errors.New("jslog: closed")
	// ErrFenced is returned (wrapped) when the stream holds a message this
	// writer did not expect: another writer took the shard over.
	ErrFenced = errors.New("jslog: fenced off by another writer")
	// ErrBroken is returned (wrapped) by Replay for a stream whose history
	// has a gap, a message of an older epoch after a newer one, or a
	// message whose checksum does not match: the shard must not serve it.
	ErrBroken = errors.New("jslog: the stream's history is broken")
)

// Log is one shard's log on its stream. Make one with Open, Replay it, then
// Start it; Submit from any goroutine.
type Log struct {
	opts   Options
	stream jetstream.Stream

	first   atomic.Uint64 // first sequence still held
	last    atomic.Uint64 // last sequence published (assumed acknowledged)
	acked   atomic.Uint64 // last sequence known acknowledged
	written atomic.Uint64

	queue   *wal.Queue
	flights chan *flight
	turns   *turns
	start   sync.Once
	started atomic.Bool   // Start was called: the takeover marker goes out
	done    chan struct{} // closed when the acker returns
	epochs  uint64        // highest epoch replayed
}

// flight is one published message waiting for its acknowledgement.
type flight struct {
	seq     uint64
	paf     jetstream.PubAckFuture // nil: only barriers (no records), or not sent
	unsent  error                  // why the message did not go out
	data    []byte                 // the message published
	dones   []func(lsn uint64, err error)
	lsns    []uint64
	records int
	bytes   int
	sent    time.Time
}

// Open opens the log of a stream, which must exist. It reads the stream's
// first and last sequences.
func Open(ctx context.Context, opts Options) (*Log, error) {
	opts = opts.withDefaults()
	st, err := opts.JS.Stream(ctx, opts.Stream)
	if err != nil {
		return nil, fmt.Errorf("open stream %s: %w", opts.Stream, err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		return nil, fmt.Errorf("open stream %s: %w", opts.Stream, err)
	}
	l := &Log{opts: opts, stream: st, queue: wal.NewQueue(4096, ErrClosed), flights: make(chan *flight, opts.Window), turns: newTurns(opts.Window, opts.BatchFrom), done: make(chan struct{})}
	l.first.Store(info.State.FirstSeq)
	l.last.Store(info.State.LastSeq)
	l.acked.Store(info.State.LastSeq)
	if info.State.Msgs == 0 {
		l.first.Store(info.State.LastSeq + 1)
	}
	return l, nil
}

// LastSeq returns the last sequence of the stream this log has seen or
// published.
func (l *Log) LastSeq() uint64 { return l.last.Load() }

// Acked returns the last sequence known acknowledged: the stream's end at
// Open, then each message's as its acknowledgement comes. The cluster
// keeps it as the shard's mark (Options.Mark).
func (l *Log) Acked() uint64 { return l.acked.Load() }

// NextLSN returns the position the next record submitted will get: the
// first record of the next message.
func (l *Log) NextLSN() uint64 { return lsnOf(l.last.Load()+1, 0) }

// FirstLSN returns the first position still held: 1 while the stream holds
// its whole history (no position is below it), else the first position of
// its first message.
func (l *Log) FirstLSN() uint64 {
	if first := l.first.Load(); first > 1 {
		return lsnOf(first, 0)
	}
	return 1
}

// Written returns the bytes acknowledged since Open.
func (l *Log) Written() uint64 { return l.written.Load() }

// Start publishes the takeover marker (an empty message of this writer's
// epoch, expected right after the last message Open or Replay saw), waits
// for it, and begins taking records. A failure goes to OnFatal, and the
// records submitted fail with it.
func (l *Log) Start() {
	l.start.Do(func() {
		l.started.Store(true)
		go l.acker()
		go l.run()
	})
}

// Submit queues rec; done(lsn, nil) is called once it is acknowledged, in
// position order, from the log's goroutine (so it must not block). A nil
// rec is a barrier: done is called, with the position of the last record
// before it, once every record before it is acknowledged. After a failure
// or Close, or for a record of type 0, done is called at once with the
// error.
func (l *Log) Submit(rec wal.Record, done func(lsn uint64, err error)) { l.queue.Submit(rec, done) }

// call calls done if it is not nil.
func call(done func(uint64, error), lsn uint64, err error) {
	if done != nil {
		done(lsn, err)
	}
}

// TruncateFront drops every message before the one that holds lsn.
func (l *Log) TruncateFront(lsn uint64) error {
	seq := seqOf(lsn)
	if seq <= l.first.Load() {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), l.opts.AckTimeout)
	defer cancel()
	if err := l.stream.Purge(ctx, jetstream.WithPurgeSequence(seq)); err != nil {
		return fmt.Errorf("purge %s before %d: %w", l.opts.Stream, seq, err)
	}
	l.first.Store(seq)
	return nil
}

// Close stops taking records, waits until those submitted are acknowledged
// (or failed), and returns the failure if there was one. A log never
// started writes nothing, not even its takeover marker; records submitted
// to it fail with ErrClosed.
func (l *Log) Close() error {
	if !l.queue.Close() {
		return ErrClosed
	}
	if !l.started.Load() {
		// Never started (a read-only shard): no takeover marker may go out.
		for r := range l.queue.C() {
			call(r.Done, 0, ErrClosed)
		}
		return nil
	}
	<-l.done
	if err := l.queue.Err(); err != nil {
		return err
	}
	return nil
}

// failWith records the first failure and tells OnFatal.
func (l *Log) failWith(err error) {
	if l.queue.Fail(err) {
		l.opts.OnFatal(err)
	}
}

// run is the committer: the takeover marker first, then each batch of the
// requests waiting at the moment, their records packed into one message
// (at most MaxRecords, and MaxBytes give or take the last record).
func (l *Log) run() {
	defer close(l.flights)
	if err := l.takeover(); err != nil {
		l.failWith(err)
	}
	var batch []wal.Request
	for {
		first, ok := <-l.queue.C()
		if !ok {
			return
		}
		l.turns.wait() // what comes meanwhile joins this message
		m := newMessage(l.opts.Epoch, l.last.Load())
		batch = append(batch[:0], first)
		m.addRequest(first)
	gather:
		for m.records < l.opts.MaxRecords && m.size() < l.opts.MaxBytes {
			select {
			case r, ok := <-l.queue.C():
				if !ok {
					break gather
				}
				batch = append(batch, r)
				m.addRequest(r)
			default:
				break gather
			}
		}
		l.publish(m, batch)
	}
}

// takeover publishes the empty message of this writer's epoch that fences
// every older writer, and waits for it.
func (l *Log) takeover() error {
	seq := l.last.Load() + 1
	data := newMessage(l.opts.Epoch, seq-1).finish()
	ctx, cancel := context.WithTimeout(context.Background(), l.opts.AckTimeout)
	defer cancel()
	ack, err := l.opts.JS.PublishMsg(ctx, &nats.Msg{Subject: l.opts.Subject, Data: data},
		jetstream.WithExpectLastSequence(seq-1), jetstream.WithRetryAttempts(0))
	if err != nil {
		return fmt.Errorf("takeover of %s at %d: %w", l.opts.Stream, seq, fenceError(err))
	}
	if ack.Sequence != seq {
		return fmt.Errorf("takeover of %s: stored at %d, want %d: %w", l.opts.Stream, ack.Sequence, seq, ErrFenced)
	}
	l.last.Store(seq)
	l.acked.Store(seq)
	return nil
}

// publish publishes message m, expected right after the last one, and
// hands its requests (barriers among them) to the acker. After a failure
// every request gets the failure.
func (l *Log) publish(m *message, batch []wal.Request) {
	if fail := l.queue.Err(); fail != nil {
		for _, r := range batch {
			call(r.Done, 0, fail)
		}
		return
	}
	f := &flight{dones: make([]func(uint64, error), 0, len(batch)), lsns: make([]uint64, 0, len(batch))}
	prev := l.lastLSN() // a barrier reports the last record before it
	seq := l.last.Load() + 1
	if m.records > 0 {
		data := m.finish()
		paf, err := l.opts.JS.PublishMsgAsync(&nats.Msg{Subject: l.opts.Subject, Data: data},
			jetstream.WithExpectLastSequence(seq-1), jetstream.WithRetryAttempts(0))
		// A publish that did not go out (the connection is between
		// servers) is resolved like one unanswered: the acker publishes it
		// again at its place.
		l.last.Store(seq)
		f.seq, f.paf, f.unsent, f.data, f.records, f.bytes, f.sent = seq, paf, err, data, m.records, len(data), time.Now()
	}
	i := uint64(0)
	for _, r := range batch {
		if r.Rec != nil {
			prev = lsnOf(seq, i)
			i++
		}
		f.dones = append(f.dones, r.Done)
		f.lsns = append(f.lsns, prev)
	}
	l.turns.sent(f.records)
	l.flights <- f
}

// lastLSN returns the position of the last record published.
func (l *Log) lastLSN() uint64 {
	seq := l.last.Load()
	if seq == 0 {
		return 0
	}
	return lsnOf(seq, 0)
}

// acker waits for each message's acknowledgement, in order, and calls the
// dones of its records.
func (l *Log) acker() {
	defer close(l.done)
	for f := range l.flights {
		ferr := l.queue.Err()
		if ferr == nil && f.records > 0 {
			ferr = l.await(f)
		}
		for i, done := range f.dones {
			if ferr != nil {
				call(done, 0, ferr)
				continue
			}
			call(done, f.lsns[i], nil)
		}
		l.turns.answered(f.records)
	}
}

// await waits for f's acknowledgement. One that does not come within
// suspectAfter, or an error in its place, is resolved by reading the
// stream (resolve.go); a message found fenced, or not resolved within
// AckTimeout, fails the log.
func (l *Log) await(f *flight) error {
	if f.paf == nil {
		return l.settle(f, f.unsent)
	}
	timer := time.NewTimer(suspectAfter)
	defer timer.Stop()
	var cause error
	select {
	case ack := <-f.paf.Ok():
		if ack.Sequence != f.seq {
			l.failWith(fmt.Errorf("%s: message stored at %d, want %d: %w", l.opts.Stream, ack.Sequence, f.seq, ErrFenced))
			return l.queue.Err()
		}
	case err := <-f.paf.Err():
		cause = err
	case <-timer.C:
		cause = fmt.Errorf("no acknowledgement within %s", suspectAfter)
	}
	return l.settle(f, cause)
}

// settle resolves f when its acknowledgement did not come (cause), then
// counts it acknowledged; a failure fails the log.
func (l *Log) settle(f *flight, cause error) error {
	if cause != nil {
		if err := l.resolve(f, cause); err != nil {
			l.failWith(fmt.Errorf("append to %s at %d: %w", l.opts.Stream, f.seq, fenceError(err)))
			return l.queue.Err()
		}
	}
	l.written.Add(uint64(f.bytes))
	l.acked.Store(f.seq)
	f.data = nil
	if l.opts.Observe != nil {
		l.opts.Observe(f.records, time.Since(f.sent))
	}
	return nil
}

// fenceError marks JetStream's wrong-last-sequence refusal as ErrFenced.
func fenceError(err error) error {
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) && (apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence || apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant) {
		return fmt.Errorf("%w: %v", ErrFenced, err)
	}
	return err
}
