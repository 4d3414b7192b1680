package engine

import (
	"fmt"

	"backupmon/state"
)

// Moving whole workspaces between engines: `backupmon cluster import`
// reads each workspace of a single node's data directory (ExportWorkspace)
// and the cluster's shard that owns its id takes it in (ImportWorkspace).

// importPartBytes bounds one part of an imported workspace, so that a part
// and its record's header fit a message of a cluster's log (1 MiB) with
// room to spare.
var importPartBytes = 512 << 10

// ExportWorkspace returns a workspace's whole state as a snapshot holds it
// (layout state.SnapshotVersion), or a KindNotFound error.
func (e *Engine) ExportWorkspace(wsID string) ([]byte, error) {
	return read(e, wsID, func(w *workspace) []byte { return w.Encode(e.nowMs()) })
}

// ImportWorkspace takes in a whole workspace that ExportWorkspace gave on
// another engine (in layout version): logged in parts (ImportPart
// records), installed once the last is durable. It refuses, changing
// nothing, a workspace that does not decode (KindInvalid), one this engine
// holds already, or one whose id belongs to another shard
// (Options.WorkspaceID) (KindConflict); ErrFailed when the log fails.
func (e *Engine) ImportWorkspace(blob []byte, version uint64) error {
	if e.readOnly != nil {
		return ErrReadOnly
	}
	w, err := state.DecodeWorkspace(blob, version)
	if err != nil {
		return invalid("workspace", "the workspace does not decode: %v", err)
	}
	if e.opts.WorkspaceID != nil && !e.opts.WorkspaceID(w.ID) {
		return conflict("workspace %s belongs to another shard", w.ID)
	}
	parts := importParts(w, blob, version)
	e.globalMu.Lock()
	if _, exists := e.actors.Load(w.ID); exists {
		e.globalMu.Unlock()
		return conflict("workspace %s exists already", w.ID)
	}
	if e.closed.Load() {
		e.globalMu.Unlock()
		return ErrClosed
	}
	ch := make(chan error, len(parts))
	for _, p := range parts {
		e.submit(p, func(_ uint64, err error) { ch <- err })
	}
	a := e.addActor(w)
	a.ws.rebuildTimers(e.nowMs())
	go a.run()
	e.globalMu.Unlock()
	for range parts {
		if err := <-ch; err != nil {
			return ErrFailed
		}
	}
	a.send(func(*workspace) {}) // its first message runs what is due
	return nil
}

// importParts cuts a workspace's encoding into ImportPart records.
func importParts(w *state.Workspace, blob []byte, version uint64) []state.Record {
	of := (len(blob) + importPartBytes - 1) / importPartBytes
	parts := make([]state.Record, 0, of)
	for i := range of {
		end := min(len(blob), (i+1)*importPartBytes)
		p := &state.ImportPart{Part: uint32(i), Of: uint32(of), Version: version, Data: blob[i*importPartBytes : end]}
		p.Workspace, p.Seq = w.ID, w.Seq
		parts = append(parts, state.Bind(p))
	}
	return parts
}

// replayImport gathers an imported workspace's parts while the log is
// replayed and installs it at its last part, unless a snapshot holds it.
func (e *Engine) replayImport(r *state.ImportPart) error {
	id := state.ID(r.Workspace)
	if _, exists := e.actors.Load(id); exists {
		return nil
	}
	if e.imports == nil {
		e.imports = map[state.ID][]byte{}
	}
	if r.Part == 0 {
		e.imports[id] = nil
	}
	e.imports[id] = append(e.imports[id], r.Data...)
	if r.Part+1 < r.Of {
		return nil
	}
	blob := e.imports[id]
	delete(e.imports, id)
	w, err := state.DecodeWorkspace(blob, r.Version)
	if err != nil {
		return fmt.Errorf("imported workspace %s: %w", id, err)
	}
	e.addActor(w)
	return nil
}

// Routes is what a cluster's front needs to find a workspace's shard from
// what a request names, for secrets made where nothing carried the shard
// (a single node's, before `backupmon cluster import`): the SHA-256 of its
// keys' secrets and of its sessions' cookie values, and its jobs' ingest
// tokens.
type Routes struct {
	KeyHashes     [][32]byte
	SessionHashes [][32]byte
	IngestTokens  []string
	// RawRefs are the kept raw e-mails its unparsed entries name, which
	// must travel with it to wherever it is re-read.
	RawRefs []string
}

// WorkspaceRoutes returns a workspace's Routes, or a KindNotFound error.
func (e *Engine) WorkspaceRoutes(wsID string) (Routes, error) {
	return read(e, wsID, func(w *workspace) Routes { return routesOf(w.Workspace) })
}

// routesOf returns w's Routes.
func routesOf(w *state.Workspace) Routes {
	var r Routes
	for _, k := range w.Keys {
		if !k.Revoked {
			r.KeyHashes = append(r.KeyHashes, k.Hash)
		}
	}
	for _, s := range w.Sessions {
		r.SessionHashes = append(r.SessionHashes, s.Hash)
	}
	for _, j := range w.Jobs {
		if j.IngestToken != "" {
			r.IngestTokens = append(r.IngestTokens, j.IngestToken)
		}
	}
	for _, u := range w.Unparsed {
		if u.RawRef != "" {
			r.RawRefs = append(r.RawRefs, u.RawRef)
		}
	}
	return r
}
