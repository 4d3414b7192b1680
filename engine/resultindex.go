package engine

import (
	"slices"
	"sort"
)

// resultIndex orders every result of a workspace by (receivedAt, id), split
// into one list per result status and job vendor. Each result is in exactly
// one list, so the split costs no memory, and a /reports page filtered by
// status or vendor merges only the lists that can match: the page costs
// O(lists × log n + page × log lists), however rare the matches.
type resultIndex struct {
	parts [3][numVendors][]resultRef
}

// resultRef places one result in the workspace-wide order.
type resultRef struct {
	at  int64 // receivedAt
	id  ID
	job *job
}

func refOlder(a, b *resultRef) bool { return before(a.at, a.id, b.at, b.id) }

// part returns the list of results with status s (resultOK..resultFailed)
// of jobs of vendor index v.
func (x *resultIndex) part(s, v uint8) *[]resultRef { return &x.parts[s-1][v] }

// insert adds one result of j.
func (x *resultIndex) insert(j *job, r *result) {
	p := x.part(r.status, j.vx)
	ref := resultRef{at: r.receivedAt, id: r.id, job: j}
	if n := len(*p); n == 0 || !refOlder(&ref, &(*p)[n-1]) {
		*p = append(*p, ref) // nearly always: results arrive in order
		return
	}
	*p = insertOrdered(*p, ref, func(a, b resultRef) bool { return refOlder(&a, &b) })
}

// each calls fn for every list.
func (x *resultIndex) each(fn func(p *[]resultRef)) {
	for s := range x.parts {
		for v := range x.parts[s] {
			fn(&x.parts[s][v])
		}
	}
}

// dropBefore removes the results received before cut, copying what is kept
// so that the dropped part's memory is freed.
func (x *resultIndex) dropBefore(cut int64) {
	x.each(func(p *[]resultRef) {
		n := sort.Search(len(*p), func(i int) bool { return (*p)[i].at >= cut })
		if n > 0 {
			*p = append([]resultRef(nil), (*p)[n:]...)
		}
	})
}

// removeJob removes every result of j, whose vendor index is v.
func (x *resultIndex) removeJob(j *job, v uint8) {
	for s := range x.parts {
		p := &x.parts[s][v]
		*p = slices.DeleteFunc(*p, func(r resultRef) bool { return r.job == j })
	}
}

// moveJob moves the results of j from the lists of vendor index from to
// those of j's vendor now (a job's vendor changed): one pass over each list
// involved.
func (x *resultIndex) moveJob(j *job, from uint8) {
	if from == j.vx {
		return
	}
	for s := range x.parts {
		src, dst := &x.parts[s][from], &x.parts[s][j.vx]
		var moved []resultRef
		*src = slices.DeleteFunc(*src, func(r resultRef) bool {
			if r.job == j {
				moved = append(moved, r)
				return true
			}
			return false
		})
		if len(moved) > 0 {
			*dst = mergeRefs(*dst, moved)
		}
	}
}

// mergeRefs returns the ordered union of two ordered lists.
func mergeRefs(a, b []resultRef) []resultRef {
	out := make([]resultRef, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		if refOlder(&b[0], &a[0]) {
			out, b = append(out, b[0]), b[1:]
		} else {
			out, a = append(out, a[0]), a[1:]
		}
	}
	return append(append(out, a...), b...)
}

// rebuild fills the index from the jobs' results (after a snapshot load).
func (x *resultIndex) rebuild(jobs map[ID]*job) {
	var counts [3][numVendors]int
	for _, j := range jobs {
		for i := range j.results {
			counts[j.results[i].status-1][j.vx]++
		}
	}
	for s := range x.parts {
		for v := range x.parts[s] {
			x.parts[s][v] = make([]resultRef, 0, counts[s][v])
		}
	}
	for _, j := range jobs {
		for i := range j.results {
			r := &j.results[i]
			p := x.part(r.status, j.vx)
			*p = append(*p, resultRef{at: r.receivedAt, id: r.id, job: j})
		}
	}
	x.each(func(p *[]resultRef) {
		sort.Slice(*p, func(i, k int) bool { return refOlder(&(*p)[i], &(*p)[k]) })
	})
}

// walk puts into m the lists that hold results of status s (0: any) and
// vendor index v (-1: any), from the bound down.
func (x *resultIndex) walk(m *newestFirst[resultRef], s uint8, v int, bt int64, bid ID) {
	below := func(r *resultRef) bool { return before(r.at, r.id, bt, bid) }
	for st := uint8(resultOK); st <= resultFailed; st++ {
		if s != 0 && st != s {
			continue
		}
		for vi := range numVendors {
			if v >= 0 && vi != v {
				continue
			}
			m.add(*x.part(st, uint8(vi)), nil, below)
		}
	}
}

// find returns the result a reference points at (results of a job are
// ordered like the references).
func (r *resultRef) find() *result {
	rs := r.job.results
	i := sort.Search(len(rs), func(i int) bool { return !before(rs[i].receivedAt, rs[i].id, r.at, r.id) })
	if i < len(rs) && rs[i].id == r.id {
		return &rs[i]
	}
	return nil
}
