package engine

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"backupmon/snapshot"
	"backupmon/state"
)

// These tests take backups of engines (Backup), read them back
// (ReadBackup) into fresh engines the way `backupmon restore` does
// (ImportWorkspace), merge them as a cluster does (MergeBackups), and check
// that a file that is not a whole backup is refused before anything after
// its fault is handed out.

// rawOf is the raw e-mail the tests' mail store keeps for ref: bytes no
// text handling would keep as they are.
func rawOf(ref string) []byte {
	return []byte("Received: from nas\r\nSubject: " + ref + "\r\n\r\n\x00\xff\xfe body of " + ref + "\n")
}

// rawStore is a mail store for Options.RawMail that counts the reads of
// each reference; gone and fail name the references it answers ErrRawGone
// and another error for.
type rawStore struct {
	mu         sync.Mutex
	reads      map[string]int
	gone, fail map[string]bool
	big        map[string][]byte // references with their own raw e-mail
}

// errStoreBroken is the error rawStore answers for the references in fail.
var errStoreBroken = errors.New("the mail store is broken")

func newRawStore() *rawStore { return &rawStore{reads: map[string]int{}} }

// get is Options.RawMail.
func (s *rawStore) get(ref string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reads[ref]++
	switch {
	case s.gone[ref]:
		return nil, fmt.Errorf("%w: %s deleted", ErrRawGone, ref)
	case s.fail[ref]:
		return nil, fmt.Errorf("read %s: %w", ref, errStoreBroken)
	case s.big[ref] != nil:
		return s.big[ref], nil
	}
	return rawOf(ref), nil
}

// openBackupEngine opens an engine in dir on a development clock, with
// rawMail as Options.RawMail.
func openBackupEngine(t testing.TB, dir string, rawMail func(string) ([]byte, error)) *Engine {
	t.Helper()
	opts := quietOptions(dir, NewDevClock(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)))
	opts.RawMail = rawMail
	e, err := Open(opts)
	if err != nil {
		t.Fatalf("open engine in %s: %v", dir, err)
	}
	closeAtEnd(t, e)
	return e
}

// takeBackup returns e's backup and what Backup said it holds.
func takeBackup(t testing.TB, e *Engine) ([]byte, BackupInfo) {
	t.Helper()
	var buf bytes.Buffer
	info, err := e.Backup(&buf)
	if err != nil {
		t.Fatalf("backup: %v", err)
	}
	return buf.Bytes(), info
}

// backupItem is one item ReadBackup handed out: a workspace (its id and
// encoding) or a raw e-mail (its reference and bytes).
type backupItem struct {
	kind    byte // itemWorkspace or itemRawMail
	key     string
	data    []byte
	version uint64 // a workspace's layout
	name    string // a workspace's name
}

func (i backupItem) String() string {
	return fmt.Sprintf("%c %s (%d bytes)", i.kind, i.key, len(i.data))
}

// readItems reads data with ReadBackup and returns every item it handed
// out, in order, with its answer.
func readItems(data []byte) ([]backupItem, BackupInfo, error) {
	var items []backupItem
	info, err := ReadBackup(bytes.NewReader(data), BackupReader{
		Workspace: func(w BackupWorkspace) error {
			items = append(items, backupItem{kind: itemWorkspace, key: w.ID, data: w.Blob, version: w.Version, name: w.Name})
			return nil
		},
		RawMail: func(ref string, raw []byte) error {
			items = append(items, backupItem{kind: itemRawMail, key: ref, data: raw})
			return nil
		},
	})
	return items, info, err
}

// itemsOf returns the items of a whole backup.
func itemsOf(t testing.TB, data []byte) []backupItem {
	t.Helper()
	items, _ := mustReadItems(t, data)
	return items
}

// mustReadItems is readItems of a backup that must read whole.
func mustReadItems(t testing.TB, data []byte) ([]backupItem, BackupInfo) {
	t.Helper()
	items, info, err := readItems(data)
	if err != nil {
		t.Fatalf("read backup: %v", err)
	}
	return items, info
}

// restoreBackup reads data into e as `backupmon restore` does: each
// workspace through ImportWorkspace; it returns the raw e-mails handed out.
func restoreBackup(t testing.TB, data []byte, e *Engine) (map[string][]byte, BackupInfo) {
	t.Helper()
	raws := map[string][]byte{}
	info, err := ReadBackup(bytes.NewReader(data), BackupReader{
		Workspace: func(w BackupWorkspace) error { return e.ImportWorkspace(w.Blob, w.Version) },
		RawMail: func(ref string, raw []byte) error {
			if _, dup := raws[ref]; dup {
				return fmt.Errorf("raw e-mail %s handed out twice", ref)
			}
			raws[ref] = raw
			return nil
		},
	})
	if err != nil {
		t.Fatalf("restore: %v", err)
	}
	return raws, info
}

