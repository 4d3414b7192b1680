package state

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// sortRefs must give the order of Before (receivedAt, then the id's
// bytes), which the /reports pages and their cursors rely on.
func TestSortRefsOrdersAsBefore(t *testing.T) {
	// Few distinct times make many ties on receivedAt, ordered by the id.
	for _, times := range []int64{3, 1 << 40} {
		t.Run(fmt.Sprint(times, " times"), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, uint64(times)))
			var refs []ResultRef
			for range 40 {
				j := &Job{resultBase: uint32(rng.IntN(5))}
				for range 1 + rng.IntN(30) {
					var id ID
					for k := range id {
						// Few values a byte, so ids share prefixes of either half.
						id[k] = byte(rng.IntN(3)) << 7
					}
					j.Results = append(j.Results, Result{ID: id, ReceivedAt: rng.Int64N(times) - times/2})
				}
				for i := range j.Results {
					refs = append(refs, ResultRef{Job: j, n: j.resultBase + uint32(i)})
				}
			}
			rng.Shuffle(len(refs), func(a, b int) { refs[a], refs[b] = refs[b], refs[a] })
			want := slices.Clone(refs)
			slices.SortStableFunc(want, func(a, b ResultRef) int {
				switch {
				case RefOlder(&a, &b):
					return -1
				case RefOlder(&b, &a):
					return 1
				}
				return 0
			})
			sortRefs(refs, nil)
			for i := range refs {
				x, y := refs[i].Res(), want[i].Res()
				if x.ReceivedAt != y.ReceivedAt || x.ID != y.ID {
					t.Fatalf("place %d: %d %s, want %d %s", i, x.ReceivedAt, x.ID, y.ReceivedAt, y.ID)
				}
			}
		})
	}
}
