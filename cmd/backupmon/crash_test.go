package main

// Crash tests against the real binary: SIGKILL under load and restart, a
// clean stop under load, a torn log tail, a corrupt record in the middle of
// the log, and kills across snapshots and log truncation. See
// crashload_test.go for the ledger and the checks, binary_test.go for the
// child process, walfile_test.go for the log's bytes.

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"backupmon/internal/testfs"
	"backupmon/internal/testserver"
)

// The load of one kill cycle: crashWorkers clients pacing crashBudget
// reports over crashLoadSpan (about 2400 a second), killed after a random
// 300..1500 ms, so that the kill always lands while reports are being sent.
const (
	crashWorkers  = 32
	crashBudget   = 3600
	crashLoadSpan = 1500 * time.Millisecond
	crashCycles   = 3
)

// TestCrashKillRestart kills the server with SIGKILL while 32 clients post
// reports, three times, restarting it on the same data directory each time,
// and checks after each restart that every acknowledged report is stored and
// answers duplicate when sent again, that nothing is stored that was not
// sent, and that the server still works. Each check covers every cycle so
// far.
func TestCrashKillRestart(t *testing.T) {
	dir := t.TempDir()
	c := testserver.StartChild(t, "first start", dir)
	start := time.Now()
	fx := makeFixture(t, c, fixtureSize{workspaces: 4, jobsPerWS: 40, keysPerWS: 200})
	t.Logf("fixture: %d workspaces, %d jobs, %d keys in %v", len(fx.ws), len(fx.jobs), len(fx.ws)*len(fx.ws[0].keys), time.Since(start).Round(time.Millisecond))
	led := newLedger()
	for cycle := 1; cycle <= crashCycles; cycle++ {
		label := fmt.Sprintf("cycle %d", cycle)
		lr := startLoad(t, c, fx, led, loadOpts{
			cycle: label, workers: crashWorkers, budget: crashBudget,
			rate: float64(crashBudget) / crashLoadSpan.Seconds(), keyless: 16,
		})
		time.Sleep(time.Duration(300+rand.IntN(1200)) * time.Millisecond)
		lr.stopAndKill(c)
		lr.report()
		if lr.acked.Load() == 0 {
			t.Fatalf("%s: no report was acknowledged before the kill", label)
		}
		c = testserver.StartChild(t, "restart after "+label, dir)
		verifyState(t, c, fx, led, "after "+label)
		checkAlive(t, c, fx, led, "after "+label)
		if t.Failed() {
			t.FailNow()
		}
	}
	// At rest, a kill and a replay of the whole log give back the same
	// state: alerts, job status, streaks, history, activity.
	killQuiet(t, c, fx, "quiet kill")
	reports, requests := fx.budgetLeft()
	t.Logf("budget left: %d new reports, %d requests", reports, requests)
}

