package timeheap

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// item keeps its place, as a job does.
type item struct{ ix int32 }

func (it *item) Place(ix int32) { it.ix = ix }

// mark keeps no place, as the actor's timers do.
type mark int

func (mark) Place(int32) {}

// check fails t unless h is in heap order, every item in it knows its
// place, and it holds exactly want.
func check(t *testing.T, step int, h Heap[*item], want map[*item]int64, all []*item) {
	t.Helper()
	if len(h) != len(want) {
		t.Fatalf("step %d: %d entries, want %d", step, len(h), len(want))
	}
	for i, e := range h {
		if int(e.V.ix) != i+1 || want[e.V] != e.At {
			t.Fatalf("step %d: entry %d: place %d, at %d; want place %d, at %d", step, i, e.V.ix, e.At, i+1, want[e.V])
		}
		if i > 0 && h[(i-1)/2].At > e.At {
			t.Fatalf("step %d: heap order broken at %d", step, i)
		}
	}
	for _, it := range all {
		if _, in := want[it]; !in && it.ix != 0 {
			t.Fatalf("step %d: an item out of the heap keeps place %d", step, it.ix)
		}
	}
}

// Set, Remove, Pop and Clear keep the heap in order and every item's place
// right, against a map of what it should hold.
func TestHeapPlaces(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 9))
	all := make([]*item, 100)
	for i := range all {
		all[i] = &item{}
	}
	var h Heap[*item]
	want := map[*item]int64{}
	for step := range 20000 {
		it := all[r.IntN(len(all))]
		switch op := r.IntN(20); {
		case op == 0 && len(h) > 0:
			top := h.Pop()
			for _, at := range want {
				if at < top.At {
					t.Fatalf("step %d: popped %d before %d", step, top.At, at)
				}
			}
			delete(want, top.V)
		case op == 1:
			h.Remove(it.ix)
			delete(want, it)
		case op == 2 && step%1000 == 0:
			h.Clear()
			clear(want)
		default:
			at := r.Int64N(50) // ties on purpose; 0 takes the item out
			h.Set(it.ix, at, it)
			if at == 0 {
				delete(want, it)
			} else {
				want[it] = at
			}
		}
		check(t, step, h, want, all)
	}
}

// Entries pushed come out by Pop earliest first.
func TestHeapPushPop(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var h Heap[mark]
	var ats []int64
	for i := range 1000 {
		at := r.Int64N(300)
		h.Push(at, mark(i))
		ats = append(ats, at)
	}
	slices.Sort(ats)
	for i, want := range ats {
		if got := h.Pop(); got.At != want {
			t.Fatalf("pop %d: at %d, want %d", i, got.At, want)
		}
	}
	if len(h) != 0 {
		t.Fatalf("%d entries left", len(h))
	}
}
