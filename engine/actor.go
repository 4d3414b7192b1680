package engine

import (
	"time"

	"backupmon/intake"
	"backupmon/state"
)

// actor owns one workspace: a goroutine that runs the messages sent to its
// inbox one at a time, so the workspace's state needs no lock.
type actor struct {
	eng   *Engine
	ws    *workspace
	inbox *intake.Intake[func(w *workspace)]
	done  chan struct{} // closed when run returns

	// The wake-up for the workspace's next timer (real clock only; see
	// afterMessage). Only the actor's goroutine touches them.
	wake   *time.Timer
	wakeAt int64

	// deferred, while the log is replayed on several goroutines, keeps
	// the changes of the indexes across workspaces for their record's
	// turn (replay.go); nil: they are made at once.
	deferred *indexChanges
}

// inboxSize bounds each actor's queue; senders wait when it is full.
const inboxSize = 64

func newActor(e *Engine, w *workspace) *actor {
	return &actor{eng: e, ws: w, inbox: intake.New[func(*workspace)](inboxSize), done: make(chan struct{})}
}

// run serves the inbox until Engine.Close closes it, running every message
// that got in before that.
func (a *actor) run() {
	defer close(a.done)
	for fn := range a.inbox.C {
		a.beforeMessage()
		fn(a.ws)
		a.afterMessage()
	}
	if a.wake != nil {
		a.wake.Stop()
	}
}

// send puts fn in the inbox and reports whether it got in: once the actor
// is stopping (Engine.Close), it refuses. A message that got in is run, and
// so answered, even during Close.
func (a *actor) send(fn func(w *workspace)) bool { return a.inbox.Send(fn) }

// stop makes the actor refuse new messages, lets it run those already
// queued, and waits until it has. Calling it again only waits.
func (a *actor) stop() {
	a.inbox.Close()
	<-a.done
}

// applyNew gives rec the workspace's next sequence number and applies it.
// The caller then hands it to the log with eng.submit.
func (a *actor) applyNew(rec state.Record) error {
	if a.eng.readOnly != nil {
		return ErrReadOnly
	}
	rec.Head().Workspace = a.ws.ID
	rec.Head().Seq = a.ws.Seq + 1
	return a.ws.Apply(rec, a)
}

// ask runs fn in the actor and returns its answer, or the zero value once
// the engine is closed.
func ask[T any](a *actor, fn func(w *workspace) T) T {
	if a.eng.closed.Load() {
		var zero T
		return zero
	}
	ch := make(chan T, 1)
	if !a.send(func(w *workspace) { ch <- fn(w) }) {
		var zero T
		return zero
	}
	return <-ch
}

// ask2 is ask for a function of two results; on a closed engine both are
// zero.
func ask2[T, U any](a *actor, fn func(w *workspace) (T, U)) (T, U) {
	type pair struct {
		t T
		u U
	}
	p := ask(a, func(w *workspace) pair {
		t, u := fn(w)
		return pair{t, u}
	})
	return p.t, p.u
}

// decision is what a command decided in the actor: a record to log (nil when
// nothing changes) and the answer to give once it is durable.
type decision[T any] struct {
	rec    state.Record
	answer func(w *workspace) T // built after rec is applied; may be nil
	value  T                    // the answer when answer is nil
}

type outcome[T any] struct {
	v   T
	err error
}

// change runs decide in the actor at the engine's current time; when it
// returns a record, the record is applied and logged and change returns only
// once it is durable. A failed log write answers ErrFailed, a closed engine
// ErrClosed.
func change[T any](a *actor, decide func(w *workspace, now int64) (decision[T], error)) (T, error) {
	if a.eng.closed.Load() {
		var zero T
		return zero, ErrClosed
	}
	ch := make(chan outcome[T], 1)
	sent := a.send(func(w *workspace) {
		d, err := decide(w, a.eng.nowMs())
		if err != nil {
			ch <- outcome[T]{err: err}
			return
		}
		var notices []state.Notice
		if d.rec != nil {
			if err := a.applyNew(d.rec); err != nil {
				ch <- outcome[T]{err: err}
				return
			}
			notices = a.takeFresh(a.eng.nowMs())
		}
		dropped := w.TakeDropped()
		v := d.value
		if d.answer != nil {
			v = d.answer(w)
		}
		if d.rec == nil {
			ch <- outcome[T]{v: v}
			return
		}
		a.eng.submit(d.rec, func(_ uint64, err error) {
			if err != nil {
				ch <- outcome[T]{err: ErrFailed}
				return
			}
			a.eng.deliverAll(notices)
			a.eng.dropRaw(dropped)
			ch <- outcome[T]{v: v}
		})
	})
	if !sent {
		var zero T
		return zero, ErrClosed
	}
	o := <-ch
	return o.v, o.err
}

// read runs fn in workspace wsID's actor and returns its answer, or a
// KindNotFound error for an unknown workspace; once the engine is closed,
// the zero value.
func read[T any](e *Engine, wsID string, fn func(w *workspace) T) (T, error) {
	a, err := e.workspaceActor(wsID)
	if err != nil {
		var zero T
		return zero, err
	}
	return ask(a, fn), nil
}

// command runs decide in workspace wsID's actor, as change does, or returns
// a KindNotFound error for an unknown workspace.
func command[T any](e *Engine, wsID string, decide func(w *workspace, now int64) (decision[T], error)) (T, error) {
	a, err := e.workspaceActor(wsID)
	if err != nil {
		var zero T
		return zero, err
	}
	return change(a, decide)
}

// remove runs the command of a removal: check finds, in the workspace, the
// id of what is removed (or answers why not), and mk makes its record from
// a Removal with that id, a new activity id, the time and the actor.
func (e *Engine) remove(wsID, actor string, check func(w *workspace) (state.ID, error), mk func(state.Removal) state.Record) error {
	_, err := command(e, wsID, func(w *workspace, now int64) (decision[struct{}], error) {
		id, err := check(w)
		if err != nil {
			return decision[struct{}]{}, err
		}
		return decision[struct{}]{rec: mk(state.Removal{ID: id, ActivityID: w.IDs.Next(now), At: now, Actor: actor})}, nil
	})
	return err
}

// lookup reads an id given as text and checks that has holds it; else a
// KindNotFound error naming what.
func lookup(raw, what string, has func(id state.ID) bool) (state.ID, error) {
	id, ok := state.ParseID(raw)
	if !ok || !has(id) {
		return state.ID{}, notFound(what)
	}
	return id, nil
}
