package state

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
	parts [3][numVendors][]ResultRef
}

// resultRef places one result in the workspace-wide order: its job and its
// number there. A job numbers its results from its first ever (resultBase
// counts those retention dropped), so dropping old results leaves the
// references of the others valid; a result inserted out of order renumbers
// the ones after it (insertShifted). Sixteen bytes, where a copy of the
// result's time and id would take thirty-two: with millions of results the
// index is a third of the engine's memory.
type ResultRef struct {
	Job *Job
	n   uint32
}

// res returns the result r refers to.
func (r *ResultRef) Res() *Result { return &r.Job.Results[r.n-r.Job.resultBase] }

func RefOlder(a, b *ResultRef) bool {
	x, y := a.Res(), b.Res()
	return Before(x.ReceivedAt, x.ID, y.ReceivedAt, y.ID)
}

// part returns the list of results with status s (resultOK..resultFailed)
// of jobs of vendor index v.
func (x *resultIndex) part(s, v uint8) *[]ResultRef { return &x.parts[s-1][v] }

// insert adds result number n of j, already in j.results.
func (x *resultIndex) insert(j *Job, n uint32) {
	ref := ResultRef{Job: j, n: n}
	p := x.part(ref.Res().Status, j.Vx)
	if k := len(*p); k == 0 || !RefOlder(&ref, &(*p)[k-1]) {
		*p = growByQuarter(*p, ref, 16) // nearly always: results arrive in order
		return
	}
	*p = insertOrdered(*p, ref, func(a, b ResultRef) bool { return RefOlder(&a, &b) })
}

// insertShifted adds result number n of j, which went into j.results before
// some of its results: their references move up one number first. It
// walks the job's vendor's lists, so it costs O(results of the vendor); a
// result arrives out of order only when the clock went back.
func (x *resultIndex) insertShifted(j *Job, n uint32) {
	for s := range x.parts {
		for i := range x.parts[s][j.Vx] {
			if r := &x.parts[s][j.Vx][i]; r.Job == j && r.n >= n {
				r.n++
			}
		}
	}
	x.insert(j, n)
}

// each calls fn for every list.
func (x *resultIndex) each(fn func(p *[]ResultRef)) {
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
	x.each(func(p *[]ResultRef) {
		n := sort.Search(len(*p), func(i int) bool { return (*p)[i].Res().ReceivedAt >= cut })
		if n > 0 {
			*p = append([]ResultRef(nil), (*p)[n:]...)
		}
	})
}

// removeJob removes every result of j, whose vendor index is v.
func (x *resultIndex) removeJob(j *Job, v uint8) {
	for s := range x.parts {
		p := &x.parts[s][v]
		*p = slices.DeleteFunc(*p, func(r ResultRef) bool { return r.Job == j })
	}
}

// moveJob moves the results of j from the lists of vendor index from to
// those of j's vendor now (a job's vendor changed): one pass over each list
// involved.
func (x *resultIndex) moveJob(j *Job, from uint8) {
	if from == j.Vx {
		return
	}
	for s := range x.parts {
		src, dst := &x.parts[s][from], &x.parts[s][j.Vx]
		var moved []ResultRef
		*src = slices.DeleteFunc(*src, func(r ResultRef) bool {
			if r.Job == j {
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
func mergeRefs(a, b []ResultRef) []ResultRef {
	out := make([]ResultRef, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		if RefOlder(&b[0], &a[0]) {
			out, b = append(out, b[0]), b[1:]
		} else {
			out, a = append(out, a[0]), a[1:]
		}
	}
	return append(append(out, a...), b...)
}

// rebuild fills the index from the jobs' results (after a snapshot load).
func (x *resultIndex) rebuild(jobs map[ID]*Job) {
	var counts [3][numVendors]int
	for _, j := range jobs {
		for i := range j.Results {
			counts[j.Results[i].Status-1][j.Vx]++
		}
	}
	for s := range x.parts {
		for v := range x.parts[s] {
			x.parts[s][v] = make([]ResultRef, 0, counts[s][v])
		}
	}
	for _, j := range jobs {
		for i := range j.Results {
			p := x.part(j.Results[i].Status, j.Vx)
			*p = append(*p, ResultRef{Job: j, n: j.resultBase + uint32(i)})
		}
	}
	x.each(func(p *[]ResultRef) {
		slices.SortFunc(*p, func(a, b ResultRef) int {
			x, y := a.Res(), b.Res()
			switch {
			case Before(x.ReceivedAt, x.ID, y.ReceivedAt, y.ID):
				return -1
			case Before(y.ReceivedAt, y.ID, x.ReceivedAt, x.ID):
				return 1
			}
			return 0
		})
	})
}

// walk puts into m the lists that hold results of status s (0: any) and
// vendor index v (-1: any), from the bound down.
func (x *resultIndex) Walk(m *NewestFirst[ResultRef], s uint8, v int, bt int64, bid ID) {
	below := func(r *ResultRef) bool { res := r.Res(); return Before(res.ReceivedAt, res.ID, bt, bid) }
	for st := uint8(ResultOK); st <= ResultFailed; st++ {
		if s != 0 && st != s {
			continue
		}
		for vi := range numVendors {
			if v >= 0 && vi != v {
				continue
			}
			m.Add(*x.part(st, uint8(vi)), nil, below)
		}
	}
}
