package state

import "sort"

// NewestFirst walks several lists, each ordered oldest first, as one list
// newest first: a binary heap of the lists' heads, so a page of n items
// from k lists costs O(k log len + n log k). It serves the lists that a
// filter selects (result partitions, a client's jobs, their alerts).
type NewestFirst[T any] struct {
	Older func(a, b *T) bool // a sorts before b
	heads []mergeHead[T]     // a max-heap: the newest head first
}

// mergeHead is one list in the walk: its next item is items[i].
type mergeHead[T any] struct {
	items []T
	i     int
	job   *Job // the job every item belongs to, for one job's lists
}

func (m *NewestFirst[T]) newer(a, b *mergeHead[T]) bool {
	return m.Older(&b.items[b.i], &a.items[a.i])
}

// add puts the items of list that sort before the bound (beforeBound
// reports it, and holds for a prefix of the list) into the walk.
func (m *NewestFirst[T]) Add(items []T, j *Job, beforeBound func(*T) bool) {
	i := sort.Search(len(items), func(i int) bool { return !beforeBound(&items[i]) }) - 1
	if i < 0 {
		return
	}
	m.heads = append(m.heads, mergeHead[T]{items: items, i: i, job: j})
	m.up(len(m.heads) - 1)
}

// next returns the newest item not yet walked and its list's job, or nil
// when every list is done.
func (m *NewestFirst[T]) Next() (*T, *Job) {
	if len(m.heads) == 0 {
		return nil, nil
	}
	h := &m.heads[0]
	v, j := &h.items[h.i], h.job
	if h.i--; h.i < 0 {
		last := len(m.heads) - 1
		m.heads[0] = m.heads[last]
		m.heads = m.heads[:last]
	}
	m.down(0)
	return v, j
}

func (m *NewestFirst[T]) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !m.newer(&m.heads[i], &m.heads[p]) {
			return
		}
		m.heads[i], m.heads[p] = m.heads[p], m.heads[i]
		i = p
	}
}

func (m *NewestFirst[T]) down(i int) {
	n := len(m.heads)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		c := l
		if r := l + 1; r < n && m.newer(&m.heads[r], &m.heads[l]) {
			c = r
		}
		if !m.newer(&m.heads[c], &m.heads[i]) {
			return
		}
		m.heads[i], m.heads[c] = m.heads[c], m.heads[i]
		i = c
	}
}
