package dashboard

import (
	"errors"
	"strconv"
	"strings"

	"github.com/valyala/fasthttp"

	"backupmon/engine"
)

// Pages: each reads the engine's typed views and renders one template.

const pageSize = 100

func (s *Server) queuePage(ctx *fasthttp.RequestCtx, u *engine.SessionUser) {
	q, err := s.eng.Queue(u.Workspace.ID)
	if s.failed(ctx, err) {
		return
	}
	d := queueData{Queue: q, Presets: snoozePresets, All: ctx.QueryArgs().Has("all")}
	if !d.All {
		d.Hidden = trimQueue(&d.Queue, queueRows)
	}
	s.render(ctx, fasthttp.StatusOK, "queue", s.newView(ctx, u, "Attention", "queue", d))
}

// queueRows is how many items the queue page shows unless asked for all:
// the worst and oldest, a screenful of work for hours; a page of every
// item of a workspace in deep trouble weighs megabytes (bench/RESULTS.md).
const queueRows = 500

// trimQueue keeps the first n items of q in its order and returns how many
// it left out.
func trimQueue(q *engine.Queue, n int) int {
	hidden := 0
	for i := range q.Groups {
		g := &q.Groups[i]
		keep := min(len(g.Items), max(n, 0))
		hidden += len(g.Items) - keep
		g.Items = g.Items[:keep]
		n -= keep
	}
	for len(q.Groups) > 0 && len(q.Groups[len(q.Groups)-1].Items) == 0 {
		q.Groups = q.Groups[:len(q.Groups)-1]
	}
	return hidden
}

type queueData struct {
	Queue   engine.Queue
	Presets []preset
	All     bool // every item shown
	Hidden  int  // items left out
}

type clientsData struct {
	Health  engine.BoardHealth
	Clients []engine.BoardClient
}

func (s *Server) clientsPage(ctx *fasthttp.RequestCtx, u *engine.SessionUser) {
	h, cs, err := s.eng.BoardClients(u.Workspace.ID)
	if s.failed(ctx, err) {
		return
	}
	s.render(ctx, fasthttp.StatusOK, "clients", s.newView(ctx, u, "Clients", "clients", clientsData{h, cs}))
}

type clientData struct {
	Client engine.BoardClient
	Jobs   []engine.BoardJob
}

func (s *Server) clientPage(ctx *fasthttp.RequestCtx, u *engine.SessionUser) {
	c, jobs, err := s.eng.BoardClient(u.Workspace.ID, ctx.UserValue("cid").(string))
	if s.failed(ctx, err) {
		return
	}
	s.render(ctx, fasthttp.StatusOK, "client", s.newView(ctx, u, c.Name, "clients", clientData{c, jobs}))
}

type jobsData struct {
	Filter engine.JobFilter
	Jobs   []engine.BoardJob
	Total  int
	pager
	Clients  []engine.BoardClient
	Vendors  []string
	Statuses []string
}

var jobStatuses = []string{engine.StatusHealthy, engine.StatusWarning, engine.StatusFailed, engine.StatusMissing, engine.StatusWaiting, engine.StatusPaused}

func (s *Server) jobsPage(ctx *fasthttp.RequestCtx, u *engine.SessionUser) {
	a := ctx.QueryArgs()
	f := engine.JobFilter{ClientID: string(a.Peek("client")), Status: string(a.Peek("status")), Vendor: string(a.Peek("vendor")),
		Search: string(a.Peek("q")), Limit: pageSize}
	page := pageNumber(a.Peek("page"))
	f.Offset = (page - 1) * pageSize
	jobs, total, err := s.eng.BoardJobs(u.Workspace.ID, f)
	if s.failed(ctx, err) {
		return
	}
	_, clients, err := s.eng.BoardClients(u.Workspace.ID)
	if s.failed(ctx, err) {
		return
	}
	d := jobsData{Filter: f, Jobs: jobs, Total: total, pager: newPager(ctx, page, f.Offset+len(jobs) < total), Clients: clients,
		Vendors: engine.Vendors(), Statuses: jobStatuses}
	s.render(ctx, fasthttp.StatusOK, "jobs", s.newView(ctx, u, "Jobs", "jobs", d))
}

// pager is a page number with the addresses of the pages around it,
// which keep every other query parameter (the filters stay in the URL).
type pager struct {
	Page             int
	Prev, Next       bool
	PrevURL, NextURL string
}

func newPager(ctx *fasthttp.RequestCtx, page int, more bool) pager {
	p := pager{Page: page, Prev: page > 1, Next: more}
	at := func(n int) string {
		a := fasthttp.AcquireArgs()
		defer fasthttp.ReleaseArgs(a)
		ctx.QueryArgs().CopyTo(a)
		a.SetUint("page", n)
		return string(ctx.Path()) + "?" + a.String()
	}
	if p.Prev {
		p.PrevURL = at(page - 1)
	}
	if p.Next {
		p.NextURL = at(page + 1)
	}
	return p
}

func pageNumber(b []byte) int {
	n, err := strconv.Atoi(string(b))
	if err != nil || n < 1 || n > 1_000_000 {
		return 1
	}
	return n
}

func (s *Server) jobPage(ctx *fasthttp.RequestCtx, u *engine.SessionUser) {
	s.renderJobPage(ctx, u, fasthttp.StatusOK, "", "")
}

// jobResultsPage is how many results a job's page lists at a time: a
// phone shows each as a card of its own.
const jobResultsPage = 20

type jobData struct {
	engine.JobPage
	Presets []preset
	Setup   jobSetup // ingest.go
	pager
}

type alertsData struct {
	Status   string
	Statuses []string
	Alerts   []engine.BoardAlert
	Total    int
	pager
	Presets []preset
}

