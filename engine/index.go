package engine

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

func clientBefore(a, b *client) bool {
	if a.key != b.key {
		return a.key < b.key
	}
	return string(a.id[:]) < string(b.id[:])
}

func jobBefore(a, b *job) bool {
	if a.key != b.key {
		return a.key < b.key
	}
	return string(a.id[:]) < string(b.id[:])
}

func alertBefore(a, b *alert) bool {
	if a.createdAt != b.createdAt {
		return a.createdAt < b.createdAt
	}
	return string(a.id[:]) < string(b.id[:])
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

func (w *workspace) indexClient(c *client) {
	c.key = sortKey(c.name)
	w.clientList = insertOrdered(w.clientList, c, clientBefore)
}

func (w *workspace) indexJob(j *job) {
	j.key = sortKey(j.name)
	w.jobList = insertOrdered(w.jobList, j, jobBefore)
	j.client.jobList = insertOrdered(j.client.jobList, j, jobBefore)
	w.jobIdx.add(j)
}

func (w *workspace) unindexJob(j *job) {
	w.jobList = removeOrdered(w.jobList, j, jobBefore)
	j.client.jobList = removeOrdered(j.client.jobList, j, jobBefore)
	w.jobIdx.remove(j)
}

// rebuildIndexes builds every index from the maps (after a snapshot load).
func (w *workspace) rebuildIndexes() {
	w.clientList = w.clientList[:0]
	for _, c := range w.clients {
		c.key = sortKey(c.name)
		w.clientList = append(w.clientList, c)
		c.jobList = c.jobList[:0]
	}
	sort.Slice(w.clientList, func(i, k int) bool { return clientBefore(w.clientList[i], w.clientList[k]) })
	w.jobList = w.jobList[:0]
	for _, j := range w.jobs {
		j.key = sortKey(j.name)
		w.jobList = append(w.jobList, j)
		j.client.jobList = append(j.client.jobList, j)
	}
	sort.Slice(w.jobList, func(i, k int) bool { return jobBefore(w.jobList[i], w.jobList[k]) })
	w.jobIdx.rebuild(w.jobList)
	for _, c := range w.clients {
		sort.Slice(c.jobList, func(i, k int) bool { return jobBefore(c.jobList[i], c.jobList[k]) })
	}
	w.results.rebuild(w.jobs)
	sort.SliceStable(w.alertLog, func(i, k int) bool { return alertBefore(w.alertLog[i], w.alertLog[k]) })
	w.unresolved = w.unresolved[:0]
	for _, j := range w.jobs {
		j.alerts = j.alerts[:0]
	}
	for _, a := range w.alertLog {
		a.job.alerts = append(a.job.alerts, a)
		if a.status != alertResolved {
			w.unresolved = append(w.unresolved, a)
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
