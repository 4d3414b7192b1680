package engine

import (
	"strconv"
	"time"
)

// Views are copies of state built inside an actor and handed to callers;
// they never point into the workspace. Their JSON is the contract's shape.

// Time is a point in time in Unix milliseconds, shown as
// YYYY-MM-DDTHH:MM:SS.mmmZ.
type Time int64

// MarshalJSON writes the time in the contract's format.
func (t Time) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 26)
	return AppendTime(b, int64(t)), nil
}

// NullTime is a Time that is null when zero.
type NullTime int64

// MarshalJSON writes null for zero, else the time.
func (t NullTime) MarshalJSON() ([]byte, error) {
	if t == 0 {
		return []byte("null"), nil
	}
	return Time(t).MarshalJSON()
}

// AppendTime appends ms as a quoted contract timestamp.
func AppendTime(b []byte, ms int64) []byte {
	b = append(b, '"')
	b = msTime(ms).AppendFormat(b, "2006-01-02T15:04:05.000Z")
	return append(b, '"')
}

// FormatTime returns ms as a contract timestamp (unquoted).
func FormatTime(ms int64) string { return msTime(ms).Format("2006-01-02T15:04:05.000Z") }

// MarshalJSON writes null for a rate with nothing to rate, else the
// percentage with one decimal.
func (r Rate) MarshalJSON() ([]byte, error) {
	if !r.Valid {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, r.Float(), 'f', 1, 64), nil
}

// Percent is a percentage shown with at least one decimal (95.0, 99.95).
type Percent float64

// MarshalJSON writes the percentage with at least one decimal.
func (p Percent) MarshalJSON() ([]byte, error) {
	b := strconv.AppendFloat(nil, float64(p), 'f', -1, 64)
	for _, c := range b {
		if c == '.' || c == 'e' {
			return b, nil
		}
	}
	return append(b, '.', '0'), nil
}

// WorkspaceView is the workspace record (decisions.md 4.1).
type WorkspaceView struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	TimeZone    string   `json:"timeZone"`
	Plan        string   `json:"plan"`
	Status      string   `json:"status"`
	TrialEndsAt NullTime `json:"trialEndsAt"`
	CreatedAt   Time     `json:"createdAt"`
}

func (w *workspace) view() WorkspaceView {
	return WorkspaceView{ID: w.id.String(), Name: w.name, TimeZone: w.timeZone, Plan: w.plan, Status: w.status, TrialEndsAt: NullTime(w.trialEndsAt), CreatedAt: Time(w.createdAt)}
}

// ClientView is the client record (decisions.md 4.2).
type ClientView struct {
	ID             string        `json:"id"`
	Name           string        `json:"name"`
	Status         string        `json:"status"`
	NeedsAttention bool          `json:"needsAttention"`
	OpenAlerts     int           `json:"openAlerts"`
	Jobs           JobCountsView `json:"jobs"`
	SLA            ClientSLAView `json:"sla"`
	CreatedAt      Time          `json:"createdAt"`
}

// JobCountsView counts a client's jobs by status.
type JobCountsView struct {
	Total   int `json:"total"`
	Healthy int `json:"healthy"`
	Warning int `json:"warning"`
	Failed  int `json:"failed"`
	Missing int `json:"missing"`
	Waiting int `json:"waiting"`
	Paused  int `json:"paused"`
}

// ClientSLAView holds a client's 30-day SLA figures.
type ClientSLAView struct {
	SuccessRate       Rate  `json:"successRate"`
	Reports           int64 `json:"reports"`
	PeriodDays        int   `json:"periodDays"`
	JobsMeetingTarget int   `json:"jobsMeetingTarget"`
	JobsBelowTarget   int   `json:"jobsBelowTarget"`
}

func (w *workspace) clientView(c *client, now int64) ClientView {
	f := w.clientFigures(c, now)
	return ClientView{
		ID: c.id.String(), Name: c.name, Status: c.status,
		NeedsAttention: f.NeedsAttention, OpenAlerts: f.OpenAlerts,
		Jobs: JobCountsView(f.Jobs),
		SLA: ClientSLAView{SuccessRate: f.SuccessRate, Reports: f.Reports, PeriodDays: slaPeriodDays,
			JobsMeetingTarget: f.JobsMeetingTarget, JobsBelowTarget: f.JobsBelowTarget},
		CreatedAt: Time(c.createdAt),
	}
}

// DeviceView is a job's device.
type DeviceView struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Type     string `json:"type"`
	Hostname string `json:"hostname"`
}

// LateView says since when a job is late.
type LateView struct {
	DueAt   Time  `json:"dueAt"`
	Minutes int64 `json:"minutes"`
}

