package wal

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkAppend measures the real path, fsync on: batch=k runs k
// submitters that each wait for their record's done before submitting the
// next, so the committer sees batches of about k. One op is one record.
func BenchmarkAppend(b *testing.B) {
	for _, k := range []int{1, 64, 256} {
		b.Run(fmt.Sprintf("batch=%d", k), func(b *testing.B) {
			var batches atomic.Int64
			opts := tOpts(b)
			opts.Observe = func(int, time.Duration) { batches.Add(1) }
			l := tOpen(b, b.TempDir(), opts)
			l.Start()
			payload := make([]byte, 128) // about the size of a report record
			var left atomic.Int64
			left.Store(int64(b.N))
			var wg sync.WaitGroup
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			for range k {
				wg.Go(func() {
					rec := &Raw{Typ: 11, Payload: payload}
					ch := make(chan error, 1)
					done := func(_ uint64, err error) { ch <- err }
					for left.Add(-1) >= 0 {
						l.Submit(rec, done)
						if err := <-ch; err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			elapsed := time.Since(start)
			b.StopTimer()
			b.ReportMetric(float64(elapsed.Nanoseconds())/float64(b.N), "ns/record")
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "records/s")
			b.ReportMetric(float64(b.N)/float64(max(batches.Load(), 1)), "records/batch")
			tClose(b, l)
		})
	}
}
