package state

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
func RateOf(ok, rated int64) Rate {
	if rated <= 0 {
		return Rate{}
	}
	return Rate{Tenths: (2000*ok + rated) / (2 * rated), Valid: true}
}

// meets reports whether r is a valid rate at or above target (a percentage).
func (r Rate) Meets(target float64) bool {
	return r.Valid && r.Float() >= target
}

// slaPeriodDays is the period of the SLA figures on clients and jobs.
const SLAPeriodDays = 30

// tally counts results by status.
type Tally struct{ OK, warning, failed int64 }

func (t Tally) Total() int64 { return t.OK + t.warning + t.failed }

func (t *Tally) Add(o Tally) { t.OK += o.OK; t.warning += o.warning; t.failed += o.failed }

// resultsSince counts the job's results whose completedAt is after from.
// Results are ordered by receipt and a completion time is never more than
// five minutes after its receipt, so the scan stops at the first result
// received before from − 5 minutes.
func (j *Job) ResultsSince(from int64) Tally {
	t, _ := j.resultsSinceOldest(from)
	return t
}

// resultsSinceOldest is resultsSince that also returns the earliest
// completedAt it counted (0 when none), which is the first to leave the
// period as the clock moves.
func (j *Job) resultsSinceOldest(from int64) (Tally, int64) {
	var t Tally
	var oldest int64
	stop := from - 5*MsPerMinute
	for i := len(j.Results) - 1; i >= 0; i-- {
		r := &j.Results[i]
		if r.ReceivedAt < stop {
			break
		}
		if r.CompletedAt <= from {
			continue
		}
		if oldest == 0 || r.CompletedAt < oldest {
			oldest = r.CompletedAt
		}
		switch r.Status {
		case ResultOK:
			t.OK++
		case ResultWarning:
			t.warning++
		case ResultFailed:
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
func SLAOf(j *Job, now int64) JobSLA {
	s, _, _ := jobSLAUntil(j, now)
	return s
}

// jobSLAUntil returns the job's SLA figures at now, the results they count,
// and the time its oldest counted result leaves the 30-day window (0 when
// none is counted).
func jobSLAUntil(j *Job, now int64) (JobSLA, Tally, int64) {
	t, oldest := j.resultsSinceOldest(now - SLAPeriodDays*MsPerDay)
	r := RateOf(t.OK, t.Total())
	var leaves int64
	if oldest != 0 {
		leaves = oldest + SLAPeriodDays*MsPerDay
	}
	return JobSLA{Target: j.SLATarget, SuccessRate: r, Met: r.Meets(j.SLATarget), Reports: t.Total(), PeriodDays: SLAPeriodDays}, t, leaves
}

// StatusCounts counts jobs by status.
type StatusCounts struct {
	Total, Healthy, Warning, Failed, Missing, Waiting, Paused int
}

func (c *StatusCounts) Add(status string) {
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
func NeedsAttention(status string, openAlert bool) bool {
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
func (w *Workspace) ClientFigures(c *Client, now int64) ClientFigures {
	var f ClientFigures
	var all Tally
	for _, j := range c.Jobs {
		// The job's status and 30-day results, as its kept encoding
		// shows them: no scan of its results while that is current.
		st, t := w.KeptFigures(j, now)
		f.Jobs.Add(st)
		open := j.Alert != nil && AlertStatus(j.Alert, now) == AlertOpen
		if open {
			f.OpenAlerts++
		}
		if NeedsAttention(st, open) {
			f.NeedsAttention = true
		}
		all.Add(t)
		if t.Total() > 0 {
			if RateOf(t.OK, t.Total()).Meets(j.SLATarget) {
				f.JobsMeetingTarget++
			} else {
				f.JobsBelowTarget++
			}
		}
	}
	f.SuccessRate = RateOf(all.OK, all.Total())
	f.Reports = all.Total()
	return f
}
