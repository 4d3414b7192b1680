package engine

import "backupmon/state"

// The actor is its workspace's state.Hooks: what Apply tells it goes to the
// engine's indexes across workspaces (keys, ingest tokens, people) and to
// the actor's own timers.

var _ state.Hooks = (*actor)(nil)

// KeyAdded indexes a new key's hash.
func (a *actor) KeyAdded(w *state.Workspace, k *state.Key) { a.eng.keyAdded(w, k) }

// KeyRemoved drops a revoked key's hash.
func (a *actor) KeyRemoved(w *state.Workspace, k *state.Key) { a.eng.keyRemoved(w, k) }

// IngestAdded indexes a job's ingest token.
func (a *actor) IngestAdded(w *state.Workspace, j *state.Job) { a.eng.ingestAdded(w, j) }

// IngestRemoved drops a retired ingest token.
func (a *actor) IngestRemoved(token string) { a.eng.ingestRemoved(token) }

// UserAdded indexes a user's e-mail address.
func (a *actor) UserAdded(w *state.Workspace, u *state.User) { a.eng.userAdded(w, u) }

// UserRemoved drops a user's e-mail address.
func (a *actor) UserRemoved(email string) { a.eng.userRemoved(a.ws.ID, email) }

// SessionAdded indexes a session's hash.
func (a *actor) SessionAdded(w *state.Workspace, s *state.Session) { a.eng.sessionAdded(w, s) }

// SessionRemoved drops an ended session's hash.
func (a *actor) SessionRemoved(hash [32]byte) { a.eng.sessionRemoved(hash) }

// Schedule sets a timer of the actor's workspace.
func (a *actor) Schedule(at int64, kind uint8, al *state.Alert, d *state.Delivery) {
	a.ws.timers.Push(at, timer{kind: kind, al: al, del: d})
}
