package state

import (
	"maps"
	"slices"
)

// prune drops what the retention rules no longer keep: results received
// before now − retention, resolved alerts resolved before it, activity
// entries made before it, and idempotency keys older than 30 days. It runs in the actor just before the
// workspace is written to a snapshot, so the snapshot and the live state
// agree; it needs no log record because it depends only on time.
func (w *Workspace) Prune(now, retentionMs int64) {
	if retentionMs > 0 {
		w.figVersion++ // results may leave: figures change without a record
		cut := now - retentionMs
		w.Results.dropBefore(cut) // first: its references read the results
		for _, j := range w.Jobs {
			n := 0
			for n < len(j.Results) && j.Results[n].ReceivedAt < cut {
				n++
			}
			if n > 0 {
				// Copy what is kept so the dropped results' memory is freed.
				j.Results = append([]Result(nil), j.Results[n:]...)
				j.resultBase += uint32(n)
				j.jsonUntil = 0
			}
		}
		gone := func(a *Alert) bool { return a.Status == AlertResolved && a.ResolvedAt < cut }
		kept := w.AlertLog[:0]
		for _, a := range w.AlertLog {
			if gone(a) {
				delete(w.Alerts, a.ID)
				continue
			}
			kept = append(kept, a)
		}
		if dropped := len(w.AlertLog) - len(kept); dropped > 0 {
			// A map never shrinks and a slice keeps its capacity: copy
			// what is kept so the dropped alerts' room is freed too.
			w.AlertLog = slices.Clone(kept)
			w.Alerts = maps.Clone(w.Alerts)
		}
		for _, j := range w.Jobs {
			if n := len(j.Alerts); n > 0 && gone(j.Alerts[0]) {
				j.Alerts = slices.Clone(slices.DeleteFunc(j.Alerts, gone))
			} else {
				j.Alerts = slices.DeleteFunc(j.Alerts, gone)
			}
		}
		if n := len(w.Activity); n > 0 && w.Activity[0].At < cut {
			// Copy what is kept so the dropped entries' memory is freed.
			w.Activity = slices.Clone(slices.DeleteFunc(w.Activity, func(a Activity) bool { return a.At < cut }))
		}
	}
	w.pruneDeliveries(now - deliveryKeepMs)
	w.pruneUnparsed(now - unparsedKeepMs)
	w.Idem.Prune(now)
}
