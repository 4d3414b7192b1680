package engine

import (
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
