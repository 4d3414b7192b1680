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
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"backupmon/natstest"
)

// testObjects makes the object store bucket on c, replicated on all its
// servers, and opens it as a node does.
func testObjects(t *testing.T, c *natstest.Cluster, bucket string) *objects {
	t.Helper()
	js, err := objectJS(c.Connect(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := js.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: bucket, Replicas: len(c.Servers), Storage: jetstream.FileStorage}); err != nil {
		t.Fatal(err)
	}
	o, err := openObjects(ctx, js, bucket, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	// A store just made may not take messages on every server yet (a
	// first write has been answered "no responders"), and Put does not
	// send a chunk again.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		_, err := o.PutBytes(ctx, "probe", []byte("x"))
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the new store takes no object for 10 s: %v", err)
		}
	}
	if err := o.Delete(ctx, "probe"); err != nil {
		t.Fatal(err)
	}
	return o
}

// chunkMsgs returns how many messages the store's stream holds on subjects
// matching filter.
func chunkMsgs(t *testing.T, o *objects, filter string) uint64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	info, err := o.stream.Info(ctx, jetstream.WithSubjectFilter(filter))
	if err != nil {
		t.Fatal(err)
	}
	var n uint64
	for _, c := range info.State.Subjects {
		n += c
	}
	return n
}

// TestObjectsPutIsReadByNatsGo: an object our Put wrote is nats.go's
// object, to the byte: its info (size, chunks, digest), its bytes, its
// listing; a second Put of the name replaces it and purges the first's
// chunks, and nats.go's Delete removes it whole.
func TestObjectsPutIsReadByNatsGo(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a NATS server")
	}
	o := testObjects(t, natstest.Start(t, 1), "objs")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, size := range []int{0, 1, chunkSize - 1, chunkSize, chunkSize + 1, (putWindow+3)*chunkSize + 5} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			name := fmt.Sprintf("o/%d", size)
			body := randomBytes(size)
			put, err := o.PutBytes(ctx, name, body)
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(body)
			wantDigest := "SHA-256=" + base64.URLEncoding.EncodeToString(sum[:])
			wantChunks := (size + chunkSize - 1) / chunkSize
			info, err := o.GetInfo(ctx, name)
			if err != nil {
				t.Fatal(err)
			}
			if info.Size != uint64(size) || info.Chunks != uint32(wantChunks) || info.Digest != wantDigest || info.NUID != put.NUID || info.Bucket != "objs" || info.Opts == nil || info.Opts.ChunkSize != chunkSize {
				t.Fatalf("nats.go reads its info as %+v; want size %d, %d chunks, digest %s, nuid %s", info, size, wantChunks, wantDigest, put.NUID)
			}
			if n := chunkMsgs(t, o, "$O.objs.C."+put.NUID); n != uint64(wantChunks) {
				t.Fatalf("%d chunk messages stored, want %d", n, wantChunks)
			}
			got, err := o.GetBytes(ctx, name)
			if err != nil || !bytes.Equal(got, body) {
				t.Fatalf("nats.go reads %d bytes, %v; want the %d put", len(got), err, size)
			}
			infos, err := o.List(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(fmt.Sprint(names(infos)), name) {
				t.Fatalf("nats.go lists %v, without %s", names(infos), name)
			}
		})
	}

	first, err := o.PutBytes(ctx, "again", randomBytes(3*chunkSize))
	if err != nil {
		t.Fatal(err)
	}
	second := randomBytes(2*chunkSize + 7)
	if _, err := o.PutBytes(ctx, "again", second); err != nil {
		t.Fatal(err)
	}
	if got, err := o.GetBytes(ctx, "again"); err != nil || !bytes.Equal(got, second) {
		t.Fatalf("after a second put, nats.go reads %d bytes, %v; want the second's %d", len(got), err, len(second))
	}
	if n := chunkMsgs(t, o, "$O.objs.C."+first.NUID); n != 0 {
		t.Fatalf("the replaced object's %d chunks are left, want them purged", n)
	}
	if err := o.Delete(ctx, "again"); err != nil {
		t.Fatal(err)
	}
	if _, err := o.GetBytes(ctx, "again"); !errors.Is(err, jetstream.ErrObjectNotFound) {
		t.Fatalf("read after nats.go's delete: %v; want ErrObjectNotFound", err)
	}

	if _, err := o.Put(ctx, jetstream.ObjectMeta{Name: "sized", Opts: &jetstream.ObjectMetaOptions{ChunkSize: 1024}}, bytes.NewReader([]byte("x"))); !errors.Is(err, jetstream.ErrBadObjectMeta) {
		t.Fatalf("put with options: %v; want ErrBadObjectMeta", err)
	}
}

func names(infos []*jetstream.ObjectInfo) []string {
	var s []string
	for _, i := range infos {
		s = append(s, i.Name)
	}
	return s
}

