package engine

import (
	"sync"
	"time"
)

// Clock tells the engine what time it is. Every time the engine uses comes
// from a Clock: Options.Clock for the times it records and shows,
// Options.Timing for pacing its own work; nothing in the engine reads the
// system time directly.
type Clock interface {
	Now() time.Time
}

// SystemClock is the real clock.
type SystemClock struct{}

// Now returns the current system time.
func (SystemClock) Now() time.Time { return time.Now() }

// DevClock is the development clock: it stands still until it is set or
// moved forward, so tests see exact times.
type DevClock struct {
	mu  sync.Mutex
	now time.Time
}

// NewDevClock returns a development clock standing at start.
func NewDevClock(start time.Time) *DevClock {
	return &DevClock{now: start.UTC().Truncate(time.Millisecond)}
}

// Now returns the clock's current time.
func (c *DevClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Set puts the clock at t (truncated to milliseconds).
func (c *DevClock) Set(t time.Time) {
	c.mu.Lock()
	c.now = t.UTC().Truncate(time.Millisecond)
	c.mu.Unlock()
}
