package transport_test

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"time"

	"backupmon/engine"
	"backupmon/internal/testserver"
	"backupmon/transport"
)

// TestAdminBackup: GET /admin/v1/backup answers the engine's backup as a
// download, and a prepared backup that fails (a cluster's shard without an
// owner) answers 503 UNAVAILABLE with its reason and Retry-After before
// any byte of a file.
func TestAdminBackup(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	ws := s.NewWorkspace(map[string]any{"name": "Acme IT", "plan": "pro"})
	r := s.Admin("GET", "/backup", nil)
	for h, want := range map[string]string{"Content-Type": "application/octet-stream", "Content-Disposition": `attachment; filename="backupmon.backup"`, "Cache-Control": "no-store"} {
		if got := r.Header.Get(h); got != want {
			t.Errorf("%s: %q, want %q", h, got, want)
		}
	}
	var ids []string
	info, err := engine.ReadBackup(bytes.NewReader(r.Body), engine.BackupReader{Workspace: func(w engine.BackupWorkspace) error {
		ids = append(ids, w.ID)
		return nil
	}})
	if r.Status != 200 || err != nil || len(ids) != 1 || ids[0] != ws || info.Workspaces != 1 {
		t.Fatalf("GET /admin/v1/backup: %d, %v, %v", r.Status, ids, err)
	}

	// Counted, with the time and size of the last one sent whole.
	if got := s.Metric(`backupmon_backups_total{outcome="sent"}`); got != 1 {
		t.Errorf("backups sent: %v, want 1", got)
	}
	if got := s.Metric("backupmon_backup_last_sent_bytes"); got != float64(len(r.Body)) {
		t.Errorf("the last backup's size: %v, want %d", got, len(r.Body))
	}
	if got := s.Metric("backupmon_backup_last_sent_timestamp_seconds"); got < float64(time.Now().Add(-time.Minute).Unix()) {
		t.Errorf("the last backup's time: %v", got)
	}

	refused := testserver.Start(t, testserver.Options{Configure: func(cfg *transport.Config, _ *engine.Engine) {
		cfg.Backup = func() (func(io.Writer) error, error) {
			return nil, errors.New("no node serves shard 1 at the moment (a node is taking it over); retry shortly")
		}
	}})
	r = refused.Admin("GET", "/backup", nil)
	want := `{"error":{"code":"UNAVAILABLE","message":"no node serves shard 1 at the moment (a node is taking it over); retry shortly"}}`
	if r.Status != 503 || string(r.Body) != want || r.Header.Get("Retry-After") != "30" || r.Header.Get("Content-Type") != "application/json; charset=utf-8" {
		t.Errorf("a backup that cannot be prepared: %d %q %s (Retry-After %q)", r.Status, r.Header.Get("Content-Type"), r.Body, r.Header.Get("Retry-After"))
	}
	if got := refused.Metric(`backupmon_backups_total{outcome="refused"}`); got != 1 {
		t.Errorf("backups refused: %v, want 1", got)
	}
	if got := refused.Metric("backupmon_backup_last_sent_timestamp_seconds"); got != 0 {
		t.Errorf("the last backup's time after none was sent: %v, want 0", got)
	}

	// One that fails on the way ends without its trailer, and is counted so.
	cut := testserver.Start(t, testserver.Options{Configure: func(cfg *transport.Config, _ *engine.Engine) {
		cfg.Backup = func() (func(io.Writer) error, error) {
			return func(w io.Writer) error {
				w.Write([]byte("BMSNAP01"))
				return errors.New("shard 0: the store failed")
			}, nil
		}
	}})
	r = cut.Admin("GET", "/backup", nil)
	if _, err := engine.ReadBackup(bytes.NewReader(r.Body), engine.BackupReader{}); r.Status != 200 || !errors.Is(err, engine.ErrBadBackup) {
		t.Errorf("a backup cut short: %d, %v", r.Status, err)
	}
	if got := cut.Metric(`backupmon_backups_total{outcome="cut_short"}`); got != 1 {
		t.Errorf("backups cut short: %v, want 1", got)
	}
}
