package engine

import "backupmon/state"

// workspace is one workspace as its actor holds it: the durable state, which
// only the state machine changes (state.Workspace.Apply), and the runtime
// parts beside it that are never logged: the timers of time-driven work and
// the rate counters of the APIs.
type workspace struct {
	*state.Workspace

	timers timerHeap // alert, delivery and trial instants (timers.go)

	// REST API and assistant server limits: the current UTC minute and its
	// count (the month's count is durable: state.Workspace.RESTMonth).
	restMinute      int64
	restMinuteCount int64
	asstMinute      int64
	asstMinuteCount int64
}
