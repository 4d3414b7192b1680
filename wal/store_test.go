package wal

import (
	"math/rand/v2"
	"path/filepath"
	"testing"
)

// TestStoreFollowsSegments checks that tidwallStore finds tidwall's new
// segments (so it fsyncs the directory when one appears, and the right
// file): after every batch and truncation, the segment it holds must be the
// last one on disk.
func TestStoreFollowsSegments(t *testing.T) {
	tests := []struct {
		name     string
		segSize  int
		maxBatch int
		maxEntry int
	}{
		{"single entries", 500, 1, 120},
		{"batches", 500, 20, 120},
		{"entries bigger than a segment", 300, 5, 700},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			opts := tOpts(t).withDefaults()
			opts.SegmentSize = tt.segSize
			opts.NoSync = true
			st, err := openTidwall(dir, opts)
			if err != nil {
				t.Fatal(err)
			}
			s := st.(*tidwallStore)
			defer s.Close()
			check := func(when string) {
				t.Helper()
				names := tSegments(t, dir)
				last := names[len(names)-1]
				if segmentName(s.tailStart) != last || filepath.Base(s.tail.Name()) != last {
					t.Fatalf("%s: store holds %s (%s); disk's last segment is %s",
						when, segmentName(s.tailStart), s.tail.Name(), last)
				}
			}
			check("open")
			rng := rand.New(rand.NewPCG(1, 2))
			var b batch
			lsn := uint64(1)
			for round := range 200 {
				b.reset()
				for range 1 + rng.IntN(tt.maxBatch) {
					b.add(lsn, encodeFrame(nil, 1, make([]byte, rng.IntN(tt.maxEntry))))
					lsn++
				}
				if err := s.WriteBatch(&b); err != nil {
					t.Fatal(err)
				}
				check("write")
				if round%25 == 24 {
					cut := lsn - uint64(rng.IntN(10))
					if err := s.TruncateFront(cut); err != nil {
						t.Fatalf("TruncateFront(%d): %v", cut, err)
					}
					check("truncate")
				}
			}
		})
	}
}
