package engine

import (
	"backupmon/state"
	"sort"
	"strings"
	"time"
)

// The dashboard's reads (also the assistant server's): the attention queue,
// clients, jobs, a job's page, alerts and keys, built in the actor from the
// one-function-per-figure rules the REST API uses.

// boardWorkspaceOf returns the workspace wsID as boards show it.
func (e *Engine) boardWorkspaceOf(wsID string) (BoardWorkspace, error) {
	return read(e, wsID, func(w *workspace) BoardWorkspace { return w.boardWorkspace(e.nowMs()) })
}

// The dashboard's reads: typed views of a workspace, built in its actor from
// the same one-function-per-figure rules the REST API uses (jobStatus,
// alertStatus, needsAttention, jobSLA via keptFigures, clientFigures,
// health).

// BoardWorkspace is the workspace a dashboard page shows.
type BoardWorkspace struct {
	ID, Name, TimeZone, Plan, Status string
	Loc                              *time.Location
	Active                           bool
}

// BoardAI is the rule catalogue's suggestion on an alert.
type BoardAI struct {
	Cause, Confidence, Category string
}

// BoardAlert is an alert as the dashboard shows it. NextRunAt is its job's
// next expected run after now (0 when the job has no schedule to follow).
type BoardAlert struct {
	ID, JobID, JobName, ClientID, ClientName string
	Type, Severity, Status, Summary          string
	AI                                       *BoardAI
	CreatedAt, AcknowledgedAt, SnoozedUntil  int64
	ResolvedAt, NextRunAt                    int64
}

// BoardJob is a job as the dashboard shows it; times are Unix
// milliseconds, 0 for none.
type BoardJob struct {
	ID, Name, ClientID, ClientName, ClientStatus string
	Vendor, VendorName                           string
	DeviceName, DeviceType, Hostname             string
	Status, LastResult                           string
	LastReportAt, LastSuccessAt, LastFailureAt   int64
	NextExpectedAt, LateMinutes, CreatedAt       int64
	IntervalMinutes, GraceMinutes                int64
	ExpectedDays                                 []string
	Paused                                       bool
	PausedUntil                                  int64
	SLA                                          state.JobSLA
	Alert                                        *BoardAlert // the unresolved alert
	SizeDrop                                     SizeDrop    // its latest successful run's size drop, if flagged
	// Overdue is the due time passed without a report and the expected
	// runs missed since (state.OverdueOf); zero when on schedule.
	Overdue state.Overdue
}

// BoardResult is one stored result of a job.
type BoardResult struct {
	ID, Status, Source      string
	CompletedAt, ReceivedAt int64
	SizeBytes               int64 // -1: none
	DurationSeconds         int64 // -1: none
}

// BoardClient is a client with its figures.
type BoardClient struct {
	ID, Name, Status string
	Figures          state.ClientFigures
}

// BoardHealth is the workspace's health over the SLA period.
type BoardHealth struct {
	Jobs                    state.StatusCounts
	OpenAlerts, Unresolved  int
	SuccessRate, SLAMet     state.Rate
	Reports                 int64
	ClientsNeeding, Clients int
}

// QueueItem is one job of the attention queue, with its unresolved alert
// if any; Since is when its trouble began (the alert's creation, else the
// failure or the missed due time).
type QueueItem struct {
	Job   BoardJob
	Since int64
	rank  int
}

// QueueGroup is the queue's items of one client, worst and oldest first.
type QueueGroup struct {
	ClientID, ClientName string
	Items                []QueueItem
}

// Queue is the attention queue: every job that needs attention (the one
// rule, needsAttention) but those whose alert is snoozed, then the
// monitored jobs whose latest successful run is a size drop (a notice, not
// the REST API's rule: read_setup.go), grouped by client; the groups are
// ordered by their worst, then oldest, item.
type Queue struct {
	Jobs    state.StatusCounts // every job of the workspace by status (health)
	Groups  []QueueGroup
	Items   int
	Snoozed int // jobs left out while their alert is snoozed
}

// JobFilter selects the jobs of a jobs page; empty fields select all.
type JobFilter struct {
	ClientID, Status, Vendor, Search string
	Offset, Limit                    int
}

// JobPage is everything a job's page shows.
type JobPage struct {
	Job     BoardJob
	Grid    []GridDay
	Results []BoardResult // newest first
	// ResultsTotal is how many results the job has in all.
	ResultsTotal int
	Alerts       []BoardAlert // newest first
}

// BoardKey is an API key record as the key list shows it.
type BoardKey struct {
	ID, Name, Type, Prefix string
	ReadWrite              bool
	Scopes                 []string
	CreatedAt, ExpiresAt   int64
	LastUsedAt             int64
}

const (
	boardResults = 50
	boardAlerts  = 20
)