// TestStopCleanUnderLoad sends SIGTERM while clients post reports, twice:
// the server exits 0, the acknowledged reports are all there after the
// restart, the shutdown wrote a snapshot, and the log was truncated behind
// the oldest snapshot kept (two are kept). At rest, the whole state read
// through the admin API survives a kill and a clean stop unchanged.
func TestStopCleanUnderLoad(t *testing.T) {
	dir := t.TempDir()
	c := testserver.StartChild(t, "first start", dir)
	fx := makeFixture(t, c, fixtureSize{workspaces: 2, jobsPerWS: 16, keysPerWS: 50})
	led := newLedger()
	var snaps []uint64
	for round := 1; round <= 2; round++ {
		label := fmt.Sprintf("round %d", round)
		lr := startLoad(t, c, fx, led, loadOpts{cycle: label, workers: 16, budget: 1500, rate: 1500, keyless: 16})
		time.Sleep(time.Duration(300+rand.IntN(500)) * time.Millisecond)
		code, err := lr.stopAndTerm(c)
		lr.report()
		if err != nil {
			t.Fatalf("%s: %v", label, err)
		}
		if code != 0 {
			t.Fatalf("%s: exit code %d after SIGTERM, want 0", label, code)
		}
		if !strings.Contains(c.Stderr.String(), `msg="stopped cleanly"`) {
			t.Errorf("%s: no \"stopped cleanly\" in the log", label)
		}

		// The shutdown snapshot, and the log behind the oldest kept.
		snaps = snapshotLSNs(t, dir)
		if len(snaps) != round {
			t.Fatalf("%s: snapshots %v, want %d", label, snaps, round)
		}
		newest, oldest := snaps[len(snaps)-1], snaps[0]
		names, firsts := segmentNames(t, dir)
		if len(names) == 0 {
			t.Fatalf("%s: no log segment left", label)
		}
		records := 0
		for _, n := range names {
			data, ents, valid := readSegment(t, dir, n)
			if valid != len(data) {
				t.Errorf("%s: segment %s damaged at offset %d after a clean stop", label, n, valid)
			}
			records += len(ents)
		}
		if firsts[0] != oldest {
			t.Errorf("%s: the log starts at LSN %d, want the oldest snapshot's %d (segments %v)", label, firsts[0], oldest, names)
		}
		if uint64(records) != newest-oldest {
			t.Errorf("%s: the log holds %d records, want %d (LSN %d up to the newest snapshot %d)", label, records, newest-oldest, oldest, newest)
		}
		t.Logf("%s: exit 0; snapshots %v; log from LSN %d holding %d records", label, snaps, firsts[0], records)

		c = testserver.StartChild(t, "restart after "+label, dir)
		rec := logLines(c.Stderr.String(), "engine recovered")
		if len(rec) != 1 || logAttr(rec[0], "snapshot") != strconv.FormatUint(newest, 10) || logAttr(rec[0], "replayed") != "0" {
			t.Errorf("%s: restart log %q, want snapshot=%d replayed=0", label, rec, newest)
		}
		verifyState(t, c, fx, led, "after "+label)
		checkAlive(t, c, fx, led, "after "+label)
		if t.Failed() {
			t.FailNow()
		}
	}

	// At rest, the state survives a kill (snapshot and log replay) and a
	// clean stop (snapshot only) unchanged.
	c = killQuiet(t, c, fx, "quiet kill")
	before := stateDump(t, c, fx)
	if code, err := c.Term(); err != nil || code != 0 {
		t.Fatalf("quiet stop: exit code %d, %v", code, err)
	}
	c = testserver.StartChild(t, "restart after the quiet stop", dir)
	if d := testserver.LineDiff(before, stateDump(t, c, fx), 4); d != "" {
		t.Errorf("the state after a clean stop and restart differs:\n%s", d)
	}
}

