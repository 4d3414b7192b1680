package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"backupmon/engine"
	"backupmon/jsonx"
)

// importStore holds each workspace on its way in (`backupmon cluster
// import`): the importer puts it there, the owner of its shard reads it.
const importStore = "bm_import"

// importCall asks a shard's owner to take in a workspace.
type importCall struct {
	Object  string `json:"object"`
	Version uint64 `json:"version"`
}

// Importer moves a single node's workspaces into a running cluster, each
// to the shard its id hashes to, and names in the directory the shard of
// the secrets they hold (keys, session cookies, ingest tokens), which
// carry none.
type Importer struct {
	nc      *nats.Conn
	dir     jetstream.KeyValue
	objects *objects
	mail    *objects // the cluster's kept raw e-mails
	shards  int
}

// ErrNotSetUp is returned by NewImporter for a cluster no node set up yet.
var ErrNotSetUp = errors.New("the cluster is not set up: start its nodes first")

// NewImporter connects to the cluster at urls (comma-separated), presenting
// creds; it returns ErrNotSetUp (wrapped) for a cluster no node has set up.
func NewImporter(urls string, creds Credentials, replicas int) (*Importer, error) {
	nc, err := nats.Connect(urls, append(creds.natsOptions(), nats.Name("backupmon import"), nats.IgnoreDiscoveredServers())...)
	if err != nil {
		return nil, connectError(urls, err)
	}
	im := &Importer{nc: nc}
	if err := im.open(replicas); err != nil {
		nc.Close()
		return nil, err
	}
	return im, nil
}

func (im *Importer) open(replicas int) error {
	js, err := jetstream.New(im.nc)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if im.shards, err = setUpShards(ctx, js); err != nil {
		return err
	}
	if im.dir, err = js.KeyValue(ctx, directoryBucket); err != nil {
		return err
	}
	ojs, err := objectJS(im.nc)
	if err != nil {
		return err
	}
	if im.mail, err = openObjects(ctx, ojs, mailStore, slog.Default()); err != nil {
		return err
	}
	if _, err := js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: importStore, Replicas: replicas, Storage: jetstream.FileStorage}); err != nil {
		return err
	}
	im.objects, err = openObjects(ctx, ojs, importStore, slog.Default())
	return err
}

// setUpShards returns the shard count of a cluster set up already, or an
// error wrapping ErrNotSetUp.
func setUpShards(ctx context.Context, js jetstream.JetStream) (int, error) {
	settings, err := js.KeyValue(ctx, clusterBucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return 0, ErrNotSetUp
	}
	if err != nil {
		return 0, err
	}
	e, err := settings.Get(ctx, "shards")
	if err != nil {
		return 0, fmt.Errorf("%w (%v)", ErrNotSetUp, err)
	}
	n, err := strconv.Atoi(string(e.Value()))
	if err != nil || n < 1 {
		return 0, fmt.Errorf("the cluster's shard count %q is not one", e.Value())
	}
	return n, nil
}

// RawMail keeps a raw e-mail an imported workspace's unparsed entry names
// in the cluster's store, under the same reference, so that it can be
// re-read there; call it before the workspace moves in. It returns an
// error when the store did not acknowledge it.
func (im *Importer) RawMail(ref string, raw []byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := im.mail.PutBytes(ctx, ref, raw); err != nil {
		return fmt.Errorf("keep e-mail %s: %w", ref, err)
	}
	return nil
}

// Shards returns the cluster's shard count.
func (im *Importer) Shards() int { return im.shards }

// Close disconnects.
func (im *Importer) Close() { im.nc.Close() }

// Workspace moves one workspace in (blob: engine.ExportWorkspace's, in
// layout version) and writes its routes in the directory. It reports
// whether the cluster held the workspace already (an import run again),
// and returns an error when no owner of its shard took it within two
// minutes, or the owner refused it.
func (im *Importer) Workspace(id engine.ID, blob []byte, version uint64, routes engine.Routes) (already bool, err error) {
	shard := WorkspaceShard(id, im.shards)
	name := "w/" + id.String()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := im.objects.PutBytes(ctx, name, blob); err != nil {
		return false, fmt.Errorf("workspace %s: keep it on its way: %w", id, err)
	}
	defer im.objects.Delete(context.Background(), name)
	call, _ := jsonx.Marshal(importCall{Object: name, Version: version})
	var answer string
	for {
		msg, err := im.nc.RequestWithContext(ctx, subject("import", shard), call)
		if err == nil && string(msg.Data) != string(notServing) {
			answer = string(msg.Data)
			break
		}
		if ctx.Err() != nil {
			return false, fmt.Errorf("workspace %s: no node serves shard %d (%v)", id, shard, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
	switch {
	case answer == "ok":
	case strings.HasPrefix(answer, "exists"):
		already = true
	default:
		return false, fmt.Errorf("workspace %s: shard %d refused it: %s", id, shard, answer)
	}
	value := []byte(strconv.Itoa(shard))
	for _, h := range append(routes.KeyHashes, routes.SessionHashes...) {
		if _, err := im.dir.Put(ctx, HashEntry(h), value); err != nil {
			return already, fmt.Errorf("workspace %s: directory: %w", id, err)
		}
	}
	for _, t := range routes.IngestTokens {
		if _, err := im.dir.Put(ctx, TokenEntry(t), value); err != nil {
			return already, fmt.Errorf("workspace %s: directory: %w", id, err)
		}
	}
	return already, nil
}

// onImport takes in a workspace an importer sent to a shard this node
// owns; it answers "ok", "exists" (held already) or the refusal.
func (n *Node) onImport(h *hosted, m *nats.Msg) {
	var c importCall
	if !h.serving.Load() || jsonx.Unmarshal(m.Data, &c) != nil {
		m.Respond(notServing)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	store, err := n.js.ObjectStore(ctx, importStore)
	if err != nil {
		m.Respond([]byte("read the workspace: " + err.Error()))
		return
	}
	blob, err := store.GetBytes(ctx, c.Object)
	if err != nil {
		m.Respond([]byte("read the workspace: " + err.Error()))
		return
	}
	var ee *engine.Error
	switch err := h.eng.ImportWorkspace(blob, c.Version); {
	case err == nil:
		m.Respond([]byte("ok"))
	case errors.As(err, &ee) && ee.Kind == engine.KindConflict && strings.HasSuffix(ee.Message, "exists already"):
		m.Respond([]byte("exists"))
	default:
		m.Respond([]byte(err.Error()))
	}
}
