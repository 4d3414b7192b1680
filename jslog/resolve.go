package jslog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// An append whose acknowledgement does not come (the stream's leader
// changed, a server went, the reply was lost) is resolved by reading the
// stream, never by a blind publish (memo 4.6): the message at the
// flight's sequence is either its own bytes (it landed: acknowledged), or
// the stream ends before it (it did not: published again, expected at the
// same place), or another message is there (another writer took the
// shard: fenced). Every publish expects the stream's last sequence, so a
// flight's message can land at its own sequence only, and once: the same
// rule that fences a writer whose lease was taken over. The shard then
// goes on through a leader change instead of being rebuilt from its
// stream (a failover of several seconds, and 500s for the requests
// waiting).

// suspectAfter is how long a message waits for its acknowledgement before
// the log asks the stream whether it landed (the acknowledgement may still
// come meanwhile).
const suspectAfter = 2 * time.Second

// resolveEvery is how often a resolution asks again while the stream has
// no leader.
const resolveEvery = 250 * time.Millisecond

// resolve finds out whether f's message landed, publishing it again at its
// sequence while the stream ends before it, until AckTimeout has passed.
// It returns nil once the message is in the stream at f.seq, an error
// wrapping ErrFenced when another message is there, and an error naming
// cause when the stream did not tell in time.
func (l *Log) resolve(f *flight, cause error) error {
	deadline := time.Now().Add(l.opts.AckTimeout)
	for {
		var acks <-chan *jetstream.PubAck // nil for a message not sent
		if f.paf != nil {
			acks = f.paf.Ok()
		}
		select {
		case ack := <-acks:
			if ack.Sequence != f.seq {
				return fmt.Errorf("%s: message stored at %d, want %d: %w", l.opts.Stream, ack.Sequence, f.seq, ErrFenced)
			}
			return nil
		default:
		}
		wait := min(time.Until(deadline), l.opts.AckTimeout/2)
		if wait <= 0 {
			return fmt.Errorf("append to %s at %d: not found in the stream nor published again within %s after %v", l.opts.Stream, f.seq, l.opts.AckTimeout, cause)
		}
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		landed, err := l.landed(ctx, f)
		if err == nil && !landed {
			landed, err = l.publishAgain(ctx, f)
		}
		cancel()
		switch {
		case landed:
			l.opts.Logger.Info("jslog: an append's outcome read back from the stream", "stream", l.opts.Stream, "seq", f.seq, "after", cause)
			return nil
		case errors.Is(err, ErrFenced):
			return err
		}
		time.Sleep(resolveEvery)
	}
}

// landed reports whether the stream holds f's message at f.seq: true, or
// false when it ends before f.seq; an error wrapping ErrFenced when
// another message is there, another error when the stream did not answer.
func (l *Log) landed(ctx context.Context, f *flight) (bool, error) {
	msg, err := l.stream.GetMsg(ctx, f.seq)
	if err == nil {
		if bytes.Equal(msg.Data, f.data) {
			return true, nil
		}
		return false, fmt.Errorf("%s: another writer's message at %d: %w", l.opts.Stream, f.seq, ErrFenced)
	}
	if !errors.Is(err, jetstream.ErrMsgNotFound) {
		return false, err
	}
	end, err := LeaderEnd(ctx, l.stream, l.opts.Subject)
	if err != nil {
		return false, err
	}
	if end >= f.seq {
		return false, fmt.Errorf("%s: no message at %d, which the stream has passed", l.opts.Stream, f.seq)
	}
	return false, nil
}

// publishAgain publishes f's message again, expected right after f.seq-1.
// It reports whether it was stored there; an error when it was refused
// (another message took the place meanwhile, f's own perhaps: landed
// tells) or not answered.
func (l *Log) publishAgain(ctx context.Context, f *flight) (bool, error) {
	ack, err := l.opts.JS.PublishMsg(ctx, &nats.Msg{Subject: l.opts.Subject, Data: f.data},
		jetstream.WithExpectLastSequence(f.seq-1), jetstream.WithRetryAttempts(0))
	if err != nil {
		return false, err
	}
	if ack.Sequence != f.seq {
		return false, fmt.Errorf("%s: published again, stored at %d, want %d: %w", l.opts.Stream, ack.Sequence, f.seq, ErrFenced)
	}
	return true, nil
}