// unparsedRefs returns the raw e-mail references e's unparsed entries
// name, each once, sorted.
func unparsedRefs(e *Engine) []string {
	seen := map[string]bool{}
	for _, a := range e.sortedActors() {
		for _, ref := range ask(a, func(w *workspace) []string {
			var refs []string
			for _, u := range w.Unparsed {
				refs = append(refs, u.RawRef)
			}
			return refs
		}) {
			seen[ref] = true
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// rawsOf returns the raw e-mails rawOf gives for refs.
func rawsOf(refs []string) map[string][]byte {
	out := map[string][]byte{}
	for _, ref := range refs {
		out[ref] = rawOf(ref)
	}
	return out
}

// sameRaws checks that the raw e-mails handed out are want, byte for byte.
func sameRaws(t testing.TB, what string, got, want map[string][]byte) {
	t.Helper()
	for ref, raw := range want {
		g, ok := got[ref]
		switch {
		case !ok:
			t.Errorf("%s: raw e-mail %s missing", what, ref)
		case !bytes.Equal(g, raw):
			t.Errorf("%s: raw e-mail %s is %q, want %q", what, ref, g, raw)
		}
	}
	for ref := range got {
		if _, ok := want[ref]; !ok {
			t.Errorf("%s: raw e-mail %s handed out, but not wanted", what, ref)
		}
	}
}

func TestBackupRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name  string
		seed  uint64
		steps int
	}{
		{"seed 3", 3, 600},
		{"seed 11", 11, 600},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := newRawStore()
			src := openBackupEngine(t, t.TempDir(), store.get)
			l := newWorkload(t, src, tc.seed)
			l.run(tc.steps)
			before := takeViews(t, src)
			beforeState := takeState(t, src, false)
			refs := unparsedRefs(src)
			if len(refs) == 0 {
				t.Fatalf("the workload left no unparsed e-mail: the raw e-mails are not exercised")
			}

			data, info := takeBackup(t, src)
			want := BackupInfo{Workspaces: len(before.Workspaces), RawMails: len(refs), Version: state.SnapshotVersion,
				DevClock: src.Now().UnixMilli()}
			if info != want {
				t.Fatalf("Backup says it holds %+v, the source has %+v", info, want)
			}
			for ref, n := range store.reads {
				if n != 1 {
					t.Errorf("raw e-mail %s read %d times for one backup", ref, n)
				}
			}

			// As `backupmon restore` does: check the whole file, then
			// open a new directory on a development clock at the
			// backup's time (the backup carries it) and import. On
			// another clock "Now" would differ, and with it every view
			// computed from it, once the timers due in between ran.
			_, checked, err := readItems(data)
			check(t, "check the backup", err)
			if checked != info {
				t.Errorf("ReadBackup says the backup holds %+v, Backup said %+v", checked, info)
			}
			dir := t.TempDir()
			dst := openEngineOn(t, dir, NewDevClock(time.UnixMilli(checked.DevClock)))
			raws, _ := restoreBackup(t, data, dst)
			sameRaws(t, "restored raw e-mails", raws, rawsOf(refs))

			// The restored engine's log holds the ImportPart records,
			// not the source's history, so its log position differs;
			// it shows in no view. Everything else is the same.
			sameViews(t, "restored from the backup", takeViews(t, dst), before)
			sameState(t, "restored from the backup", takeState(t, dst, false), beforeState)

			// A restore is durable through the log: the restored data
			// directory with no snapshot (a crash now) shows the same.
			// Its log holds no clock record (the restore set none), so
			// its clock is the opener's: the backup's time, as above.
			crash := copyDir(t, dir)
			again := openEngineOn(t, crash, NewDevClock(time.UnixMilli(checked.DevClock)))
			sameViews(t, "restored, then recovered from its log", takeViews(t, again), before)
			checkNewIDsSortLast(t, again, before)

			// After the restore's Close, the directory goes on at the
			// backup's time whatever the development clock it is opened
			// on: the snapshot Close wrote holds the time.
			check(t, "close the restored engine", dst.Close())
			reopened := openEngineOn(t, dir, NewDevClock(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)))
			sameViews(t, "restored, closed and reopened", takeViews(t, reopened), before)
		})
	}
}

// openEngineOn opens an engine in dir on clock, without a mail store.
func openEngineOn(t testing.TB, dir string, clock Clock) *Engine {
	t.Helper()
	e, err := Open(quietOptions(dir, clock))
	if err != nil {
		t.Fatalf("open engine in %s: %v", dir, err)
	}
	closeAtEnd(t, e)
	return e
}

// ingestToken returns the token of a job's ingest address.
func ingestToken(t testing.TB, e *Engine, wsID, jobID string) string {
	t.Helper()
	v, err := e.JobDetail(wsID, jobID, 1)
	checkTB(t, "job", err)
	var jv struct{ IngestAddress string }
	checkTB(t, "decode job", json.Unmarshal(v.JSON, &jv))
	token, _, _ := strings.Cut(jv.IngestAddress, "@")
	return token
}