func (w *workspace) boardWorkspace(now int64) BoardWorkspace {
	return BoardWorkspace{ID: w.ID.String(), Name: w.Name, TimeZone: w.TimeZone, Plan: w.Plan, Status: w.Status, Loc: w.Loc, Active: w.Active(now)}
}

func (w *workspace) boardAlert(a *state.Alert, now int64) BoardAlert {
	j := a.Job
	v := BoardAlert{
		ID: a.ID.String(), JobID: j.ID.String(), JobName: j.Name, ClientID: j.Client.ID.String(), ClientName: j.Client.Name,
		Type: state.AlertTypeName(a.Type), Severity: state.SeverityName(a.Severity), Status: state.AlertStatusName(state.AlertStatus(a, now)),
		Summary: a.Summary, CreatedAt: a.CreatedAt, AcknowledgedAt: a.AcknowledgedAt, ResolvedAt: a.ResolvedAt,
		NextRunAt: w.nextRunAfter(j, now),
	}
	if v.Status == "snoozed" {
		v.SnoozedUntil = a.SnoozedUntil
	}
	if a.AI != nil {
		v.AI = &BoardAI{Cause: a.AI.Cause, Confidence: a.AI.Confidence, Category: a.AI.Category}
	}
	return v
}

// nextRunAfter returns the job's next expected run after now: its next due
// time, or for a job already past it, the first due time after now counted
// on from there; 0 for a job whose monitoring is off.
func (w *workspace) nextRunAfter(j *state.Job, now int64) int64 {
	if !j.Monitored(now) {
		return 0
	}
	due := j.NextExpectedAt(now, w.Loc)
	if due > now {
		return due
	}
	// Whole intervals up to the last slot at or before now, then on by
	// the schedule (which skips to an expected weekday: a few steps).
	iv := j.IntervalMinutes * state.MsPerMinute
	due += (now - due) / iv * iv
	for due <= now {
		due = state.NextDue(due, j.IntervalMinutes, j.ExpectedDays, w.Loc)
	}
	return due
}

func (w *workspace) boardJob(j *state.Job, now int64) BoardJob {
	st, _ := w.KeptFigures(j, now)
	v := BoardJob{
		ID: j.ID.String(), Name: j.Name, ClientID: j.Client.ID.String(), ClientName: j.Client.Name, ClientStatus: j.Client.Status,
		Vendor: j.Vendor, VendorName: state.VendorName(j.Vendor),
		DeviceName: j.Device.Name, DeviceType: j.Device.Type, Hostname: j.Device.Hostname,
		Status: st, LastResult: state.ResultName(j.LastResult),
		LastReportAt: j.LastReportAt, LastSuccessAt: j.LastSuccessAt, LastFailureAt: j.LastFailureAt,
		CreatedAt: j.CreatedAt, IntervalMinutes: j.IntervalMinutes, GraceMinutes: j.GraceMinutes,
		ExpectedDays: state.DaysList(j.ExpectedDays), Paused: j.OwnPaused(now), SLA: state.SLAOf(j, now),
		SizeDrop: state.SizeDropOf(j),
	}
	if v.Paused {
		v.PausedUntil = j.PausedUntil
	}
	if j.Monitored(now) {
		v.NextExpectedAt = j.NextExpectedAt(now, w.Loc)
	}
	v.Overdue = w.OverdueOf(j, now)
	v.LateMinutes = v.Overdue.Minutes
	if j.Alert != nil {
		a := w.boardAlert(j.Alert, now)
		v.Alert = &a
	}
	return v
}

// queueRank orders the queue's items: open critical alerts, open warning
// alerts, then jobs failed or missing whose alert is acknowledged (or that
// have none).
func queueRank(j *state.Job, now int64) int {
	if j.Alert != nil && state.AlertStatus(j.Alert, now) == state.AlertOpen {
		if j.Alert.Severity == state.SeverityCritical {
			return 0
		}
		return 1
	}
	return 2
}

