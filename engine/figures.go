package engine

// Rate is a percentage with one decimal, kept as tenths of a percent so that
// rounding is exact; Valid is false when there was nothing to rate.
type Rate struct {
	Tenths int64
	Valid  bool
}

// Float returns the rate as a number (e.g. 97.5).
func (r Rate) Float() float64 { return float64(r.Tenths) / 10 }

// rate is the one function for success rates (decisions.md 4.7): 100 × ok ÷
// rated, rounded half away from zero to one decimal; not valid when nothing
// was rated.
func rate(ok, rated int64) Rate {
	if rated <= 0 {
		return Rate{}
	}
	return Rate{Tenths: (2000*ok + rated) / (2 * rated), Valid: true}
}

// meets reports whether r is a valid rate at or above target (a percentage).
func (r Rate) meets(target float64) bool {
	return r.Valid && r.Float() >= target
}

// slaPeriodDays is the period of the SLA figures on clients and jobs.
const slaPeriodDays = 30

// tally counts results by status.
type tally struct{ ok, warning, failed int64 }

func (t tally) total() int64 { return t.ok + t.warning + t.failed }

func (t *tally) add(o tally) { t.ok += o.ok; t.warning += o.warning; t.failed += o.failed }

// resultsSince counts the job's results whose completedAt is after from.
// Results are ordered by receipt and a completion time is never more than
// five minutes after its receipt, so the scan stops at the first result
// received before from − 5 minutes.
func (j *job) resultsSince(from int64) tally {
	t, _ := j.resultsSinceOldest(from)
	return t
}

// resultsSinceOldest is resultsSince that also returns the earliest
// completedAt it counted (0 when none), which is the first to leave the
// period as the clock moves.
func (j *job) resultsSinceOldest(from int64) (tally, int64) {
	var t tally
	var oldest int64
	stop := from - 5*msPerMinute
	for i := len(j.results) - 1; i >= 0; i-- {
		r := &j.results[i]
		if r.receivedAt < stop {
			break
		}
		if r.completedAt <= from {
			continue
		}
		if oldest == 0 || r.completedAt < oldest {
			oldest = r.completedAt
		}
		switch r.status {
		case resultOK:
			t.ok++
		case resultWarning:
			t.warning++
		case resultFailed:
			t.failed++
		}
	}
	return t, oldest
}

// JobSLA holds a job's SLA figures.
type JobSLA struct {
	Target      float64
	SuccessRate Rate
	Met         bool
	Reports     int64
	PeriodDays  int
}

// jobSLA is the one function for a job's SLA figures at now.
func jobSLA(j *job, now int64) JobSLA {
	s, _, _ := jobSLAUntil(j, now)
	return s
}

// jobSLAUntil returns the job's SLA figures at now, the results they count,
// and the time its oldest counted result leaves the 30-day window (0 when
// none is counted).
func jobSLAUntil(j *job, now int64) (JobSLA, tally, int64) {
	t, oldest := j.resultsSinceOldest(now - slaPeriodDays*msPerDay)
	r := rate(t.ok, t.total())
	var leaves int64
	if oldest != 0 {
		leaves = oldest + slaPeriodDays*msPerDay
	}
	return JobSLA{Target: j.slaTarget, SuccessRate: r, Met: r.meets(j.slaTarget), Reports: t.total(), PeriodDays: slaPeriodDays}, t, leaves
}

// StatusCounts counts jobs by status.
type StatusCounts struct {
	Total, Healthy, Warning, Failed, Missing, Waiting, Paused int
}

func (c *StatusCounts) add(status string) {
	c.Total++
	switch status {
	case StatusHealthy:
		c.Healthy++
	case StatusWarning:
		c.Warning++
	case StatusFailed:
		c.Failed++
	case StatusMissing:
		c.Missing++
	case StatusWaiting:
		c.Waiting++
	case StatusPaused:
		c.Paused++
	}
}

// needsAttention is the one rule for "needs attention" (decisions.md 4.2):
// a job failed or missing, or an open alert.
func needsAttention(status string, openAlert bool) bool {
	return status == StatusFailed || status == StatusMissing || openAlert
}

// ClientFigures holds the derived figures of one client.
type ClientFigures struct {
	Jobs              StatusCounts
	NeedsAttention    bool
	OpenAlerts        int
	SuccessRate       Rate
	Reports           int64
	JobsMeetingTarget int
	JobsBelowTarget   int
}

// clientFigures is the one function for a client's figures at now (api.md
// 2.3, decisions.md 4.2).
func (w *workspace) clientFigures(c *client, now int64) ClientFigures {
	var f ClientFigures
	var all tally
	for _, j := range c.jobs {
		// The job's status and 30-day results, as its kept encoding
		// shows them: no scan of its results while that is current.
		st, t := w.keptFigures(j, now)
		f.Jobs.add(st)
		open := j.alert != nil && alertStatus(j.alert, now) == alertOpen
		if open {
			f.OpenAlerts++
		}
		if needsAttention(st, open) {
			f.NeedsAttention = true
		}
		all.add(t)
		if t.total() > 0 {
			if rate(t.ok, t.total()).meets(j.slaTarget) {
				f.JobsMeetingTarget++
			} else {
				f.JobsBelowTarget++
			}
		}
	}
	f.SuccessRate = rate(all.ok, all.total())
	f.Reports = all.total()
	return f
}
