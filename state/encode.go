package state

import (
	"math"

	"backupmon/jsonx"
)

// The JSON of the REST objects (api.md 2, decisions.md 4), written by hand:
// one function per object, used by the REST API and the admin API alike.
// Jobs, whose figures cost a scan of their results, are kept encoded until
// they change or the clock moves them (jobJSON).

func AppendID(b []byte, id ID) []byte {
	b = append(b, '"')
	b = id.AppendTo(b)
	return append(b, '"')
}

func appendRate(b []byte, r Rate) []byte {
	if !r.Valid {
		return append(b, "null"...)
	}
	return jsonx.AppendTenths(b, r.Tenths)
}

// appendJob appends the job object, from its kept encoding while that is
// valid.
func (w *Workspace) AppendJob(b []byte, j *Job, now int64) []byte {
	if j.jsonFrom <= now && now < j.jsonUntil {
		return append(b, j.json...)
	}
	start := len(b)
	b, until := w.encodeJob(b, j, now)
	j.json = append(j.json[:0], b[start:]...)
	j.jsonFrom, j.jsonUntil = now, until
	return b
}

// keptFigures returns the job's status and its results of the last 30 days
// (the SLA period) at now, as its kept encoding shows them, encoding it
// first when that is out of date: health takes them from here rather than
// scan every job's results on each request.
func (w *Workspace) KeptFigures(j *Job, now int64) (string, Tally) {
	if !(j.jsonFrom <= now && now < j.jsonUntil) {
		w.scratch = w.AppendJob(w.scratch[:0], j, now)
	}
	return j.keptStatus, j.keptTally
}

