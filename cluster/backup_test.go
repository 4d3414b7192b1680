package cluster

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"backupmon/engine"
	"backupmon/natstest"
)

// TestBackupGathersEveryShard: a node's backup asks the owner of every
// shard for its part, through the object store, and leaves nothing there;
// while a shard has no owner, it refuses with a message saying to retry,
// and writes nothing.
func TestBackupGathersEveryShard(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three NATS servers")
	}
	c := natstest.Start(t, 3)
	a, b := testNode(t, c, "a"), testNode(t, c, "b")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	if _, err := b.Backup(); err == nil || err.Error() != "no node serves shard 0 at the moment (a node is taking it over); retry shortly" {
		t.Fatalf("a backup while no node serves the shard: %v", err)
	}
	if !a.acquire(ctx, 0) || a.local(0) == nil {
		t.Fatal("a did not take the free shard")
	}
	ws, err := a.local(0).eng.CreateWorkspace(engine.WorkspaceInput{Name: engine.Some("Acme"), Plan: engine.Some("pro")})
	if err != nil {
		t.Fatal(err)
	}
	write, err := b.Backup() // b owns nothing: a writes the part
	if err != nil {
		t.Fatal(err)
	}
	var file bytes.Buffer
	if err := write(&file); err != nil {
		t.Fatal(err)
	}
	var names []string
	info, err := engine.ReadBackup(&file, engine.BackupReader{Workspace: func(w engine.BackupWorkspace) error {
		names = append(names, w.ID+" "+w.Name)
		return nil
	}})
	if err != nil || len(names) != 1 || names[0] != ws.ID+" Acme" || info.Workspaces != 1 {
		t.Fatalf("the backup holds %v (%+v, %v), want %s Acme", names, info, err, ws.ID)
	}
	objects, err := b.js.ObjectStore(ctx, backupStore)
	if err != nil {
		t.Fatal(err)
	}
	if list, err := objects.List(ctx); err != jetstream.ErrNoObjectsFound {
		t.Errorf("parts left in %s: %d (%v)", backupStore, len(list), err)
	}
}
