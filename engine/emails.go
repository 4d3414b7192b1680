package engine

import (
	"bytes"
	"slices"
	"strings"
	"sync"

	"backupmon/state"
)

// emailIndex finds the users an e-mail address names, one per workspace at
// most: an MSP's technician may be a user of several workspaces.
type emailIndex struct {
	mu sync.RWMutex
	m  map[string]map[state.ID]*personRef // lower-case e-mail → workspace → user
}

func (x *emailIndex) put(email string, wsID state.ID, ref *personRef) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.m == nil {
		x.m = map[string]map[state.ID]*personRef{}
	}
	byWS := x.m[email]
	if byWS == nil {
		byWS = map[state.ID]*personRef{}
		x.m[email] = byWS
	}
	byWS[wsID] = ref
}

func (x *emailIndex) drop(email string, wsID state.ID) {
	x.mu.Lock()
	defer x.mu.Unlock()
	delete(x.m[email], wsID)
	if len(x.m[email]) == 0 {
		delete(x.m, email)
	}
}

// get returns the users of an e-mail address (any case), by workspace id.
func (x *emailIndex) get(email string) []*personRef {
	x.mu.RLock()
	byWS := x.m[strings.ToLower(email)]
	refs := make([]*personRef, 0, len(byWS))
	ids := make([]state.ID, 0, len(byWS))
	for id := range byWS {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b state.ID) int { return bytes.Compare(a[:], b[:]) })
	for _, id := range ids {
		refs = append(refs, byWS[id])
	}
	x.mu.RUnlock()
	return refs
}

// Clear forgets every address.
func (x *emailIndex) Clear() {
	x.mu.Lock()
	x.m = nil
	x.mu.Unlock()
}

// Membership is a workspace an e-mail address is a user of.
type Membership struct{ ID, Name string }

// Memberships returns the workspaces whose users include email (any case),
// by name; none for an unknown address.
func (e *Engine) Memberships(email string) []Membership {
	var out []Membership
	for _, ref := range e.people.emails.get(email) {
		m := ask(ref.act, func(w *workspace) Membership {
			if w.Users[ref.id] == nil {
				return Membership{}
			}
			return Membership{ID: w.ID.String(), Name: w.Name}
		})
		if m.ID != "" {
			out = append(out, m)
		}
	}
	slices.SortStableFunc(out, func(a, b Membership) int { return strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name)) })
	return out
}
