package engine

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"backupmon/snapshot"
	"backupmon/state"
)

// A snapshot's workspaces are decoded on several goroutines; the engine
// they make must be the one a serial load makes, down to which workspace
// wins an index entry two workspaces share (the later in the snapshot),
// and a damaged workspace must stop the load with the error a serial load
// gives.

// plSnapshots keeps the engine's snapshots in memory; load hands out
// what change makes of the newest (nil: it as written).
type plSnapshots struct {
	last   []byte
	lsn    uint64
	change func([]byte) []byte
}

func (s *plSnapshots) Load(fn func(lsn uint64, r io.Reader) error) (uint64, error) {
	if s.last == nil {
		return 0, fmt.Errorf("memory: %w", snapshot.ErrNoSnapshot)
	}
	b := s.last
	if s.change != nil {
		b = s.change(slices.Clone(b))
	}
	return s.lsn, fn(s.lsn, bytes.NewReader(b))
}

func (s *plSnapshots) Write(lsn uint64, fill func(w io.Writer) error) (string, error) {
	var buf bytes.Buffer
	if err := fill(&buf); err != nil {
		return "", err
	}
	s.last, s.lsn = buf.Bytes(), lsn
	return "memory", nil
}

func (s *plSnapshots) Prune(int) (uint64, error) { return 0, nil }

// plBuild makes workspaces of different sizes (clients, jobs with
// results, keys, users) in which each session's secret is shared by two
// workspaces next to each other in snapshot order, and takes a snapshot;
// it returns the snapshot store and the engine's options.
func plBuild(t *testing.T, workspaces int) (*plSnapshots, Options) {
	t.Helper()
	snaps := &plSnapshots{}
	opts := quietOptions(t.TempDir(), NewDevClock(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)))
	opts.Snapshots = snaps
	e, err := Open(opts)
	check(t, "open", err)
	for i := range workspaces {
		ws, err := e.CreateWorkspace(WorkspaceInput{Name: Some(fmt.Sprintf("MSP %d", i)), Plan: Some("pro")})
		check(t, "create workspace", err)
		cl, err := e.CreateClient(ws.ID, ClientInput{Name: Some("Client")})
		check(t, "create client", err)
		for j := range 1 + i%5 {
			jv, err := e.CreateJob(ws.ID, JobInput{
				ClientID: Some(cl.ID), Name: Some(fmt.Sprintf("Job %d", j)), Vendor: Some("veeam"),
				Device:   Some(DeviceInput{Name: Some("fs"), Type: Some("server"), Hostname: Some("fs01")}),
				Schedule: Some(ScheduleInput{IntervalMinutes: Some(int64(1440)), GraceMinutes: Some(int64(60))}),
			})
			check(t, "create job", err)
			var list []ImportInput
			for r := range 3 + 7*j {
				list = append(list, ImportInput{ReceivedAt: opts.Clock.Now().Add(-time.Duration(r+1) * 24 * time.Hour), Status: uint8(1 + r%3), DurationSeconds: 60, SizeBytes: 1 << 20})
			}
			check(t, "import", e.ImportReports(ws.ID, jv.ID, list))
		}
		kv, err := e.CreateKey(ws.ID, KeyInput{Name: Some("report"), Type: Some("report")})
		check(t, "create key", err)
		if i%3 == 0 {
			check(t, "revoke key", e.RevokeKey(ws.ID, kv.ID, ""))
		}
		if i == workspaces/2 {
			_, err := e.SetClock(time.Time{}, time.Hour)
			check(t, "move the clock", err)
		}
		_, err = e.CreateUser(ws.ID, UserInput{Email: Some("tech@example.com"), Name: Some("Tech"), Role: Some(state.RoleAdmin), Hash: Some("h")})
		check(t, "create user", err)
	}
	actors := e.sortedActors()
	for k, a := range actors {
		ws := a.ws.ID.String()
		var user string
		for id := range a.ws.Users {
			user = id.String()
		}
		for _, s := range []int{k, k + 1} {
			check(t, "start session", e.StartSession(ws, user, "h", secretHash(fmt.Sprint("session ", s))))
		}
		check(t, "start session", e.StartSession(ws, user, "h", secretHash(fmt.Sprint("ended ", k))))
		check(t, "end session", e.EndSession(secretHash(fmt.Sprint("ended ", k))))
	}
	check(t, "close", e.Close())
	return snaps, opts
}

// plDump describes everything a load makes: each workspace as its
// snapshot encodes it, and every entry of the indexes across workspaces.
func plDump(t *testing.T, opts Options, workers int32) (string, error) {
	t.Helper()
	loadWorkersOverride.Store(workers)
	defer loadWorkersOverride.Store(0)
	opts.ReadOnly = true // nothing is written; the store keeps the snapshot made
	e, err := Open(opts)
	if err != nil {
		return "", err
	}
	closeAtEnd(t, e)
	var b strings.Builder
	fmt.Fprintf(&b, "count %d\n", e.count.Load())
	for _, a := range e.sortedActors() {
		blob := ask(a, func(w *workspace) []byte { return w.Encode(e.nowMs()) })
		fmt.Fprintf(&b, "workspace %s %x\n", a.ws.ID, blob)
	}
	var lines []string
	e.people.sessions.Range(func(k, v any) bool {
		h, r := k.([32]byte), v.(*personRef)
		secret := fmt.Sprintf("%x", h[:4])
		for n := range 100 {
			if secretHash(fmt.Sprint("session ", n)) == h {
				secret = fmt.Sprintf("%02d", n)
			}
		}
		lines = append(lines, fmt.Sprintf("session %s → %s %s", secret, r.act.ws.ID, r.id))
		return true
	})
	for i := range e.keys.shards {
		for _, list := range e.keys.shards[i].m {
			for _, r := range list {
				lines = append(lines, fmt.Sprintf("key %x → %s %s", r.hash[:4], r.act.ws.ID, r.key.ID))
			}
		}
	}
	for token, r := range e.ingest.m {
		lines = append(lines, fmt.Sprintf("ingest %s → %s %s", token, r.act.ws.ID, r.jobID))
	}
	for email, byWS := range e.people.emails.m {
		for id, r := range byWS {
			lines = append(lines, fmt.Sprintf("email %s %s → %s %s", email, id, r.act.ws.ID, r.id))
		}
	}
	slices.Sort(lines)
	b.WriteString(strings.Join(lines, "\n"))
	return b.String(), nil
}

