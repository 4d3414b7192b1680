package engine

import (
	"backupmon/state"
	"encoding/json"
	"testing"
	"time"
)

// The views are JSON; tests read them back into these shapes, with times as
// Unix milliseconds (0 for null).

type tTime int64

func (t *tTime) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*t = 0
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := time.Parse("2006-01-02T15:04:05.000Z", s)
	if err != nil {
		return err
	}
	*t = tTime(v.UnixMilli())
	return nil
}

type tJob struct {
	ID          string
	Status      string
	LastResult  string
	Paused      bool
	PausedUntil tTime
	Late        *struct {
		DueAt   tTime
		Minutes int64
	}
	Device  struct{ ID string }
	History []struct{ ID string }
}

type tAlert struct {
	ID              string
	Status          string
	SnoozedUntil    tTime
	ResolvedAt      tTime
	RecoverySeconds *int64
}

type tClient struct {
	ID     string
	Status string
}

func decode[T any](tb testing.TB, raw []byte) T {
	tb.Helper()
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		tb.Fatalf("decode %s: %v", raw, err)
	}
	return v
}

// jobOf returns the job object of j at now, decoded.
func (x *world) jobOf(j *state.Job, now int64) tJob {
	return decode[tJob](x.t, x.w.AppendJob(nil, j, now))
}

// alertOf returns the alert object of a at now, decoded.
func alertOf(tb testing.TB, a *state.Alert, now int64) tAlert {
	return decode[tAlert](tb, alertView(a, now).JSON)
}
