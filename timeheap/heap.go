// Package timeheap is the min-heap of a workspace's time-driven work: values
// ordered by the instant each is due. A value is told its place in the heap
// whenever it moves, so that one that keeps it can be moved or taken out
// in place later (Set, Remove); the others leave by Pop.
package timeheap

// Value is what a Heap holds. Place tells it its place in the heap: 1 + its
// index, or 0 when it left the heap.
type Value interface {
	Place(ix int32)
}

// Entry is one value of a Heap and the instant it is due.
type Entry[V Value] struct {
	At int64
	V  V
}

// Heap is a min-heap of entries by At; entries of the same instant come out
// in no promised order.
type Heap[V Value] []Entry[V]

// Push adds v, due at at.
func (h *Heap[V]) Push(at int64, v V) {
	*h = append(*h, Entry[V]{At: at, V: v})
	v.Place(int32(len(*h)))
	h.up(len(*h) - 1)
}

// Pop takes out and returns the earliest entry. The heap must not be empty.
func (h *Heap[V]) Pop() Entry[V] {
	top := (*h)[0]
	h.Remove(1)
	return top
}

// Set makes v, whose place in the heap is ix (0: not in it), due at at, or
// takes it out of the heap when at is 0. A value set this way is held at
// most once and moved in place.
func (h *Heap[V]) Set(ix int32, at int64, v V) {
	switch {
	case at == 0:
		h.Remove(ix)
	case ix == 0:
		h.Push(at, v)
	default:
		i := int(ix) - 1
		old := (*h)[i].At
		(*h)[i].At = at
		if at < old {
			h.up(i)
		} else {
			h.down(i)
		}
	}
}

// Remove takes out the entry at place ix, if ix is one (not 0); the last
// entry takes its place and moves to where it belongs.
func (h *Heap[V]) Remove(ix int32) {
	if ix == 0 {
		return
	}
	s := *h
	i, last := int(ix)-1, len(s)-1
	s[i].V.Place(0)
	if i != last {
		s[i] = s[last]
		s[i].V.Place(ix)
	}
	s[last] = Entry[V]{}
	*h = s[:last]
	if i != last {
		h.down(i)
		h.up(i)
	}
}

// Clear empties the heap; every value it held is told it left.
func (h *Heap[V]) Clear() {
	for _, e := range *h {
		e.V.Place(0)
	}
	clear(*h)
	*h = (*h)[:0]
}

// up moves the entry at i towards the root while it is due before its
// parent: the parents move down one level each, and it is written once, in
// its new place.
func (h Heap[V]) up(i int) {
	e, from := h[i], i
	for i > 0 {
		p := (i - 1) / 2
		if h[p].At <= e.At {
			break
		}
		h.move(i, p)
		i = p
	}
	if i != from {
		h.put(i, e)
	}
}

// down moves the entry at i towards the leaves while a child is due before
// it (the earlier child, the left one of two due at once): the children
// move up one level each, and it is written once, in its new place.
func (h Heap[V]) down(i int) {
	e, from := h[i], i
	for {
		c := 2*i + 1
		if c >= len(h) {
			break
		}
		if r := c + 1; r < len(h) && h[r].At < h[c].At {
			c = r
		}
		if h[c].At >= e.At {
			break
		}
		h.move(i, c)
		i = c
	}
	if i != from {
		h.put(i, e)
	}
}

// move copies the entry at from to to and tells it so.
func (h Heap[V]) move(to, from int) {
	h[to] = h[from]
	h[to].V.Place(int32(to + 1))
}

// put writes e at i and tells it so.
func (h Heap[V]) put(i int, e Entry[V]) {
	h[i] = e
	e.V.Place(int32(i + 1))
}
