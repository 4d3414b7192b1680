package engine

import "backupmon/state"

// The actor is its workspace's state.Hooks: what Apply tells it goes to the
// engine's indexes across workspaces (keys, ingest tokens, people) and to
// the actor's own timers.

var _ state.Hooks = (*actor)(nil)

// KeyAdded indexes a new key's hash.
func (a *actor) KeyAdded(_ *state.Workspace, k *state.Key) {
	r := &keyRef{hash: k.Hash, act: a, key: k}
	if a.deferred != nil { // the closure only then: a load adds every key
		a.deferred.add(func(e *Engine) { e.keys.put(r) })
		return
	}
	a.eng.keys.put(r)
}

// KeyRemoved drops a revoked key's hash.
func (a *actor) KeyRemoved(_ *state.Workspace, k *state.Key) {
	h := k.Hash
	a.index(func(e *Engine) { e.keys.remove(&h) })
}

// IngestAdded indexes a job's ingest token.
func (a *actor) IngestAdded(_ *state.Workspace, j *state.Job) {
	token := j.IngestToken
	if token == "" {
		return
	}
	r := &ingestRef{act: a, jobID: j.ID}
	if a.deferred != nil { // as KeyAdded
		a.deferred.add(func(e *Engine) { e.ingest.put(token, r) })
		return
	}
	a.eng.ingest.put(token, r)
}

// indexAll indexes everything of a workspace just loaded or made: its
// keys, its jobs' ingest tokens, its users and its sessions.
func (a *actor) indexAll() {
	w := a.ws.Workspace
	for _, k := range w.Keys {
		a.KeyAdded(w, k)
	}
	for _, j := range w.Jobs {
		a.IngestAdded(w, j)
	}
	for _, u := range w.Users {
		a.UserAdded(w, u)
	}
	for _, s := range w.Sessions {
		a.SessionAdded(w, s)
	}
}

// IngestRemoved drops a retired ingest token.
func (a *actor) IngestRemoved(token string) {
	if token != "" {
		a.index(func(e *Engine) { e.ingest.remove(token) })
	}
}

// UserAdded indexes a user's e-mail address.
func (a *actor) UserAdded(w *state.Workspace, u *state.User) {
	email, r := u.Email, &personRef{act: a, id: u.ID}
	a.index(func(e *Engine) { e.people.emails.put(email, w.ID, r) })
}

// UserRemoved drops a user's e-mail address.
func (a *actor) UserRemoved(email string) {
	a.index(func(e *Engine) { e.people.emails.drop(email, a.ws.ID) })
}

// SessionAdded indexes a session's hash.
func (a *actor) SessionAdded(_ *state.Workspace, s *state.Session) {
	h, r := s.Hash, &personRef{act: a, id: s.ID}
	a.index(func(e *Engine) { e.people.sessions.Store(h, r) })
}

// SessionRemoved drops an ended session's hash.
func (a *actor) SessionRemoved(hash [32]byte) {
	a.index(func(e *Engine) { e.people.sessions.Delete(hash) })
}

// index makes a change of the indexes across workspaces: at once, or,
// while the log is replayed on several goroutines, in its record's turn
// (replay.go). The change is made of values taken now.
func (a *actor) index(change func(e *Engine)) {
	if a.deferred != nil {
		a.deferred.add(change)
		return
	}
	change(a.eng)
}

// Schedule sets a timer of the actor's workspace.
func (a *actor) Schedule(at int64, kind uint8, al *state.Alert, d *state.Delivery) {
	a.ws.timers.Push(at, timer{kind: kind, al: al, del: d})
}
