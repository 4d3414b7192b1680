package cluster

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"

	"backupmon/jsonx"
)

// objects is one of the cluster's object stores: nats.go's store reads,
// lists and deletes its objects, and our Put and PutBytes write them.
// nats.go's store is a field, not embedded, so that none of its writes
// (Put, PutBytes, PutString, PutFile) can be called through an objects.
//
// nats.go's own Put (v1.55.0) can keep an object other than the one it
// was given. It sends a chunk answered "no responders" (its stream between
// leaders) again 250 ms later, after the chunks sent since, and from the
// buffer it has read the next chunk into by then. And it sends the
// object's info along with the chunks, so that a write that fails can
// leave an object whose chunks it purges. Ours sends each chunk once, from
// a buffer of its own, fails on a chunk not stored after the one before,
// and sends the object's info once every chunk is stored: an object is
// listed whole or not at all.
type objects struct {
	read   jetstream.ObjectStore // nats.go's; only its reads and Delete
	js     jetstream.JetStream   // made by objectJS
	stream jetstream.Stream      // the store's stream, for purges
	bucket string
	wait   time.Duration // stallWait; shorter in tests
	retry  time.Duration // purgeRetry; shorter in tests
	logger *slog.Logger
}

// objectJS returns the JetStream a node (or an import) opens its object
// stores from. Its default timeout, stallWait, bounds the store's requests
// made without a deadline; its asynchronous publishes, a write's chunks,
// give up after stallWait too. Each write bounds its own chunks in flight
// (putWindow); the JetStream's bound is set past what every shard's write
// and many e-mails' at once hold, since a publish that waits 200 ms for a
// free place under it fails.
func objectJS(nc *nats.Conn) (jetstream.JetStream, error) {
	return jetstream.New(nc,
		jetstream.WithDefaultTimeout(stallWait),
		jetstream.WithPublishAsyncTimeout(stallWait),
		jetstream.WithPublishAsyncMaxPending(2*MaxShards*putWindow))
}

// openObjects opens the object store bucket through js (made by
// objectJS); an error when it does not exist or does not answer.
func openObjects(ctx context.Context, js jetstream.JetStream, bucket string, logger *slog.Logger) (*objects, error) {
	store, err := js.ObjectStore(ctx, bucket)
	if err != nil {
		return nil, fmt.Errorf("open object store %s: %w", bucket, err)
	}
	stream, err := js.Stream(ctx, "OBJ_"+bucket)
	if err != nil {
		return nil, fmt.Errorf("open object store %s's stream: %w", bucket, err)
	}
	return &objects{read: store, js: js, stream: stream, bucket: bucket, wait: stallWait, retry: purgeRetry, logger: logger}, nil
}

// Get returns a reader of the object name; nats.go's Get, whose errors
// it returns (jetstream.ErrObjectNotFound when there is none).
func (o *objects) Get(ctx context.Context, name string, opts ...jetstream.GetObjectOpt) (jetstream.ObjectResult, error) {
	return o.read.Get(ctx, name, opts...)
}

// GetBytes returns the bytes of the object name; nats.go's GetBytes.
func (o *objects) GetBytes(ctx context.Context, name string, opts ...jetstream.GetObjectOpt) ([]byte, error) {
	return o.read.GetBytes(ctx, name, opts...)
}

// GetInfo returns the info of the object name; nats.go's GetInfo.
func (o *objects) GetInfo(ctx context.Context, name string, opts ...jetstream.GetObjectInfoOpt) (*jetstream.ObjectInfo, error) {
	return o.read.GetInfo(ctx, name, opts...)
}

// List returns the info of the store's objects; nats.go's List
// (jetstream.ErrNoObjectsFound when there are none).
func (o *objects) List(ctx context.Context, opts ...jetstream.ListObjectsOpt) ([]*jetstream.ObjectInfo, error) {
	return o.read.List(ctx, opts...)
}

// Delete purges the chunks of the object name and marks it deleted;
// nats.go's Delete.
func (o *objects) Delete(ctx context.Context, name string) error {
	return o.read.Delete(ctx, name)
}

// chunkSize is the size of an object's chunks, as nats.go's default.
const chunkSize = 128 << 10

