package jslog

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Replay calls fn for every record from position from (0: the first held)
// to the last message Open saw, in order, before Start. payload is valid
// only during the call. It checks the history as it reads: each message
// follows the one before it (prevSeq), no message of an older epoch follows
// one of a newer, and every checksum matches; a history that fails returns
// an error wrapping ErrBroken, naming the message. A stream that ends
// before from (a snapshot's position: the snapshot holds records the
// stream no longer does) or before the mark (Options.Mark: after every
// record left) has lost its tail, and is refused with ErrBroken. It
// returns fn's error, wrapped with the position.
func (l *Log) Replay(from uint64, fn func(lsn uint64, typ byte, payload []byte) error) error {
	last, err := l.endAtLeast(max(l.opts.Mark, seqOf(max(from, 1)-1)))
	if err != nil {
		return fmt.Errorf("replay %s: %w", l.opts.Stream, err)
	}
	if from > lsnOf(last+1, 0) {
		return fmt.Errorf("%s ends at message %d, but the snapshot holds records up to message %d: acknowledged messages are gone: %w", l.opts.Stream, last, seqOf(from-1), ErrBroken)
	}
	start := seqOf(from)
	if start < l.first.Load() {
		if start == 0 && l.first.Load() <= 1 || from == 0 {
			start = l.first.Load()
		} else {
			return fmt.Errorf("replay %s from %d: the stream holds %d..%d", l.opts.Stream, start, l.first.Load(), last)
		}
	}
	if start > last {
		return l.checkMark(last)
	}
	// The consumer is made at once and, by nats.go, anew at every fetch;
	// each is bounded, so that a stream that lost its quorum since Open
	// fails the replay (to be tried again) instead of holding it.
	ctx, cancel := context.WithTimeout(context.Background(), l.opts.AckTimeout)
	defer cancel()
	cons, err := l.stream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{
		DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: start,
		MaxResetAttempts: resetAttempts,
	})
	if err != nil {
		return fmt.Errorf("replay %s: %w", l.opts.Stream, err)
	}
	want := start
	// A consumer just made (or moving to another server) may not answer
	// yet: "no responders" until it does. Asked again, for a while.
	var unanswered time.Time
	notYet := func(err error) bool {
		if !errors.Is(err, nats.ErrNoResponders) {
			return false
		}
		if unanswered.IsZero() {
			unanswered = time.Now()
		}
		if time.Since(unanswered) > 5*time.Second {
			return false
		}
		time.Sleep(50 * time.Millisecond)
		return true
	}
	for want <= last {
		// Ask for no more than the messages left: a fetch ends when it has
		// its count, or at its wait.
		batch, err := cons.Fetch(int(min(512, last-want+1)), jetstream.FetchMaxWait(5*time.Second))
		if err != nil {
			if notYet(err) {
				continue
			}
			return fmt.Errorf("replay %s at %d: %w", l.opts.Stream, want, err)
		}
		got := 0
		for msg := range batch.Messages() {
			got++
			meta, err := msg.Metadata()
			if err != nil {
				return fmt.Errorf("replay %s at %d: %w", l.opts.Stream, want, err)
			}
			seq := meta.Sequence.Stream
			if seq > last {
				break
			}
			if err := l.check(seq, want, msg.Data()); err != nil {
				return err
			}
			d, _ := decodeMessage(msg.Data())
			for i, r := range d.records {
				lsn := lsnOf(seq, uint64(i))
				if lsn < from {
					continue
				}
				if err := fn(lsn, r.typ, r.payload); err != nil {
					return fmt.Errorf("replay %s at %d: %w", l.opts.Stream, lsn, err)
				}
			}
			want = seq + 1
		}
		if err := batch.Error(); err != nil {
			if got == 0 && notYet(err) {
				continue
			}
			return fmt.Errorf("replay %s at %d: %w", l.opts.Stream, want, err)
		}
		if got == 0 {
			// Nothing came within the fetch's wait: the stream is between
			// leaders or its server is gone. A reason to try again later,
			// not a hole in the history (a gap shows as a later message
			// after want, which check refuses).
			return fmt.Errorf("replay %s: no message at %d of %d within the fetch's wait", l.opts.Stream, want, last)
		}
	}
	return l.checkMark(last)
}