// TestObjectsPutListsWholeObjectsOnly: while the store's stream changes
// leader again and again, every object listed reads back whole, and every
// Put that succeeded is listed. (A Put that failed may be listed too: the
// acknowledgement of an info that was stored can be lost.) nats.go's own
// Put failed this in 5 runs of 6 of an earlier form of this test: objects
// whose Put had succeeded read back "corrupt object, digests do not
// match", and a Put that had failed left a listed object with no chunks.
// To see it, call o.read.PutBytes (nats.go's) in the loop below.
func TestObjectsPutListsWholeObjectsOnly(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three NATS servers")
	}
	c := natstest.Start(t, 3)
	o := testObjects(t, c, "objs")
	o.wait = 2 * time.Second
	nc := c.Connect(t)
	stop := make(chan struct{})
	stepped := make(chan int)
	go func() {
		n := 0
		defer func() { stepped <- n }()
		for {
			select {
			case <-stop:
				return
			case <-time.After(400 * time.Millisecond):
			}
			if _, err := nc.Request("$JS.API.STREAM.LEADER.STEPDOWN.OBJ_objs", nil, 2*time.Second); err == nil {
				n++
			}
		}
	}()
	var ok, failed int
	bodies := map[string][]byte{}
	var succeeded []string
	deadline := time.Now().Add(15 * time.Second)
	for i := 0; time.Now().Before(deadline) || ok == 0; i++ {
		if time.Now().After(deadline.Add(30 * time.Second)) {
			t.Fatal("no put succeeded in 45 s")
		}
		name := fmt.Sprintf("o/%d", i)
		body := randomBytes(3 << 20)
		bodies[name] = body
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_, err := o.PutBytes(ctx, name, body)
		cancel()
		if err != nil {
			failed++
			continue
		}
		ok++
		succeeded = append(succeeded, name)
	}
	close(stop)
	steps := <-stepped
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	infos, err := o.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	listed := names(infos)
	for _, name := range listed {
		if got, err := o.GetBytes(ctx, name); err != nil || !bytes.Equal(got, bodies[name]) {
			t.Errorf("%s reads back %d bytes, %v; want the %d put", name, len(got), err, len(bodies[name]))
		}
	}
	for _, name := range succeeded {
		if !slices.Contains(listed, name) {
			t.Errorf("%s put, but not listed", name)
		}
	}
	t.Logf("%d puts whole, %d failed, %d objects listed, under %d changes of leader", ok, failed, len(listed), steps)
}

// TestObjectsPutRefusesChunksOutOfOrder: a chunk the stream stored before
// the one sent ahead of it fails the write, before the object's info is
// sent: nats.go would read the chunks in the stream's order.
func TestObjectsPutRefusesChunksOutOfOrder(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a NATS server")
	}
	real := testObjects(t, natstest.Start(t, 1), "objs")
	js := &reorderJS{metaCounter: metaCounter{JetStream: real.js}}
	o := *real
	o.js = js
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := o.PutBytes(ctx, "swapped", randomBytes(3*chunkSize))
	if err == nil || !strings.Contains(err.Error(), "a chunk stored out of order") {
		t.Fatalf("put with two chunks stored out of order: %v; want it refused", err)
	}
	if js.metas.Load() != 0 {
		t.Fatal("the object's info was sent")
	}
	if _, err := o.GetInfo(ctx, "swapped"); !errors.Is(err, jetstream.ErrObjectNotFound) {
		t.Fatalf("info after the refused put: %v; want ErrObjectNotFound", err)
	}
	// The real store took every chunk; the failed write purges them.
	for deadline := time.Now().Add(10 * time.Second); chunkMsgs(t, &o, "$O.objs.C.>") != 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the refused write's chunks are not purged 10 s later")
		}
	}
	// And the same store, in order, takes it.
	if _, err := real.PutBytes(ctx, "swapped", randomBytes(3*chunkSize)); err != nil {
		t.Fatal(err)
	}
}

// reorderJS publishes through a real JetStream, but answers the first two
// chunks with each other's acknowledgements, as a stream that stored them
// out of order would; it counts the object infos sent.
type reorderJS struct {
	metaCounter
	sent []jetstream.PubAckFuture
}

func (r *reorderJS) PublishMsgAsync(m *nats.Msg, opts ...jetstream.PublishOpt) (jetstream.PubAckFuture, error) {
	f, err := r.JetStream.PublishMsgAsync(m, opts...)
	if err != nil {
		return nil, err
	}
	r.sent = append(r.sent, f)
	if i := len(r.sent) - 1; i < 2 {
		return answerOf{PubAckFuture: f, r: r, i: 1 - i}, nil
	}
	return f, nil
}

// answerOf answers with the outcome of chunk i's publish.
type answerOf struct {
	jetstream.PubAckFuture
	r *reorderJS
	i int
}

func (a answerOf) Ok() <-chan *jetstream.PubAck { return a.r.sent[a.i].Ok() }
func (a answerOf) Err() <-chan error            { return a.r.sent[a.i].Err() }

// metaCounter publishes through a JetStream, counting the object infos
// sent.
type metaCounter struct {
	jetstream.JetStream
	metas atomic.Int32
}

