package state

import (
	"sort"
	"strings"
)

// The ordered indexes behind the REST API's pages (decisions.md 5): clients
// and jobs by name without case then id (workspace-wide and per client),
// results by receipt then id (per status and vendor in resultindex.go, and
// per job), alerts by creation then id (workspace-wide, per job, and the
// unresolved ones). apply keeps them current; a page is a binary search to
// the cursor's position in each index the filters select, and a walk of at
// most the page.

// sortKey is the case-free form names are ordered by.
func sortKey(name string) string { return strings.ToLower(name) }

func clientBefore(a, b *Client) bool {
	if a.Key != b.Key {
		return a.Key < b.Key
	}
	return string(a.ID[:]) < string(b.ID[:])
}

func JobBefore(a, b *Job) bool {
	if a.Key != b.Key {
		return a.Key < b.Key
	}
	return string(a.ID[:]) < string(b.ID[:])
}

func AlertBefore(a, b *Alert) bool {
	if a.CreatedAt != b.CreatedAt {
		return a.CreatedAt < b.CreatedAt
	}
	return string(a.ID[:]) < string(b.ID[:])
}

// insertOrdered puts v into s, which is ordered by before; appending when v
// sorts last, as new items almost always do.
func insertOrdered[T any](s []T, v T, before func(a, b T) bool) []T {
	n := len(s)
	if n == 0 || !before(v, s[n-1]) {
		return append(s, v)
	}
	i := sort.Search(n, func(i int) bool { return before(v, s[i]) })
	s = append(s, v)
	copy(s[i+1:], s[i:])
	s[i] = v
	return s
}

// removeItem drops v (compared with ==) from s, keeping the order.
func removeItem[T comparable](s []T, v T) []T {
	for i := range s {
		if s[i] == v {
			copy(s[i:], s[i+1:])
			var zero T
			s[len(s)-1] = zero
			return s[:len(s)-1]
		}
	}
	return s
}

func (w *Workspace) indexClient(c *Client) {
	c.Key = sortKey(c.Name)
	w.ClientList = insertOrdered(w.ClientList, c, clientBefore)
}

func (w *Workspace) indexJob(j *Job) {
	j.Key = sortKey(j.Name)
	w.JobList = insertOrdered(w.JobList, j, JobBefore)
	j.Client.JobList = insertOrdered(j.Client.JobList, j, JobBefore)
	w.JobIdx.add(j)
}

func (w *Workspace) unindexJob(j *Job) {
	w.JobList = removeOrdered(w.JobList, j, JobBefore)
	j.Client.JobList = removeOrdered(j.Client.JobList, j, JobBefore)
	w.JobIdx.remove(j)
}

// rebuildIndexes builds every index from the maps (after a snapshot load).
func (w *Workspace) RebuildIndexes() {
	w.ClientList = w.ClientList[:0]
	for _, c := range w.Clients {
		c.Key = sortKey(c.Name)
		w.ClientList = append(w.ClientList, c)
		c.JobList = c.JobList[:0]
	}
	sort.Slice(w.ClientList, func(i, k int) bool { return clientBefore(w.ClientList[i], w.ClientList[k]) })
	w.JobList = w.JobList[:0]
	for _, j := range w.Jobs {
		j.Key = sortKey(j.Name)
		w.JobList = append(w.JobList, j)
		j.Client.JobList = append(j.Client.JobList, j)
	}
	sort.Slice(w.JobList, func(i, k int) bool { return JobBefore(w.JobList[i], w.JobList[k]) })
	w.JobIdx.rebuild(w.JobList)
	for _, c := range w.Clients {
		sort.Slice(c.JobList, func(i, k int) bool { return JobBefore(c.JobList[i], c.JobList[k]) })
	}
	w.Results.rebuild(w.Jobs)
	sort.SliceStable(w.AlertLog, func(i, k int) bool { return AlertBefore(w.AlertLog[i], w.AlertLog[k]) })
	w.Unresolved = w.Unresolved[:0]
	for _, j := range w.Jobs {
		j.Alerts = j.Alerts[:0]
	}
	for _, a := range w.AlertLog {
		a.Job.Alerts = append(a.Job.Alerts, a)
		if a.Status != AlertResolved {
			w.Unresolved = append(w.Unresolved, a)
		}
	}
}

// growByQuarter appends v to s; a full slice grows by a quarter of its
// length, or by least elements if that is more, rather than by append's
// doubling: results and their index entries are most of the engine's
// memory, and doubling leaves up to half of a slice unused.
func growByQuarter[T any](s []T, v T, least int) []T {
	if len(s) == cap(s) {
		grown := make([]T, len(s), len(s)+max(least, len(s)/4))
		copy(grown, s)
		s = grown
	}
	return append(s, v)
}
