package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"backupmon/engine"
	"backupmon/jsonx"
	"backupmon/mailstore"
	"backupmon/vfs"
)

// Backups of the service itself (docs/decisions.md, "Backups"): `backupmon
// admin backup` fetches one from a running server or cluster and keeps it
// only once it reads back whole; `backupmon restore` makes a new data
// directory from one.

// adminBackup runs `backupmon admin backup --out FILE`: GET
// /admin/v1/backup into a temporary file beside FILE, checked from end to end
// (every checksum, every workspace decoding), synced, then renamed to FILE.
// A file that does not read back whole is deleted. It returns the exit
// code: 0, 1 for a failed backup, 2 for a usage error.
func adminBackup(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("admin backup", flag.ContinueOnError)
	fs.SetOutput(stderr)
	adminURL := fs.String("admin-url", envDefault("admin-url", "http://127.0.0.1:8081"), "admin API address (any node of a cluster)")
	token := fs.String("admin-token", os.Getenv("BACKUPMON_ADMIN_TOKEN"), "admin token (default: ./data/admin.token)")
	out := fs.String("out", "", "the backup file to write (required; replaced only by a backup that reads back whole), or - for standard output (checked on the way; exit 1 when it was not whole)")
	if code, ok := parseCommand(fs, args, stderr); !ok {
		return code
	}
	if *out == "" {
		fmt.Fprintln(stderr, "backupmon admin backup: --out is required")
		return 2
	}
	tok, err := adminTokenOr(*token)
	if err != nil {
		fmt.Fprintln(stderr, "backupmon admin backup:", err)
		return 2
	}
	req, err := http.NewRequest(http.MethodGet, strings.TrimRight(*adminURL, "/")+"/admin/v1/backup", nil)
	if err != nil {
		fmt.Fprintln(stderr, "backupmon admin backup:", err)
		return 2
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req) // no overall timeout: a large state takes minutes
	if err != nil {
		fmt.Fprintln(stderr, "backupmon admin backup:", err)
		return 1
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		if len(body) > 0 {
			to := stdout // the answer JSON, as every admin command prints it
			if *out == "-" {
				to = stderr // standard output is the backup's
			}
			fmt.Fprintln(to, string(jsonx.Pretty(body)))
		}
		fmt.Fprintf(stderr, "backupmon admin backup: %s\n", resp.Status)
		return 1
	}
	if *out == "-" {
		return streamBackup(resp.Body, stdout, stderr)
	}
	info, size, err := keepBackup(*out, resp.Body)
	if err != nil {
		fmt.Fprintf(stderr, "backupmon admin backup: %v (%s was not changed)\n", err, *out)
		return 1
	}
	answer, _ := jsonx.Marshal(map[string]any{"data": map[string]any{
		"file": *out, "bytes": size, "workspaces": info.Workspaces, "rawMails": info.RawMails, "layout": info.Version,
	}})
	fmt.Fprintln(stdout, string(jsonx.Pretty(answer)))
	return 0
}

// streamBackup copies a backup from src to stdout (`--out -`, for a pipe
// into encryption or an upload), reading it back on the way, and prints
// what it holds on stderr. It returns 1, after a message on stderr, when
// the stream is not a whole backup: what went to stdout is then none, and
// the pipe's exit status (set -o pipefail) says so.
func streamBackup(src io.Reader, stdout, stderr io.Writer) int {
	cw := &countingWriter{w: stdout}
	info, err := engine.ReadBackup(io.TeeReader(src, cw), engine.BackupReader{})
	if err != nil {
		fmt.Fprintf(stderr, "backupmon admin backup: the backup received does not read back: %v (what went to standard output is not a backup)\n", err)
		return 1
	}
	answer, _ := jsonx.Marshal(map[string]any{"data": map[string]any{
		"file": "-", "bytes": cw.n, "workspaces": info.Workspaces, "rawMails": info.RawMails, "layout": info.Version,
	}})
	fmt.Fprintln(stderr, string(jsonx.Pretty(answer)))
	return 0
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// keepBackup writes src to a temporary file beside path, reads it back
// (engine.ReadBackup), syncs it and renames it to path, then syncs the
// directory. It returns what the backup holds and its size, or an error
// with nothing left behind.
func keepBackup(path string, src io.Reader) (engine.BackupInfo, int64, error) {
	fsys := vfs.Or(nil)
	dir := filepath.Dir(path)
	f, err := vfs.CreateTemp(fsys, dir, "."+filepath.Base(path)+".*.tmp", 0o600)
	if err != nil {
		return engine.BackupInfo{}, 0, err
	}
	tmp := f.Name()
	fail := func(err error) (engine.BackupInfo, int64, error) {
		f.Close()
		os.Remove(tmp)
		return engine.BackupInfo{}, 0, err
	}
	size, err := io.Copy(f, src)
	if err != nil {
		return fail(fmt.Errorf("receive the backup: %w", err))
	}
	if err := f.Sync(); err != nil {
		return fail(fmt.Errorf("sync %s: %w", tmp, err))
	}
	if err := f.Close(); err != nil {
		return fail(fmt.Errorf("close %s: %w", tmp, err))
	}
	info, err := checkBackupFile(tmp)
	if err != nil {
		os.Remove(tmp)
		return engine.BackupInfo{}, 0, fmt.Errorf("the backup received does not read back: %w", err)
	}
	if err := fsys.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return engine.BackupInfo{}, 0, err
	}
	if err := vfs.SyncDir(fsys, dir); err != nil {
		return engine.BackupInfo{}, 0, err
	}
	return info, size, nil
}

