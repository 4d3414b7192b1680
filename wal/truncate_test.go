package wal

import (
	"bytes"
	"testing"
)

func TestTruncateFront(t *testing.T) {
	const n = 100
	tests := []struct {
		name      string
		lsn       uint64
		wantFirst uint64
	}{
		{"nothing (lsn 0)", 0, 1},
		{"nothing (lsn 1)", 1, 1},
		{"first segment", 5, 5},
		{"middle", 40, 40},
		{"last record", n, n},
		{"everything", n + 1, n + 1},
		{"past the end is clamped", n + 50, n + 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			opts := tOpts(t)
			opts.SegmentSize = 1024
			payloads := make([][]byte, n)
			for i := range payloads {
				payloads[i] = tPayload(i+1, 20+i%50)
			}
			tWrite(t, dir, opts, payloads)

			l := tOpen(t, dir, opts)
			l.Start()
			if err := l.TruncateFront(tt.lsn); err != nil {
				t.Fatalf("TruncateFront(%d): %v", tt.lsn, err)
			}
			if l.FirstLSN() != tt.wantFirst || l.LastLSN() != n {
				t.Fatalf("FirstLSN %d LastLSN %d, want %d and %d", l.FirstLSN(), l.LastLSN(), tt.wantFirst, n)
			}
			tClose(t, l)

			l = tOpen(t, dir, opts)
			if l.FirstLSN() != tt.wantFirst || l.LastLSN() != n {
				t.Fatalf("reopened: FirstLSN %d LastLSN %d, want %d and %d", l.FirstLSN(), l.LastLSN(), tt.wantFirst, n)
			}
			if tt.wantFirst > 1 {
				if _, err := tReplayErr(l, 1); err == nil {
					t.Fatal("Replay(1) after truncation: no error")
				}
			}
			got := tReplay(t, l, l.FirstLSN())
			if len(got) != int(n-tt.wantFirst+1) {
				t.Fatalf("replayed %d records, want %d", len(got), n-tt.wantFirst+1)
			}
			for i, r := range got {
				lsn := tt.wantFirst + uint64(i)
				if r.lsn != lsn || !bytes.Equal(r.payload, payloads[lsn-1]) {
					t.Fatalf("record %d: lsn %d, want %d (or payload differs)", i, r.lsn, lsn)
				}
			}

			// The log takes records after the truncation, and keeps them.
			l.Start()
			lsn, err := tSubmit(l, &Raw{Typ: 2, Payload: []byte("after")})
			if err != nil || lsn != n+1 {
				t.Fatalf("append after truncation = (%d, %v), want (%d, nil)", lsn, err, n+1)
			}
			tClose(t, l)
			l = tOpen(t, dir, opts)
			defer l.Close()
			got = tReplay(t, l, 0)
			if len(got) != int(n-tt.wantFirst+2) || got[len(got)-1].lsn != n+1 || string(got[len(got)-1].payload) != "after" {
				t.Fatalf("after append and reopen: %d records, last %+v", len(got), got[len(got)-1])
			}
		})
	}
}
