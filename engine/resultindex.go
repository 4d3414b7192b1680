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

// resultRef places one result in the workspace-wide order: its job and its
// number there. A job numbers its results from its first ever (resultBase
// counts those retention dropped), so dropping old results leaves the
// references of the others valid; a result inserted out of order renumbers
// the ones after it (insertShifted). Sixteen bytes, where a copy of the
// result's time and id would take thirty-two: with millions of results the
// index is a third of the engine's memory.
type resultRef struct {
	job *job
	n   uint32
}

// res returns the result r refers to.
func (r *resultRef) res() *result { return &r.job.results[r.n-r.job.resultBase] }

func refOlder(a, b *resultRef) bool {
	x, y := a.res(), b.res()
	return before(x.receivedAt, x.id, y.receivedAt, y.id)
}

// part returns the list of results with status s (resultOK..resultFailed)
// of jobs of vendor index v.
func (x *resultIndex) part(s, v uint8) *[]resultRef { return &x.parts[s-1][v] }

// insert adds result number n of j, already in j.results.
func (x *resultIndex) insert(j *job, n uint32) {
	ref := resultRef{job: j, n: n}
	p := x.part(ref.res().status, j.vx)
	if k := len(*p); k == 0 || !refOlder(&ref, &(*p)[k-1]) {
		*p = growByQuarter(*p, ref, 16) // nearly always: results arrive in order
		return
	}
	*p = insertOrdered(*p, ref, func(a, b resultRef) bool { return refOlder(&a, &b) })
}

// insertShifted adds result number n of j, which went into j.results before
// some of its results: their references move up one number first. It
// walks the job's vendor's lists, so it costs O(results of the vendor); a
// result arrives out of order only when the clock went back.
func (x *resultIndex) insertShifted(j *job, n uint32) {
	for s := range x.parts {
		for i := range x.parts[s][j.vx] {
			if r := &x.parts[s][j.vx][i]; r.job == j && r.n >= n {
				r.n++
			}
		}
	}
	x.insert(j, n)
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
// so that the dropped part's memory is freed. It runs before the jobs drop
// those results, while every reference is still valid.
func (x *resultIndex) dropBefore(cut int64) {
	x.each(func(p *[]resultRef) {
		n := sort.Search(len(*p), func(i int) bool { return (*p)[i].res().receivedAt >= cut })
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
			p := x.part(j.results[i].status, j.vx)
			*p = append(*p, resultRef{job: j, n: j.resultBase + uint32(i)})
		}
	}
	x.each(func(p *[]resultRef) {
		slices.SortFunc(*p, func(a, b resultRef) int {
			x, y := a.res(), b.res()
			switch {
			case before(x.receivedAt, x.id, y.receivedAt, y.id):
				return -1
			case before(y.receivedAt, y.id, x.receivedAt, x.id):
				return 1
			}
			return 0
		})
	})
}

// walk puts into m the lists that hold results of status s (0: any) and
// vendor index v (-1: any), from the bound down.
func (x *resultIndex) walk(m *newestFirst[resultRef], s uint8, v int, bt int64, bid ID) {
	below := func(r *resultRef) bool { res := r.res(); return before(res.receivedAt, res.id, bt, bid) }
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