// checkTB is check for any testing.TB (a fuzz test's setup too).
func checkTB(t testing.TB, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// unparsedMail records an unreadable e-mail for a job, kept as ref.
func unparsedMail(t testing.TB, e *Engine, token, messageID, ref string) {
	t.Helper()
	rep := e.Mail(token, &MailInput{MessageID: messageID, DurationSeconds: -1, SizeBytes: -1,
		Reason: "no status", Subject: "backup report", From: "nas@example.com", RawRef: ref, Size: 100})
	if rep.Outcome != MailKeptUnparsed {
		t.Fatalf("mail %s: outcome %d, want MailKeptUnparsed", messageID, rep.Outcome)
	}
}

// rawMailEngine makes two workspaces with unparsed e-mails: ref "a" twice
// in the first (two messages kept as one file) and once in the second, "b"
// and "c" in the first, "d" in the second, and "dropped", whose entry was
// dropped from the list. It returns the references a backup carries.
func rawMailEngine(t testing.TB, e *Engine) []string {
	t.Helper()
	_, err := e.SetClock(time.Date(2024, 10, 20, 8, 0, 0, 0, time.UTC), 0)
	checkTB(t, "set clock", err)
	ws1, job1 := dailyJob(t, e)
	ws2, job2 := dailyJob(t, e)
	tok1, tok2 := ingestToken(t, e, ws1, job1), ingestToken(t, e, ws2, job2)
	unparsedMail(t, e, tok1, "m1@host", "a")
	unparsedMail(t, e, tok1, "m2@host", "b")
	unparsedMail(t, e, tok1, "m3@host", "a")
	unparsedMail(t, e, tok1, "m4@host", "c")
	unparsedMail(t, e, tok2, "m5@host", "d")
	unparsedMail(t, e, tok2, "m6@host", "a")
	unparsedMail(t, e, tok2, "m7@host", "dropped")
	list, err := e.Unparsed(ws2)
	checkTB(t, "unparsed", err)
	for _, u := range list {
		if bytes.Contains(u.JSON, []byte(`"m7@host"`)) {
			checkTB(t, "drop", e.DropUnparsed(ws2, u.ID))
		}
	}
	refs := unparsedRefs(e)
	if want := []string{"a", "b", "c", "d"}; !slices.Equal(refs, want) {
		t.Fatalf("the unparsed entries name %v, want %v", refs, want)
	}
	return refs
}

// dailyJob is monitoredJob (a workspace, a client, a daily job) for
// any testing.TB.
func dailyJob(t testing.TB, e *Engine) (string, string) {
	t.Helper()
	ws, err := e.CreateWorkspace(WorkspaceInput{Name: Some("Acme"), Plan: Some("pro")})
	checkTB(t, "create workspace", err)
	cl, err := e.CreateClient(ws.ID, ClientInput{Name: Some("Globex")})
	checkTB(t, "create client", err)
	jv, err := e.CreateJob(ws.ID, JobInput{
		ClientID: Some(cl.ID), Name: Some("Nightly"), Vendor: Some("veeam"),
		Device:   Some(DeviceInput{Name: Some("fs"), Type: Some("server"), Hostname: Some("fs01")}),
		Schedule: Some(ScheduleInput{IntervalMinutes: Some(int64(1440)), GraceMinutes: Some(int64(60))}),
	})
	checkTB(t, "create job", err)
	return ws.ID, jv.ID
}

func TestBackupRawMails(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdef\r\n"), 90_000) // past a chunk (1 MiB)
	for _, tc := range []struct {
		name       string
		noRawMail  bool // Options.RawMail nil
		gone, fail []string
		big        map[string][]byte
		want       []string // the references the backup carries
		wantErr    error
	}{
		{name: "all kept", want: []string{"a", "b", "c", "d"}},
		{name: "one larger than a chunk", big: map[string][]byte{"b": big}, want: []string{"a", "b", "c", "d"}},
		{name: "one gone", gone: []string{"c"}, want: []string{"a", "b", "d"}},
		{name: "all gone", gone: []string{"a", "b", "c", "d"}, want: nil},
		{name: "one fails", fail: []string{"b"}, wantErr: errStoreBroken},
		{name: "no mail store", noRawMail: true, want: nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := newRawStore()
			store.gone, store.fail, store.big = setOf(tc.gone), setOf(tc.fail), tc.big
			rawMail := store.get
			if tc.noRawMail {
				rawMail = nil
			}
			e := openBackupEngine(t, t.TempDir(), rawMail)
			refs := rawMailEngine(t, e)
			var buf bytes.Buffer
			info, err := e.Backup(&buf)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("backup: %v, want an error wrapping %v", err, tc.wantErr)
				}
				if info != (BackupInfo{}) {
					t.Errorf("a failed backup says it holds %+v", info)
				}
				// What it wrote has no trailer: it never reads as whole.
				if _, _, err := readItems(buf.Bytes()); !errors.Is(err, ErrBadBackup) {
					t.Fatalf("the output of a failed backup reads back: %v", err)
				}
				return
			}
			check(t, "backup", err)
			if !tc.noRawMail {
				for _, ref := range refs {
					if store.reads[ref] != 1 {
						t.Errorf("raw e-mail %s read %d times, want once", ref, store.reads[ref])
					}
				}
				if store.reads["dropped"] != 0 {
					t.Errorf("the raw e-mail of a dropped entry was read")
				}
			}
			want := map[string][]byte{}
			for _, ref := range tc.want {
				want[ref] = rawOf(ref)
				if tc.big[ref] != nil {
					want[ref] = tc.big[ref]
				}
			}
			if info.RawMails != len(want) || info.Workspaces != 2 {
				t.Errorf("Backup says it holds %+v, want 2 workspaces and %d raw e-mails", info, len(want))
			}
			items, readInfo := mustReadItems(t, buf.Bytes())
			if readInfo != info {
				t.Errorf("ReadBackup says %+v, Backup said %+v", readInfo, info)
			}
			got := map[string][]byte{}
			for _, it := range items {
				if it.kind != itemRawMail {
					continue
				}
				if _, dup := got[it.key]; dup {
					t.Errorf("raw e-mail %s in the backup twice", it.key)
				}
				got[it.key] = it.data
			}
			sameRaws(t, "raw e-mails read back", got, want)
		})
	}
}