// putWindow is how many chunks a write has unacknowledged at a time: 4 MiB,
// as fast as nats.go's Put sending them all at once on a 32 MiB object
// (bench/RESULTS.md), and few enough that a chunk waits for a bounded
// number before it, whatever the object's size (nats.go's last chunks
// waited behind the whole object).
const putWindow = 32

// Put writes r's bytes as the object meta.Name, replacing an object of
// that name, in the layout of nats.go's object store (NATS ADR-20), which
// reads it: the chunks on $O.<bucket>.C.<nuid>, then the object's info,
// rolled up, on $O.<bucket>.M.<name in base64url>. It fails when ctx ends,
// when a chunk is not acknowledged within o.wait of the write's waiting
// for it, or is stored before the one sent ahead of it. A write that fails
// before sending the info purges its chunks; one whose info may have been
// stored leaves them.
func (o *objects) Put(ctx context.Context, meta jetstream.ObjectMeta, r io.Reader) (*jetstream.ObjectInfo, error) {
	if meta.Name == "" || meta.Opts != nil {
		return nil, fmt.Errorf("put %s in %s: %w: a name and no options", meta.Name, o.bucket, jetstream.ErrBadObjectMeta)
	}
	old, err := o.GetInfo(ctx, meta.Name, jetstream.GetObjectInfoShowDeleted())
	if err != nil && !errors.Is(err, jetstream.ErrObjectNotFound) {
		return nil, fmt.Errorf("put %s in %s: %w", meta.Name, o.bucket, err)
	}
	info := &jetstream.ObjectInfo{ObjectMeta: meta, Bucket: o.bucket, NUID: nuid.Next()}
	info.Opts = &jetstream.ObjectMetaOptions{ChunkSize: chunkSize}
	chunks := o.chunks(info.NUID)
	if err := o.putChunks(ctx, chunks, r, info); err != nil {
		return nil, fmt.Errorf("put %s in %s: %w", meta.Name, o.bucket, err)
	}
	data, err := jsonx.Marshal(info)
	if err != nil {
		o.purgeLater(chunks, nil)
		return nil, fmt.Errorf("put %s in %s: %w", meta.Name, o.bucket, err)
	}
	m := nats.NewMsg(fmt.Sprintf("$O.%s.M.%s", o.bucket, base64.URLEncoding.EncodeToString([]byte(meta.Name))))
	m.Header.Set(jetstream.MsgRollup, jetstream.MsgRollupSubject)
	m.Data = data
	mctx, cancel := context.WithTimeout(ctx, o.wait)
	defer cancel()
	if _, err := o.js.PublishMsg(mctx, m); err != nil {
		return nil, fmt.Errorf("put %s in %s: its info: %w", meta.Name, o.bucket, err)
	}
	if old != nil && !old.Deleted && old.NUID != "" {
		if err := o.stream.Purge(ctx, jetstream.WithPurgeSubject(o.chunks(old.NUID))); err != nil {
			o.logger.Warn("object store: the chunks of a replaced object are left", "bucket", o.bucket, "object", meta.Name, "err", err)
		}
	}
	return info, nil
}

// chunks returns the subject of the chunks of the object nuid names.
func (o *objects) chunks(nuid string) string { return fmt.Sprintf("$O.%s.C.%s", o.bucket, nuid) }

// PutBytes writes data as the object name, as Put does, and tries again
// twice, 250 ms apart, when nothing answered for the store's stream (a
// stream between leaders), as nats.go does for each message.
func (o *objects) PutBytes(ctx context.Context, name string, data []byte) (*jetstream.ObjectInfo, error) {
	for try := 0; ; try++ {
		info, err := o.Put(ctx, jetstream.ObjectMeta{Name: name}, bytes.NewReader(data))
		if try == 2 || !(errors.Is(err, nats.ErrNoResponders) || errors.Is(err, jetstream.ErrNoStreamResponse)) {
			return info, err
		}
		select {
		case <-time.After(250 * time.Millisecond):
		case <-ctx.Done():
			return nil, err
		}
	}
}

