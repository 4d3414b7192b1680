package engine

import (
	"backupmon/state"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestSnoozeUntil(t *testing.T) {
	london, _ := time.LoadLocation("Europe/London")
	now := time.Date(2026, 10, 24, 23, 30, 0, 0, time.UTC) // 00:30 BST on the 25th
	next := now.Add(5 * time.Hour).UnixMilli()
	for _, tc := range []struct {
		preset string
		alert  BoardAlert
		want   time.Time
		msg    string
	}{
		{"1h", BoardAlert{}, now.Add(time.Hour), ""},
		{"4h", BoardAlert{}, now.Add(4 * time.Hour), ""},
		// Tomorrow in London is the 26th, after the clocks went back: 08:00 GMT.
		{"tomorrow", BoardAlert{}, time.Date(2026, 10, 26, 8, 0, 0, 0, time.UTC), ""},
		{"next", BoardAlert{NextRunAt: next}, time.UnixMilli(next), ""},
		{"next", BoardAlert{}, time.Time{}, "its job is paused: it has no next expected run"},
		{"", BoardAlert{}, time.Time{}, "choose how long to snooze"},
	} {
		got, msg := SnoozeUntil(tc.preset, tc.alert, now, london)
		if !got.Equal(tc.want) || msg != tc.msg {
			t.Errorf("SnoozeUntil(%q) = %v, %q; want %v, %q", tc.preset, got.UTC(), msg, tc.want, tc.msg)
		}
	}
}

func TestTriageAlerts(t *testing.T) {
	t0 := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	b := newBoard(t, "Europe/Berlin", t0)
	c := b.client("Acme")
	j1 := b.job(c, "Nightly", "veeam", "srv1", 1440, 60)
	j2 := b.job(c, "Files", "veeam", "srv2", 1440, 60)
	b.report(j1, state.ResultFailed)
	b.report(j2, state.ResultFailed)
	a1, a2 := b.alert(j1), b.alert(j2)
	other := newBoard(t, "UTC", t0)
	oj := other.job(other.client("Other"), "Theirs", "veeam", "x", 1440, 60)
	other.report(oj, state.ResultFailed)
	foreign := other.alert(oj)

	t.Run("refused whole", func(t *testing.T) {
		for _, tc := range []struct {
			ids  []string
			tr   Triage
			want string
		}{
			{nil, Triage{Action: Acknowledge}, "name at least one alert"},
			{make([]string, MaxTriage+1), Triage{Action: Acknowledge}, "name at most 1000 alerts at once"},
			{[]string{a1}, Triage{Action: Acknowledge, Note: strings.Repeat("é", 1001)}, "note must be at most 1000 characters"},
		} {
			if len(tc.ids) > 1 {
				for i := range tc.ids {
					tc.ids[i] = fmt.Sprint(i)
				}
			}
			_, err := b.e.TriageAlerts(b.ws, tc.ids, tc.tr)
			var e *Error
			if !errors.As(err, &e) || e.Kind != KindInvalid || e.Message != tc.want {
				t.Errorf("TriageAlerts(%d ids) error %v, want invalid %q", len(tc.ids), err, tc.want)
			}
		}
		if p := b.page(j1); p.Job.Alert.Status != "open" {
			t.Fatalf("alert changed by a refused command: %s", p.Job.Alert.Status)
		}
	})

	t.Run("acknowledge, duplicates and foreign ids", func(t *testing.T) {
		out, err := b.e.TriageAlerts(b.ws, []string{a1, a1, foreign, "nonsense"}, Triage{Action: Acknowledge, Actor: "assistant:svc_live_abc", Note: "on it"})
		check(t, "triage", err)
		if len(out) != 3 {
			t.Fatalf("%d outcomes, want 3 (duplicates once): %+v", len(out), out)
		}
		if o := out[0]; !o.Changed || !o.Found || o.Alert.Status != "acknowledged" || o.Alert.AcknowledgedAt != t0.UnixMilli() {
			t.Errorf("own alert: %+v", o)
		}
		for _, o := range out[1:] {
			if o.Changed || o.Found || o.Problem != "alert not found" {
				t.Errorf("unknown alert %s: %+v", o.AlertID, o)
			}
		}
		if p := other.page(oj); p.Job.Alert.Status != "open" {
			t.Errorf("the other workspace's alert is %s", p.Job.Alert.Status)
		}
		acts, err := b.e.Activity(b.ws)
		check(t, "activity", err)
		if a := acts[0]; a.Type != "alert.acknowledged" || a.Actor != "assistant:svc_live_abc" || a.AlertID != a1 {
			t.Errorf("newest activity entry %+v", a)
		}
	})

	t.Run("snooze presets", func(t *testing.T) {
		out, err := b.e.TriageAlerts(b.ws, []string{a1, a2}, Triage{Action: Snooze, Preset: PresetTomorrow, Actor: "user:a@x.test"})
		check(t, "snooze", err)
		// Tomorrow 08:00 in Berlin (CET, UTC+1) is 07:00 UTC.
		want := time.Date(2026, 11, 3, 7, 0, 0, 0, time.UTC).UnixMilli()
		for _, o := range out {
			if !o.Changed || o.Alert.Status != "snoozed" || o.Alert.SnoozedUntil != want {
				t.Errorf("snoozed %+v, want until %d", o, want)
			}
		}
		_, err = b.e.PauseJob(b.ws, j2, time.Time{}, "user:a@x.test", "maintenance")
		check(t, "pause", err)
		out, err = b.e.TriageAlerts(b.ws, []string{a2}, Triage{Action: Snooze, Preset: PresetNextRun})
		check(t, "snooze next", err)
		if o := out[0]; o.Changed || o.Problem != "its job is paused: it has no next expected run" {
			t.Errorf("snooze of a paused job's alert: %+v", o)
		}
		_, err = b.e.ResumeJob(b.ws, j2, "user:a@x.test", "")
		check(t, "resume", err)
	})

	t.Run("resolve twice", func(t *testing.T) {
		out, err := b.e.TriageAlerts(b.ws, []string{a1}, Triage{Action: Resolve})
		check(t, "resolve", err)
		if !out[0].Changed || out[0].Alert.Status != "resolved" {
			t.Fatalf("resolve: %+v", out[0])
		}
		out, err = b.e.TriageAlerts(b.ws, []string{a1}, Triage{Action: Resolve})
		check(t, "resolve again", err)
		if o := out[0]; o.Changed || !o.Found || o.Problem != "alert is already resolved" {
			t.Errorf("second resolve: %+v", o)
		}
	})
}

func TestAssistantKeyCheck(t *testing.T) {
	t0 := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	b := newBoard(t, "UTC", t0)
	ids := map[string]string{} // secret → key id
	mk := func(typ, access string, expires time.Time) string {
		in := KeyInput{Name: Some(typ + access), Type: Some(typ)}
		if access != "" {
			in.Access = Some(access)
		}
		if !expires.IsZero() {
			in.ExpiresAt = Some(expires)
		}
		v, err := b.e.CreateKey(b.ws, in)
		check(t, "create key", err)
		ids[v.Key] = v.ID
		return v.Key
	}
	ro, rw, rest := mk("assistant", "", time.Time{}), mk("assistant", "read-write", time.Time{}), mk("rest", "", time.Time{})
	report, soon := mk("report", "", time.Time{}), mk("assistant", "", t0.Add(time.Hour))
	for _, tc := range []struct {
		name   string
		secret string
		want   KeyCheck
		rw     bool
	}{
		{"read-only", ro, KeyOK, false},
		{"read-write", rw, KeyOK, true},
		{"rest key", rest, KeyWrongType, false},
		{"report key", report, KeyWrongType, false},
		{"unknown", "svc_live_" + strings.Repeat("0", 48), KeyUnknown, false},
		{"not expired yet", soon, KeyOK, false},
	} {
		k, got := b.e.Assistant(HashKey([]byte(tc.secret)))
		if got != tc.want || k.ReadWrite != tc.rw {
			t.Errorf("%s: %v read-write %v, want %v %v", tc.name, got, k.ReadWrite, tc.want, tc.rw)
		}
		if got == KeyOK && (k.Workspace.ID != b.ws || k.Prefix != tc.secret[:16] || k.Actor() != "assistant:"+tc.secret[:16]) {
			t.Errorf("%s: key %+v", tc.name, k)
		}
	}
	b.at(t0.Add(time.Hour))
	if _, got := b.e.Assistant(HashKey([]byte(soon))); got != KeyExpired {
		t.Errorf("expired key: %v", got)
	}
	check(t, "revoke", b.e.RevokeKey(b.ws, ids[rw], "admin"))
	if _, got := b.e.Assistant(HashKey([]byte(rw))); got != KeyUnknown {
		t.Errorf("revoked key: %v", got)
	}
	_, err := b.e.UpdateWorkspace(b.ws, WorkspaceInput{Status: Some("suspended")})
	check(t, "suspend", err)
	if _, got := b.e.Assistant(HashKey([]byte(ro))); got != KeyInactive {
		t.Errorf("key of a suspended workspace: %v", got)
	}
}
