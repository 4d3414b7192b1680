package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// fsyncMain measures what one log commit costs the disk at the least: an
// append of a small block followed by fsync (what tidwall/wal calls), n
// times. -mode fdatasync, -mode prealloc (fdatasync of writes into a file
// given to fallocate beforehand: its extents stay "unwritten", so each write
// still changes metadata) and -mode zerofill (fdatasync of writes over
// blocks zero-filled and synced beforehand: no metadata changes, so no
// journal commit) show what other ways of making a write durable would cost.
func fsyncMain(args []string) int {
	var n, size int
	var mode, data string
	return command("fsync", args, func(fs *flag.FlagSet) {
		fs.IntVar(&n, "n", 1000, "appends, each followed by a sync")
		fs.IntVar(&size, "size", 4096, "bytes per append")
		fs.StringVar(&mode, "mode", "fsync", "fsync (append + fsync, as the log does), fdatasync (append + fdatasync), prealloc (overwrite a fallocated file + fdatasync) or zerofill (overwrite a zero-filled, synced file + fdatasync)")
		fs.StringVar(&data, "data", "", "directory on the disk to measure; default: the temp dir")
	}, flagsFine, func() (bool, error) { return true, runFsync(data, mode, n, size) })
}

func runFsync(data, mode string, n, size int) error {
	dir, cleanup, err := dataDir(data, "backupmon-bench-fsync-")
	if err != nil {
		return err
	}
	defer cleanup()
	path := filepath.Join(dir, "fsync.dat")
	flags := os.O_CREATE | os.O_WRONLY
	if mode != "prealloc" && mode != "zerofill" {
		flags |= os.O_APPEND
	}
	f, err := os.OpenFile(path, flags, 0o600)
	if err != nil {
		return err
	}
	defer os.Remove(path)
	defer f.Close()
	var sync func() error
	switch mode {
	case "fsync":
		sync = f.Sync
	case "fdatasync":
		sync = func() error { return unix.Fdatasync(int(f.Fd())) }
	case "prealloc":
		if err := unix.Fallocate(int(f.Fd()), 0, 0, int64(n)*int64(size)); err != nil {
			return fmt.Errorf("fallocate: %w", err)
		}
		if err := f.Sync(); err != nil {
			return err
		}
		sync = func() error { return unix.Fdatasync(int(f.Fd())) }
	case "zerofill":
		if _, err := f.Write(make([]byte, n*size)); err != nil {
			return fmt.Errorf("zero-fill: %w", err)
		}
		if err := f.Sync(); err != nil {
			return err
		}
		if _, err := f.Seek(0, 0); err != nil {
			return err
		}
		sync = func() error { return unix.Fdatasync(int(f.Fd())) }
	default:
		return fmt.Errorf("unknown -mode %q", mode)
	}
	block := make([]byte, size)
	var h hist
	cpu0 := processCPU()
	start := time.Now()
	for range n {
		t0 := time.Now()
		if _, err := f.Write(block); err != nil {
			return err
		}
		if err := sync(); err != nil {
			return err
		}
		h.record(time.Since(t0))
	}
	total := time.Since(start)
	cpu := processCPU() - cpu0
	fmt.Printf("%s: %d writes of %d bytes, each made durable, in %s on %s: p50 %s p99 %s mean %s max %s (%.0f syncs/s; CPU %.0fµs per write+sync)\n",
		mode, n, size, total.Round(time.Millisecond), dir, fmtDur(h.quantile(0.5)), fmtDur(h.quantile(0.99)),
		fmtDur(h.mean()), fmtDur(time.Duration(h.max)), float64(n)/total.Seconds(), float64(cpu.Microseconds())/float64(n))
	return nil
}