// setOf returns the set of refs.
func setOf(refs []string) map[string]bool {
	out := map[string]bool{}
	for _, r := range refs {
		out[r] = true
	}
	return out
}

// backupBody returns the body of a backup file.
func backupBody(t testing.TB, data []byte) []byte {
	t.Helper()
	var body []byte
	err := snapshot.Decode(bytes.NewReader(data), 0, func(_ uint64, r io.Reader) error {
		var err error
		body, err = io.ReadAll(r)
		return err
	})
	checkTB(t, "decode the backup's snapshot", err)
	return body
}

// snapshotOf returns a snapshot file of body at log position lsn.
func snapshotOf(t testing.TB, lsn uint64, body []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	checkTB(t, "encode", snapshot.Encode(&buf, lsn, func(w io.Writer) error {
		_, err := w.Write(body)
		return err
	}))
	return buf.Bytes()
}

// itemEnds returns, for each item of a whole backup file, the file offset
// just past its last byte (its place in its chunk, after the header and
// the chunks' framing).
func itemEnds(t testing.TB, data []byte) []int64 {
	t.Helper()
	const headerSize, frameSize = 36, 8
	chunk := int64(binary.LittleEndian.Uint32(data[12:16]))
	body := backupBody(t, data)
	p := len(backupMagic)
	_, n := binary.Uvarint(body[p:]) // the layout
	p += n
	_, n = binary.Varint(body[p:]) // the development clock
	p += n
	field := func() {
		l, n := binary.Uvarint(body[p:])
		p += n + int(l)
	}
	var ends []int64
	for body[p] != itemEnd {
		tag := body[p]
		p++
		field()
		if tag == itemRawMail {
			field()
		}
		b := int64(p)
		ends = append(ends, headerSize+frameSize*((b-1)/chunk+1)+b)
	}
	return ends
}

// sameItems checks that the items handed out are want, in order, byte
// for byte.
func sameItems(t testing.TB, what string, got, want []backupItem) {
	t.Helper()
	for i := range max(len(got), len(want)) {
		switch {
		case i >= len(got):
			t.Fatalf("%s: item %d (%v) not handed out", what, i, want[i])
		case i >= len(want):
			t.Fatalf("%s: item %d (%v) handed out, not wanted", what, i, got[i])
		case !sameItem(got[i], want[i]):
			t.Fatalf("%s: item %d handed out is %v, want %v", what, i, got[i], want[i])
		}
	}
}

// sameItem reports whether two items are the same, byte for byte.
func sameItem(a, b backupItem) bool {
	return a.kind == b.kind && a.key == b.key && bytes.Equal(a.data, b.data) && a.version == b.version && a.name == b.name
}

// handedBefore checks what ReadBackup handed out of a file with a fault
// at offset at: the first items of the whole file, byte for byte, each of
// them ending before the fault.
func handedBefore(t testing.TB, what string, got, whole []backupItem, ends []int64, at int64) {
	t.Helper()
	if len(got) > len(whole) {
		t.Fatalf("%s: %d items handed out, the whole backup has %d", what, len(got), len(whole))
	}
	for i, it := range got {
		if !sameItem(it, whole[i]) {
			t.Fatalf("%s: item %d handed out is %v, the backup's is %v", what, i, it, whole[i])
		}
		if ends[i] > at {
			t.Fatalf("%s: item %d (%v, ending at offset %d) handed out after the fault at offset %d", what, i, it, ends[i], at)
		}
	}
}

