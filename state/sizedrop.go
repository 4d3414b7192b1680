package state

import (
	"fmt"
	"math"
	"math/bits"
	"slices"

	"backupmon/codec"
)

// A size drop: a successful run whose size is far below the job's recent
// successful runs (docs/decisions.md "Size drops"). It is a notice, never an
// alert: it changes no status, figure or REST answer.

const (
	// DefaultSizeDropPercent is the threshold of a job that has none of
	// its own: a run under 50% of the median is flagged.
	DefaultSizeDropPercent = 50
	// SizeDropRuns is how many earlier successful runs the median is of.
	SizeDropRuns = 10
	// SizeDropMinRuns is how many earlier successful runs with a size a
	// job needs before a run can be flagged.
	SizeDropMinRuns = 3
	// sizeDropScan bounds how many of a job's results, newest first, the
	// check looks through.
	sizeDropScan = 500
	// EventSizeDrop is the notice sent to channels for a flagged run.
	EventSizeDrop = "job.size_drop"
	// SizeDropType names a size drop where an alert type would go (the
	// notice's AlertType).
	SizeDropType = "size_drop"
)

// SizeDropSetting is a job's own threshold: Set false means the default.
type SizeDropSetting struct {
	Set     bool
	Percent uint8 // 0: the check is off for the job
}

// SizeDropPercent returns the job's threshold: a run under this percentage
// of the median is flagged; 0 turns the check off.
func (j *Job) SizeDropPercent() int {
	if j.SizeDrop.Set {
		return int(j.SizeDrop.Percent)
	}
	return DefaultSizeDropPercent
}

// SizeDrop is the flag of a job's latest successful run, when it is one
// (ResultID not zero): its size, the median it is measured against and how
// far below it is, in whole percent.
type SizeDrop struct {
	ResultID                ID
	ReceivedAt, CompletedAt int64
	SizeBytes, MedianBytes  int64
	Runs                    int // the earlier runs the median is of
	Below                   int // percent below the median, rounded
}

// Flagged reports whether d flags a run.
func (d SizeDrop) Flagged() bool { return !d.ResultID.IsZero() }

// Text is the flag as pages and notices show it: "size 92% below usual".
func (d SizeDrop) Text() string { return fmt.Sprintf("size %d%% below usual", d.Below) }

// SizeDropOf is the one function for a job's size drop: its latest
// successful (ok) run, by receipt, is flagged when it has a size, the job's
// threshold is not 0, at least SizeDropMinRuns earlier ok runs with a size
// are among its last sizeDropScan results, and its size is under the
// threshold's percentage of the median of the last SizeDropRuns of them.
// It returns the zero SizeDrop otherwise.
func SizeDropOf(j *Job) SizeDrop {
	pct := j.SizeDropPercent()
	if pct <= 0 {
		return SizeDrop{}
	}
	stop := max(0, len(j.Results)-sizeDropScan)
	latest := -1
	var sizes [SizeDropRuns]int64
	n := 0
	for i := len(j.Results) - 1; i >= stop && n < SizeDropRuns; i-- {
		r := &j.Results[i]
		if r.Status != ResultOK {
			continue
		}
		if latest < 0 {
			if r.SizeBytes < 0 {
				return SizeDrop{}
			}
			latest = i
			continue
		}
		if r.SizeBytes >= 0 {
			sizes[n] = r.SizeBytes
			n++
		}
	}
	if latest < 0 || n < SizeDropMinRuns {
		return SizeDrop{}
	}
	med := median(sizes[:n])
	r := &j.Results[latest]
	// size × 100 < median × pct, in 128 bits: sizes reach 2^63.
	if med <= 0 || !lessScaled(uint64(r.SizeBytes), 100, uint64(med), uint64(pct)) {
		return SizeDrop{}
	}
	below := int(math.Round(float64(med-r.SizeBytes) * 100 / float64(med)))
	return SizeDrop{ResultID: r.ID, ReceivedAt: r.ReceivedAt, CompletedAt: r.CompletedAt, SizeBytes: r.SizeBytes, MedianBytes: med, Runs: n, Below: below}
}