// Queue returns the workspace's attention queue at now.
func (e *Engine) Queue(wsID string) (Queue, error) {
	return read(e, wsID, func(w *workspace) Queue {
		now := e.nowMs()
		q := Queue{Jobs: w.Health(now, state.SLAPeriodDays, nil).Counts}
		byClient := map[*state.Client]int{}
		for _, c := range w.ClientList {
			for _, j := range c.JobList {
				st, _ := w.KeptFigures(j, now)
				as := uint8(0)
				if j.Alert != nil {
					as = state.AlertStatus(j.Alert, now)
				}
				if as == state.AlertSnoozed {
					// Counted when it would be in the queue with its
					// alert open.
					if state.NeedsAttention(st, true) {
						q.Snoozed++
					}
					continue
				}
				it := QueueItem{rank: queueRank(j, now)}
				if !state.NeedsAttention(st, as == state.AlertOpen) {
					// A size drop is a notice of its own (queueSizeDrop).
					if it.Since = queueSizeDrop(j, now); it.Since == 0 {
						continue
					}
					it.rank = rankSizeDrop
				}
				it.Job = w.boardJob(j, now)
				switch {
				case it.rank == rankSizeDrop:
				case j.Alert != nil:
					it.Since = j.Alert.CreatedAt
				case st == state.StatusMissing:
					it.Since = j.NextExpectedAt(now, w.Loc) + j.GraceMinutes*state.MsPerMinute
				default:
					it.Since = j.LastFailureAt
				}
				gi, ok := byClient[c]
				if !ok {
					gi = len(q.Groups)
					byClient[c] = gi
					q.Groups = append(q.Groups, QueueGroup{ClientID: c.ID.String(), ClientName: c.Name})
				}
				q.Groups[gi].Items = append(q.Groups[gi].Items, it)
				q.Items++
			}
		}
		worse := func(x, y *QueueItem) bool {
			if x.rank != y.rank {
				return x.rank < y.rank
			}
			if x.Since != y.Since {
				return x.Since < y.Since
			}
			return x.Job.ID < y.Job.ID
		}
		for i := range q.Groups {
			items := q.Groups[i].Items
			sort.Slice(items, func(a, b int) bool { return worse(&items[a], &items[b]) })
		}
		sort.SliceStable(q.Groups, func(a, b int) bool { return worse(&q.Groups[a].Items[0], &q.Groups[b].Items[0]) })
		return q
	})
}

// BoardClients returns the workspace's health and its clients (archived
// ones last), by name.
func (e *Engine) BoardClients(wsID string) (BoardHealth, []BoardClient, error) {
	type answer struct {
		h  BoardHealth
		cs []BoardClient
	}
	r, err := read(e, wsID, func(w *workspace) answer {
		now := e.nowMs()
		h := w.Health(now, state.SLAPeriodDays, nil)
		var r answer
		r.h = BoardHealth{Jobs: h.Counts, OpenAlerts: h.Open, Unresolved: h.Unresolved, SuccessRate: h.Success,
			SLAMet: h.SLA, Reports: h.Reports, ClientsNeeding: h.Needing, Clients: h.Clients}
		for _, c := range w.ClientList {
			r.cs = append(r.cs, BoardClient{ID: c.ID.String(), Name: c.Name, Status: c.Status, Figures: w.ClientFigures(c, now)})
		}
		sort.SliceStable(r.cs, func(i, j int) bool { return r.cs[i].Status != "archived" && r.cs[j].Status == "archived" })
		return r
	})
	return r.h, r.cs, err
}

// BoardClient returns one client with its figures and its jobs by name, or
// a KindNotFound error.
func (e *Engine) BoardClient(wsID, clientID string) (BoardClient, []BoardJob, error) {
	a, err := e.workspaceActor(wsID)
	if err != nil {
		return BoardClient{}, nil, err
	}
	type answer struct {
		c    BoardClient
		jobs []BoardJob
		ok   bool
	}
	r := ask(a, func(w *workspace) answer {
		now := e.nowMs()
		c := w.Client(clientID)
		if c == nil {
			return answer{}
		}
		r := answer{c: BoardClient{ID: c.ID.String(), Name: c.Name, Status: c.Status, Figures: w.ClientFigures(c, now)}, ok: true}
		for _, j := range c.JobList {
			r.jobs = append(r.jobs, w.boardJob(j, now))
		}
		return r
	})
	if !r.ok {
		return BoardClient{}, nil, notFound("client")
	}
	return r.c, r.jobs, nil
}

// BoardJobs returns the page of jobs f selects, by name, and how many it
// selects in all.
func (e *Engine) BoardJobs(wsID string, f JobFilter) ([]BoardJob, int, error) {
	type answer struct {
		jobs  []BoardJob
		total int
	}
	search := strings.ToLower(f.Search)
	r, err := read(e, wsID, func(w *workspace) answer {
		now := e.nowMs()
		list := w.JobList
		if f.ClientID != "" {
			c := w.Client(f.ClientID)
			if c == nil {
				return answer{}
			}
			list = c.JobList
		}
		var r answer
		for _, j := range list {
			if f.Vendor != "" && j.Vendor != f.Vendor {
				continue
			}
			if search != "" && !strings.Contains(j.Key, search) && !strings.Contains(strings.ToLower(j.Client.Name), search) &&
				!strings.Contains(strings.ToLower(j.Device.Hostname), search) {
				continue
			}
			if f.Status != "" {
				if st, _ := w.KeptFigures(j, now); st != f.Status {
					continue
				}
			}
			if r.total >= f.Offset && (f.Limit <= 0 || len(r.jobs) < f.Limit) {
				r.jobs = append(r.jobs, w.boardJob(j, now))
			}
			r.total++
		}
		return r
	})
	return r.jobs, r.total, err
}

