package main

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// parallelDo runs do(0..n-1) on parallel goroutines, each taking the next
// index, and returns the first error, prefixed with its index ("12: ...");
// after an error no new index is started.
func parallelDo(n, parallel int, do func(i int) error) error {
	var next atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	for range max(parallel, 1) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n || firstErr.Load() != nil {
					return
				}
				if err := do(i); err != nil {
					firstErr.CompareAndSwap(nil, fmt.Errorf("%d: %w", i, err))
					return
				}
			}
		})
	}
	wg.Wait()
	if err, _ := firstErr.Load().(error); err != nil {
		return err
	}
	return nil
}
