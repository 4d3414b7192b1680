package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"backupmon/engine"
	"backupmon/jsonx"
)

// A cluster's backup (GET /admin/v1/backup on any node): the node asks
// every shard's owner to write its shard's backup into the object store
// bm_backup, then streams the parts, merged into one backup file, to the
// client, and deletes them. A part can be far larger than a NATS message,
// as an imported workspace can (importer.go), hence the store.

// backupStore holds the shards' parts of a backup on their way to the node
// that gathers them. Its objects expire after a day, so the parts of a
// backup whose node died before deleting them do not stay.
const backupStore = "bm_backup"

// backupStoreAge is how long a part stays in backupStore at most.
const backupStoreAge = 24 * time.Hour

// backupWait bounds how long a shard's owner takes to write its part.
const backupWait = 10 * time.Minute

// backupCall asks a shard's owner for its part of a backup.
type backupCall struct {
	Object string `json:"object"`
}

// backupAnswer is the owner's answer: what its part holds, or why there is
// none.
type backupAnswer struct {
	Workspaces int    `json:"workspaces"`
	RawMails   int    `json:"rawMails"`
	Version    uint64 `json:"version"`
	DevClock   int64  `json:"devClock,omitempty"`
	Error      string `json:"error,omitempty"`
}

// Backup prepares a backup of every shard (transport.Config.Backup): each
// shard's owner writes its part into the store, at once for all shards;
// the function returned streams the parts, merged, and deletes them. It
// returns an error, deleting what was written, when a shard has no owner
// now, an owner fails, or the shards' layouts differ (nodes of two builds,
// mid-upgrade).
func (n *Node) Backup() (func(w io.Writer) error, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	store, err := openObjects(ctx, n.objJS, backupStore, n.log)
	cancel()
	if err != nil {
		return nil, fmt.Errorf("the cluster's backup store does not answer: %w", err)
	}
	var id [8]byte
	rand.Read(id[:])
	run := hex.EncodeToString(id[:])
	names := make([]string, n.shards)
	answers := make([]backupAnswer, n.shards)
	errs := make([]error, n.shards)
	var wg sync.WaitGroup
	for s := range n.shards {
		names[s] = fmt.Sprintf("%s/s%03d", run, s)
		wg.Go(func() { answers[s], errs[s] = n.askBackup(s, names[s]) })
	}
	wg.Wait()
	drop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for _, name := range names {
			if err := store.Delete(ctx, name); err != nil && !errors.Is(err, jetstream.ErrObjectNotFound) {
				n.log.Warn("delete a backup's part (it expires within a day)", "object", name, "err", err)
			}
		}
	}
	for _, err := range errs {
		if err != nil {
			drop()
			return nil, err // the first shard's: one line for the 503's message
		}
	}
	for s, a := range answers {
		if a.Version != answers[0].Version {
			drop()
			return nil, fmt.Errorf("shard %d is of layout %d and shard 0 of %d: nodes of two builds run; finish the upgrade, then back up", s, a.Version, answers[0].Version)
		}
	}
	parts := make([]func() (io.ReadCloser, error), n.shards)
	for s := range parts {
		parts[s] = func() (io.ReadCloser, error) {
			return store.Get(context.Background(), names[s])
		}
	}
	return func(w io.Writer) error {
		defer drop()
		_, err := engine.MergeBackups(w, answers[0].Version, answers[0].DevClock, parts)
		return err
	}, nil
}

// askBackup asks the owner of shard to write its part of a backup as
// object, and returns its answer.
func (n *Node) askBackup(shard int, object string) (backupAnswer, error) {
	call, _ := jsonx.Marshal(backupCall{Object: object})
	msg, err := n.nc.Request(subject("backup", shard), call, backupWait)
	switch {
	case errors.Is(err, nats.ErrNoResponders):
		return backupAnswer{}, fmt.Errorf("no node serves shard %d at the moment (a node is taking it over); retry shortly", shard)
	case err != nil:
		return backupAnswer{}, fmt.Errorf("shard %d: its owner did not answer: %w", shard, err)
	case string(msg.Data) == string(notServing):
		return backupAnswer{}, fmt.Errorf("no node serves shard %d at the moment (a node is taking it over); retry shortly", shard)
	}
	var a backupAnswer
	if err := jsonx.Unmarshal(msg.Data, &a); err != nil {
		return backupAnswer{}, fmt.Errorf("shard %d: its owner's answer does not read: %w", shard, err)
	}
	if a.Error != "" {
		return backupAnswer{}, fmt.Errorf("shard %d: %s", shard, a.Error)
	}
	return a, nil
}

// onBackup writes the backup of a shard this node owns into the store, as
// the object the call names, and answers what it holds. It does not count
// among the shard's forwarded requests, which a hand-over waits for: a
// backup of a large shard takes long, and one under way when the shard
// moves fails (the engine closes under it) and is asked again.
func (n *Node) onBackup(h *hosted, m *nats.Msg) {
	var c backupCall
	if !h.serving.Load() || jsonx.Unmarshal(m.Data, &c) != nil {
		m.Respond(notServing)
		return
	}
	go func() {
		answer := n.writeBackupPart(h.eng, c.Object)
		if answer.Error != "" {
			n.log.Warn("a shard's part of a backup failed", "shard", h.shard, "err", answer.Error)
		}
		b, _ := jsonx.Marshal(answer)
		m.Respond(b)
	}()
}

// writeBackupPart writes eng's backup into the store as object.
func (n *Node) writeBackupPart(eng *engine.Engine, object string) backupAnswer {
	ctx, cancel := context.WithTimeout(context.Background(), backupWait)
	defer cancel()
	store, err := openObjects(ctx, n.objJS, backupStore, n.log)
	if err != nil {
		return backupAnswer{Error: "the backup store does not answer: " + err.Error()}
	}
	var info engine.BackupInfo
	pr, pw := io.Pipe()
	go func() {
		var err error
		info, err = eng.Backup(pw)
		pw.CloseWithError(err)
	}()
	if _, err := store.Put(ctx, jetstream.ObjectMeta{Name: object}, pr); err != nil {
		pr.CloseWithError(err)
		return backupAnswer{Error: "write its part: " + err.Error()}
	}
	return backupAnswer{Workspaces: info.Workspaces, RawMails: info.RawMails, Version: info.Version, DevClock: info.DevClock}
}