func TestParallelLoadMatchesSerial(t *testing.T) {
	_, opts := plBuild(t, 13)
	plMatchSerial(t, opts, []int32{2, 3, 4, 8})
}

// plMatchSerial loads opts' engine serially and then with each number of
// goroutines, three times each, and fails unless every load ends as the
// serial one.
func plMatchSerial(t *testing.T, opts Options, workers []int32) {
	t.Helper()
	serial, err := plDump(t, opts, 1)
	check(t, "serial load", err)
	plCheckWinners(t, serial)
	for _, n := range workers {
		t.Run(fmt.Sprint(n, " goroutines"), func(t *testing.T) {
			for round := range 3 {
				got, err := plDump(t, opts, n)
				check(t, "parallel load", err)
				plCheckWinners(t, got)
				if got != serial {
					t.Fatalf("round %d: the parallel load differs from the serial one:\n%s", round, firstDiff(serial, got))
				}
			}
		})
	}
}

// plCheckWinners checks that each session secret two workspaces share
// (plBuild) is found in the later of them in snapshot order, as a serial
// load leaves it: secret k is of workspaces k−1 and k.
func plCheckWinners(t *testing.T, dump string) {
	t.Helper()
	var ids []string
	sessions := map[string]string{}
	for _, line := range strings.Split(dump, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 3 && f[0] == "workspace":
			ids = append(ids, f[1])
		case len(f) == 5 && f[0] == "session":
			sessions[f[1]] = f[3]
		}
	}
	if len(sessions) != len(ids)+1 {
		t.Fatalf("%d session secrets for %d workspaces, want %d:\n%s", len(sessions), len(ids), len(ids)+1, dump)
	}
	for k := range len(ids) + 1 {
		if want, got := ids[min(k, len(ids)-1)], sessions[fmt.Sprintf("%02d", k)]; got != want {
			t.Fatalf("session secret %d is found in workspace %s, want %s (the later of its two in snapshot order)", k, got, want)
		}
	}
}

// firstDiff shows the first line where got differs from want.
func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := range max(len(w), len(g)) {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return fmt.Sprintf("line %d:\nserial:   %.200s\nparallel: %.200s", i+1, a, b)
		}
	}
	return "(equal)"
}

// plWorkspaceAt returns the offset and length of workspace k's blob in an
// engine snapshot body.
func plWorkspaceAt(t *testing.T, body []byte, k int) (int, int) {
	t.Helper()
	r := bytes.NewReader(body[len(snapshotMagic):])
	for range 3 { // version, clock, count
		if _, err := binary.ReadVarint(r); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; ; i++ {
		n, err := binary.ReadUvarint(r)
		if err != nil {
			t.Fatal(err)
		}
		at := len(body) - r.Len()
		if i == k {
			return at, int(n)
		}
		r.Seek(int64(n), io.SeekCurrent)
	}
}

func TestParallelLoadErrorsAsSerial(t *testing.T) {
	snaps, opts := plBuild(t, 9)
	cases := []struct {
		name, want string
		change     func(t *testing.T, b []byte) []byte
	}{
		{"workspace 5 damaged", "decode workspace 5: ", func(t *testing.T, b []byte) []byte {
			at, n := plWorkspaceAt(t, b, 5)
			for i := at + n/2; i < at+n; i++ {
				b[i] = 0xff
			}
			return b
		}},
		{"workspaces 3 and 6 damaged", "decode workspace 3: ", func(t *testing.T, b []byte) []byte {
			for _, k := range []int{6, 3} {
				at, n := plWorkspaceAt(t, b, k)
				b[at] ^= 0xff // the workspace id's first byte: its seq follows
				for i := at + 16; i < at+n; i++ {
					b[i] = 0xff
				}
			}
			return b
		}},
		{"cut inside workspace 7", "read workspace 7: unexpected EOF", func(t *testing.T, b []byte) []byte {
			at, n := plWorkspaceAt(t, b, 7)
			return b[:at+n/2]
		}},
		{"workspace 2 damaged, cut inside 7", "decode workspace 2: ", func(t *testing.T, b []byte) []byte {
			at, n := plWorkspaceAt(t, b, 2)
			for i := at + n/2; i < at+n; i++ {
				b[i] = 0xff
			}
			at, n = plWorkspaceAt(t, b, 7)
			return b[:at+n/2]
		}},
		{"bytes after the last workspace", "snapshot has bytes after its last workspace", func(t *testing.T, b []byte) []byte {
			return append(b, 0)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			snaps.change = func(b []byte) []byte { return c.change(t, b) }
			defer func() { snaps.change = nil }()
			var first string
			for _, workers := range []int32{1, 4} {
				_, err := plDump(t, opts, workers)
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("%d decoders: error %v, want one containing %q", workers, err, c.want)
				}
				if first == "" {
					first = err.Error()
				} else if err.Error() != first {
					t.Fatalf("%d decoders: error %q, the serial load's %q", workers, err, first)
				}
			}
		})
	}
}