func (c *metaCounter) PublishMsg(ctx context.Context, m *nats.Msg, opts ...jetstream.PublishOpt) (*jetstream.PubAck, error) {
	if strings.HasPrefix(m.Subject, "$O.objs.M.") {
		c.metas.Add(1)
	}
	return c.JetStream.PublishMsg(ctx, m, opts...)
}

// silentJS sends no chunk and answers none, as a stream whose leader died
// with them, its members still listening; it closes sending at the first.
type silentJS struct {
	metaCounter
	once    sync.Once
	sending chan struct{}
}

func (s *silentJS) PublishMsgAsync(*nats.Msg, ...jetstream.PublishOpt) (jetstream.PubAckFuture, error) {
	s.once.Do(func() { close(s.sending) })
	return silent{}, nil
}

type silent struct{ jetstream.PubAckFuture }

func (silent) Ok() <-chan *jetstream.PubAck { return nil }
func (silent) Err() <-chan error            { return nil }

// silentObjects returns a store on one NATS server whose chunks are never
// acknowledged, each waited for up to wait, and its JetStream.
func silentObjects(t *testing.T, wait time.Duration) (*objects, *silentJS) {
	t.Helper()
	return silenced(testObjects(t, natstest.Start(t, 1), "objs"), wait)
}

// silenced returns a copy of o whose chunks are never acknowledged, each
// waited for up to wait, and its JetStream.
func silenced(o *objects, wait time.Duration) (*objects, *silentJS) {
	s := *o
	js := &silentJS{metaCounter: metaCounter{JetStream: o.js}, sending: make(chan struct{})}
	s.js, s.wait = js, wait
	return &s, js
}

// TestObjectsPutGivesUpOnUnansweredChunks: a chunk whose acknowledgement
// does not come fails the write once the wait for it has passed, whatever
// the write's own deadline, and the object's info is not sent.
func TestObjectsPutGivesUpOnUnansweredChunks(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a NATS server")
	}
	o, js := silentObjects(t, 500*time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	_, err := o.PutBytes(ctx, "unanswered", randomBytes(3*putWindow*chunkSize))
	took := time.Since(start)
	if err == nil || !strings.Contains(err.Error(), "put unanswered in objs: a chunk not acknowledged within 500ms") {
		t.Fatalf("put with no chunk answered: %v; want it given up", err)
	}
	if took > 2*time.Second {
		t.Errorf("gave up after %v, want about 500 ms: each chunk's wait is bounded, not the window's", took)
	}
	if js.metas.Load() != 0 {
		t.Fatal("the object's info was sent")
	}
}

// TestObjectsPutPurgesItsChunksOnceTheQuorumIsBack: a write that failed
// when its store lost its quorum purges the chunks it had stored once the
// quorum is back; the purge right after the failure fails too.
func TestObjectsPutPurgesItsChunksOnceTheQuorumIsBack(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three NATS servers")
	}
	c := natstest.Start(t, 3)
	admin := testObjects(t, c, "objs")
	survivor := c.Survivor(t, admin.js, "OBJ_objs")
	js, err := objectJS(c.ConnectTo(t, c.Servers[survivor]))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	o, err := openObjects(ctx, js, "objs", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	o.wait, o.retry = 2*time.Second, time.Second // a minute of purges
	halfway, lost := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		r := io.MultiReader(bytes.NewReader(randomBytes(8*chunkSize)), waitReader{halfway, lost}, bytes.NewReader(randomBytes(chunkSize)))
		_, err := o.Put(ctx, jetstream.ObjectMeta{Name: "cut"}, r)
		done <- err
	}()
	select {
	case <-halfway:
	case err := <-done:
		t.Fatalf("the write ended before the quorum went: %v", err)
	}
	settle(t, admin.js, "OBJ_objs")
	c.LoseQuorum(t, admin.js, "OBJ_objs")
	close(lost)
	if err := <-done; err == nil {
		t.Fatal("the write without a quorum succeeded")
	}
	time.Sleep(time.Second) // a few purges fail
	c.Restart(t, (survivor+1)%3, (survivor+2)%3)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		ictx, icancel := context.WithTimeout(ctx, 5*time.Second)
		info, err := admin.stream.Info(ictx, jetstream.WithSubjectFilter("$O.objs.C.>"))
		icancel()
		if err == nil && len(info.State.Subjects) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the failed write's chunks are left a minute after the quorum came back: %v", err)
		}
	}
	if _, err := admin.GetInfo(ctx, "cut"); !errors.Is(err, jetstream.ErrObjectNotFound) {
		t.Fatalf("info of the failed write: %v; want ErrObjectNotFound", err)
	}
}

// waitReader closes halfway at its first read, and ends once lost is
// closed.
type waitReader struct{ halfway, lost chan struct{} }

func (w waitReader) Read([]byte) (int, error) {
	select {
	case <-w.halfway:
	default:
		close(w.halfway)
	}
	<-w.lost
	return 0, io.EOF
}
