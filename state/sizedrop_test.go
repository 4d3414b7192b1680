package state

import (
	"testing"
)

// sdWorld is a workspace with one client and one daily job, built by
// applying records as replay does.
type sdWorld struct {
	t   *testing.T
	w   *Workspace
	ids *IDGen
	j   *Job
	at  int64
}

const sdT0 = int64(1_780_000_000_000)

func newSDWorld(t *testing.T) *sdWorld {
	t.Helper()
	ids := NewIDGen()
	w, err := NewWorkspace(&WorkspaceCreated{Header: Header{Workspace: ids.Next(sdT0), Seq: 1}, Name: "W", TimeZone: "UTC", Plan: "pro", Status: "active", CreatedAt: sdT0})
	if err != nil {
		t.Fatal(err)
	}
	x := &sdWorld{t: t, w: w, ids: ids, at: sdT0}
	cid := ids.Next(sdT0)
	x.apply(&ClientCreated{ID: cid, ActivityID: ids.Next(sdT0), Name: "C", Status: "active", CreatedAt: sdT0})
	jid := ids.Next(sdT0)
	x.apply(&JobCreated{ID: jid, ClientID: cid, DeviceID: ids.Next(sdT0), ActivityID: ids.Next(sdT0), Name: "J", Vendor: "veeam",
		DeviceName: "d", DeviceType: "server", Hostname: "h", IntervalMinutes: 1440, GraceMinutes: 60, ExpectedDays: AllDays, SLATarget: 95, CreatedAt: sdT0, IngestToken: "t"})
	x.j = w.Jobs[jid]
	return x
}

func (x *sdWorld) apply(rec Record) {
	x.t.Helper()
	rec.Head().Workspace = x.w.ID
	rec.Head().Seq = x.w.Seq + 1
	if err := x.w.Apply(rec, NopHooks{}); err != nil {
		x.t.Fatal(err)
	}
}

// report adds a result of status (1 ok, 3 failed) and size a day after the
// last one and returns its id.
func (x *sdWorld) report(status uint8, size int64) ID {
	x.at += MsPerDay
	id := x.ids.Next(x.at)
	x.apply(&Report{JobID: x.j.ID, ResultID: id, Status: status, ReceivedAt: x.at, CompletedAt: x.at, DurationSeconds: 60, SizeBytes: size})
	return id
}

func TestSizeDropOf(t *testing.T) {
	const gb = 1_000_000_000
	type run struct {
		status uint8
		size   int64
	}
	ok := func(sizes ...int64) []run {
		var r []run
		for _, s := range sizes {
			r = append(r, run{ResultOK, s})
		}
		return r
	}
	cases := []struct {
		name    string
		runs    []run
		percent int // 0: the default; -1: the check off
		below   int // 0: not flagged
	}{
		{"far below the median of ten", ok(10*gb, 12*gb, 11*gb, 10*gb, 9*gb, 10*gb, 10*gb, 10*gb, 10*gb, 10*gb, 800_000_000), 0, 92},
		{"just under half", ok(10*gb, 10*gb, 10*gb, 5*gb-1), 0, 50},
		{"exactly half is not under half", ok(10*gb, 10*gb, 10*gb, 5*gb), 0, 0},
		{"two earlier runs are too few", ok(10*gb, 10*gb, 1*gb), 0, 0},
		{"only the last ten count", ok(1*gb, 1*gb, 1*gb, 1*gb, 1*gb, 1*gb, 10*gb, 10*gb, 10*gb, 10*gb, 10*gb, 10*gb, 10*gb, 10*gb, 10*gb, 10*gb, 4*gb), 0, 60},
		{"a median of an even count", ok(4*gb, 8*gb, 10*gb, 12*gb, 2*gb), 0, 78},
		{"failures in between are skipped", append(append(ok(10*gb, 10*gb, 10*gb), run{ResultFailed, 0}, run{ResultFailed, 0}), ok(2*gb)...), 0, 80},
		{"a failure after the drop leaves it flagged", append(ok(10*gb, 10*gb, 10*gb, 1*gb), run{ResultFailed, 0}), 0, 90},
		{"a normal run after the drop clears it", ok(10*gb, 10*gb, 10*gb, 1*gb, 10*gb), 0, 0},
		{"the latest ok run without a size is not judged", ok(10*gb, 10*gb, 10*gb, 1*gb, -1), 0, 0},
		{"runs without a size are not in the median", ok(10*gb, -1, 10*gb, -1, 10*gb, 1*gb), 0, 90},
		{"a job's own threshold of 90%", ok(10*gb, 10*gb, 10*gb, 8*gb), 90, 20},
		{"a job's own threshold of 10%", ok(10*gb, 10*gb, 10*gb, 2*gb), 10, 0},
		{"off", ok(10*gb, 10*gb, 10*gb, 1), -1, 0},
		{"a median of zero", ok(0, 0, 0, 0), 0, 0},
		{"huge sizes", ok(1<<62, 1<<62, 1<<62, 1<<60), 0, 75},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			x := newSDWorld(t)
			switch {
			case c.percent > 0:
				x.apply(&SizeDropSet{JobID: x.j.ID, ActivityID: x.ids.Next(x.at), Percent: uint8(c.percent), At: x.at})
			case c.percent < 0:
				x.apply(&SizeDropSet{JobID: x.j.ID, ActivityID: x.ids.Next(x.at), Percent: 0, At: x.at})
			}
			var lastOK ID
			for _, r := range c.runs {
				id := x.report(r.status, r.size)
				if r.status == ResultOK {
					lastOK = id
				}
			}
			d := SizeDropOf(x.j)
			if d.Below != c.below || d.Flagged() != (c.below > 0) {
				t.Fatalf("SizeDropOf: %+v, want %d%% below (flagged %v)", d, c.below, c.below > 0)
			}
			if d.Flagged() && d.ResultID != lastOK {
				t.Errorf("flagged result %s, want the latest ok one %s", d.ResultID, lastOK)
			}
		})
	}
}