// encodeJob writes the job object and returns until when it stays right:
// the next instant the clock changes a field (a due time or grace passing,
// the late minutes ticking, a pause ending, a result leaving the SLA window).
// The job's status and 30-day results, which the object shows, are kept
// with it (keptFigures).
func (w *Workspace) encodeJob(b []byte, j *Job, now int64) ([]byte, int64) {
	until := int64(math.MaxInt64)
	soon := func(t int64) {
		if t > now && t < until {
			until = t
		}
	}
	monitored := j.Monitored(now)
	due := j.NextExpectedAt(now, w.Loc)
	status := w.JobStatus(j, now)
	if j.Paused && j.PausedUntil != 0 {
		soon(j.PausedUntil)
	}
	if monitored {
		soon(due + 1)
		soon(due + j.GraceMinutes*MsPerMinute + 1)
	}

	b = append(b, `{"id":`...)
	b = AppendID(b, j.ID)
	b = append(b, `,"name":`...)
	b = jsonx.AppendString(b, j.Name)
	b = append(b, `,"clientId":`...)
	b = AppendID(b, j.Client.ID)
	b = append(b, `,"clientName":`...)
	b = jsonx.AppendString(b, j.Client.Name)
	b = append(b, `,"device":{"id":`...)
	b = AppendID(b, j.Device.id)
	b = append(b, `,"name":`...)
	b = jsonx.AppendString(b, j.Device.Name)
	b = append(b, `,"type":`...)
	b = jsonx.AppendString(b, j.Device.Type)
	b = append(b, `,"hostname":`...)
	b = jsonx.AppendString(b, j.Device.Hostname)
	b = append(b, `},"vendor":`...)
	b = jsonx.AppendString(b, j.Vendor)
	b = append(b, `,"vendorName":`...)
	b = jsonx.AppendString(b, VendorName(j.Vendor))
	b = append(b, `,"status":"`...)
	b = append(b, status...)
	b = append(b, `","late":`...)
	if dueAt, minutes, ok := w.Lateness(j, now); ok {
		b = append(b, `{"dueAt":`...)
		b = jsonx.AppendTime(b, dueAt)
		b = append(b, `,"minutes":`...)
		b = jsonx.AppendInt(b, minutes)
		b = append(b, '}')
		soon(dueAt + (minutes+1)*MsPerMinute)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"lastResult":"`...)
	b = append(b, ResultName(j.LastResult)...)
	b = append(b, `","lastReportAt":`...)
	b = jsonx.AppendNullTime(b, j.LastReportAt)
	b = append(b, `,"lastSuccessAt":`...)
	b = jsonx.AppendNullTime(b, j.LastSuccessAt)
	b = append(b, `,"lastFailureAt":`...)
	b = jsonx.AppendNullTime(b, j.LastFailureAt)
	b = append(b, `,"failureStreak":`...)
	b = jsonx.AppendInt(b, int64(j.FailureStreak))
	b = append(b, `,"paused":`...)
	b = jsonx.AppendBool(b, !monitored)
	b = append(b, `,"pausedUntil":`...)
	if j.OwnPaused(now) {
		b = jsonx.AppendNullTime(b, j.PausedUntil)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"schedule":{"intervalMinutes":`...)
	b = jsonx.AppendInt(b, j.IntervalMinutes)
	b = append(b, `,"expectedDays":`...)
	b = jsonx.AppendWords(b, DaysList(j.ExpectedDays))
	b = append(b, `,"graceMinutes":`...)
	b = jsonx.AppendInt(b, j.GraceMinutes)
	b = append(b, `,"nextExpectedAt":`...)
	b = jsonx.AppendTime(b, due)
	sla, counted, leaves := jobSLAUntil(j, now)
	soon(leaves)
	j.keptStatus, j.keptTally = status, counted
	b = append(b, `},"sla":{"target":`...)
	b = jsonx.AppendPercent(b, sla.Target)
	b = append(b, `,"successRate":`...)
	b = appendRate(b, sla.SuccessRate)
	b = append(b, `,"met":`...)
	b = jsonx.AppendBool(b, sla.Met)
	b = append(b, `,"reports":`...)
	b = jsonx.AppendInt(b, sla.Reports)
	b = append(b, `,"periodDays":`...)
	b = jsonx.AppendInt(b, int64(sla.PeriodDays))
	b = append(b, `},"createdAt":`...)
	b = jsonx.AppendTime(b, j.CreatedAt)
	b = append(b, '}')
	return b, until
}

// appendResult appends a result object (api.md 2.6).
func AppendResult(b []byte, j *Job, r *Result) []byte {
	b = append(b, `{"id":`...)
	b = AppendID(b, r.ID)
	b = append(b, `,"jobId":`...)
	b = AppendID(b, j.ID)
	b = append(b, `,"jobName":`...)
	b = jsonx.AppendString(b, j.Name)
	b = append(b, `,"clientId":`...)
	b = AppendID(b, j.Client.ID)
	b = append(b, `,"vendor":`...)
	b = jsonx.AppendString(b, j.Vendor)
	b = append(b, `,"status":"`...)
	b = append(b, ResultName(r.Status)...)
	b = append(b, `","completedAt":`...)
	b = jsonx.AppendTime(b, r.CompletedAt)
	b = append(b, `,"startedAt":`...)
	if r.Duration >= 0 {
		b = jsonx.AppendTime(b, r.CompletedAt-int64(r.Duration)*MsPerSecond)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"receivedAt":`...)
	b = jsonx.AppendTime(b, r.ReceivedAt)
	b = append(b, `,"durationSeconds":`...)
	if r.Duration >= 0 {
		b = jsonx.AppendInt(b, int64(r.Duration))
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"sizeBytes":`...)
	if r.SizeBytes > 0 {
		b = jsonx.AppendInt(b, r.SizeBytes)
	} else {
		b = append(b, "null"...)
	}
	return append(b, '}')
}

// appendAlert appends an alert object (api.md 2.7) as it reads at now.
func AppendAlert(b []byte, a *Alert, now int64) []byte {
	st := AlertStatus(a, now)
	b = append(b, `{"id":`...)
	b = AppendID(b, a.ID)
	b = append(b, `,"type":"`...)
	b = append(b, AlertTypeName(a.Type)...)
	b = append(b, `","severity":"`...)
	b = append(b, SeverityName(a.Severity)...)
	b = append(b, `","status":"`...)
	b = append(b, AlertStatusName(st)...)
	b = append(b, `","clientId":`...)
	b = AppendID(b, a.Job.Client.ID)
	b = append(b, `,"jobId":`...)
	b = AppendID(b, a.Job.ID)
	b = append(b, `,"jobName":`...)
	b = jsonx.AppendString(b, a.Job.Name)
	b = append(b, `,"summary":`...)
	b = jsonx.AppendString(b, a.Summary)
	b = append(b, `,"createdAt":`...)
	b = jsonx.AppendTime(b, a.CreatedAt)
	b = append(b, `,"acknowledgedAt":`...)
	b = jsonx.AppendNullTime(b, a.AcknowledgedAt)
	b = append(b, `,"snoozedUntil":`...)
	if st == AlertSnoozed {
		b = jsonx.AppendNullTime(b, a.SnoozedUntil)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"resolvedAt":`...)
	b = jsonx.AppendNullTime(b, a.ResolvedAt)
	b = append(b, `,"recoverySeconds":`...)
	if st == AlertResolved {
		b = jsonx.AppendInt(b, (a.ResolvedAt-a.CreatedAt)/MsPerSecond)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"ai":`...)
	b = appendAI(b, a.AI)
	return append(b, '}')
}

// appendClient appends a client object (decisions.md 4.2).
func (w *Workspace) AppendClient(b []byte, c *Client, now int64) []byte {
	f := w.ClientFigures(c, now)
	b = append(b, `{"id":`...)
	b = AppendID(b, c.ID)
	b = append(b, `,"name":`...)
	b = jsonx.AppendString(b, c.Name)
	b = append(b, `,"status":"`...)
	b = append(b, c.Status...)
	b = append(b, `","needsAttention":`...)
	b = jsonx.AppendBool(b, f.NeedsAttention)
	b = append(b, `,"openAlerts":`...)
	b = jsonx.AppendInt(b, int64(f.OpenAlerts))
	b = append(b, `,"jobs":`...)
	b = appendCounts(b, "total", f.Jobs)
	b = append(b, `,"sla":{"successRate":`...)
	b = appendRate(b, f.SuccessRate)
	b = append(b, `,"reports":`...)
	b = jsonx.AppendInt(b, f.Reports)
	b = append(b, `,"periodDays":`...)
	b = jsonx.AppendInt(b, SLAPeriodDays)
	b = append(b, `,"jobsMeetingTarget":`...)
	b = jsonx.AppendInt(b, int64(f.JobsMeetingTarget))
	b = append(b, `,"jobsBelowTarget":`...)
	b = jsonx.AppendInt(b, int64(f.JobsBelowTarget))
	b = append(b, `},"createdAt":`...)
	b = jsonx.AppendTime(b, c.createdAt)
	return append(b, '}')
}

// appendCounts appends job counts by status as an object whose first member
// is the total under totalName (the client's "total"), or, with totalName
// "", the members alone (health's flat fields).
func appendCounts(b []byte, totalName string, c StatusCounts) []byte {
	if totalName != "" {
		b = append(b, `{"`...)
		b = append(b, totalName...)
		b = append(b, `":`...)
		b = jsonx.AppendInt(b, int64(c.Total))
		b = append(b, ',')
	}
	b = append(b, `"healthy":`...)
	b = jsonx.AppendInt(b, int64(c.Healthy))
	b = append(b, `,"warning":`...)
	b = jsonx.AppendInt(b, int64(c.Warning))
	b = append(b, `,"failed":`...)
	b = jsonx.AppendInt(b, int64(c.Failed))
	b = append(b, `,"missing":`...)
	b = jsonx.AppendInt(b, int64(c.Missing))
	b = append(b, `,"waiting":`...)
	b = jsonx.AppendInt(b, int64(c.Waiting))
	b = append(b, `,"paused":`...)
	b = jsonx.AppendInt(b, int64(c.Paused))
	if totalName != "" {
		b = append(b, '}')
	}
	return b
}

// appendWorkspaceRecord appends the workspace record (decisions.md 4.1).
func (w *Workspace) AppendWorkspaceRecord(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = AppendID(b, w.ID)
	b = append(b, `,"name":`...)
	b = jsonx.AppendString(b, w.Name)
	b = append(b, `,"timeZone":`...)
	b = jsonx.AppendString(b, w.TimeZone)
	b = append(b, `,"plan":"`...)
	b = append(b, w.Plan...)
	b = append(b, `","status":"`...)
	b = append(b, w.Status...)
	b = append(b, `","trialEndsAt":`...)
	b = jsonx.AppendNullTime(b, w.TrialEndsAt)
	b = append(b, `,"createdAt":`...)
	b = jsonx.AppendTime(b, w.createdAt)
	return append(b, '}')
}

// appendKeyRecord appends a key record without its secret.
func AppendKeyRecord(b []byte, k *Key) []byte {
	b = append(b, `{"id":`...)
	b = AppendID(b, k.ID)
	b = append(b, `,"name":`...)
	b = jsonx.AppendString(b, k.Name)
	b = append(b, `,"prefix":`...)
	b = jsonx.AppendString(b, k.Prefix)
	b = append(b, `,"type":"`...)
	b = append(b, k.Type...)
	b = append(b, `","scopes":`...)
	b = jsonx.AppendWords(b, ScopeList(k.Scopes))
	b = append(b, `,"createdAt":`...)
	b = jsonx.AppendTime(b, k.CreatedAt)
	b = append(b, `,"expiresAt":`...)
	b = jsonx.AppendNullTime(b, k.ExpiresAt)
	b = append(b, `,"lastUsedAt":`...)
	b = jsonx.AppendNullTime(b, k.LastUsed.Load())
	if k.Type == "assistant" {
		if k.ReadWrite {
			b = append(b, `,"access":"read-write"`...)
		} else {
			b = append(b, `,"access":"read-only"`...)
		}
	}
	return append(b, '}')
}
