package engine

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"backupmon/wal"
)

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// quietOptions are the options of a test engine in dir on clock: the log
// without fsync, nothing logged, and no snapshot unless a test takes one.
func quietOptions(dir string, clock Clock) Options {
	return Options{
		Dir: dir, Clock: clock, Logger: quietLogger(),
		WAL:           wal.Options{NoSync: true, Logger: quietLogger()},
		SnapshotEvery: 1 << 62, SnapshotInterval: 1000 * time.Hour,
	}
}

// monitoredJob makes a workspace (Acme, pro), a client and a job reporting
// every interval minutes with grace minutes of grace; it returns the ids
// of the workspace and the job.
func monitoredJob(t *testing.T, e *Engine, interval, grace int64) (string, string) {
	t.Helper()
	ws, err := e.CreateWorkspace(WorkspaceInput{Name: Some("Acme"), Plan: Some("pro")})
	check(t, "create workspace", err)
	cl, err := e.CreateClient(ws.ID, ClientInput{Name: Some("Globex")})
	check(t, "create client", err)
	jv, err := e.CreateJob(ws.ID, JobInput{
		ClientID: Some(cl.ID), Name: Some("Nightly"), Vendor: Some("veeam"),
		Device:   Some(DeviceInput{Name: Some("fs"), Type: Some("server"), Hostname: Some("fs01")}),
		Schedule: Some(ScheduleInput{IntervalMinutes: Some(interval), GraceMinutes: Some(grace)}),
	})
	check(t, "create job", err)
	return ws.ID, jv.ID
}