// ScheduleView is a job's schedule.
type ScheduleView struct {
	IntervalMinutes int64    `json:"intervalMinutes"`
	ExpectedDays    []string `json:"expectedDays"`
	GraceMinutes    int64    `json:"graceMinutes"`
	NextExpectedAt  Time     `json:"nextExpectedAt"`
}

// SLAView holds a job's SLA figures.
type SLAView struct {
	Target      Percent `json:"target"`
	SuccessRate Rate    `json:"successRate"`
	Met         bool    `json:"met"`
	Reports     int64   `json:"reports"`
	PeriodDays  int     `json:"periodDays"`
}

// JobView is the job object of the REST API (api.md 2.5).
type JobView struct {
	ID            string       `json:"id"`
	Name          string       `json:"name"`
	ClientID      string       `json:"clientId"`
	ClientName    string       `json:"clientName"`
	Device        DeviceView   `json:"device"`
	Vendor        string       `json:"vendor"`
	VendorName    string       `json:"vendorName"`
	Status        string       `json:"status"`
	Late          *LateView    `json:"late"`
	LastResult    string       `json:"lastResult"`
	LastReportAt  NullTime     `json:"lastReportAt"`
	LastSuccessAt NullTime     `json:"lastSuccessAt"`
	LastFailureAt NullTime     `json:"lastFailureAt"`
	FailureStreak int          `json:"failureStreak"`
	Paused        bool         `json:"paused"`
	PausedUntil   NullTime     `json:"pausedUntil"`
	Schedule      ScheduleView `json:"schedule"`
	SLA           SLAView      `json:"sla"`
	CreatedAt     Time         `json:"createdAt"`
}

func daysList(days uint8) []string {
	list := make([]string, 0, 7)
	// Monday first, as people read a week.
	for _, d := range []time.Weekday{time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday, time.Saturday, time.Sunday} {
		if days&(1<<uint(d)) != 0 {
			list = append(list, weekdayNames[d])
		}
	}
	return list
}

func (w *workspace) jobView(j *job, now int64) JobView {
	v := JobView{
		ID: j.id.String(), Name: j.name, ClientID: j.client.id.String(), ClientName: j.client.name,
		Device: DeviceView{ID: j.device.id.String(), Name: j.device.name, Type: j.device.typ, Hostname: j.device.hostname},
		Vendor: j.vendor, VendorName: VendorName(j.vendor),
		Status:     w.jobStatus(j, now),
		LastResult: resultName(j.lastResult), LastReportAt: NullTime(j.lastReportAt),
		LastSuccessAt: NullTime(j.lastSuccessAt), LastFailureAt: NullTime(j.lastFailureAt),
		FailureStreak: j.failureStreak,
		Paused:        !j.monitored(now),
		Schedule: ScheduleView{IntervalMinutes: j.intervalMinutes, ExpectedDays: daysList(j.expectedDays),
			GraceMinutes: j.graceMinutes, NextExpectedAt: Time(j.nextExpectedAt(now, w.loc))},
		CreatedAt: Time(j.createdAt),
	}
	if j.ownPaused(now) {
		v.PausedUntil = NullTime(j.pausedUntil)
	}
	if due, minutes, ok := w.lateness(j, now); ok {
		v.Late = &LateView{DueAt: Time(due), Minutes: minutes}
	}
	s := jobSLA(j, now)
	v.SLA = SLAView{Target: Percent(s.Target), SuccessRate: s.SuccessRate, Met: s.Met, Reports: s.Reports, PeriodDays: s.PeriodDays}
	return v
}

// ResultView is a backup result (api.md 2.6).
type ResultView struct {
	ID              string   `json:"id"`
	JobID           string   `json:"jobId"`
	JobName         string   `json:"jobName"`
	ClientID        string   `json:"clientId"`
	Vendor          string   `json:"vendor"`
	Status          string   `json:"status"`
	CompletedAt     Time     `json:"completedAt"`
	StartedAt       NullTime `json:"startedAt"`
	ReceivedAt      Time     `json:"receivedAt"`
	DurationSeconds *int64   `json:"durationSeconds"`
	SizeBytes       *int64   `json:"sizeBytes"`
}

// HistoryView is a result as the admin job view shows it, with its source.
type HistoryView struct {
	ResultView
	Source string `json:"source"`
}

