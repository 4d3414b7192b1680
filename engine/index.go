package engine

import (
	"sort"
	"strings"
)

// The ordered indexes behind the REST API's pages (decisions.md 5): clients
// and jobs by name without case then id, results by receipt then id,
// unresolved alerts by creation then id. apply keeps them current; a page is
// a binary search to the cursor's position and a walk of at most the page.

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

func refBefore(a, b *resultRef) bool {
	if a.at != b.at {
		return a.at < b.at
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
}

func (w *workspace) unindexJob(j *job) {
	w.jobList = removeItem(w.jobList, j)
	j.client.jobList = removeItem(j.client.jobList, j)
}

func (w *workspace) indexResult(j *job, r *result) {
	w.resultList = insertOrdered(w.resultList, resultRef{at: r.receivedAt, id: r.id, job: j},
		func(a, b resultRef) bool { return refBefore(&a, &b) })
}

// unindexResults drops every result of j from the workspace order.
func (w *workspace) unindexResults(j *job) {
	kept := w.resultList[:0]
	for _, r := range w.resultList {
		if r.job != j {
			kept = append(kept, r)
		}
	}
	clear(w.resultList[len(kept):])
	w.resultList = kept
}

// find returns the result a reference points at (results of a job are
// ordered like the references).
func (r *resultRef) find() *result {
	rs := r.job.results
	i := sort.Search(len(rs), func(i int) bool {
		if rs[i].receivedAt != r.at {
			return rs[i].receivedAt > r.at
		}
		return string(rs[i].id[:]) >= string(r.id[:])
	})
	if i < len(rs) && rs[i].id == r.id {
		return &rs[i]
	}
	return nil
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
	n := 0
	for _, j := range w.jobs {
		j.key = sortKey(j.name)
		w.jobList = append(w.jobList, j)
		j.client.jobList = append(j.client.jobList, j)
		n += len(j.results)
	}
	sort.Slice(w.jobList, func(i, k int) bool { return jobBefore(w.jobList[i], w.jobList[k]) })
	for _, c := range w.clients {
		sort.Slice(c.jobList, func(i, k int) bool { return jobBefore(c.jobList[i], c.jobList[k]) })
	}
	w.resultList = make([]resultRef, 0, n)
	for _, j := range w.jobs {
		for i := range j.results {
			r := &j.results[i]
			w.resultList = append(w.resultList, resultRef{at: r.receivedAt, id: r.id, job: j})
		}
	}
	sort.Slice(w.resultList, func(i, k int) bool { return refBefore(&w.resultList[i], &w.resultList[k]) })
	sort.SliceStable(w.alertLog, func(i, k int) bool { return alertBefore(w.alertLog[i], w.alertLog[k]) })
	w.unresolved = w.unresolved[:0]
	for _, a := range w.alertLog {
		if a.status != alertResolved {
			w.unresolved = append(w.unresolved, a)
		}
	}
}
