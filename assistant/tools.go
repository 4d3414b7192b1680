package assistant

import (
	"context"
	"errors"
	"net/url"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"backupmon/engine"
)

// The read tools: every key of the assistant type may call them.

var readOnly = &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)}

// handler is a tool's work for a caller.
type handler[In, Out any] func(ctx context.Context, c Caller, b base, in In) (Out, error)

// tool binds h to m as the tool t, with the input schema of In as edit
// leaves it; the caller comes from the request's context.
func tool[In, Out any](m *mcp.Server, t *mcp.Tool, edit func(map[string]*jsonschema.Schema), h handler[In, Out]) {
	s, err := jsonschema.For[In](nil)
	if err != nil {
		panic(err)
	}
	if edit != nil {
		edit(s.Properties)
	}
	t.InputSchema = tidy(s)
	o, err := jsonschema.For[Out](nil)
	if err != nil {
		panic(err)
	}
	t.OutputSchema = tidy(o)
	mcp.AddTool(m, t, func(ctx context.Context, _ *mcp.CallToolRequest, in In) (*mcp.CallToolResult, Out, error) {
		var zero Out
		c, ok := callerOf(ctx)
		if !ok {
			return nil, zero, errors.New("no caller")
		}
		out, err := h(ctx, c, base(c.Base), in)
		if err != nil {
			return nil, zero, userError(err)
		}
		return nil, out, nil
	})
}

// tidy makes the lists of s plain arrays: jsonschema.For lets a Go slice
// be null, but the tools always send a list and want one.
func tidy(s *jsonschema.Schema) *jsonschema.Schema {
	if len(s.Types) == 2 && s.Types[0] == "null" && s.Types[1] == "array" {
		s.Type, s.Types = "array", nil
	}
	for _, p := range s.Properties {
		tidy(p)
	}
	if s.Items != nil {
		tidy(s.Items)
	}
	return s
}

// refusal is a tool's own refusal of its input, told to the assistant as
// it is.
type refusal string

func (r refusal) Error() string { return string(r) }

// userError returns what the assistant is told of a failed call: the
// message of a refusal (the tool's or the engine's, for a refused or
// unknown thing), a short line for anything else.
func userError(err error) error {
	var e *engine.Error
	var r refusal
	if errors.As(err, &e) || errors.As(err, &r) || errors.Is(err, errCursor) {
		return err
	}
	return errors.New("the service could not answer; try again")
}

func listLimit(p map[string]*jsonschema.Schema) {
	p["limit"].Minimum, p["limit"].Maximum = new(1.0), new(float64(maxLimit))
}

func enum(p *jsonschema.Schema, values ...string) {
	for _, v := range values {
		p.Enum = append(p.Enum, v)
	}
}

type noInput struct{}

// WhoAmI is whoami's answer.
type WhoAmI struct {
	Workspace Workspace `json:"workspace"`
	Key       struct {
		ID        string `json:"id"`
		Name      string `json:"name"`
		Prefix    string `json:"prefix"`
		Access    string `json:"access" jsonschema:"read-only or read-write"`
		ExpiresAt string `json:"expiresAt,omitempty"`
	} `json:"key"`
	Link string `json:"link"`
}

// ListInput pages a list.
type ListInput struct {
	Cursor string `json:"cursor,omitempty" jsonschema:"nextCursor of the previous page"`
	Limit  int    `json:"limit,omitempty" jsonschema:"items per page, 1 to 200 (default 50)"`
}

// AttentionItem is one job of the attention queue.
type AttentionItem struct {
	Job   Job    `json:"job"`
	Alert *Alert `json:"alert,omitempty" jsonschema:"the job's unresolved alert, if any"`
	Since string `json:"since,omitempty" jsonschema:"when its trouble began"`
}

// Attention is list_attention's answer.
type Attention struct {
	Items      []AttentionItem `json:"items"`
	Total      int             `json:"total" jsonschema:"jobs that need attention, snoozed ones left out"`
	Snoozed    int             `json:"snoozed" jsonschema:"jobs left out while their alert is snoozed"`
	NextCursor string          `json:"nextCursor,omitempty"`
	Link       string          `json:"link"`
}

// Clients is list_clients' answer.
type Clients struct {
	Health     Health   `json:"health"`
	Clients    []Client `json:"clients"`
	Total      int      `json:"total"`
	NextCursor string   `json:"nextCursor,omitempty"`
	Link       string   `json:"link"`
}

// ClientInput names a client.
type ClientInput struct {
	ClientID string `json:"clientId" jsonschema:"the client's id"`
}

// ClientHealth is get_client_health's answer.
type ClientHealth struct {
	Client Client `json:"client"`
	Jobs   []Job  `json:"jobs"`
	Link   string `json:"link"`
}

// JobsInput filters and pages list_jobs.
type JobsInput struct {
	ClientID string `json:"clientId,omitempty"`
	Status   string `json:"status,omitempty"`
	Vendor   string `json:"vendor,omitempty"`
	Search   string `json:"search,omitempty" jsonschema:"part of the job's, client's or host's name"`
	ListInput
}

// Jobs is list_jobs' answer.
type Jobs struct {
	Jobs       []Job  `json:"jobs"`
	Total      int    `json:"total"`
	NextCursor string `json:"nextCursor,omitempty"`
	Link       string `json:"link"`
}

// JobInput names a job.
type JobInput struct {
	JobID string `json:"jobId" jsonschema:"the job's id"`
}

// JobDetail is get_job's answer.
type JobDetail struct {
	Job      Job      `json:"job"`
	Schedule Schedule `json:"schedule"`
	Days     []Day    `json:"days" jsonschema:"the last 30 days in the workspace's zone, today last"`
	Results  []Result `json:"results" jsonschema:"the newest results, newest first"`
	Alerts   []Alert  `json:"alerts" jsonschema:"the newest alerts, newest first"`
	Link     string   `json:"link"`
}

// Schedule is when a job is expected to report.
type Schedule struct {
	IntervalMinutes int64    `json:"intervalMinutes"`
	GraceMinutes    int64    `json:"graceMinutes"`
	ExpectedDays    []string `json:"expectedDays"`
	Paused          bool     `json:"paused"`
}

// AlertsInput filters and pages list_alerts.
type AlertsInput struct {
	Status string `json:"status,omitempty" jsonschema:"open, acknowledged, snoozed, resolved, unresolved (the default: all but resolved) or all"`
	ListInput
}

// Alerts is list_alerts' answer.
type Alerts struct {
	Alerts     []Alert `json:"alerts"`
	Total      int     `json:"total"`
	NextCursor string  `json:"nextCursor,omitempty"`
	Link       string  `json:"link"`
}

func (s *Server) addReadTools(m *mcp.Server) {
	tool(m, &mcp.Tool{Name: "whoami", Title: "Who am I", Annotations: readOnly,
		Description: "The workspace this key reads and what the key may do."}, nil, s.whoami)
	tool(m, &mcp.Tool{Name: "list_attention", Title: "Attention queue", Annotations: readOnly,
		Description: "Jobs that need a technician now: failed or missing jobs and open alerts, worst and oldest first, as the dashboard's queue shows them. Snoozed alerts are left out."},
		listLimit, s.listAttention)
	tool(m, &mcp.Tool{Name: "list_clients", Title: "Clients", Annotations: readOnly,
		Description: "The workspace's health and its clients with job counts by status, open alerts and 30-day success rate."},
		listLimit, s.listClients)
	tool(m, &mcp.Tool{Name: "get_client_health", Title: "Client health", Annotations: readOnly,
		Description: "One client's figures and every job of it with its status."}, nil, s.getClientHealth)
	tool(m, &mcp.Tool{Name: "list_jobs", Title: "Jobs", Annotations: readOnly,
		Description: "Jobs by name, filtered by client, status, vendor or a search text."},
		func(p map[string]*jsonschema.Schema) {
			listLimit(p)
			enum(p["status"], engine.StatusHealthy, engine.StatusWarning, engine.StatusFailed, engine.StatusMissing, engine.StatusWaiting, engine.StatusPaused)
		}, s.listJobs)
	tool(m, &mcp.Tool{Name: "get_job", Title: "Job", Annotations: readOnly,
		Description: "One job: status, schedule, its 30-day day grid, newest results and alerts."}, nil, s.getJob)
	tool(m, &mcp.Tool{Name: "list_alerts", Title: "Alerts", Annotations: readOnly,
		Description: "Alerts newest first, by status (default: every alert not resolved)."},
		func(p map[string]*jsonschema.Schema) {
			listLimit(p)
			enum(p["status"], "open", "acknowledged", "snoozed", "resolved", engine.AlertsUnresolved, engine.AlertsAll)
		}, s.listAlerts)
	tool(m, &mcp.Tool{Name: "explain_failure", Title: "Explain a failure", Annotations: readOnly,
		Description: "Why a job failed, warned or went missing: its latest problem, how many reports in a row went wrong, its last success, the rule catalogue's suggestion, and the report's own text, fenced and labelled as untrusted. Name the job or one of its alerts."},
		nil, s.explainFailure)
}

func (s *Server) whoami(_ context.Context, c Caller, b base, _ noInput) (WhoAmI, error) {
	k := c.Key
	var out WhoAmI
	out.Workspace = workspaceOut(k.Workspace)
	out.Key.ID, out.Key.Name, out.Key.Prefix, out.Key.ExpiresAt = k.KeyID, k.Name, k.Prefix, stamp(k.Expiry)
	out.Key.Access = "read-only"
	if k.ReadWrite {
		out.Key.Access = "read-write"
	}
	out.Link = b.path("/")
	return out, nil
}

func workspaceOut(w engine.BoardWorkspace) Workspace {
	return Workspace{ID: w.ID, Name: w.Name, TimeZone: w.TimeZone, Plan: w.Plan, Status: w.Status, Active: w.Active}
}

func (s *Server) listAttention(_ context.Context, c Caller, b base, in ListInput) (Attention, error) {
	offset, limit, err := page("list_attention", in.Cursor, in.Limit)
	if err != nil {
		return Attention{}, err
	}
	q, err := s.eng.Queue(c.Key.Workspace.ID)
	if err != nil {
		return Attention{}, err
	}
	out := Attention{Items: []AttentionItem{}, Total: q.Items, Snoozed: q.Snoozed, Link: b.path("/")}
	i := 0
	for _, g := range q.Groups {
		for _, it := range g.Items {
			if i >= offset && i < offset+limit {
				item := AttentionItem{Job: b.jobOut(it.Job), Since: stamp(it.Since)}
				if it.Job.Alert != nil {
					a := b.alertOut(*it.Job.Alert)
					item.Alert = &a
				}
				out.Items = append(out.Items, item)
			}
			i++
		}
	}
	out.NextCursor = next("list_attention", offset, limit, i)
	return out, nil
}

func (s *Server) listClients(_ context.Context, c Caller, b base, in ListInput) (Clients, error) {
	offset, limit, err := page("list_clients", in.Cursor, in.Limit)
	if err != nil {
		return Clients{}, err
	}
	h, list, err := s.eng.BoardClients(c.Key.Workspace.ID)
	if err != nil {
		return Clients{}, err
	}
	out := Clients{Health: Health{Jobs: counts(h.Jobs), OpenAlerts: h.OpenAlerts, UnresolvedAlerts: h.Unresolved,
		SuccessRate: rate(h.SuccessRate), SLAMet: rate(h.SLAMet), Reports: h.Reports, Clients: h.Clients, ClientsNeeding: h.ClientsNeeding},
		Clients: []Client{}, Total: len(list), Link: b.path("/clients")}
	for _, cl := range window(list, offset, limit) {
		out.Clients = append(out.Clients, b.clientOut(cl))
	}
	out.NextCursor = next("list_clients", offset, limit, len(list))
	return out, nil
}

// window returns the items of list from offset, at most n.
func window[T any](list []T, offset, n int) []T {
	if offset >= len(list) {
		return nil
	}
	return list[offset:min(len(list), offset+n)]
}

func (s *Server) getClientHealth(_ context.Context, c Caller, b base, in ClientInput) (ClientHealth, error) {
	cl, jobs, err := s.eng.BoardClient(c.Key.Workspace.ID, in.ClientID)
	if err != nil {
		return ClientHealth{}, err
	}
	out := ClientHealth{Client: b.clientOut(cl), Jobs: []Job{}, Link: b.client(cl.ID)}
	for _, j := range jobs {
		out.Jobs = append(out.Jobs, b.jobOut(j))
	}
	return out, nil
}

func (s *Server) listJobs(_ context.Context, c Caller, b base, in JobsInput) (Jobs, error) {
	offset, limit, err := page("list_jobs", in.Cursor, in.Limit)
	if err != nil {
		return Jobs{}, err
	}
	ws := c.Key.Workspace.ID
	if in.ClientID != "" {
		if _, _, err := s.eng.BoardClient(ws, in.ClientID); err != nil {
			return Jobs{}, err
		}
	}
	jobs, total, err := s.eng.BoardJobs(ws, engine.JobFilter{ClientID: in.ClientID, Status: in.Status, Vendor: in.Vendor,
		Search: in.Search, Offset: offset, Limit: limit})
	if err != nil {
		return Jobs{}, err
	}
	q := url.Values{}
	for k, v := range map[string]string{"client": in.ClientID, "status": in.Status, "vendor": in.Vendor, "q": in.Search} {
		if v != "" {
			q.Set(k, v)
		}
	}
	link := b.path("/jobs")
	if len(q) > 0 {
		link += "?" + q.Encode()
	}
	out := Jobs{Jobs: []Job{}, Total: total, Link: link}
	for _, j := range jobs {
		out.Jobs = append(out.Jobs, b.jobOut(j))
	}
	out.NextCursor = next("list_jobs", offset, limit, total)
	return out, nil
}

func (s *Server) getJob(_ context.Context, c Caller, b base, in JobInput) (JobDetail, error) {
	p, err := s.eng.BoardJob(c.Key.Workspace.ID, in.JobID)
	if err != nil {
		return JobDetail{}, err
	}
	j := p.Job
	out := JobDetail{Job: b.jobOut(j), Days: []Day{}, Results: []Result{}, Alerts: []Alert{}, Link: b.job(j.ID),
		Schedule: Schedule{IntervalMinutes: j.IntervalMinutes, GraceMinutes: j.GraceMinutes, ExpectedDays: j.ExpectedDays, Paused: j.Paused}}
	if out.Schedule.ExpectedDays == nil {
		out.Schedule.ExpectedDays = []string{}
	}
	for _, d := range p.Grid {
		out.Days = append(out.Days, Day{Date: d.Date, State: d.State, Results: d.Results})
	}
	for _, r := range window(p.Results, 0, 20) {
		out.Results = append(out.Results, resultOut(r))
	}
	for _, a := range p.Alerts {
		out.Alerts = append(out.Alerts, b.alertOut(a))
	}
	return out, nil
}

func (s *Server) listAlerts(_ context.Context, c Caller, b base, in AlertsInput) (Alerts, error) {
	offset, limit, err := page("list_alerts", in.Cursor, in.Limit)
	if err != nil {
		return Alerts{}, err
	}
	status := in.Status
	if status == "" {
		status = engine.AlertsUnresolved
	}
	list, total, err := s.eng.BoardAlerts(c.Key.Workspace.ID, status, offset, limit)
	if err != nil {
		return Alerts{}, err
	}
	out := Alerts{Alerts: []Alert{}, Total: total, Link: b.path("/alerts?status=" + url.QueryEscape(status))}
	for _, a := range list {
		out.Alerts = append(out.Alerts, b.alertOut(a))
	}
	out.NextCursor = next("list_alerts", offset, limit, total)
	return out, nil
}
