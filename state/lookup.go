package state

import "strings"

func (w *Workspace) Client(id string) *Client {
	cid, ok := ParseID(id)
	if !ok {
		return nil
	}
	return w.Clients[cid]
}

func (w *Workspace) Job(id string) *Job {
	jid, ok := ParseID(id)
	if !ok {
		return nil
	}
	return w.Jobs[jid]
}

// nameBefore orders by name without case, then by id (decisions.md 5).
func NameBefore(a string, aid ID, b string, bid ID) bool {
	la, lb := strings.ToLower(a), strings.ToLower(b)
	if la != lb {
		return la < lb
	}
	return string(aid[:]) < string(bid[:])
}