// TestTornTail cuts the log's last segment, after a SIGKILL, inside its last
// record at several offsets, or appends garbage or zeros to it: the restart
// cuts the torn tail (a Warn naming the file and offset), saves the cut
// bytes to <segment>.broken, and keeps exactly the records before the cut.
func TestTornTail(t *testing.T) {
	tmpl, fx, led := killedTemplate(t, fixtureSize{workspaces: 1, jobsPerWS: 10, keysPerWS: 64}, loadOpts{cycle: "template", workers: 8, budget: 150, keyless: 8})

	names, _ := segmentNames(t, tmpl)
	if len(names) == 0 {
		t.Fatal("no log segment")
	}
	seg := names[len(names)-1]
	data, entries, valid := readSegment(t, tmpl, seg)
	if valid != len(data) || len(entries) < 2 {
		t.Fatalf("segment %s: %d entries, valid up to %d of %d bytes", seg, len(entries), valid, len(data))
	}
	inLog := reportIDs(t, entries)
	for _, r := range led.all() {
		if _, ok := inLog[r.id]; !ok || r.state != stAcked {
			t.Fatalf("report %d (state %d) is not in the log's last segment", r.id, r.state)
		}
	}
	last := entries[len(entries)-1]
	if inLog[lastReportID(inLog)] != last.end {
		t.Fatalf("the last record (offset %d) is not a report", last.start)
	}

	rng := rand.New(rand.NewPCG(1, 2))
	garbage := make([]byte, 61)
	for i := range garbage {
		garbage[i] = byte(rng.IntN(256))
	}
	garbage[0] = 0xff // a length prefix that runs past the end
	zeros := make([]byte, 4096)
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	mid := (last.start + last.prefix + 5 + last.end) / 2
	cases := []struct {
		name  string
		data  []byte
		valid int // where the repaired segment ends
	}{
		{"cut-at-record-boundary", data[:last.start], last.start},
		{"cut-in-length-prefix", data[:last.start+1], last.start},
		{"cut-after-length-prefix", data[:last.start+last.prefix], last.start},
		{"cut-in-checksum", data[:last.start+last.prefix+2], last.start},
		{"cut-in-payload", data[:mid], last.start},
		{"cut-one-byte-short", data[:last.end-1], last.start},
		{"garbage-appended", cat(data, garbage), len(data)},
		{"zeros-appended", cat(data, zeros), len(data)},
		{"cut-in-payload-zeros-appended", cat(data[:mid], zeros), last.start},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			testfs.CopyDir(t, tmpl, dir)
			segPath := filepath.Join(dir, "wal", seg)
			if err := os.WriteFile(segPath, tc.data, 0o640); err != nil {
				t.Fatal(err)
			}
			torn := tc.valid < len(tc.data)
			cled := led.clone()
			fx.aliveClients = 0 // each case starts from the template
			kept := map[int64]bool{}
			for id, end := range inLog {
				if end <= tc.valid {
					kept[id] = true
				}
			}

			c := testserver.StartChild(t, tc.name, dir)
			warns := logLines(c.Stderr.String(), "wal: cut torn tail")
			if torn {
				if len(warns) != 1 || !strings.Contains(warns[0], "level=WARN") || !strings.Contains(warns[0], segPath) ||
					logAttr(warns[0], "offset") != strconv.Itoa(tc.valid) || logAttr(warns[0], "bytes") != strconv.Itoa(len(tc.data)-tc.valid) {
					t.Errorf("want one Warn naming %s, offset=%d, bytes=%d; log:\n%s", segPath, tc.valid, len(tc.data)-tc.valid, c.Stderr.String())
				}
				broken, err := os.ReadFile(segPath + ".broken")
				if err != nil {
					t.Errorf("no .broken file: %v", err)
				} else if !bytes.Equal(broken, tc.data[tc.valid:]) {
					t.Errorf(".broken holds %d bytes, want the %d cut", len(broken), len(tc.data)-tc.valid)
				}
			} else {
				if len(warns) != 0 {
					t.Errorf("a segment ending on a record boundary was repaired: %q", warns)
				}
				if fileExists(segPath + ".broken") {
					t.Errorf("a .broken file for a clean segment")
				}
			}
			if fi, err := os.Stat(segPath); err != nil {
				t.Error(err)
			} else if fi.Size() != int64(tc.valid) {
				t.Errorf("segment after the restart: %d bytes, want %d", fi.Size(), tc.valid)
			}

			// Exactly the reports wholly before the cut are stored; the
			// one cut away is not, and its key is free again.
			stored := map[int64]bool{}
			for _, entries := range fetchHistories(t, c, fx) {
				for _, e := range entries {
					if e.SizeBytes != nil {
						stored[*e.SizeBytes] = true
					}
				}
			}
			for id := range inLog {
				if stored[id] != kept[id] {
					t.Errorf("report %d: stored %v, want %v (its record ends at %d, the cut at %d)", id, stored[id], kept[id], inLog[id], tc.valid)
				}
			}
			for _, r := range cled.byID {
				if !kept[r.id] {
					r.state = stMaybe // verifyState sends it again and wants it recorded
				}
			}
			verifyState(t, c, fx, cled, tc.name)
			checkAlive(t, c, fx, cled, tc.name)
			c.Kill()

			// The repaired log, with records written after the repair,
			// opens without another repair.
			c = testserver.StartChild(t, tc.name+" again", dir)
			if w := logLines(c.Stderr.String(), "wal: cut torn tail"); len(w) != 0 {
				t.Errorf("second restart repaired again: %q", w)
			}
			if fileExists(segPath + ".broken.1") {
				t.Errorf("second restart left another .broken file")
			}
			verifyState(t, c, fx, cled, tc.name+" again")
			c.Kill()
		})
	}
}