// body is a backup body built by hand: its head, then the given bytes.
func body(version uint64, items ...[]byte) []byte {
	b := backupHead(version, 0)
	for _, it := range items {
		b = append(b, it...)
	}
	return b
}

// item encodes a backup item: its tag, then each field with its length.
func item(tag byte, fields ...[]byte) []byte {
	b := []byte{tag}
	for _, f := range fields {
		b = binary.AppendUvarint(b, uint64(len(f)))
		b = append(b, f...)
	}
	return b
}

func TestReadBackupRefuses(t *testing.T) {
	store := newRawStore()
	e := openBackupEngine(t, t.TempDir(), store.get)
	_, err := e.SetClock(time.Date(2024, 10, 20, 8, 0, 0, 0, time.UTC), 0)
	check(t, "set clock", err)
	ws, job := dailyJob(t, e)
	unparsedMail(t, e, ingestToken(t, e, ws, job), "m1@host", "a")
	small, _ := takeBackup(t, e)
	smallItems, _ := mustReadItems(t, small)
	smallEnds := itemEnds(t, small)
	if len(smallItems) != 2 {
		t.Fatalf("the small backup holds %v, want a workspace and a raw e-mail", smallItems)
	}

	// A backup of three chunks: a workspace, then raw e-mails of about a
	// chunk each, so that a fault in a later chunk comes after items the
	// earlier ones hold whole.
	store.big = map[string][]byte{"b": bytes.Repeat([]byte("b"), 1_100_000), "c": bytes.Repeat([]byte("c"), 1_100_000)}
	unparsedMail(t, e, ingestToken(t, e, ws, job), "m2@host", "b")
	unparsedMail(t, e, ingestToken(t, e, ws, job), "m3@host", "c")
	large, _ := takeBackup(t, e)
	largeItems, _ := mustReadItems(t, large)
	largeEnds := itemEnds(t, large)
	if len(largeItems) != 4 || largeEnds[len(largeEnds)-1] < 1<<21 {
		t.Fatalf("the large backup holds %v ending at %v, want 4 items past two chunks", largeItems, largeEnds)
	}

	refused := func(t *testing.T, what string, data []byte, whole []backupItem, ends []int64, at int64) {
		t.Helper()
		got, _, err := readItems(data)
		if !errors.Is(err, ErrBadBackup) {
			t.Fatalf("%s: ReadBackup answered %v, want an error wrapping ErrBadBackup", what, err)
		}
		handedBefore(t, what, got, whole, ends, at)
	}

	t.Run("cut short at every offset", func(t *testing.T) {
		for n := range len(small) {
			refused(t, fmt.Sprintf("cut at %d", n), small[:n], smallItems, smallEnds, int64(n))
		}
	})
	t.Run("cut short across chunks", func(t *testing.T) {
		for _, end := range largeEnds {
			for _, n := range []int64{end - 1, end, end + 1, end + 8} {
				refused(t, fmt.Sprintf("cut at %d", n), large[:n], largeItems, largeEnds, n)
			}
		}
		for n := int64(len(large) - 30); n < int64(len(large)); n++ {
			refused(t, fmt.Sprintf("cut at %d", n), large[:n], largeItems, largeEnds, n)
		}
	})
	t.Run("a flipped byte at every offset", func(t *testing.T) {
		for at := range len(small) {
			bad := bytes.Clone(small)
			bad[at] ^= 0x20
			refused(t, fmt.Sprintf("flip at %d", at), bad, smallItems, smallEnds, int64(at))
		}
	})
	t.Run("a flipped byte in a later chunk", func(t *testing.T) {
		for _, at := range []int64{largeEnds[1] + 100, largeEnds[2] + 100, int64(len(large)) - 30} {
			bad := bytes.Clone(large)
			bad[at] ^= 1
			refused(t, fmt.Sprintf("flip at %d", at), bad, largeItems, largeEnds, at)
		}
	})
	for _, tc := range []struct {
		name  string
		extra []byte
	}{
		{"a byte after the trailer", []byte{0}},
		{"a second backup after the trailer", small},
	} {
		t.Run(tc.name, func(t *testing.T) {
			refused(t, tc.name, append(bytes.Clone(small), tc.extra...), smallItems, smallEnds, int64(len(small)))
		})
	}
	t.Run("a snapshot file of a data directory", func(t *testing.T) {
		refused(t, "lsn 7", snapshotOf(t, 7, backupBody(t, small)), nil, nil, 0)
	})
	t.Run("not a snapshot file", func(t *testing.T) {
		refused(t, "empty", nil, nil, nil, 0)
		refused(t, "text", []byte("BMBACKUP and more"), nil, nil, 0)
	})

	// Bodies built by hand, in whole files: what comes before the fault
	// is handed out, nothing from it on.
	blob := smallItems[0].data
	goodWS := item(itemWorkspace, blob)
	goodMail := item(itemRawMail, []byte("a"), rawOf("a"))
	wsItem := backupItem{kind: itemWorkspace, key: smallItems[0].key, data: blob, version: state.SnapshotVersion, name: smallItems[0].name}
	mailItem := backupItem{kind: itemRawMail, key: "a", data: rawOf("a")}
	end := []byte{itemEnd}
	panicky := item(itemWorkspace, panickyBlob(t, blob))
	longLen := binary.AppendUvarint([]byte{itemRawMail}, 1<<61)
	for _, tc := range []struct {
		name   string
		body   []byte
		before []backupItem // the items before the fault
	}{
		{"a body that is no backup's", append([]byte("BMBACKUX"), body(state.SnapshotVersion, goodWS, end)[8:]...), nil},
		{"an empty body", nil, nil},
		{"a head only", body(state.SnapshotVersion), nil},
		{"a head without its clock", backupHead(state.SnapshotVersion, 0)[:len(backupMagic)+1], nil},
		{"a head with a cut clock", append(backupHead(state.SnapshotVersion, 0)[:len(backupMagic)+1], 0x80), nil},
		{"no end", body(state.SnapshotVersion, goodWS, goodMail), []backupItem{wsItem, mailItem}},
		{"an unknown item tag first", body(state.SnapshotVersion, item('X', blob), end), nil},
		{"an unknown item tag between items", body(state.SnapshotVersion, goodWS, []byte{'X'}, goodMail, end), []backupItem{wsItem}},
		{"an unknown item tag later", body(state.SnapshotVersion, goodWS, goodMail, item('w', blob), goodWS, end), []backupItem{wsItem, mailItem}},
		{"a layout newer than this build's", body(state.SnapshotVersion+1, goodMail, end), nil},
		{"a layout older than this build reads", body(state.OldestSnapshotVersion-1, goodMail, end), nil},
		{"layout 0", body(0, goodMail, end), nil},
		{"a blob that does not decode", body(state.SnapshotVersion, item(itemWorkspace, []byte("not a workspace")), end), nil},
		{"a blob the decoder panicked on", body(state.SnapshotVersion, panicky, end), nil},
		{"a blob the decoder panicked on, later", body(state.SnapshotVersion, goodWS, panicky, goodMail, end), []backupItem{wsItem}},
		{"a cut blob", body(state.SnapshotVersion, goodMail, item(itemWorkspace, blob[:len(blob)/2]), end), []backupItem{mailItem}},
		{"a blob after a good one", body(state.SnapshotVersion, goodWS, item(itemWorkspace, blob[1:]), goodMail, end), []backupItem{wsItem}},
		{"a raw e-mail cut short", body(state.SnapshotVersion, goodWS, goodMail[:len(goodMail)-3]), []backupItem{wsItem}},
		{"a raw e-mail without its bytes", body(state.SnapshotVersion, item(itemRawMail, []byte("a"))), nil},
		{"a length past the file", body(state.SnapshotVersion, longLen, []byte("xyz"), end), nil},
		{"bytes after the end", body(state.SnapshotVersion, goodWS, end, goodMail), []backupItem{wsItem}},
		{"a second end", body(state.SnapshotVersion, goodWS, end, end), []backupItem{wsItem}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _, err := readItems(snapshotOf(t, 0, tc.body))
			if !errors.Is(err, ErrBadBackup) {
				t.Fatalf("ReadBackup answered %v, want an error wrapping ErrBadBackup", err)
			}
			sameItems(t, "the items before the fault", got, tc.before)
		})
	}
	t.Run("a layout older than the newest, that this build reads", func(t *testing.T) {
		// Items of an older layout are handed out with it: the blob
		// here is of the newest layout, so it does not decode as the
		// older one, and the layout alone is accepted.
		_, info, err := readItems(snapshotOf(t, 0, body(state.OldestSnapshotVersion, goodMail, end)))
		if err != nil || info != (BackupInfo{RawMails: 1, Version: state.OldestSnapshotVersion}) {
			t.Fatalf("ReadBackup answered %+v, %v", info, err)
		}
	})
}

