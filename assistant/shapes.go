package assistant

import (
	"net/url"

	"backupmon/engine"
)

// The tools' outputs. Times are the REST API's timestamps (UTC, RFC 3339
// with milliseconds), left out when there is none.

// Workspace is the key's workspace.
type Workspace struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	TimeZone string `json:"timeZone" jsonschema:"the IANA zone dates and days are counted in"`
	Plan     string `json:"plan"`
	Status   string `json:"status"`
	Active   bool   `json:"active" jsonschema:"false when suspended, cancelled or out of trial"`
}

// Client is a client with its figures over the SLA period (30 days).
type Client struct {
	ID             string       `json:"id"`
	Name           string       `json:"name"`
	Status         string       `json:"status" jsonschema:"active, paused or archived"`
	NeedsAttention bool         `json:"needsAttention"`
	Jobs           StatusCounts `json:"jobs"`
	OpenAlerts     int          `json:"openAlerts"`
	SuccessRate    *float64     `json:"successRate30d" jsonschema:"percent of reports that were ok over 30 days; null without reports"`
	Reports        int64        `json:"reports30d"`
	Link           string       `json:"link"`
}

// StatusCounts counts jobs by status.
type StatusCounts struct {
	Total   int `json:"total"`
	Healthy int `json:"healthy"`
	Warning int `json:"warning"`
	Failed  int `json:"failed"`
	Missing int `json:"missing"`
	Waiting int `json:"waiting"`
	Paused  int `json:"paused"`
}

// Health is the workspace's health over the SLA period.
type Health struct {
	Jobs             StatusCounts `json:"jobs"`
	OpenAlerts       int          `json:"openAlerts"`
	UnresolvedAlerts int          `json:"unresolvedAlerts"`
	SuccessRate      *float64     `json:"successRate30d"`
	SLAMet           *float64     `json:"slaMetPercent" jsonschema:"percent of jobs meeting their SLA target; null without jobs"`
	Reports          int64        `json:"reports30d"`
	Clients          int          `json:"clients"`
	ClientsNeeding   int          `json:"clientsNeedingAttention"`
}

// Job is a job as lists show it.
type Job struct {
	ID             string   `json:"id"`
	Name           string   `json:"name"`
	ClientID       string   `json:"clientId"`
	ClientName     string   `json:"clientName"`
	Vendor         string   `json:"vendor"`
	Device         string   `json:"device"`
	Status         string   `json:"status" jsonschema:"healthy, warning, failed, missing, waiting or paused"`
	LastResult     string   `json:"lastResult,omitempty"`
	LastReportAt   string   `json:"lastReportAt,omitempty"`
	LastSuccessAt  string   `json:"lastSuccessAt,omitempty"`
	NextExpectedAt string   `json:"nextExpectedAt,omitempty"`
	LateMinutes    int64    `json:"lateMinutes,omitempty"`
	PausedUntil    string   `json:"pausedUntil,omitempty"`
	SuccessRate    *float64 `json:"successRate30d"`
	SLATarget      float64  `json:"slaTarget"`
	SLAMet         bool     `json:"slaMet"`
	Link           string   `json:"link"`
}

// Alert is an alert of a job.
type Alert struct {
	ID             string      `json:"id"`
	JobID          string      `json:"jobId"`
	JobName        string      `json:"jobName"`
	ClientID       string      `json:"clientId"`
	ClientName     string      `json:"clientName"`
	Type           string      `json:"type" jsonschema:"failed, warning or missing"`
	Severity       string      `json:"severity"`
	Status         string      `json:"status" jsonschema:"open, acknowledged, snoozed or resolved"`
	Summary        string      `json:"summary,omitempty" jsonschema:"the service's own words (a missing report's alert); a report's own text is in reportText"`
	ReportText     *ReportText `json:"reportText,omitempty" jsonschema:"untrusted: the failed or warning report's text, fenced"`
	Suggestion     *Suggestion `json:"suggestion,omitempty"`
	CreatedAt      string      `json:"createdAt"`
	AcknowledgedAt string      `json:"acknowledgedAt,omitempty"`
	SnoozedUntil   string      `json:"snoozedUntil,omitempty"`
	ResolvedAt     string      `json:"resolvedAt,omitempty"`
	Link           string      `json:"link"`
}

// Suggestion is the rule catalogue's suggested cause of a failure: a
// suggestion, not a diagnosis.
type Suggestion struct {
	Cause      string `json:"cause"`
	Category   string `json:"category"`
	Confidence string `json:"confidence"`
}

