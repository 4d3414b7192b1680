package engine

import "backupmon/state"

// Reads of a job's set-up and trend for the dashboard's job page.

// SizeDrop is the flag of a job's latest successful run (state.SizeDropOf).
type SizeDrop = state.SizeDrop

// Trend is a job's durations and sizes over a period (state.TrendOf).
type Trend = state.Trend

// TrendPoint is one point of a Trend.
type TrendPoint = state.TrendPoint

// DefaultSizeDropPercent is the size-drop threshold of a job without its
// own.
const DefaultSizeDropPercent = state.DefaultSizeDropPercent

// trendPoints is the most points a trend chart draws (state.TrendOf).
const trendPoints = 360

// JobSetup is what a job's page shows beyond its board view: its ingest
// address ("" without an ingest domain), its size-drop threshold (and
// whether it is the default) and its trend over the days asked for.
type JobSetup struct {
	IngestAddress   string
	SizeDropPercent int
	SizeDropDefault bool
	Trend           Trend
}

// JobSetup returns a job's set-up and its trend over the days before now,
// or a KindNotFound error for an unknown workspace or job.
func (e *Engine) JobSetup(wsID, jobID string, days int) (JobSetup, error) {
	found := false // set in the actor, read after its answer
	v, err := read(e, wsID, func(w *workspace) JobSetup {
		j := w.Job(jobID)
		if found = j != nil; !found {
			return JobSetup{}
		}
		return JobSetup{IngestAddress: e.ingestAddress(j), SizeDropPercent: j.SizeDropPercent(), SizeDropDefault: !j.SizeDrop.Set,
			Trend: state.TrendOf(j, e.nowMs(), days, trendPoints)}
	})
	if err == nil && !found {
		err = notFound("job")
	}
	return v, err
}

// rankSizeDrop is the queue rank of a job there only for a size drop:
// after every job that needs attention by the REST API's rule.
const rankSizeDrop = 3

// queueSizeDrop returns when the flagged run of a monitored job was
// received, or 0 when the job has no size drop to show in the queue.
func queueSizeDrop(j *state.Job, now int64) int64 {
	if !j.Monitored(now) {
		return 0
	}
	return state.SizeDropOf(j).ReceivedAt
}

// SizeText says a size in bytes shortly, in decimal units ("1.5 GB"; "—"
// for none).
func SizeText(n int64) string { return state.SizeText(n) }

// The size-drop notice's event and the type its notices carry
// (state.EventSizeDrop).
const (
	EventSizeDrop = state.EventSizeDrop
	SizeDropType  = state.SizeDropType
)