// panickyBlob returns blob, a workspace's encoding, with every job's last
// result out of its range (a blob that FuzzReadBackup made): the state's
// decoder panicked on it, rebuilding its indexes past their lists, and now
// refuses it; either way it must be refused, the process still up.
func panickyBlob(t testing.TB, blob []byte) []byte {
	t.Helper()
	w, err := state.DecodeWorkspace(blob, state.SnapshotVersion)
	checkTB(t, "decode", err)
	if len(w.Jobs) == 0 {
		t.Fatalf("the workspace has no job")
	}
	for _, j := range w.Jobs {
		j.LastResult = 38
	}
	return w.Encode(0)
}

func TestReadBackupCallbackErrors(t *testing.T) {
	e := openBackupEngine(t, t.TempDir(), newRawStore().get)
	rawMailEngine(t, e)
	data, _ := takeBackup(t, e)
	whole, _ := mustReadItems(t, data)
	errStop := errors.New("the restore stops here")
	for _, tc := range []struct {
		name   string
		stopAt int // the item whose callback fails
	}{
		{"the first workspace", 0},
		{"the second workspace", 1},
		{"the first raw e-mail", 2},
		{"the last raw e-mail", len(whole) - 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			next := func(kind byte, key string) error {
				if whole[calls].kind != kind || whole[calls].key != key {
					t.Fatalf("call %d hands %c %s, want %v", calls, kind, key, whole[calls])
				}
				calls++
				if calls-1 == tc.stopAt {
					return errStop
				}
				return nil
			}
			_, err := ReadBackup(bytes.NewReader(data), BackupReader{
				Workspace: func(w BackupWorkspace) error { return next(itemWorkspace, w.ID) },
				RawMail:   func(ref string, _ []byte) error { return next(itemRawMail, ref) },
			})
			if err != errStop {
				t.Fatalf("ReadBackup answered %v, want the callback's error as is", err)
			}
			if calls != tc.stopAt+1 {
				t.Fatalf("%d callbacks, want %d: nothing after the failing one", calls, tc.stopAt+1)
			}
		})
	}
}