// killedTemplate starts a server on a new data directory, makes a fixture
// of size, sends it the load of opts to the end and kills the server, which
// leaves a log to cut or corrupt; it returns the directory, the fixture and
// what the load sent.
func killedTemplate(t *testing.T, size fixtureSize, opts loadOpts) (string, *fixture, *ledger) {
	t.Helper()
	tmpl := filepath.Join(t.TempDir(), "template")
	c := testserver.StartChild(t, "template", tmpl)
	fx := makeFixture(t, c, size)
	led := newLedger()
	lr := startLoad(t, c, fx, led, opts)
	lr.wait()
	lr.report()
	c.Kill()
	return tmpl, fx, led
}

// lastReportID returns the id of the report whose record ends last.
func lastReportID(inLog map[int64]int) int64 {
	var best int64
	for id, end := range inLog {
		if end > inLog[best] {
			best = id
		}
	}
	return best
}

// TestCorruptMiddle flips one byte inside an early record of a segment that
// has valid records after it: the server must refuse to start (non-zero exit
// before `ready`), name the segment file and the record's offset, and change
// nothing. The segment is the last one, or (by splitting the log in two
// segments at a record boundary, as a smaller segment size would have) one
// before the last.
func TestCorruptMiddle(t *testing.T) {
	tmpl, fx, led := killedTemplate(t, fixtureSize{workspaces: 1, jobsPerWS: 4, keysPerWS: 8}, loadOpts{cycle: "template", workers: 4, budget: 80, keyless: 8})

	names, firsts := segmentNames(t, tmpl)
	if len(names) != 1 {
		t.Fatalf("want one segment, have %v", names)
	}
	seg := names[0]
	data, entries, valid := readSegment(t, tmpl, seg)
	if valid != len(data) || len(entries) < 20 {
		t.Fatalf("segment %s: %d entries, valid up to %d of %d bytes", seg, len(entries), valid, len(data))
	}
	// flip returns a copy of b with one payload byte of entry e (at base
	// in b) changed.
	flip := func(b []byte, base int, e walEntry) []byte {
		b = slices.Clone(b)
		b[base+e.start+e.prefix+5+len(e.payload)/2] ^= 0x5a
		return b
	}
	// split writes the log as two segments, the second starting at entry k.
	k := len(entries) / 2
	seg2 := fmt.Sprintf("%020d", firsts[0]+uint64(k))
	split := func(dir string, first, second []byte) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, "wal", seg), first, 0o640); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "wal", seg2), second, 0o640); err != nil {
			t.Fatal(err)
		}
	}
	head, rest := data[:entries[k].start], data[entries[k].start:]

	t.Run("split-control", func(t *testing.T) {
		// The split log is a valid log: everything is there.
		dir := filepath.Join(t.TempDir(), "data")
		testfs.CopyDir(t, tmpl, dir)
		split(dir, head, rest)
		c := testserver.StartChild(t, "split control", dir)
		verifyState(t, c, fx, led.clone(), "split control")
		c.Kill()
	})

	cases := []struct {
		name    string
		prepare func(dir string)
		file    string
		offset  int
	}{
		{"last-segment", func(dir string) {
			if err := os.WriteFile(filepath.Join(dir, "wal", seg), flip(data, 0, entries[2]), 0o640); err != nil {
				t.Fatal(err)
			}
		}, seg, entries[2].start},
		{"segment-before-the-last", func(dir string) {
			split(dir, flip(head, 0, entries[2]), rest)
		}, seg, entries[2].start},
		{"last-of-two-segments", func(dir string) {
			split(dir, head, flip(rest, -entries[k].start, entries[k+1]))
		}, seg2, entries[k+1].start - entries[k].start},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			testfs.CopyDir(t, tmpl, dir)
			tc.prepare(dir)
			before := dirDigest(t, dir)
			c, err := testserver.LaunchChild(t, tc.name, dir, nil)
			var exit *testserver.ExitError
			if !errors.As(err, &exit) {
				if err == nil {
					c.Kill()
					t.Fatalf("the server started on a log corrupt in the middle; stderr:\n%s", testserver.Tail(c.Stderr.String(), 20))
				}
				t.Fatal(err)
			}
			if code := exit.ExitCode(); code == 0 {
				t.Errorf("exit code 0, want non-zero")
			}
			if strings.Contains(exit.Stdout, "ready") {
				t.Errorf("printed ready: %q", exit.Stdout)
			}
			want := fmt.Sprintf("corrupt record in %s at offset %d", tc.file, tc.offset)
			if !strings.Contains(exit.Stderr, want) {
				t.Errorf("stderr does not say %q:\n%s", want, exit.Stderr)
			}
			if after := dirDigest(t, dir); after != before {
				t.Errorf("the data directory changed:\nbefore:\n%s\nafter:\n%s", before, after)
			}
			t.Logf("refused: %s", testserver.Tail(exit.Stderr, 1))
		})
	}
}

