package engine

import "backupmon/jsonx"

// Health figures (api.md 2.4, decisions.md 4.3 and 4.7).
const (
	healthDaysDefault = 30
	healthDaysMax     = 90
)

// healthFigures is a health summary before it is written.
type healthFigures struct {
	counts           StatusCounts
	open, unresolved int
	success          Rate
	reports          int64
	sla              Rate
	needing, clients int
	from, to         int64
	days             int
}

// health is the one function for health summaries: of the workspace (only
// nil: archived clients and their jobs left out) or of one client, over the
// days before now.
func (w *workspace) health(now int64, days int, only *client) healthFigures {
	h := healthFigures{from: now - int64(days)*msPerDay, to: now, days: days}
	var all tally
	var rated, meeting int64
	add := func(c *client) {
		h.clients++
		needs := false
		for _, j := range c.jobList {
			var st string
			var t tally
			if days == slaPeriodDays {
				st, t = w.keptFigures(j, now)
			} else {
				st, t = w.jobStatus(j, now), j.resultsSince(h.from)
			}
			h.counts.add(st)
			open := false
			if a := j.alert; a != nil {
				h.unresolved++
				if open = alertStatus(a, now) == alertOpen; open {
					h.open++
				}
			}
			if needsAttention(st, open) {
				needs = true
			}
			all.add(t)
			if t.total() > 0 {
				rated++
				if rate(t.ok, t.total()).meets(j.slaTarget) {
					meeting++
				}
			}
		}
		if needs {
			h.needing++
		}
	}
	if only != nil {
		add(only)
	} else {
		for _, c := range w.clientList {
			if c.status != "archived" {
				add(c)
			}
		}
	}
	h.success = rate(all.ok, all.total())
	h.reports = all.total()
	h.sla = rate(meeting, rated)
	return h
}

// appendHealth appends a health summary; c names the client for a client's
// summary, nil for the workspace's.
func appendHealth(b []byte, h healthFigures, c *client, now int64) []byte {
	if c == nil {
		b = append(b, `{"scope":"workspace"`...)
	} else {
		b = append(b, `{"scope":"client","clientId":`...)
		b = appendID(b, c.id)
		b = append(b, `,"clientName":`...)
		b = jsonx.AppendString(b, c.name)
	}
	b = append(b, `,"monitoredJobs":`...)
	b = jsonx.AppendInt(b, int64(h.counts.Total))
	b = append(b, ',')
	b = appendCounts(b, "", h.counts)
	b = append(b, `,"openAlerts":`...)
	b = jsonx.AppendInt(b, int64(h.open))
	b = append(b, `,"unresolvedAlerts":`...)
	b = jsonx.AppendInt(b, int64(h.unresolved))
	b = append(b, `,"backupSuccessRate":`...)
	b = appendRate(b, h.success)
	b = append(b, `,"reports":`...)
	b = jsonx.AppendInt(b, h.reports)
	b = append(b, `,"slaComplianceRate":`...)
	b = appendRate(b, h.sla)
	b = append(b, `,"clientsNeedingAttention":`...)
	b = jsonx.AppendInt(b, int64(h.needing))
	b = append(b, `,"clients":`...)
	b = jsonx.AppendInt(b, int64(h.clients))
	b = append(b, `,"period":{"from":`...)
	b = jsonx.AppendTime(b, h.from)
	b = append(b, `,"to":`...)
	b = jsonx.AppendTime(b, h.to)
	b = append(b, `,"days":`...)
	b = jsonx.AppendInt(b, int64(h.days))
	b = append(b, `},"timestamp":`...)
	b = jsonx.AppendTime(b, now)
	return append(b, '}')
}
