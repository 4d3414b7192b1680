package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"backupmon/cluster"
	"backupmon/engine"
	"backupmon/mailstore"
	"backupmon/state"
)

// clusterImport runs `backupmon cluster import`: it reads a single node's
// data directory (read-only: the directory is left as it was), or a backup
// file (backupmon admin backup), and moves every workspace into a running
// cluster, each to the shard its id hashes to, with the directory entries
// that let the keys, session cookies and ingest addresses made before keep
// working, and the raw e-mails of unparsed entries. Run it with the single
// node stopped; running it again skips the workspaces already moved.
func clusterImport(args []string, out, errOut io.Writer) int {
	fs := flag.NewFlagSet("cluster import", flag.ContinueOnError)
	fs.SetOutput(errOut)
	data := fs.String("data", "./data", "the single node's data directory (stop that node first)")
	backup := fs.String("backup", "", "a backup file to import instead of a data directory (backupmon admin backup --out; a cluster's backup moves into a cluster of another shard count)")
	replicas := fs.Int("cluster-replicas", 3, "copies of the import's transit store: the cluster's (3, or 1 for development)")
	conn := clusterConnFlags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	dataSet := false
	fs.Visit(func(f *flag.Flag) { dataSet = dataSet || f.Name == "data" })
	if dataSet && *backup != "" {
		fmt.Fprintln(errOut, "backupmon cluster import: give --data or --backup, not both")
		return 2
	}
	urls, creds, err := conn.credentials()
	if err != nil {
		fmt.Fprintln(errOut, "backupmon cluster import:", err)
		return 2
	}
	connect := func() (*cluster.Importer, error) {
		return cluster.NewImporter(urls, creds, *replicas)
	}
	if *backup != "" {
		return importBackup(*backup, connect, out, errOut)
	}
	if _, err := engine.CheckFormat(*data); err != nil {
		fmt.Fprintln(errOut, "backupmon cluster import:", err)
		return 1
	}
	logger := slog.New(slog.NewTextHandler(errOut, &slog.HandlerOptions{Level: slog.LevelWarn}))
	eng, err := engine.Open(engine.Options{Dir: *data, Clock: engine.NewDevClock(time.Now()), Logger: logger,
		ReadOnly: true, SnapshotEvery: 1 << 62, SnapshotInterval: 1 << 62})
	if err != nil {
		fmt.Fprintln(errOut, "backupmon cluster import:", err)
		return 1
	}
	defer eng.Abandon()
	im, err := connect()
	if err != nil {
		fmt.Fprintln(errOut, "backupmon cluster import:", err)
		return 1
	}
	defer im.Close()
	// The kept raw e-mails, read in place (mailstore.Open would make the
	// directory when there is none).
	var mail *mailstore.Store
	if _, err := os.Stat(filepath.Join(*data, "mail")); err == nil {
		if mail, err = mailstore.Open(filepath.Join(*data, "mail")); err != nil {
			fmt.Fprintln(errOut, "backupmon cluster import:", err)
			return 1
		}
	}
	var m mover
	for _, w := range eng.Workspaces() {
		blob, err := eng.ExportWorkspace(w.ID)
		if err == nil {
			var routes engine.Routes
			if routes, err = eng.WorkspaceRoutes(w.ID); err == nil && mail != nil {
				err = importRawMails(im, mail, routes.RawRefs)
			}
			if err == nil {
				err = m.move(im, w.ID, blob, state.SnapshotVersion, routes, out)
			}
		}
		if err != nil {
			return m.fail(err, errOut)
		}
	}
	fmt.Fprintf(out, "%d workspaces moved, %d already in the cluster; %s is unchanged\n", m.moved, m.skipped, *data)
	return 0
}

// importBackup moves the workspaces and raw e-mails of the backup in path
// into the cluster connect reaches, once the whole file has read back. It
// returns the exit code.
func importBackup(path string, connect func() (*cluster.Importer, error), out, errOut io.Writer) int {
	if _, err := checkBackupFile(path); err != nil {
		fmt.Fprintf(errOut, "backupmon cluster import: %s: %v (nothing was moved)\n", path, err)
		return 1
	}
	im, err := connect()
	if err != nil {
		fmt.Fprintln(errOut, "backupmon cluster import:", err)
		return 1
	}
	defer im.Close()
	f, err := os.Open(path)
	if err != nil {
		fmt.Fprintln(errOut, "backupmon cluster import:", err)
		return 1
	}
	defer f.Close()
	var m mover
	raws := 0
	if _, err := engine.ReadBackup(f, engine.BackupReader{
		Workspace: func(w engine.BackupWorkspace) error { return m.move(im, w.ID, w.Blob, w.Version, w.Routes, out) },
		RawMail: func(ref string, raw []byte) error {
			raws++
			return im.RawMail(ref, raw)
		},
	}); err != nil {
		return m.fail(err, errOut)
	}
	fmt.Fprintf(out, "%d workspaces moved, %d already in the cluster, %d kept e-mails; %s is unchanged\n", m.moved, m.skipped, raws, path)
	return 0
}

// mover moves workspaces into a cluster and counts them.
type mover struct{ moved, skipped int }

// fail says that the import stopped at err, and how far it got; it returns
// the exit code.
func (m *mover) fail(err error, errOut io.Writer) int {
	fmt.Fprintf(errOut, "backupmon cluster import: %v (%d moved so far; run it again to go on)\n", err, m.moved)
	return 1
}

// move moves one workspace (its encoding in layout version) and writes its
// routes in the cluster's directory, and says where it went.
func (m *mover) move(im *cluster.Importer, wsID string, blob []byte, version uint64, routes engine.Routes, out io.Writer) error {
	id, _ := engine.ParseID(wsID)
	already, err := im.Workspace(id, blob, version, routes)
	switch {
	case err != nil:
		return err
	case already:
		m.skipped++
	default:
		m.moved++
	}
	fmt.Fprintf(out, "workspace %s → shard %d\n", wsID, cluster.WorkspaceShard(id, im.Shards()))
	return nil
}

// importRawMails keeps the raw e-mails refs name in the cluster's store;
// one the single node no longer keeps is left out (its re-read answers 409
// there as it did here).
func importRawMails(im *cluster.Importer, mail *mailstore.Store, refs []string) error {
	for _, ref := range refs {
		raw, err := mail.Get(ref)
		if errors.Is(err, mailstore.ErrNotFound) {
			continue
		}
		if err == nil {
			err = im.RawMail(ref, raw)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