// resetAttempts is how many times a fetch of the replay's ordered consumer
// tries to make its consumer (nats.go waits up to 10 s for each, 1 s
// apart) before the fetch fails. nats.go's default is without end.
const resetAttempts = 2

// checkMark refuses, after the replay of what is left, a stream that ends
// at last before the shard's mark.
func (l *Log) checkMark(last uint64) error {
	if l.opts.Mark > last {
		return fmt.Errorf("%s ends at message %d, but message %d was acknowledged (the shard's mark): acknowledged messages are gone: %w", l.opts.Stream, last, l.opts.Mark, ErrBroken)
	}
	return nil
}

// markRereads and markReread: how often, and how far apart, Replay asks
// the stream's leader for its end when the end Open read is short of what
// the stream must hold.
const (
	markRereads = 3
	markReread  = 500 * time.Millisecond
)

// endAtLeast returns the stream's last sequence as Open read it when that
// reaches seq. Else it asks the stream's leader for the stream's last
// message: the stream information Open read may be a replica's own, stale
// end (a stream without a leader is answered so, as after a partition),
// while a message is answered by the leader alone, which answers only once
// it has applied what its predecessors committed. It returns the leader's
// end when that is short of seq too (the tail is lost); an error, not
// ErrBroken, when the leader does not answer or its stream reaches seq
// after all, so that the shard's open is tried again. Before Start only.
func (l *Log) endAtLeast(seq uint64) (uint64, error) {
	if l.last.Load() >= seq {
		return l.last.Load(), nil
	}
	var err error
	for range markRereads {
		ctx, cancel := context.WithTimeout(context.Background(), l.opts.AckTimeout)
		var end uint64
		end, err = LeaderEnd(ctx, l.stream, l.opts.Subject)
		cancel()
		switch {
		case err == nil && end >= seq:
			return 0, fmt.Errorf("%s: its end was read as %d, but its leader holds message %d: read it again", l.opts.Stream, l.last.Load(), end)
		case err == nil:
			return end, nil
		}
		time.Sleep(markReread)
	}
	return 0, fmt.Errorf("%s: its end was read as %d, before %d, and its leader did not say: %w", l.opts.Stream, l.last.Load(), seq, err)
}

// LeaderEnd returns the last sequence of a log's stream (0 when it holds
// nothing) on its leader's word: the stream's last message, which only
// the leader answers, once it has applied what its predecessors committed.
// The stream's information may instead be a replica's own, stale end (a
// stream without a leader is answered so). It returns an error when no
// leader answers.
func LeaderEnd(ctx context.Context, st jetstream.Stream, subject string) (uint64, error) {
	msg, err := st.GetLastMsgForSubject(ctx, subject)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return msg.Sequence, nil
}

// check checks message seq, expected to be want, against the history read
// before it.
func (l *Log) check(seq, want uint64, data []byte) error {
	if seq != want {
		return fmt.Errorf("%s: message %d follows %d: a gap: %w", l.opts.Stream, seq, want-1, ErrBroken)
	}
	d, err := decodeMessage(data)
	if err != nil {
		return fmt.Errorf("%s: message %d: %v: %w", l.opts.Stream, seq, err, ErrBroken)
	}
	if d.prevSeq != seq-1 {
		return fmt.Errorf("%s: message %d was written after %d, not %d: %w", l.opts.Stream, seq, d.prevSeq, seq-1, ErrBroken)
	}
	if d.epoch < l.epochs {
		return fmt.Errorf("%s: message %d of epoch %d after epoch %d: %w", l.opts.Stream, seq, d.epoch, l.epochs, ErrBroken)
	}
	l.epochs = d.epoch
	return nil
}