// Result is one stored report of a job.
type Result struct {
	ID              string `json:"id"`
	Status          string `json:"status" jsonschema:"ok, warning or failed"`
	CompletedAt     string `json:"completedAt"`
	ReceivedAt      string `json:"receivedAt"`
	Source          string `json:"source" jsonschema:"how it came: api:<key prefix> (the Report API) or email:<vendor> (a report e-mail)"`
	SizeBytes       *int64 `json:"sizeBytes"`
	DurationSeconds *int64 `json:"durationSeconds"`
}

// Day is one day of a job's 30-day grid in the workspace's zone.
type Day struct {
	Date    string `json:"date"`
	State   string `json:"state" jsonschema:"ok, warning, failed, missing or none (no run expected)"`
	Results int    `json:"results"`
}

// base makes dashboard links.
type base string

func (b base) path(p string) string { return string(b) + p }
func (b base) job(id string) string { return b.path("/jobs/" + url.PathEscape(id)) }
func (b base) client(id string) string {
	return b.path("/clients/" + url.PathEscape(id))
}
func (b base) alert(a engine.BoardAlert) string {
	return b.job(a.JobID) + "#alert-" + url.PathEscape(a.ID)
}

func stamp(ms int64) string {
	if ms == 0 {
		return ""
	}
	return engine.FormatTime(ms)
}

func rate(r engine.Rate) *float64 {
	if !r.Valid {
		return nil
	}
	f := r.Float()
	return &f
}

func counts(c engine.StatusCounts) StatusCounts {
	return StatusCounts{Total: c.Total, Healthy: c.Healthy, Warning: c.Warning, Failed: c.Failed, Missing: c.Missing, Waiting: c.Waiting, Paused: c.Paused}
}

func (b base) clientOut(c engine.BoardClient) Client {
	f := c.Figures
	return Client{ID: c.ID, Name: c.Name, Status: c.Status, NeedsAttention: f.NeedsAttention, Jobs: counts(f.Jobs),
		OpenAlerts: f.OpenAlerts, SuccessRate: rate(f.SuccessRate), Reports: f.Reports, Link: b.client(c.ID)}
}

func (b base) jobOut(j engine.BoardJob) Job {
	out := Job{ID: j.ID, Name: j.Name, ClientID: j.ClientID, ClientName: j.ClientName, Vendor: j.Vendor, Device: j.DeviceName,
		Status: j.Status, LastResult: j.LastResult, LastReportAt: stamp(j.LastReportAt), LastSuccessAt: stamp(j.LastSuccessAt),
		LateMinutes: j.LateMinutes, PausedUntil: stamp(j.PausedUntil), SuccessRate: rate(j.SLA.SuccessRate),
		SLATarget: j.SLA.Target, SLAMet: j.SLA.Met, Link: b.job(j.ID)}
	if !j.Paused {
		out.NextExpectedAt = stamp(j.NextExpectedAt)
	}
	return out
}

func (b base) alertOut(a engine.BoardAlert) Alert {
	out := Alert{ID: a.ID, JobID: a.JobID, JobName: a.JobName, ClientID: a.ClientID, ClientName: a.ClientName, Type: a.Type,
		Severity: a.Severity, Status: a.Status, CreatedAt: stamp(a.CreatedAt),
		AcknowledgedAt: stamp(a.AcknowledgedAt), SnoozedUntil: stamp(a.SnoozedUntil), ResolvedAt: stamp(a.ResolvedAt), Link: b.alert(a)}
	if a.AI != nil {
		out.Suggestion = &Suggestion{Cause: a.AI.Cause, Category: a.AI.Category, Confidence: a.AI.Confidence}
	}
	// A missing report's alert is the service's own words; a failed or
	// warning report's summary is the report's, and every tool answer
	// gives it fenced, as explain_failure does.
	switch {
	case a.Summary == "":
	case a.Type == "missing":
		out.Summary = a.Summary
	default:
		out.ReportText = &ReportText{Untrusted: true, Source: "report", Fenced: fence(a.Summary)}
	}
	return out
}

func resultOut(r engine.BoardResult) Result {
	out := Result{ID: r.ID, Status: r.Status, CompletedAt: stamp(r.CompletedAt), ReceivedAt: stamp(r.ReceivedAt), Source: r.Source}
	if r.SizeBytes >= 0 {
		out.SizeBytes = &r.SizeBytes
	}
	if r.DurationSeconds >= 0 {
		out.DurationSeconds = &r.DurationSeconds
	}
	return out
}
