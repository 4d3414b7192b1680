package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"time"

	"backupmon/engine"
)

// bench backup: the cost of a backup of a large state (docs/decisions.md,
// "Backups"), against the snapshot of the same state: the time to write
// the file, its size, the time to read it back whole (what `backupmon admin
// backup` does before it keeps the file), the longest a workspace's actor
// is held by its encoding (what a report to that workspace waits behind),
// and a restore into a new data directory through the engine's import (what
// `backupmon restore` does), to its first restart.

type backupConfig struct {
	stateFlags
	data string
}

func backupMain(args []string) int {
	var c backupConfig
	return command("backup", args, func(fs *flag.FlagSet) {
		c.stateFlags.register(fs, stateFlags{workspaces: 1000, clientsPerWS: 10, jobsPerWS: 100, resultsPerJob: 10}, "workspaces", "")
		fs.StringVar(&c.data, "data", "", "directory for the data directories and the backup (must be empty; kept afterwards); default: a temp dir, removed")
	}, flagsFine, func() (bool, error) { return true, runBackup(c) })
}

func runBackup(c backupConfig) error {
	dir, cleanup, err := dataDir(c.data, "backupmon-bench-backup-")
	if err != nil {
		return err
	}
	defer cleanup()
	src, restored, file := filepath.Join(dir, "source"), filepath.Join(dir, "restored"), filepath.Join(dir, "all.backup")
	results := c.workspaces * c.jobsPerWS * c.resultsPerJob
	fmt.Printf("bench backup: %s workspaces, %s jobs, %s results; GOMAXPROCS %d, data %s\n",
		thousands(int64(c.workspaces)), thousands(int64(c.workspaces*c.jobsPerWS)), thousands(int64(results)), runtime.GOMAXPROCS(0), dir)

	eng, err := engine.Open(engine.Options{Dir: src, Logger: benchLogger(nil), SnapshotEvery: never, SnapshotInterval: never})
	if err != nil {
		return err
	}
	defer eng.Close()
	f, err := setUp(eng, layout{workspaces: c.workspaces, clientsPerWS: c.clientsPerWS, jobsPerWS: c.jobsPerWS, keysPerWS: 1, parallel: c.parallel, workspaceName: "Backup MSP"})
	if err != nil {
		return fmt.Errorf("set up: %w", err)
	}
	if err := importResults(eng, f, c.resultsPerJob, c.parallel); err != nil {
		return err
	}

	start := time.Now()
	if err := eng.Snapshot(); err != nil {
		return err
	}
	snapTime, snapSize := time.Since(start), newestSnapshotSize(src)
	fmt.Printf("snapshot: %.1f MiB in %s (%.0f MiB/s)\n", mib(snapSize), snapTime.Round(time.Millisecond), mib(snapSize)/snapTime.Seconds())

	out, err := os.Create(file)
	if err != nil {
		return err
	}
	start = time.Now()
	bw := bufio.NewWriterSize(out, 64<<10) // as the HTTP answer's writer
	info, err := eng.Backup(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = out.Sync()
	}
	out.Close()
	if err != nil {
		return err
	}
	backupTime := time.Since(start)
	st, err := os.Stat(file)
	if err != nil {
		return err
	}
	fmt.Printf("backup: %.1f MiB in %s (%.0f MiB/s), %d workspaces; ×%.2f the snapshot's size, ×%.2f its time\n",
		mib(st.Size()), backupTime.Round(time.Millisecond), mib(st.Size())/backupTime.Seconds(), info.Workspaces,
		float64(st.Size())/float64(snapSize), backupTime.Seconds()/snapTime.Seconds())

	// Each workspace's encoding, as the backup asks its actor for it.
	holds := make([]time.Duration, 0, len(f.wsIDs))
	for _, ws := range f.wsIDs {
		t := time.Now()
		if _, err := eng.ExportWorkspace(ws); err != nil {
			return err
		}
		holds = append(holds, time.Since(t))
	}
	sort.Slice(holds, func(i, j int) bool { return holds[i] < holds[j] })
	fmt.Printf("a workspace's actor held by its encoding (%d jobs, %d results): median %s, max %s\n",
		c.jobsPerWS, c.jobsPerWS*c.resultsPerJob, holds[len(holds)/2].Round(time.Microsecond), holds[len(holds)-1].Round(time.Microsecond))

	start = time.Now()
	if _, err := readBackupFile(file, engine.BackupReader{}); err != nil {
		return err
	}
	fmt.Printf("read back whole (every checksum, every workspace decoded): %s\n", time.Since(start).Round(time.Millisecond))

	start = time.Now()
	dst, err := engine.Open(engine.Options{Dir: restored, Logger: benchLogger(nil), SnapshotEvery: never, SnapshotInterval: never})
	if err != nil {
		return err
	}
	if _, err := readBackupFile(file, engine.BackupReader{Workspace: func(w engine.BackupWorkspace) error {
		return dst.ImportWorkspace(w.Blob, w.Version)
	}}); err != nil {
		dst.Close()
		return err
	}
	imported, logged := time.Since(start), dirSize(filepath.Join(restored, "wal"))
	t := time.Now()
	if err := dst.Snapshot(); err != nil {
		dst.Close()
		return err
	}
	snapped := time.Since(t)
	t = time.Now()
	if err := dst.Close(); err != nil {
		return err
	}
	fmt.Printf("restore: imported in %s (log written %.1f MiB), its snapshot in %s, closed in %s\n",
		imported.Round(time.Millisecond), mib(logged), snapped.Round(time.Millisecond), time.Since(t).Round(time.Millisecond))
	start = time.Now()
	again, err := engine.Open(engine.Options{Dir: restored, Logger: benchLogger(nil), SnapshotEvery: never, SnapshotInterval: never})
	if err != nil {
		return err
	}
	n := len(again.Workspaces())
	fmt.Printf("the restored directory opens in %s with %d workspaces\n", time.Since(start).Round(time.Millisecond), n)
	again.Close()
	if n != c.workspaces {
		return fmt.Errorf("the restore holds %d workspaces, want %d", n, c.workspaces)
	}
	return nil
}

// readBackupFile reads the backup in path with engine.ReadBackup.
func readBackupFile(path string, to engine.BackupReader) (engine.BackupInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return engine.BackupInfo{}, err
	}
	defer f.Close()
	return engine.ReadBackup(bufio.NewReaderSize(f, 1<<20), to)
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }
