package assistant

import (
	"context"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"backupmon/engine"
)

// The write tools, for read-write keys only: the dashboard's triage
// commands (engine.TriageAlerts, PauseJob, ResumeJob), recorded in the
// activity log as "assistant:<key prefix>" with the note given.

// TriageInput names alerts to change, with a note for the activity log.
type TriageInput struct {
	AlertIDs []string `json:"alertIds" jsonschema:"the alerts to change, 1 to 1000"`
	Note     string   `json:"note,omitempty" jsonschema:"why, for the activity log (at most 1000 characters)"`
}

// SnoozeInput names alerts to snooze and until when.
type SnoozeInput struct {
	TriageInput
	Preset string `json:"preset,omitempty" jsonschema:"1h, 4h, tomorrow (08:00 in the workspace's zone) or next (the job's next expected run); or give until"`
	Until  string `json:"until,omitempty" jsonschema:"an RFC 3339 time in the future; or give preset"`
}

// AlertOutcome is what became of one alert.
type AlertOutcome struct {
	AlertID string `json:"alertId"`
	Changed bool   `json:"changed"`
	Problem string `json:"problem,omitempty" jsonschema:"why it was not changed"`
	Alert   *Alert `json:"alert,omitempty" jsonschema:"the alert after the call"`
}

// TriageResult is the answer of acknowledge_alerts and snooze_alerts.
type TriageResult struct {
	Changed  int            `json:"changed"`
	Outcomes []AlertOutcome `json:"outcomes"`
	Link     string         `json:"link"`
}

// ResolveInput names one alert to resolve.
type ResolveInput struct {
	AlertID string `json:"alertId"`
	Note    string `json:"note,omitempty" jsonschema:"why, for the activity log (at most 1000 characters)"`
}

// PauseInput names a job to pause.
type PauseInput struct {
	JobID string `json:"jobId"`
	Until string `json:"until,omitempty" jsonschema:"resume on this date (YYYY-MM-DD, 00:00 in the workspace's zone) or at this RFC 3339 time; leave out to pause until resumed"`
	Note  string `json:"note,omitempty" jsonschema:"the reason, for the activity log (at most 1000 characters)"`
}

// ResumeInput names a job to resume.
type ResumeInput struct {
	JobID string `json:"jobId"`
	Note  string `json:"note,omitempty" jsonschema:"why, for the activity log (at most 1000 characters)"`
}

// AlertChange is resolve_alert's answer.
type AlertChange struct {
	Alert Alert  `json:"alert"`
	Link  string `json:"link"`
}

// JobChange is the answer of pause_job and resume_job.
type JobChange struct {
	Job  Job    `json:"job"`
	Link string `json:"link"`
}

func (s *Server) addWriteTools(m *mcp.Server) {
	alertIDs := func(p map[string]*jsonschema.Schema) {
		p["alertIds"].MinItems, p["alertIds"].MaxItems = new(1), new(engine.MaxTriage)
		p["note"].MaxLength = new(1000)
	}
	note := func(p map[string]*jsonschema.Schema) { p["note"].MaxLength = new(1000) }
	tool(m, &mcp.Tool{Name: "acknowledge_alerts", Title: "Acknowledge alerts",
		Annotations: &mcp.ToolAnnotations{IdempotentHint: true, DestructiveHint: new(false), OpenWorldHint: new(false)},
		Description: "Acknowledge alerts: someone is on it. They stay unresolved and keep their job in the queue, dimmed."},
		alertIDs, s.acknowledge)
	tool(m, &mcp.Tool{Name: "snooze_alerts", Title: "Snooze alerts",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: new(false), OpenWorldHint: new(false)},
		Description: "Snooze alerts until a preset or a time: they leave the queue and send no reminders until then."},
		func(p map[string]*jsonschema.Schema) {
			alertIDs(p)
			enum(p["preset"], engine.PresetHour, engine.PresetFourHour, engine.PresetTomorrow, engine.PresetNextRun)
		}, s.snooze)
	tool(m, &mcp.Tool{Name: "resolve_alert", Title: "Resolve an alert",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: new(true), OpenWorldHint: new(false)},
		Description: "Resolve an alert by hand. It cannot be reopened; the job's next problem opens a new one."},
		note, s.resolve)
	tool(m, &mcp.Tool{Name: "pause_job", Title: "Pause a job",
		Annotations: &mcp.ToolAnnotations{IdempotentHint: true, DestructiveHint: new(false), OpenWorldHint: new(false)},
		Description: "Stop monitoring a job (no missing alerts) until a date or until resumed, with a reason."},
		note, s.pause)
	tool(m, &mcp.Tool{Name: "resume_job", Title: "Resume a job",
		Annotations: &mcp.ToolAnnotations{IdempotentHint: true, DestructiveHint: new(false), OpenWorldHint: new(false)},
		Description: "Monitor a paused job again."}, note, s.resume)
}

func (s *Server) triage(c Caller, b base, ids []string, t engine.Triage) (TriageResult, error) {
	t.Actor = c.Key.Actor()
	outcomes, err := s.eng.TriageAlerts(c.Key.Workspace.ID, ids, t)
	if err != nil {
		return TriageResult{}, err
	}
	out := TriageResult{Outcomes: []AlertOutcome{}, Link: b.path("/")}
	for _, o := range outcomes {
		ao := AlertOutcome{AlertID: o.AlertID, Changed: o.Changed, Problem: o.Problem}
		if o.Found {
			a := b.alertOut(o.Alert)
			ao.Alert = &a
		}
		if o.Changed {
			out.Changed++
		}
		out.Outcomes = append(out.Outcomes, ao)
	}
	return out, nil
}

func (s *Server) acknowledge(_ context.Context, c Caller, b base, in TriageInput) (TriageResult, error) {
	return s.triage(c, b, in.AlertIDs, engine.Triage{Action: engine.Acknowledge, Note: strings.TrimSpace(in.Note)})
}

func (s *Server) snooze(_ context.Context, c Caller, b base, in SnoozeInput) (TriageResult, error) {
	t := engine.Triage{Action: engine.Snooze, Preset: in.Preset, Note: strings.TrimSpace(in.Note)}
	switch {
	case (in.Preset == "") == (in.Until == ""):
		return TriageResult{}, refusal("give preset or until, one of them")
	case in.Until != "":
		u, err := time.Parse(time.RFC3339Nano, in.Until)
		if err != nil {
			return TriageResult{}, refusal("until must be an RFC 3339 time, such as 2026-11-24T08:00:00Z")
		}
		t.Until = u
	}
	return s.triage(c, b, in.AlertIDs, t)
}

func (s *Server) resolve(_ context.Context, c Caller, b base, in ResolveInput) (AlertChange, error) {
	r, err := s.triage(c, b, []string{in.AlertID}, engine.Triage{Action: engine.Resolve, Note: strings.TrimSpace(in.Note)})
	if err != nil {
		return AlertChange{}, err
	}
	o := r.Outcomes[0]
	if !o.Changed {
		return AlertChange{}, refusal(o.Problem)
	}
	return AlertChange{Alert: *o.Alert, Link: o.Alert.Link}, nil
}

func (s *Server) pause(_ context.Context, c Caller, b base, in PauseInput) (JobChange, error) {
	var until time.Time
	if in.Until != "" {
		var err error
		if until, err = time.ParseInLocation("2006-01-02", in.Until, c.Key.Workspace.Loc); err != nil {
			if until, err = time.Parse(time.RFC3339Nano, in.Until); err != nil {
				return JobChange{}, refusal("until must be a date (YYYY-MM-DD) or an RFC 3339 time")
			}
		}
	}
	if _, err := s.eng.PauseJob(c.Key.Workspace.ID, in.JobID, until, c.Key.Actor(), strings.TrimSpace(in.Note)); err != nil {
		return JobChange{}, err
	}
	return s.jobChange(c, b, in.JobID)
}

func (s *Server) resume(_ context.Context, c Caller, b base, in ResumeInput) (JobChange, error) {
	if _, err := s.eng.ResumeJob(c.Key.Workspace.ID, in.JobID, c.Key.Actor(), strings.TrimSpace(in.Note)); err != nil {
		return JobChange{}, err
	}
	return s.jobChange(c, b, in.JobID)
}

func (s *Server) jobChange(c Caller, b base, jobID string) (JobChange, error) {
	p, err := s.eng.BoardJob(c.Key.Workspace.ID, jobID)
	if err != nil {
		return JobChange{}, err
	}
	return JobChange{Job: b.jobOut(p.Job), Link: b.job(jobID)}, nil
}
