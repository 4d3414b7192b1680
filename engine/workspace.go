package engine

import "backupmon/state"

// workspace is one workspace as its actor holds it: the durable state, which
// only the state machine changes (state.Workspace.Apply), and the runtime
// parts beside it that are never logged: the timers of time-driven work.
type workspace struct {
	*state.Workspace

	timers timerHeap // alert, delivery and trial instants (timers.go)
}
