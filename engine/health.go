package engine

import "backupmon/jsonx"

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

// keptHealth is the workspace's health over the default period as last
// worked out, and when it stays right: until a record changes the state
// (figVersion), and within [from, until), the times between which no job's
// status or 30-day results and no alert's status move with the clock.
type keptHealth struct {
	h           healthFigures
	version     uint64
	from, until int64
}

// health is the one function for health summaries: of the workspace (only
// nil: archived clients and their jobs left out) or of one client, over the
// days before now. The workspace's summary over the default period, which
// dashboards poll, is kept between changes (keptHealth).
func (w *workspace) health(now int64, days int, only *client) healthFigures {
	from := now - int64(days)*msPerDay
	keep := days == slaPeriodDays && only == nil
	if k := &w.keptHealth; keep && k.version == w.figVersion && k.from <= now && now < k.until {
		h := k.h
		h.from, h.to = from, now
		return h
	}
	until := int64(1<<63 - 1) // while keep: the earliest time a kept figure moves
	h := healthFigures{from: from, to: now, days: days}
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
				until = min(until, j.jsonUntil)
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
				if a.status == alertSnoozed && a.snoozedUntil > now {
					until = min(until, a.snoozedUntil) // it opens then
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
	if keep {
		w.keptHealth = keptHealth{h: h, version: w.figVersion, from: now, until: until}
	}
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