// TestSizeDropNotice: a flagged run queues one job.size_drop delivery per
// channel that takes warnings, with the flag's text, and no alert; a run
// that is not flagged queues none, and a paused job's run none.
func TestSizeDropNotice(t *testing.T) {
	x := newSDWorld(t)
	warn, crit := x.ids.Next(x.at), x.ids.Next(x.at)
	x.apply(&ChannelCreated{ID: warn, ActivityID: x.ids.Next(x.at), ChannelType: ChannelWebhook, Name: "w", URL: "https://example.com/h", MinSeverity: SeverityWarning, CreatedAt: x.at})
	x.apply(&ChannelCreated{ID: crit, ActivityID: x.ids.Next(x.at), ChannelType: ChannelWebhook, Name: "c", URL: "https://example.com/c", MinSeverity: SeverityCritical, CreatedAt: x.at})
	for range 4 {
		x.report(ResultOK, 10_000_000_000)
	}
	if n := len(x.w.Deliveries); n != 0 {
		t.Fatalf("%d deliveries after normal runs, want none", n)
	}
	id := x.report(ResultOK, 800_000_000)
	if len(x.w.Deliveries) != 1 {
		t.Fatalf("%d deliveries after the drop, want 1 (the warning channel's)", len(x.w.Deliveries))
	}
	d := x.w.Deliveries[0]
	if d.Event != EventSizeDrop || d.ChannelID != warn || !d.AlertID.IsZero() || d.JobID != x.j.ID || d.Notice == nil {
		t.Fatalf("delivery %+v, want job.size_drop to the warning channel without an alert", d)
	}
	want := "size 92% below usual: 800.0 MB against a median of 10.0 GB over the last 4 successful runs"
	if n := d.Notice; n.Summary != want || n.Alert != nil || n.AlertType != SizeDropType || n.Severity != "warning" || n.JobName != "J" {
		t.Errorf("notice %+v, want summary %q, no alert, type %s, warning", n, want, SizeDropType)
	}
	if x.j.Alert != nil || len(x.w.Alerts) != 0 {
		t.Errorf("a size drop opened an alert")
	}
	if got := SizeDropOf(x.j); got.ResultID != id {
		t.Errorf("flagged %s, want %s", got.ResultID, id)
	}
	// A second small run is measured against the last runs, the first
	// drop among them: 0.8 GB against a median of 10 GB again.
	x.report(ResultOK, 700_000_000)
	if len(x.w.Deliveries) != 2 {
		t.Errorf("%d deliveries after a second drop, want 2", len(x.w.Deliveries))
	}
	// Paused: no notice.
	x.apply(&JobUpdated{ID: x.j.ID, ActivityID: x.ids.Next(x.at), Fields: JobPaused, Paused: true, At: x.at + 1})
	x.report(ResultOK, 1)
	if len(x.w.Deliveries) != 2 {
		t.Errorf("%d deliveries after a paused job's drop, want still 2", len(x.w.Deliveries))
	}
}

// TestSizeDropSnapshot: a job's own threshold survives a snapshot.
func TestSizeDropSnapshot(t *testing.T) {
	x := newSDWorld(t)
	x.apply(&SizeDropSet{JobID: x.j.ID, ActivityID: x.ids.Next(x.at), Percent: 0, At: x.at})
	w, err := DecodeWorkspace(x.w.Encode(x.at), SnapshotVersion)
	if err != nil {
		t.Fatal(err)
	}
	if got := w.Jobs[x.j.ID].SizeDrop; got != (SizeDropSetting{Set: true, Percent: 0}) {
		t.Errorf("after a snapshot the threshold is %+v, want off (set, 0%%)", got)
	}
	x.apply(&SizeDropSet{JobID: x.j.ID, ActivityID: x.ids.Next(x.at), Default: true, At: x.at})
	w, err = DecodeWorkspace(x.w.Encode(x.at), SnapshotVersion)
	if err != nil {
		t.Fatal(err)
	}
	if got := w.Jobs[x.j.ID].SizeDropPercent(); got != DefaultSizeDropPercent {
		t.Errorf("after a return to the default and a snapshot the threshold is %d, want %d", got, DefaultSizeDropPercent)
	}
}