func TestMergeBackups(t *testing.T) {
	storeA, storeB := newRawStore(), newRawStore()
	a := openBackupEngine(t, t.TempDir(), storeA.get)
	b := openBackupEngine(t, t.TempDir(), storeB.get)
	refsA := rawMailEngine(t, a)
	_, err := b.SetClock(a.Now(), 0)
	check(t, "set clock", err)
	wsB, jobB := dailyJob(t, b)
	unparsedMail(t, b, ingestToken(t, b, wsB, jobB), "n1@host", "e")
	partA, infoA := takeBackup(t, a)
	partB, infoB := takeBackup(t, b)
	itemsA, _ := mustReadItems(t, partA)
	itemsB, _ := mustReadItems(t, partB)

	opener := func(data []byte) func() (io.ReadCloser, error) {
		return func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
	}
	t.Run("whole parts", func(t *testing.T) {
		var out bytes.Buffer
		dev := a.Now().UnixMilli()
		info, err := MergeBackups(&out, state.SnapshotVersion, dev, []func() (io.ReadCloser, error){opener(partA), opener(partB)})
		check(t, "merge", err)
		want := BackupInfo{Workspaces: infoA.Workspaces + infoB.Workspaces, RawMails: infoA.RawMails + infoB.RawMails,
			Version: state.SnapshotVersion, DevClock: dev}
		if info != want || info.Workspaces != 3 || info.RawMails != len(refsA)+1 {
			t.Fatalf("MergeBackups says %+v, want %+v", info, want)
		}
		items, readInfo := mustReadItems(t, out.Bytes())
		if readInfo != info {
			t.Errorf("ReadBackup says %+v, MergeBackups said %+v", readInfo, info)
		}
		// The items of each part, as they are, in the parts' order.
		sameItems(t, "merged", items, append(slices.Clone(itemsA), itemsB...))

		// It restores the union: every workspace of both engines, and
		// every raw e-mail (the engines' clocks stand at the same time).
		dst := openEngineOn(t, t.TempDir(), NewDevClock(time.UnixMilli(info.DevClock)))
		raws, _ := restoreBackup(t, out.Bytes(), dst)
		sameRaws(t, "merged raw e-mails", raws, rawsOf(append(slices.Clone(refsA), "e")))
		wantState := takeState(t, a, false)
		maps.Copy(wantState, takeState(t, b, false))
		sameState(t, "restored from the merged backup", takeState(t, dst, false), wantState)
	})
	t.Run("no parts", func(t *testing.T) {
		var out bytes.Buffer
		info, err := MergeBackups(&out, state.SnapshotVersion, 0, nil)
		check(t, "merge", err)
		items, readInfo := mustReadItems(t, out.Bytes())
		if want := (BackupInfo{Version: state.SnapshotVersion}); info != want || readInfo != want || len(items) != 0 {
			t.Fatalf("merge of no parts: %+v, read back %+v %v", info, readInfo, items)
		}
	})

	flipped := bytes.Clone(partB)
	flipped[len(flipped)/2] ^= 1
	bodyB := backupBody(t, partB)
	errOpen := errors.New("the part is not in the store")
	for _, tc := range []struct {
		name    string
		part    func() (io.ReadCloser, error)
		version uint64
		wantErr error
	}{
		{"a part cut short", opener(partB[:len(partB)-1]), state.SnapshotVersion, ErrBadBackup},
		{"a part cut inside its body", opener(partB[:len(partB)/2]), state.SnapshotVersion, ErrBadBackup},
		{"a part with a flipped byte", opener(flipped), state.SnapshotVersion, ErrBadBackup},
		{"a part with bytes after its trailer", opener(append(bytes.Clone(partB), 0)), state.SnapshotVersion, ErrBadBackup},
		{"a part of an older layout", opener(snapshotOf(t, 0, body(state.SnapshotVersion-1, []byte{itemEnd}))), state.SnapshotVersion, ErrBadBackup},
		{"a part of a layout this build does not read", opener(snapshotOf(t, 0, body(state.SnapshotVersion+1, []byte{itemEnd}))), state.SnapshotVersion, ErrBadBackup},
		{"a snapshot file of a data directory", opener(snapshotOf(t, 7, bodyB)), state.SnapshotVersion, ErrBadBackup},
		{"a part with an unknown item", opener(snapshotOf(t, 0, append(bytes.Clone(bodyB[:len(bodyB)-1]), 'X', 0, itemEnd))), state.SnapshotVersion, ErrBadBackup},
		{"a part with bytes after its end", opener(snapshotOf(t, 0, append(bytes.Clone(bodyB), item(itemRawMail, []byte("f"), rawOf("f"))...))), state.SnapshotVersion, ErrBadBackup},
		{"a part that does not open", func() (io.ReadCloser, error) { return nil, errOpen }, state.SnapshotVersion, errOpen},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			info, err := MergeBackups(&out, tc.version, 0, []func() (io.ReadCloser, error){opener(partA), tc.part})
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("MergeBackups answered %+v, %v; want an error wrapping %v", info, err, tc.wantErr)
			}
			if _, _, err := readItems(out.Bytes()); !errors.Is(err, ErrBadBackup) {
				t.Fatalf("the output of a failed merge reads back: %v", err)
			}
		})
	}
}

