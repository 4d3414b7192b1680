package engine

import (
	"backupmon/state"
	"time"
)

// The command that moves the development clock.

// MaxClock is the latest time the development clock may show: every time is
// printed with a four-digit year (api.md 2.1).
var MaxClock = time.Date(9999, 12, 31, 23, 59, 59, 999e6, time.UTC)

// SetClock sets the development clock to set (when not zero), then moves
// it forward by advance, logs the new time and returns it. It returns
// ErrNoDevClock without a development clock, and a KindInvalid error naming
// advanceSeconds for a negative advance or one that would put the clock
// after MaxClock; the clock is then unchanged.
func (e *Engine) SetClock(set time.Time, advance time.Duration) (time.Time, error) {
	if e.dev == nil {
		return time.Time{}, ErrNoDevClock
	}
	if advance < 0 {
		return time.Time{}, invalid("advanceSeconds", "advanceSeconds must not be negative")
	}
	e.globalMu.Lock()
	now := e.dev.Now()
	if !set.IsZero() {
		now = set.UTC().Truncate(time.Millisecond)
	}
	// MaxClock.Sub stops at the largest Duration, which no advance exceeds.
	if now.After(MaxClock) || advance > MaxClock.Sub(now) {
		e.globalMu.Unlock()
		return time.Time{}, invalid("advanceSeconds", "advanceSeconds would move the clock past 9999-12-31T23:59:59.999Z")
	}
	now = now.Add(advance)
	e.dev.Set(now)
	now = e.dev.Now()
	ch := make(chan error, 1)
	e.submit(state.Bind(&state.ClockSet{Now: now.UnixMilli()}), func(_ uint64, err error) { ch <- err })
	e.globalMu.Unlock()
	if err := <-ch; err != nil {
		return time.Time{}, ErrFailed
	}
	// Every timer that came due has run, and what it recorded is durable,
	// before the call answers (decisions.md 8).
	if err := e.fireDue(); err != nil {
		return time.Time{}, ErrFailed
	}
	return now, nil
}