func (s *Server) alertsPage(ctx *fasthttp.RequestCtx, u *engine.SessionUser) {
	a := ctx.QueryArgs()
	status := string(a.Peek("status"))
	switch status {
	case "open", "acknowledged", "snoozed", "resolved", engine.AlertsAll:
	default:
		status = engine.AlertsUnresolved
	}
	page := pageNumber(a.Peek("page"))
	list, total, err := s.eng.BoardAlerts(u.Workspace.ID, status, (page-1)*pageSize, pageSize)
	if s.failed(ctx, err) {
		return
	}
	d := alertsData{Status: status, Statuses: []string{engine.AlertsUnresolved, "open", "acknowledged", "snoozed", "resolved", engine.AlertsAll},
		Alerts: list, Total: total, pager: newPager(ctx, page, (page-1)*pageSize+len(list) < total), Presets: snoozePresets}
	s.render(ctx, fasthttp.StatusOK, "alerts", s.newView(ctx, u, "Alerts", "alerts", d))
}

type keysData struct {
	Keys   []engine.BoardKey
	Areas  []area
	Secret string // the key just created, shown once
	Form   keyForm
}

type area struct{ Scope, Name string }

var areas = []area{{"clients:read", "Clients"}, {"jobs:read", "Backup jobs"}, {"reports:read", "Reports"}, {"alerts:read", "Alerts"}, {"health:read", "Health"}}

var areaNames = func() map[string]string {
	m := map[string]string{}
	for _, a := range areas {
		m[a.Scope] = a.Name
	}
	return m
}()

func (s *Server) keysPage(ctx *fasthttp.RequestCtx, u *engine.SessionUser) {
	s.renderKeys(ctx, u, fasthttp.StatusOK, "", keyForm{Type: "rest", Expiry: "never", Access: "read-only"})
}

func (s *Server) renderKeys(ctx *fasthttp.RequestCtx, u *engine.SessionUser, status int, secret string, form keyForm) {
	keys, err := s.eng.BoardKeys(u.Workspace.ID)
	if s.failed(ctx, err) {
		return
	}
	s.render(ctx, status, "keys", s.newView(ctx, u, "API keys", "settings", keysData{Keys: keys, Areas: areas, Secret: secret, Form: form}))
}

type channelsData struct {
	Channels    []engine.ChannelView
	Escalations []engine.EscalationView
	Names       map[string]string // channel id → name
	Secret      string            // a new webhook's signing secret, shown once
	Forms       []psaForm         // the forms of the channel types of issue 23 (psa.go)
	Owner       bool              // may add those and map clients
	Testable    bool              // the server tests channels
}

func (s *Server) channelsPage(ctx *fasthttp.RequestCtx, u *engine.SessionUser) {
	s.renderChannels(ctx, u, "")
}

// renderChannels renders the channels page, with a new webhook's signing
// secret when there is one.
func (s *Server) renderChannels(ctx *fasthttp.RequestCtx, u *engine.SessionUser, secret string) {
	chs, err := s.eng.Channels(u.Workspace.ID)
	if s.failed(ctx, err) {
		return
	}
	escs, err := s.eng.Escalations(u.Workspace.ID)
	if s.failed(ctx, err) {
		return
	}
	names := map[string]string{}
	for _, c := range chs {
		names[c.ID] = c.Name
	}
	s.render(ctx, fasthttp.StatusOK, "channels", s.newView(ctx, u, "Channels and escalations", "settings", channelsData{Channels: chs, Escalations: escs, Names: names, Secret: secret,
		Forms: psaForms, Owner: allowed(u.Role, canOwn), Testable: s.test != nil}))
}

type usersData struct {
	Users []engine.UserView
	Roles []string
}

func (s *Server) usersPage(ctx *fasthttp.RequestCtx, u *engine.SessionUser) {
	users, err := s.eng.Users(u.Workspace.ID)
	if s.failed(ctx, err) {
		return
	}
	s.render(ctx, fasthttp.StatusOK, "users", s.newView(ctx, u, "Users", "settings", usersData{users, []string{engine.RoleOwner, engine.RoleAdmin, engine.RoleMember, engine.RoleViewer}}))
}

type activityData struct {
	Entries []engine.ActivityView
	pager
}

func (s *Server) activityPage(ctx *fasthttp.RequestCtx, u *engine.SessionUser) {
	all, err := s.eng.Activity(u.Workspace.ID)
	if s.failed(ctx, err) {
		return
	}
	page := pageNumber(ctx.QueryArgs().Peek("page"))
	from := min((page-1)*pageSize, len(all))
	d := activityData{Entries: all[from:min(from+pageSize, len(all))], pager: newPager(ctx, page, from+pageSize < len(all))}
	s.render(ctx, fasthttp.StatusOK, "activity", s.newView(ctx, u, "Activity", "settings", d))
}

// failed answers an engine error with a page and reports whether there was
// one.
func (s *Server) failed(ctx *fasthttp.RequestCtx, err error) bool {
	if err == nil {
		return false
	}
	var e *engine.Error
	switch {
	case errors.As(err, &e) && e.Kind == engine.KindNotFound:
		s.errorPage(ctx, fasthttp.StatusNotFound, "Not found", upperFirst(e.Message)+".")
	case errors.Is(err, engine.ErrClosed):
		s.errorPage(ctx, fasthttp.StatusServiceUnavailable, "Unavailable", "The server is stopping; try again shortly.")
	default:
		s.log.Error("dashboard", "path", string(ctx.Path()), "err", err)
		s.errorPage(ctx, fasthttp.StatusInternalServerError, "Something went wrong", "The page could not be shown; try again.")
	}
	return true
}

// upperFirst returns s with its first letter in upper case (engine
// messages start in lower case).
func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