// BoardJob returns a job's page: the job, its day grid over the last
// gridDays days in the workspace's zone, its latest results and alerts.
func (e *Engine) BoardJob(wsID, jobID string) (JobPage, error) {
	return e.BoardJobResults(wsID, jobID, 0, boardResults)
}

// BoardJobResults returns a job's page with limit of its results, newest
// first, from offset on, and how many it has in all (ResultsTotal).
func (e *Engine) BoardJobResults(wsID, jobID string, offset, limit int) (JobPage, error) {
	a, err := e.workspaceActor(wsID)
	if err != nil {
		return JobPage{}, err
	}
	p, ok := ask2(a, func(w *workspace) (JobPage, bool) {
		now := e.nowMs()
		j := w.Job(jobID)
		if j == nil {
			return JobPage{}, false
		}
		p := JobPage{Job: w.boardJob(j, now), Grid: w.dayGrid(j, now, gridDays), ResultsTotal: len(j.Results)}
		for i := len(j.Results) - 1 - max(offset, 0); i >= 0 && len(p.Results) < limit; i-- {
			r := &j.Results[i]
			p.Results = append(p.Results, BoardResult{ID: r.ID.String(), Status: state.ResultName(r.Status), Source: w.Source(r.Source),
				CompletedAt: r.CompletedAt, ReceivedAt: r.ReceivedAt, SizeBytes: r.SizeBytes, DurationSeconds: int64(r.Duration)})
		}
		for i := len(j.Alerts) - 1; i >= 0 && len(p.Alerts) < boardAlerts; i-- {
			p.Alerts = append(p.Alerts, w.boardAlert(j.Alerts[i], now))
		}
		return p, true
	})
	if !ok {
		return JobPage{}, notFound("job")
	}
	return p, nil
}

// Alert statuses a BoardAlerts filter may name besides the four statuses.
const (
	AlertsUnresolved = "unresolved"
	AlertsAll        = "all"
)

// BoardAlerts returns the page of alerts whose status is status (one of
// the four, AlertsUnresolved or AlertsAll), newest first, and how many
// there are in all.
func (e *Engine) BoardAlerts(wsID, status string, offset, limit int) ([]BoardAlert, int, error) {
	type answer struct {
		list  []BoardAlert
		total int
	}
	r, err := read(e, wsID, func(w *workspace) answer {
		now := e.nowMs()
		var r answer
		for i := len(w.AlertLog) - 1; i >= 0; i-- {
			al := w.AlertLog[i]
			st := state.AlertStatusName(state.AlertStatus(al, now))
			switch status {
			case AlertsAll:
			case AlertsUnresolved:
				if st == "resolved" {
					continue
				}
			default:
				if st != status {
					continue
				}
			}
			if r.total >= offset && len(r.list) < limit {
				r.list = append(r.list, w.boardAlert(al, now))
			}
			r.total++
		}
		return r
	})
	return r.list, r.total, err
}

// BoardAlertsByID returns the alerts of ids that exist, in the order given.
func (e *Engine) BoardAlertsByID(wsID string, ids []string) ([]BoardAlert, error) {
	return read(e, wsID, func(w *workspace) []BoardAlert {
		now := e.nowMs()
		var list []BoardAlert
		for _, s := range ids {
			if id, ok := state.ParseID(s); ok {
				if al := w.Alerts[id]; al != nil {
					list = append(list, w.boardAlert(al, now))
				}
			}
		}
		return list
	})
}

// BoardKeys returns the workspace's API keys, newest first.
func (e *Engine) BoardKeys(wsID string) ([]BoardKey, error) {
	return read(e, wsID, func(w *workspace) []BoardKey {
		list := make([]BoardKey, 0, len(w.Keys))
		for _, k := range w.Keys {
			v := BoardKey{ID: k.ID.String(), Name: k.Name, Type: k.Type, Prefix: k.Prefix, ReadWrite: k.ReadWrite,
				CreatedAt: k.CreatedAt, ExpiresAt: k.ExpiresAt, LastUsedAt: k.LastUsed.Load()}
			if k.Type == "rest" {
				v.Scopes = state.ScopeList(k.Scopes)
			}
			list = append(list, v)
		}
		sort.Slice(list, func(i, j int) bool {
			if list[i].CreatedAt != list[j].CreatedAt {
				return list[i].CreatedAt > list[j].CreatedAt
			}
			return list[i].ID > list[j].ID
		})
		return list
	})
}