// median returns the median of v (the mean of the middle two, rounded down,
// for an even count); v is reordered.
func median(v []int64) int64 {
	slices.Sort(v)
	m := len(v) / 2
	if len(v)%2 == 1 {
		return v[m]
	}
	a, b := v[m-1], v[m]
	return a/2 + b/2 + (a%2+b%2)/2
}

// lessScaled reports whether a×pa < b×pb, exactly.
func lessScaled(a, pa, b, pb uint64) bool {
	ah, al := bits.Mul64(a, pa)
	bh, bl := bits.Mul64(b, pb)
	return ah < bh || ah == bh && al < bl
}

// noteSizeDrop queues the size-drop notice of the ok result id the record
// being applied added to j, when it is the run SizeDropOf flags and the job
// is monitored. Without channels there is no one to tell, and the report
// path (every ok report comes here) skips the look back over the job's runs.
func (w *Workspace) noteSizeDrop(j *Job, id ID, at int64) {
	if len(w.Channels) == 0 || !j.Monitored(at) {
		return
	}
	d := SizeDropOf(j)
	if d.ResultID != id {
		return
	}
	w.events = append(w.events, alertEvent{job: j, event: EventSizeDrop, at: at, view: at, summary: d.Summary()})
}

// Summary is the notice's text: the flag with the sizes it compares.
func (d SizeDrop) Summary() string {
	return fmt.Sprintf("%s: %s against a median of %s over the last %d successful runs", d.Text(), SizeText(d.SizeBytes), SizeText(d.MedianBytes), d.Runs)
}

// SizeText says a size in bytes shortly, in decimal units ("1.5 GB").
func SizeText(n int64) string {
	if n < 0 {
		return "—"
	}
	units := []string{"B", "KB", "MB", "GB", "TB", "PB", "EB"}
	f, i := float64(n), 0
	for f >= 1000 && i < len(units)-1 {
		f /= 1000
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%d B", n)
	}
	return fmt.Sprintf("%.1f %s", f, units[i])
}

// TypeSizeDropSet is the record type number of SizeDropSet.
const TypeSizeDropSet byte = 60

// SizeDropSet records a job's own size-drop threshold, or its return to
// the default (Default true).
type SizeDropSet struct {
	Header
	JobID, ActivityID ID
	Default           bool
	Percent           uint8
	At                int64
	Actor             string
}

func (r *SizeDropSet) fields(f *codec.Fields) {
	f.Walk(r.JobID[:], r.ActivityID[:], &r.Default, &r.Percent, &r.At, &r.Actor)
}

func (r *SizeDropSet) apply(w *Workspace) error {
	j := w.Jobs[r.JobID]
	if j == nil {
		return fmt.Errorf("size-drop threshold of unknown job %s", r.JobID)
	}
	if r.Percent > 100 {
		return fmt.Errorf("size-drop threshold %d%% of job %s", r.Percent, r.JobID)
	}
	j.SizeDrop = SizeDropSetting{Set: !r.Default, Percent: r.Percent}
	if r.Default {
		j.SizeDrop.Percent = 0
	}
	w.addActivity(Activity{ID: r.ActivityID, At: r.At, Type: "job.updated", Actor: actorOr(r.Actor), JobID: j.ID, SubjectName: j.Name})
	return nil
}

// walkSizeDrops walks the jobs' own size-drop thresholds (snapshot layout 9
// on), in the order of their ids.
func (w *Workspace) walkSizeDrops(s *snap) error {
	f := s.f
	var ids []ID
	if !s.reading() {
		for id, j := range w.Jobs {
			if j.SizeDrop.Set {
				ids = append(ids, id)
			}
		}
		slices.SortFunc(ids, func(a, b ID) int { return slices.Compare(a[:], b[:]) })
	}
	n := uint64(len(ids))
	f.Uvarint(&n)
	for i := uint64(0); i < n && f.Err() == nil; i++ {
		var id ID
		var pct uint8
		if !s.reading() {
			id, pct = ids[i], w.Jobs[ids[i]].SizeDrop.Percent
		}
		f.Walk(id[:], &pct)
		if s.reading() && f.Err() == nil {
			j := w.Jobs[id]
			if j == nil || pct > 100 {
				return fmt.Errorf("size-drop threshold %d%% of unknown job %s", pct, id)
			}
			j.SizeDrop = SizeDropSetting{Set: true, Percent: pct}
		}
	}
	return f.Err()
}