func TestBackupOnAClosedEngine(t *testing.T) {
	for _, tc := range []struct {
		name       string
		workspaces int
	}{
		{"with workspaces", 2},
		{"without workspaces", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := openBackupEngine(t, t.TempDir(), newRawStore().get)
			for range tc.workspaces {
				dailyJob(t, e)
			}
			check(t, "close", e.Close())
			var buf bytes.Buffer
			info, err := e.Backup(&buf)
			if !errors.Is(err, ErrClosed) {
				t.Fatalf("backup of a closed engine: %+v, %v; want an error wrapping ErrClosed", info, err)
			}
			if _, _, err := readItems(buf.Bytes()); !errors.Is(err, ErrBadBackup) {
				t.Fatalf("the output of a backup of a closed engine reads back: %v", err)
			}
		})
	}
}

func FuzzReadBackup(f *testing.F) {
	e := openBackupEngine(f, f.TempDir(), newRawStore().get)
	rawMailEngine(f, e)
	data, _ := takeBackup(f, e)
	b := backupBody(f, data)
	f.Add(data, false)
	f.Add(data[:len(data)-1], false)
	flipped := bytes.Clone(data)
	flipped[len(flipped)/3] ^= 4
	f.Add(flipped, false)
	f.Add(append(bytes.Clone(data), 0), false)
	f.Add(b, true)
	f.Add(b[:len(b)/2], true)
	f.Add(append(bytes.Clone(b[:len(b)-1]), 'X', itemEnd), true)
	f.Add(body(state.SnapshotVersion+1, []byte{itemEnd}), true)
	f.Add(body(state.SnapshotVersion, item(itemWorkspace, panickyBlob(f, itemsOf(f, data)[0].data)), []byte{itemEnd}), true)
	f.Add(body(state.SnapshotVersion, item(itemRawMail, []byte("r"), []byte("raw")), []byte{itemEnd}), true)
	f.Fuzz(func(t *testing.T, in []byte, asBody bool) {
		// A body as is rarely gets past the checksums: asBody wraps it
		// in a whole snapshot file, to reach the items.
		if asBody {
			in = snapshotOf(t, 0, in)
		}
		var workspaces, raws int
		info, err := ReadBackup(bytes.NewReader(in), BackupReader{
			Workspace: func(w BackupWorkspace) error {
				if _, err := state.DecodeWorkspace(w.Blob, w.Version); err != nil {
					t.Fatalf("a workspace that does not decode handed out: %v", err)
				}
				workspaces++
				return nil
			},
			RawMail: func(string, []byte) error { raws++; return nil },
		})
		switch {
		case err != nil && !errors.Is(err, ErrBadBackup):
			t.Fatalf("ReadBackup answered %v, not wrapping ErrBadBackup", err)
		case err == nil && (info.Workspaces != workspaces || info.RawMails != raws):
			t.Fatalf("ReadBackup says %+v, handed out %d workspaces and %d raw e-mails", info, workspaces, raws)
		case err == nil && (info.Version < state.OldestSnapshotVersion || info.Version > state.SnapshotVersion):
			t.Fatalf("ReadBackup read a backup of layout %d", info.Version)
		}
	})
}