// TestSnapshotCrash runs the server with a snapshot every 300 records (the
// snapshot loop looks once a second) and kills it mid-load three times: at a
// random moment after a snapshot (sometimes into the next one), while a
// snapshot is being written (its temp file is in the directory), and while
// the log is being truncated behind a snapshot (tidwall's .START or .TEMP
// file is in the log directory; when the 1 ms poll misses that short window
// the kill comes right after). The restart loads the newest snapshot and
// replays the log after it, and the checks of TestCrashKillRestart hold.
func TestSnapshotCrash(t *testing.T) {
	dir := t.TempDir()
	flags := []string{"--snapshot-every", "300"}
	c := testserver.StartChild(t, "first start", dir, flags...)
	fx := makeFixture(t, c, fixtureSize{workspaces: 4, jobsPerWS: 40, keysPerWS: 200})
	led := newLedger()
	replayed := 0
	for cycle := 1; cycle <= 3; cycle++ {
		label := fmt.Sprintf("cycle %d", cycle)
		lr := startLoad(t, c, fx, led, loadOpts{cycle: label, workers: crashWorkers, budget: 4000, rate: 1600, keyless: 16})
		deadline := time.Now().Add(10 * time.Second)
		loading := func() bool { return time.Now().Before(deadline) && lr.issued.Load() < 4000 }
		caught := ""
		switch cycle {
		case 2:
			// Kill as soon as a snapshot's temp file shows.
			for caught == "" && loading() {
				if caught = snapshotTemp(t, dir); caught == "" {
					time.Sleep(time.Millisecond)
				}
			}
			if caught == "" {
				t.Fatalf("%s: no snapshot temp file seen under load", label)
			}
		case 3:
			// Kill as soon as tidwall's truncation files show, or
			// right after the snapshot whose truncation was missed.
			for caught == "" && loading() && snapshotsWritten(c) < 2 {
				if caught = walTruncationFile(t, dir); caught == "" {
					time.Sleep(time.Millisecond)
				}
			}
		default:
			// Wait for a snapshot written under this load, then a
			// random while: sometimes into the next snapshot.
			for snapshotsWritten(c) == 0 && loading() {
				time.Sleep(10 * time.Millisecond)
			}
			time.Sleep(time.Duration(rand.IntN(1200)) * time.Millisecond)
		}
		written := snapshotsWritten(c)
		lr.stopAndKill(c)
		lr.report()
		onDisk := snapshotLSNs(t, dir)
		segs, firsts := effectiveSegments(t, dir)
		if len(segs) == 0 {
			t.Fatalf("%s: no log segment left after the kill", label)
		}
		t.Logf("%s: %d snapshots written by this process before the kill; on disk %v; log from LSN %d (%v)", label, written, onDisk, firsts[0], segs)
		switch {
		case caught != "":
			t.Logf("%s: killed while %s was there (still there after the kill: %v)", label, caught, fileExists(filepath.Join(dir, "snapshots", caught)) || fileExists(filepath.Join(dir, "wal", caught)))
		case cycle == 3:
			t.Logf("%s: the truncation window was missed; killed after %d snapshots", label, written)
		}
		if written == 0 && caught == "" {
			t.Fatalf("%s: no snapshot was written under load", label)
		}
		if len(onDisk) == 0 || firsts[0] <= 1 || firsts[0] > onDisk[len(onDisk)-1] {
			t.Fatalf("%s: log from LSN %d with snapshots %v: want it truncated, and holding the newest snapshot's records", label, firsts[0], onDisk)
		}
		newest := onDisk[len(onDisk)-1]
		after := logRecordsFrom(t, dir, newest)

		c = testserver.StartChild(t, "restart after "+label, dir, flags...)
		rec := logLines(c.Stderr.String(), "engine recovered")
		if len(rec) != 1 || logAttr(rec[0], "snapshot") != strconv.FormatUint(newest, 10) || logAttr(rec[0], "replayed") != strconv.Itoa(after) {
			t.Errorf("%s: restart log %q, want the newest snapshot (%d) loaded and the %d records after it replayed", label, rec, newest, after)
		} else {
			t.Logf("%s: restart: snapshot=%s replayed=%s", label, logAttr(rec[0], "snapshot"), logAttr(rec[0], "replayed"))
		}
		if w := logLines(c.Stderr.String(), "wal: cut torn tail"); len(w) > 0 {
			t.Logf("%s: the kill tore the log's tail: %s", label, w[0])
		}
		replayed += after
		if tmp := snapshotTemp(t, dir); tmp != "" {
			t.Logf("%s: temp file %s still there after the restart", label, tmp)
		}
		verifyState(t, c, fx, led, "after "+label)
		checkAlive(t, c, fx, led, "after "+label)
		if t.Failed() {
			t.FailNow()
		}
	}
	if replayed == 0 {
		t.Errorf("no restart replayed any record after its snapshot")
	}
	killQuiet(t, c, fx, "quiet kill", flags...)
	reports, requests := fx.budgetLeft()
	t.Logf("budget left: %d new reports, %d requests", reports, requests)
}

