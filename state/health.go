package state

import "backupmon/jsonx"

// healthFigures is a health summary before it is written.
type HealthFigures struct {
	Counts           StatusCounts
	Open, Unresolved int
	Success          Rate
	Reports          int64
	SLA              Rate
	Needing, Clients int
	From, To         int64
	Days             int
}

// keptHealth is the workspace's health over the default period as last
// worked out, and when it stays right: until a record changes the state
// (figVersion), and within [from, until), the times between which no job's
// status or 30-day results and no alert's status move with the clock.
type keptHealth struct {
	h           HealthFigures
	version     uint64
	from, until int64
}

// health is the one function for health summaries: of the workspace (only
// nil: archived clients and their jobs left out) or of one client, over the
// days before now. The workspace's summary over the default period, which
// dashboards poll, is kept between changes (keptHealth).
func (w *Workspace) Health(now int64, days int, only *Client) HealthFigures {
	if k := &w.keptHealth; days == SLAPeriodDays && only == nil && k.version == w.figVersion && k.from <= now && now < k.until {
		h := k.h
		h.From, h.To = now-int64(days)*MsPerDay, now
		return h
	}
	return w.health(now, days, only, days == SLAPeriodDays)
}

// HealthScan is Health worked out the plain way, every job's status and
// results at now, with nothing kept nor taken from what is kept: what
// Health must equal (the engine's tests check it does).
func (w *Workspace) HealthScan(now int64, days int, only *Client) HealthFigures {
	return w.health(now, days, only, false)
}

// health works out a health summary; kept takes the jobs' figures from
// their kept encodings (KeptFigures, over the default period only) and
// keeps the workspace's summary.
func (w *Workspace) health(now int64, days int, only *Client, kept bool) HealthFigures {
	from := now - int64(days)*MsPerDay
	keep := kept && only == nil
	until := int64(1<<63 - 1) // while keep: the earliest time a kept figure moves
	h := HealthFigures{From: from, To: now, Days: days}
	var all Tally
	var rated, meeting int64
	add := func(c *Client) {
		h.Clients++
		needs := false
		for _, j := range c.JobList {
			var st string
			var t Tally
			if kept {
				st, t = w.KeptFigures(j, now)
				until = min(until, j.jsonUntil)
			} else {
				st, t = w.JobStatus(j, now), j.ResultsSince(h.From)
			}
			h.Counts.Add(st)
			open := false
			if a := j.Alert; a != nil {
				h.Unresolved++
				if open = AlertStatus(a, now) == AlertOpen; open {
					h.Open++
				}
				if a.Status == AlertSnoozed && a.SnoozedUntil > now {
					until = min(until, a.SnoozedUntil) // it opens then
				}
			}
			if NeedsAttention(st, open) {
				needs = true
			}
			all.Add(t)
			if t.Total() > 0 {
				rated++
				if RateOf(t.OK, t.Total()).Meets(j.SLATarget) {
					meeting++
				}
			}
		}
		if needs {
			h.Needing++
		}
	}
	if only != nil {
		add(only)
	} else {
		for _, c := range w.ClientList {
			if c.Status != "archived" {
				add(c)
			}
		}
	}
	h.Success = RateOf(all.OK, all.Total())
	h.Reports = all.Total()
	h.SLA = RateOf(meeting, rated)
	if keep {
		w.keptHealth = keptHealth{h: h, version: w.figVersion, from: now, until: until}
	}
	return h
}

// appendHealth appends a health summary; c names the client for a client's
// summary, nil for the workspace's.
func AppendHealth(b []byte, h HealthFigures, c *Client, now int64) []byte {
	if c == nil {
		b = append(b, `{"scope":"workspace"`...)
	} else {
		b = append(b, `{"scope":"client","clientId":`...)
		b = AppendID(b, c.ID)
		b = append(b, `,"clientName":`...)
		b = jsonx.AppendString(b, c.Name)
	}
	b = append(b, `,"monitoredJobs":`...)
	b = jsonx.AppendInt(b, int64(h.Counts.Total))
	b = append(b, ',')
	b = appendCounts(b, "", h.Counts)
	b = append(b, `,"openAlerts":`...)
	b = jsonx.AppendInt(b, int64(h.Open))
	b = append(b, `,"unresolvedAlerts":`...)
	b = jsonx.AppendInt(b, int64(h.Unresolved))
	b = append(b, `,"backupSuccessRate":`...)
	b = appendRate(b, h.Success)
	b = append(b, `,"reports":`...)
	b = jsonx.AppendInt(b, h.Reports)
	b = append(b, `,"slaComplianceRate":`...)
	b = appendRate(b, h.SLA)
	b = append(b, `,"clientsNeedingAttention":`...)
	b = jsonx.AppendInt(b, int64(h.Needing))
	b = append(b, `,"clients":`...)
	b = jsonx.AppendInt(b, int64(h.Clients))
	b = append(b, `,"period":{"from":`...)
	b = jsonx.AppendTime(b, h.From)
	b = append(b, `,"to":`...)
	b = jsonx.AppendTime(b, h.To)
	b = append(b, `,"days":`...)
	b = jsonx.AppendInt(b, int64(h.Days))
	b = append(b, `},"timestamp":`...)
	b = jsonx.AppendTime(b, now)
	return append(b, '}')
}
