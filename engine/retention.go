package engine

import (
	"maps"
	"slices"
)

// prune drops what the retention rules no longer keep: results received
// before now − retention, resolved alerts resolved before it, activity
// entries made before it, and idempotency keys older than 30 days. It runs in the actor just before the
// workspace is written to a snapshot, so the snapshot and the live state
// agree; it needs no log record because it depends only on time.
func (w *workspace) prune(now, retentionMs int64) {
	if retentionMs > 0 {
		w.figVersion++ // results may leave: figures change without a record
		cut := now - retentionMs
		w.results.dropBefore(cut) // first: its references read the results
		for _, j := range w.jobs {
			n := 0
			for n < len(j.results) && j.results[n].receivedAt < cut {
				n++
			}
			if n > 0 {
				// Copy what is kept so the dropped results' memory is freed.
				j.results = append([]result(nil), j.results[n:]...)
				j.resultBase += uint32(n)
				j.jsonUntil = 0
			}
		}
		gone := func(a *alert) bool { return a.status == alertResolved && a.resolvedAt < cut }
		kept := w.alertLog[:0]
		for _, a := range w.alertLog {
			if gone(a) {
				delete(w.alerts, a.id)
				continue
			}
			kept = append(kept, a)
		}
		if dropped := len(w.alertLog) - len(kept); dropped > 0 {
			// A map never shrinks and a slice keeps its capacity: copy
			// what is kept so the dropped alerts' room is freed too.
			w.alertLog = slices.Clone(kept)
			w.alerts = maps.Clone(w.alerts)
		}
		for _, j := range w.jobs {
			if n := len(j.alerts); n > 0 && gone(j.alerts[0]) {
				j.alerts = slices.Clone(slices.DeleteFunc(j.alerts, gone))
			} else {
				j.alerts = slices.DeleteFunc(j.alerts, gone)
			}
		}
		if n := len(w.activity); n > 0 && w.activity[0].at < cut {
			// Copy what is kept so the dropped entries' memory is freed.
			w.activity = slices.Clone(slices.DeleteFunc(w.activity, func(a activity) bool { return a.at < cut }))
		}
	}
	w.pruneDeliveries(now - deliveryKeepMs)
	w.pruneUnparsed(now - unparsedKeepMs)
	for _, j := range w.jobs {
		for k, ent := range j.idem {
			if now-ent.at >= idemKeepMs && !ent.pending.Load() {
				delete(j.idem, k)
			}
		}
		if j.idem != nil && len(j.idem) == 0 {
			j.idem = nil // a map keeps its buckets when emptied
		}
	}
}