// logRecordsFrom counts the valid records in the log with an LSN of at
// least from (what a restart replays after the snapshot at from).
func logRecordsFrom(t testing.TB, dataDir string, from uint64) int {
	t.Helper()
	names, firsts := effectiveSegments(t, dataDir)
	n := 0
	for i, name := range names {
		_, ents, _ := readSegment(t, dataDir, name)
		for k := range ents {
			if firsts[i]+uint64(k) >= from {
				n++
			}
		}
	}
	return n
}

// walTruncationFile returns the name of a file tidwall writes while it
// truncates the front of the log (<index>.START or <index>.START.TEMP), or "".
func walTruncationFile(t testing.TB, dataDir string) string {
	for _, n := range dataFiles(t, dataDir, "wal", false) {
		if strings.Contains(n, ".START") {
			return n
		}
	}
	return ""
}

// snapshotTemp returns the name of a snapshot temp file in
// <data>/snapshots, or "".
func snapshotTemp(t testing.TB, dataDir string) string {
	for _, n := range dataFiles(t, dataDir, "snapshots", true) {
		if strings.HasSuffix(n, ".tmp") {
			return n
		}
	}
	return ""
}

// snapshotsWritten counts the engine's "snapshot written" lines.
func snapshotsWritten(c *testserver.Child) int {
	n := 0
	for _, l := range logLines(c.Stderr.String(), "snapshot written") {
		if strings.Contains(l, " path=") {
			n++
		}
	}
	return n
}

// snapshotLSNs returns the LSNs of the snapshot files in <data>/snapshots,
// oldest first.
func snapshotLSNs(t testing.TB, dataDir string) []uint64 {
	t.Helper()
	var lsns []uint64
	for _, name := range dataFiles(t, dataDir, "snapshots", false) {
		digits, ok := strings.CutSuffix(name, ".snap")
		if !ok || len(digits) != 20 {
			continue
		}
		n, err := strconv.ParseUint(digits, 10, 64)
		if err != nil {
			t.Fatalf("snapshot file %s", name)
		}
		lsns = append(lsns, n)
	}
	slices.Sort(lsns)
	return lsns
}

// logLines returns the lines of a slog text log whose message is msg.
func logLines(log, msg string) []string {
	var out []string
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, " msg="+strconv.Quote(msg)) || strings.Contains(l, " msg="+msg+" ") {
			out = append(out, l)
		}
	}
	return out
}

// logAttr returns the value of key in a slog text line (unquoted), or "".
func logAttr(line, key string) string {
	i := strings.Index(line, " "+key+"=")
	if i < 0 {
		return ""
	}
	v := line[i+len(key)+2:]
	if strings.HasPrefix(v, `"`) {
		if s, err := strconv.QuotedPrefix(v); err == nil {
			u, _ := strconv.Unquote(s)
			return u
		}
	}
	if j := strings.IndexByte(v, ' '); j >= 0 {
		v = v[:j]
	}
	return v
}