// putChunks sends r's bytes on the subject chunks, at most putWindow of
// them unacknowledged, and sets info's size, chunk count and digest. On
// failure it purges what it sent, once the chunks still in flight have
// settled.
func (o *objects) putChunks(ctx context.Context, chunks string, r io.Reader, info *jetstream.ObjectInfo) error {
	h := sha256.New()
	var (
		flight []jetstream.PubAckFuture // oldest first
		last   uint64                   // the sequence of the last chunk acknowledged
	)
	fail := func(err error) error {
		o.purgeLater(chunks, flight)
		return err
	}
	for {
		buf := make([]byte, chunkSize) // nats.go keeps the message until its acknowledgement
		n, rerr := io.ReadFull(r, buf)
		if n > 0 {
			if len(flight) == putWindow {
				err := o.acked(ctx, flight[0], &last)
				flight = flight[1:] // answered, or waited for
				if err != nil {
					return fail(err)
				}
			}
			if err := ctx.Err(); err != nil {
				return fail(err)
			}
			m := nats.NewMsg(chunks)
			m.Data = buf[:n]
			f, err := o.js.PublishMsgAsync(m, jetstream.WithRetryAttempts(0))
			if err != nil {
				return fail(fmt.Errorf("chunk %d: %w", info.Chunks, err))
			}
			flight = append(flight, f)
			h.Write(m.Data)
			info.Size += uint64(n)
			info.Chunks++
		}
		if rerr == io.EOF || rerr == io.ErrUnexpectedEOF {
			break
		}
		if rerr != nil {
			return fail(rerr)
		}
	}
	for len(flight) > 0 {
		err := o.acked(ctx, flight[0], &last)
		flight = flight[1:]
		if err != nil {
			return fail(err)
		}
	}
	info.Digest = jetstream.GetObjectDigestValue(h)
	return nil
}

// acked waits up to o.wait for f's acknowledgement, and checks that the
// stream stored it after the chunk before (sequence *last), which it then
// moves on.
func (o *objects) acked(ctx context.Context, f jetstream.PubAckFuture, last *uint64) error {
	ack, err := o.answer(ctx, f)
	if err != nil {
		return err
	}
	if ack.Stream != o.stream.CachedInfo().Config.Name || ack.Sequence <= *last {
		return fmt.Errorf("a chunk stored out of order: %s at %d, after %d", ack.Stream, ack.Sequence, *last)
	}
	*last = ack.Sequence
	return nil
}

// answer waits up to o.wait for f's acknowledgement, or until ctx ends.
func (o *objects) answer(ctx context.Context, f jetstream.PubAckFuture) (*jetstream.PubAck, error) {
	t := time.NewTimer(o.wait)
	defer t.Stop()
	select {
	case ack := <-f.Ok():
		return ack, nil
	case err := <-f.Err():
		return nil, fmt.Errorf("a chunk not stored: %w", err)
	case <-t.C:
		return nil, fmt.Errorf("a chunk not acknowledged within %v", o.wait)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// purgeLater purges the chunks of a failed write in the background, once
// those in flight have been answered or given up (each within o.wait),
// so that none is stored after the purge. A purge that fails (the store
// without its quorum, as when the write failed) is tried again every
// o.retry, purgeTries times in all; then the chunks are left, listed by
// no object, and logged.
func (o *objects) purgeLater(chunks string, flight []jetstream.PubAckFuture) {
	go func() {
		for _, f := range flight {
			o.answer(context.Background(), f)
		}
		var err error
		for try := 0; try < purgeTries; try++ {
			if try > 0 {
				time.Sleep(o.retry)
			}
			ctx, cancel := context.WithTimeout(context.Background(), o.wait)
			err = o.stream.Purge(ctx, jetstream.WithPurgeSubject(chunks))
			cancel()
			if err == nil || errors.Is(err, nats.ErrConnectionClosed) {
				break
			}
		}
		if err != nil {
			o.logger.Warn("object store: the chunks of a failed write are left", "bucket", o.bucket, "subject", chunks, "err", err)
		}
	}()
}

// A failed write's purge is tried purgeTries times, purgeRetry apart: for
// 10 minutes at least, as long as a snapshot's write may take.
const (
	purgeTries = 20
	purgeRetry = 30 * time.Second
)