// checkBackupFile reads a backup file from end to end.
func checkBackupFile(path string) (engine.BackupInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return engine.BackupInfo{}, err
	}
	defer f.Close()
	return engine.ReadBackup(f, engine.BackupReader{})
}

// restoreCommand runs `backupmon restore --backup FILE --data DIR`: it
// checks the whole backup first, then opens a new data directory and takes
// each workspace in through the engine's import (logged, durable), and
// closes with a snapshot. It refuses a directory that holds a log or
// snapshots. It returns the exit code: 0, 1 when the restore failed, 2 for
// a usage error or a directory in use.
func restoreCommand(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("restore", flag.ContinueOnError)
	fs.SetOutput(stderr)
	from := fs.String("backup", "", "the backup file (backupmon admin backup --out), or - for standard input")
	data := fs.String("data", envDefault("data", "./data"), "the new data directory: empty or absent")
	if code, ok := parseCommand(fs, args, stderr); !ok {
		return code
	}
	if *from == "" {
		fmt.Fprintln(stderr, "backupmon restore: --backup is required")
		return 2
	}
	switch used, err := engine.HoldsState(*data); {
	case err != nil:
		fmt.Fprintln(stderr, "backupmon restore:", err)
		return 1
	case used:
		fmt.Fprintf(stderr, "backupmon restore: %s holds a log or snapshots already; restore into a new directory (nothing was changed)\n", *data)
		return 2
	}
	if *from == "-" {
		// The backup is read twice (checked, then taken in): from a pipe,
		// through a temporary file.
		spooled, err := spool(stdin)
		if err != nil {
			fmt.Fprintln(stderr, "backupmon restore: read standard input:", err, "(nothing was changed)")
			return 1
		}
		defer os.Remove(spooled)
		*from = spooled
	}
	info, err := checkBackupFile(*from)
	if err != nil {
		fmt.Fprintf(stderr, "backupmon restore: %s: %v (nothing was changed)\n", *from, err)
		return 1
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	// A backup of a server on its development clock goes on at its time
	// (the snapshot Close writes keeps it); otherwise the real time, as
	// the server that opens the directory will run.
	var clock engine.Clock = engine.SystemClock{}
	if info.DevClock != 0 {
		clock = engine.NewDevClock(time.UnixMilli(info.DevClock))
	}
	eng, err := engine.Open(engine.Options{Dir: *data, Clock: clock, Logger: logger})
	if err != nil {
		fmt.Fprintln(stderr, "backupmon restore:", err)
		return 1
	}
	store, err := mailstore.Open(filepath.Join(*data, "mail"))
	var f *os.File
	if err == nil {
		f, err = os.Open(*from)
	}
	if err == nil {
		_, err = engine.ReadBackup(f, engine.BackupReader{
			Workspace: func(w engine.BackupWorkspace) error {
				if err := eng.ImportWorkspace(w.Blob, w.Version); err != nil {
					return fmt.Errorf("workspace %s: %w", w.ID, err)
				}
				fmt.Fprintf(stdout, "workspace %s %q restored\n", w.ID, w.Name)
				return nil
			},
			RawMail: store.PutAs,
		})
		f.Close()
	}
	if cerr := eng.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		fmt.Fprintf(stderr, "backupmon restore: %v; %s holds a part of the backup: delete it and run the restore again\n", err, *data)
		return 1
	}
	fmt.Fprintf(stdout, "%d workspaces and %d kept e-mails restored into %s (backup of layout %d); start it with: backupmon serve --data %s\n",
		info.Workspaces, info.RawMails, *data, info.Version, *data)
	return 0
}

// spool copies r into a new temporary file (mode 0600) and returns its
// name; the caller removes it.
func spool(r io.Reader) (string, error) {
	f, err := os.CreateTemp("", "backupmon-restore-*.backup")
	if err != nil {
		return "", err
	}
	_, err = io.Copy(f, r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// adminTokenOr returns token, or else the one in ./data/admin.token.
func adminTokenOr(token string) (string, error) {
	if token != "" {
		return token, nil
	}
	b, err := os.ReadFile(filepath.Join("data", "admin.token"))
	if err != nil {
		return "", errors.New("no admin token: pass --admin-token, set BACKUPMON_ADMIN_TOKEN or run from the directory holding data/admin.token")
	}
	return strings.TrimSpace(string(b)), nil
}

// rawMail adapts a mail store's Get to engine.Options.RawMail: a message
// not kept is engine.ErrRawGone.
func rawMail(get func(ref string) ([]byte, error)) func(ref string) ([]byte, error) {
	return func(ref string) ([]byte, error) {
		raw, err := get(ref)
		if errors.Is(err, mailstore.ErrNotFound) {
			return nil, fmt.Errorf("%w: %s", engine.ErrRawGone, ref)
		}
		return raw, err
	}
}

// parseCommand parses the flags of the command fs names, which takes no
// arguments. ok is false when the command stops here, with its exit code:
// 0 after -h, 2 for a usage error (written to stderr).
func parseCommand(fs *flag.FlagSet, args []string, stderr io.Writer) (code int, ok bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0, false
		}
		return 2, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "backupmon %s: unexpected argument %q\n", fs.Name(), fs.Arg(0))
		return 2, false
	}
	return 0, true
}
