package engine

import "backupmon/state"

// The assistant server's reads: its keys and its limit per workspace.

// AssistantKey is the caller an assistant-protocol key stands for: its
// workspace and whether it may change anything.
type AssistantKey struct {
	Workspace         BoardWorkspace
	KeyID, Name       string
	Prefix            string
	ReadWrite         bool
	CreatedAt, Expiry int64 // Unix ms; Expiry 0: never
	RetryAfter        int64 // seconds, with KeyRateLimited
}

// AssistantPerMinute is how many requests the assistant server takes from
// the assistant keys of one workspace in a minute (fixed UTC minutes on the
// engine's clock), whatever the number of keys: the REST API's Pro limit.
const AssistantPerMinute = restPerMinutePro

// Actor returns the activity log's actor for the key's changes.
func (k AssistantKey) Actor() string { return "assistant:" + k.Prefix }

// KeyCheck is the outcome of checking a key for the assistant server.
type KeyCheck uint8

// Outcomes of Engine.Assistant, in the order they are checked.
const (
	KeyOK          KeyCheck = iota
	KeyUnknown              // no such key, or revoked (401)
	KeyExpired              // past its expiry (401)
	KeyInactive             // its workspace is suspended, cancelled or out of trial (403)
	KeyWrongType            // a REST or report key (403)
	KeyRateLimited          // the workspace's assistant requests of this minute are used up (429)
	KeyFailed               // the engine is closing
)

// Assistant checks the key whose secret hashes to keyHash for the assistant
// server, in the REST API's order (key, workspace, key type, then the
// workspace's AssistantPerMinute), records its use, and returns the caller
// it stands for.
func (e *Engine) Assistant(keyHash [32]byte) (AssistantKey, KeyCheck) {
	ref := e.keys.get(&keyHash)
	if ref == nil {
		return AssistantKey{}, KeyUnknown
	}
	if e.closed.Load() {
		return AssistantKey{}, KeyFailed
	}
	type answer struct {
		k  AssistantKey
		ok KeyCheck
	}
	ch := make(chan answer, 1)
	if !ref.act.send(func(w *workspace) {
		k, now := ref.key, e.nowMs()
		switch {
		case k.Revoked:
			ch <- answer{ok: KeyUnknown}
		case k.ExpiresAt != 0 && now >= k.ExpiresAt:
			ch <- answer{ok: KeyExpired}
		case !w.Active(now):
			ch <- answer{ok: KeyInactive}
		case k.Type != "assistant":
			ch <- answer{ok: KeyWrongType}
		case !w.countAssistant(now):
			ch <- answer{k: AssistantKey{RetryAfter: ceilSeconds((now/state.MsPerMinute+1)*state.MsPerMinute - now)}, ok: KeyRateLimited}
		default:
			k.LastUsed.Store(now)
			ch <- answer{k: AssistantKey{Workspace: w.boardWorkspace(now), KeyID: k.ID.String(), Name: k.Name, Prefix: k.Prefix,
				ReadWrite: k.ReadWrite, CreatedAt: k.CreatedAt, Expiry: k.ExpiresAt}}
		}
	}) {
		return AssistantKey{}, KeyFailed
	}
	a := <-ch
	return a.k, a.ok
}

// countAssistant counts an assistant request against the workspace's
// minute; it returns false, counting nothing, when the minute's are used up.
// The count lives in memory only: a restart forgets the current minute's.
func (w *workspace) countAssistant(now int64) bool {
	minute := now / state.MsPerMinute
	if w.AsstMinute != minute {
		w.AsstMinute, w.AsstMinuteCount = minute, 0
	}
	if w.AsstMinuteCount >= AssistantPerMinute {
		return false
	}
	w.AsstMinuteCount++
	return true
}
