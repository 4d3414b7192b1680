package engine

import (
	"math"

	"backupmon/jsonx"
)

// The JSON of the REST objects (api.md 2, decisions.md 4), written by hand:
// one function per object, used by the REST API and the admin API alike.
// Jobs, whose figures cost a scan of their results, are kept encoded until
// they change or the clock moves them (jobJSON).

func appendID(b []byte, id ID) []byte {
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
func (w *workspace) appendJob(b []byte, j *job, now int64) []byte {
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
func (w *workspace) keptFigures(j *job, now int64) (string, tally) {
	if !(j.jsonFrom <= now && now < j.jsonUntil) {
		w.scratch = w.appendJob(w.scratch[:0], j, now)
	}
	return j.keptStatus, j.keptTally
}

// encodeJob writes the job object and returns until when it stays right:
// the next instant the clock changes a field (a due time or grace passing,
// the late minutes ticking, a pause ending, a result leaving the SLA window).
// The job's status and 30-day results, which the object shows, are kept
// with it (keptFigures).
func (w *workspace) encodeJob(b []byte, j *job, now int64) ([]byte, int64) {
	until := int64(math.MaxInt64)
	soon := func(t int64) {
		if t > now && t < until {
			until = t
		}
	}
	monitored := j.monitored(now)
	due := j.nextExpectedAt(now, w.loc)
	status := w.jobStatus(j, now)
	if j.paused && j.pausedUntil != 0 {
		soon(j.pausedUntil)
	}
	if monitored {
		soon(due + 1)
		soon(due + j.graceMinutes*msPerMinute + 1)
	}

	b = append(b, `{"id":`...)
	b = appendID(b, j.id)
	b = append(b, `,"name":`...)
	b = jsonx.AppendString(b, j.name)
	b = append(b, `,"clientId":`...)
	b = appendID(b, j.client.id)
	b = append(b, `,"clientName":`...)
	b = jsonx.AppendString(b, j.client.name)
	b = append(b, `,"device":{"id":`...)
	b = appendID(b, j.device.id)
	b = append(b, `,"name":`...)
	b = jsonx.AppendString(b, j.device.name)
	b = append(b, `,"type":`...)
	b = jsonx.AppendString(b, j.device.typ)
	b = append(b, `,"hostname":`...)
	b = jsonx.AppendString(b, j.device.hostname)
	b = append(b, `},"vendor":`...)
	b = jsonx.AppendString(b, j.vendor)
	b = append(b, `,"vendorName":`...)
	b = jsonx.AppendString(b, VendorName(j.vendor))
	b = append(b, `,"status":"`...)
	b = append(b, status...)
	b = append(b, `","late":`...)
	if dueAt, minutes, ok := w.lateness(j, now); ok {
		b = append(b, `{"dueAt":`...)
		b = jsonx.AppendTime(b, dueAt)
		b = append(b, `,"minutes":`...)
		b = jsonx.AppendInt(b, minutes)
		b = append(b, '}')
		soon(dueAt + (minutes+1)*msPerMinute)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"lastResult":"`...)
	b = append(b, resultName(j.lastResult)...)
	b = append(b, `","lastReportAt":`...)
	b = jsonx.AppendNullTime(b, j.lastReportAt)
	b = append(b, `,"lastSuccessAt":`...)
	b = jsonx.AppendNullTime(b, j.lastSuccessAt)
	b = append(b, `,"lastFailureAt":`...)
	b = jsonx.AppendNullTime(b, j.lastFailureAt)
	b = append(b, `,"failureStreak":`...)
	b = jsonx.AppendInt(b, int64(j.failureStreak))
	b = append(b, `,"paused":`...)
	b = jsonx.AppendBool(b, !monitored)
	b = append(b, `,"pausedUntil":`...)
	if j.ownPaused(now) {
		b = jsonx.AppendNullTime(b, j.pausedUntil)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"schedule":{"intervalMinutes":`...)
	b = jsonx.AppendInt(b, j.intervalMinutes)
	b = append(b, `,"expectedDays":[`...)
	for i, d := range daysList(j.expectedDays) {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, d...)
		b = append(b, '"')
	}
	b = append(b, `],"graceMinutes":`...)
	b = jsonx.AppendInt(b, j.graceMinutes)
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
	b = jsonx.AppendTime(b, j.createdAt)
	b = append(b, '}')
	return b, until
}

// appendResult appends a result object (api.md 2.6).
func appendResult(b []byte, j *job, r *result) []byte {
	b = append(b, `{"id":`...)
	b = appendID(b, r.id)
	b = append(b, `,"jobId":`...)
	b = appendID(b, j.id)
	b = append(b, `,"jobName":`...)
	b = jsonx.AppendString(b, j.name)
	b = append(b, `,"clientId":`...)
	b = appendID(b, j.client.id)
	b = append(b, `,"vendor":`...)
	b = jsonx.AppendString(b, j.vendor)
	b = append(b, `,"status":"`...)
	b = append(b, resultName(r.status)...)
	b = append(b, `","completedAt":`...)
	b = jsonx.AppendTime(b, r.completedAt)
	b = append(b, `,"startedAt":`...)
	if r.duration >= 0 {
		b = jsonx.AppendTime(b, r.completedAt-int64(r.duration)*msPerSecond)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"receivedAt":`...)
	b = jsonx.AppendTime(b, r.receivedAt)
	b = append(b, `,"durationSeconds":`...)
	if r.duration >= 0 {
		b = jsonx.AppendInt(b, int64(r.duration))
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"sizeBytes":`...)
	if r.sizeBytes > 0 {
		b = jsonx.AppendInt(b, r.sizeBytes)
	} else {
		b = append(b, "null"...)
	}
	return append(b, '}')
}

// appendAlert appends an alert object (api.md 2.7) as it reads at now.
func appendAlert(b []byte, a *alert, now int64) []byte {
	st := alertStatus(a, now)
	b = append(b, `{"id":`...)
	b = appendID(b, a.id)
	b = append(b, `,"type":"`...)
	b = append(b, alertTypeName(a.typ)...)
	b = append(b, `","severity":"`...)
	b = append(b, severityName(a.severity)...)
	b = append(b, `","status":"`...)
	b = append(b, alertStatusName(st)...)
	b = append(b, `","clientId":`...)
	b = appendID(b, a.job.client.id)
	b = append(b, `,"jobId":`...)
	b = appendID(b, a.job.id)
	b = append(b, `,"jobName":`...)
	b = jsonx.AppendString(b, a.job.name)
	b = append(b, `,"summary":`...)
	b = jsonx.AppendString(b, a.summary)
	b = append(b, `,"createdAt":`...)
	b = jsonx.AppendTime(b, a.createdAt)
	b = append(b, `,"acknowledgedAt":`...)
	b = jsonx.AppendNullTime(b, a.acknowledgedAt)
	b = append(b, `,"snoozedUntil":`...)
	if st == alertSnoozed {
		b = jsonx.AppendNullTime(b, a.snoozedUntil)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"resolvedAt":`...)
	b = jsonx.AppendNullTime(b, a.resolvedAt)
	b = append(b, `,"recoverySeconds":`...)
	if st == alertResolved {
		b = jsonx.AppendInt(b, (a.resolvedAt-a.createdAt)/msPerSecond)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"ai":`...)
	b = appendAI(b, a.ai)
	return append(b, '}')
}

// appendClient appends a client object (decisions.md 4.2).
func (w *workspace) appendClient(b []byte, c *client, now int64) []byte {
	f := w.clientFigures(c, now)
	b = append(b, `{"id":`...)
	b = appendID(b, c.id)
	b = append(b, `,"name":`...)
	b = jsonx.AppendString(b, c.name)
	b = append(b, `,"status":"`...)
	b = append(b, c.status...)
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
	b = jsonx.AppendInt(b, slaPeriodDays)
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
func (w *workspace) appendWorkspaceRecord(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = appendID(b, w.id)
	b = append(b, `,"name":`...)
	b = jsonx.AppendString(b, w.name)
	b = append(b, `,"timeZone":`...)
	b = jsonx.AppendString(b, w.timeZone)
	b = append(b, `,"plan":"`...)
	b = append(b, w.plan...)
	b = append(b, `","status":"`...)
	b = append(b, w.status...)
	b = append(b, `","trialEndsAt":`...)
	b = jsonx.AppendNullTime(b, w.trialEndsAt)
	b = append(b, `,"createdAt":`...)
	b = jsonx.AppendTime(b, w.createdAt)
	return append(b, '}')
}

// appendKeyRecord appends a key record without its secret.
func appendKeyRecord(b []byte, k *apiKey) []byte {
	b = append(b, `{"id":`...)
	b = appendID(b, k.id)
	b = append(b, `,"name":`...)
	b = jsonx.AppendString(b, k.name)
	b = append(b, `,"prefix":`...)
	b = jsonx.AppendString(b, k.prefix)
	b = append(b, `,"type":"`...)
	b = append(b, k.typ...)
	b = append(b, `","scopes":[`...)
	for i, s := range scopeList(k.scopes) {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, s...)
		b = append(b, '"')
	}
	b = append(b, `],"createdAt":`...)
	b = jsonx.AppendTime(b, k.createdAt)
	b = append(b, `,"expiresAt":`...)
	b = jsonx.AppendNullTime(b, k.expiresAt)
	b = append(b, `,"lastUsedAt":`...)
	b = jsonx.AppendNullTime(b, k.lastUsed.Load())
	if k.typ == "assistant" {
		if k.readWrite {
			b = append(b, `,"access":"read-write"`...)
		} else {
			b = append(b, `,"access":"read-only"`...)
		}
	}
	return append(b, '}')
}