func (w *workspace) resultView(j *job, r *result) ResultView {
	v := ResultView{
		ID: r.id.String(), JobID: j.id.String(), JobName: j.name, ClientID: j.client.id.String(),
		Vendor: j.vendor, Status: resultName(r.status),
		CompletedAt: Time(r.completedAt), ReceivedAt: Time(r.receivedAt),
	}
	if r.duration >= 0 {
		d := int64(r.duration)
		v.DurationSeconds = &d
		v.StartedAt = NullTime(r.completedAt - d*msPerSecond)
	}
	if r.sizeBytes > 0 {
		s := r.sizeBytes
		v.SizeBytes = &s
	}
	return v
}

// AIView is a suggestion about a failure's likely cause.
type AIView struct {
	LikelyCause string `json:"likelyCause"`
	Confidence  string `json:"confidence"`
	Category    string `json:"category"`
}

// AlertView is an alert (api.md 2.7).
type AlertView struct {
	ID              string   `json:"id"`
	Type            string   `json:"type"`
	Severity        string   `json:"severity"`
	Status          string   `json:"status"`
	ClientID        string   `json:"clientId"`
	JobID           string   `json:"jobId"`
	JobName         string   `json:"jobName"`
	Summary         string   `json:"summary"`
	CreatedAt       Time     `json:"createdAt"`
	AcknowledgedAt  NullTime `json:"acknowledgedAt"`
	SnoozedUntil    NullTime `json:"snoozedUntil"`
	ResolvedAt      NullTime `json:"resolvedAt"`
	RecoverySeconds *int64   `json:"recoverySeconds"`
	AI              *AIView  `json:"ai"`
}

func alertView(a *alert, now int64) AlertView {
	st := alertStatus(a, now)
	v := AlertView{
		ID: a.id.String(), Type: alertTypeName(a.typ), Severity: severityName(a.severity),
		Status: alertStatusName(st), ClientID: a.job.client.id.String(), JobID: a.job.id.String(),
		JobName: a.job.name, Summary: a.summary, CreatedAt: Time(a.createdAt),
		AcknowledgedAt: NullTime(a.acknowledgedAt), ResolvedAt: NullTime(a.resolvedAt),
	}
	if st == alertSnoozed {
		v.SnoozedUntil = NullTime(a.snoozedUntil)
	}
	if st == alertResolved {
		rs := (a.resolvedAt - a.createdAt) / msPerSecond
		v.RecoverySeconds = &rs
	}
	return v
}

// KeyView is an API key record without its secret (decisions.md 2).
type KeyView struct {
	ID         string   `json:"id"`
	Name       string   `json:"name"`
	Type       string   `json:"type"`
	Prefix     string   `json:"prefix"`
	Scopes     []string `json:"scopes"`
	Access     *string  `json:"access,omitempty"`
	CreatedAt  Time     `json:"createdAt"`
	ExpiresAt  NullTime `json:"expiresAt"`
	LastUsedAt NullTime `json:"lastUsedAt"`
}

// NewKeyView is a key record with its secret, answered only on creation.
type NewKeyView struct {
	KeyView
	Key string `json:"key"`
}

func keyView(k *apiKey) KeyView {
	v := KeyView{ID: k.id.String(), Name: k.name, Type: k.typ, Prefix: k.prefix, Scopes: scopeList(k.scopes),
		CreatedAt: Time(k.createdAt), ExpiresAt: NullTime(k.expiresAt), LastUsedAt: NullTime(k.lastUsed.Load())}
	if k.typ == "assistant" {
		access := "read-only"
		if k.readWrite {
			access = "read-write"
		}
		v.Access = &access
	}
	return v
}

func scopeList(bits uint8) []string {
	list := make([]string, 0, len(scopeNames))
	for _, s := range scopeNames {
		if bits&s.bit != 0 {
			list = append(list, s.name)
		}
	}
	return list
}

// ActivityView is an activity log entry.
type ActivityView struct {
	ID      string `json:"id"`
	At      Time   `json:"at"`
	Type    string `json:"type"`
	Actor   string `json:"actor"`
	KeyID   string `json:"keyId,omitempty"`
	KeyName string `json:"keyName,omitempty"`
	AlertID string `json:"alertId,omitempty"`
	JobID   string `json:"jobId,omitempty"`
	Note    string `json:"note,omitempty"`
}

func activityView(a *activity) ActivityView {
	v := ActivityView{ID: a.id.String(), At: Time(a.at), Type: a.typ, Actor: a.actor, KeyName: a.keyName, Note: a.note}
	if !a.keyID.IsZero() {
		v.KeyID = a.keyID.String()
	}
	if !a.alertID.IsZero() {
		v.AlertID = a.alertID.String()
	}
	if !a.jobID.IsZero() {
		v.JobID = a.jobID.String()
	}
	return v
}
