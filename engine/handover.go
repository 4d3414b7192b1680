package engine

import (
	"bytes"
	"cmp"
	"slices"
	"sync"

	"backupmon/state"
)

// HandOver stops the engine as Close does, for a cluster's shard that moves
// to another node: after the last snapshot it logs, for each workspace that
// counted requests in the minute under way, those counts (a RateLevels
// record; they are never in a snapshot), so that the next owner goes on
// counting that minute rather than from zero. It returns the first error.
func (e *Engine) HandOver() error { return e.close(closeHandOver) }

// logRateLevels logs the RateLevels of every workspace with counts in the
// minute under way, many at once (the log's group commit shares the
// writes), and waits until they are durable.
func (e *Engine) logRateLevels() error {
	var list []*actor
	e.actors.Range(func(_, v any) bool {
		list = append(list, v.(*actor))
		return true
	})
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
		slots = make(chan struct{}, 256)
	)
	for _, a := range list {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			_, err := change(a, func(w *workspace, now int64) (decision[struct{}], error) {
				if r := rateLevels(w.Workspace, now/state.MsPerMinute); r != nil {
					return decision[struct{}]{rec: r}, nil
				}
				return decision[struct{}]{}, nil
			})
			if err != nil {
				mu.Lock()
				first = cmp.Or(first, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return first
}

// rateLevels returns the workspace's counts of minute, or nil when it
// counted nothing in it.
func rateLevels(w *state.Workspace, minute int64) *state.RateLevels {
	r := &state.RateLevels{Minute: minute}
	if w.RESTMinute == minute {
		r.REST = w.RESTMinuteCount
	}
	if w.AsstMinute == minute {
		r.Assistant = w.AsstMinuteCount
	}
	for id, k := range w.Keys {
		if k.Minute == minute && k.MinuteCount > 0 {
			r.Keys = append(r.Keys, state.KeyCount{Key: id, Count: int64(k.MinuteCount)})
		}
	}
	if r.REST == 0 && r.Assistant == 0 && len(r.Keys) == 0 {
		return nil
	}
	slices.SortFunc(r.Keys, func(a, b state.KeyCount) int { return bytes.Compare(a.Key[:], b.Key[:]) })
	return r
}
