package dashboard

import (
	"html/template"
	"strings"

	"github.com/valyala/fasthttp"

	"backupmon/engine"
)

// The job page's set-up parts: the ingest address with how to point the
// job's product at it (README.md "Report e-mails"), the Report API's
// ready lines with a report key, and the trend charts.

// jobSetup is what the job page shows beyond the board's job.
type jobSetup struct {
	engine.JobSetup
	Days             int // the trend's period: 30 or 90
	DurationChart    template.HTML
	SizeChart        template.HTML
	Recipients       string // where the product's settings take a recipient
	Generic          bool
	ReportURL        string
	Curl, PowerShell string
	Secret           string // a report key just made, shown once
	KeyName          string
	KeyError         string
	AddressHidden    bool // the ingest address is for owners and admins
}

// recipientSetting says where each product takes an e-mail recipient
// (README.md "Report e-mails", step 2).
var recipientSetting = map[string]string{
	"veeam":      "the job's or the global notification settings",
	"acronis":    "the alert or report recipients",
	"datto":      "the alert or report recipients",
	"cove":       "the alert or report recipients",
	"msp360":     "the alert or report recipients",
	"nakivo":     "the alert or report recipients",
	"synology":   "the notification recipient",
	"backupexec": "a notification recipient for the job",
	"altaro":     "the e-mail notification address",
	"macrium":    "the e-mail notification address",
}

// reportBody is the sample report of the ready lines (README.md's).
const reportBody = `{"status":"ok","duration_seconds":1200,"size_bytes":5368709120}`

// keyPlaceholder stands for a report key in the ready lines until one is
// made here.
const keyPlaceholder = "<report key>"

// renderJobPage renders a job's page with status; secret is a report key
// just made (shown once), keyErr why one was not.
func (s *Server) renderJobPage(ctx *fasthttp.RequestCtx, u *engine.SessionUser, status int, secret, keyErr string) {
	jid := ctx.UserValue("jid").(string)
	page := pageNumber(ctx.QueryArgs().Peek("page"))
	from := (page - 1) * jobResultsPage
	p, err := s.eng.BoardJobResults(u.Workspace.ID, jid, from, jobResultsPage)
	if s.failed(ctx, err) {
		return
	}
	days := 30
	if string(ctx.QueryArgs().Peek("days")) == "90" {
		days = 90
	}
	set, err := s.eng.JobSetup(u.Workspace.ID, jid, days)
	if s.failed(ctx, err) {
		return
	}
	d := jobData{JobPage: p, Presets: snoozePresets, pager: newPager(ctx, page, from+len(p.Results) < p.ResultsTotal)}
	v := s.newView(ctx, u, p.Job.Name, "jobs", nil)
	if !ctx.IsGet() {
		v.Path = "/jobs/" + p.Job.ID // forms on the page come back to it
	}
	js := &d.Setup
	js.JobSetup, js.Days, js.Secret, js.KeyError = set, days, secret, keyErr
	if !allowed(u.Role, canManage) { // an admin-only secret, as in the APIs
		js.IngestAddress, js.AddressHidden = "", true
	}
	js.DurationChart = trendChart(v, set.Trend, set.Trend.Durations, durationAxis, "duration", 0)
	js.SizeChart = trendChart(v, set.Trend, set.Trend.Sizes, sizeAxis, "size", set.Trend.DropAt)
	js.Recipients, js.Generic = recipientSetting[p.Job.Vendor], p.Job.Vendor == "generic"
	js.KeyName = truncateRunes("Report key: "+p.Job.Name, 200)
	js.ReportURL = baseURL(ctx) + "/api/v1/jobs/" + p.Job.ID + "/report"
	key := keyPlaceholder
	if secret != "" {
		key = secret
	}
	js.Curl = "curl -s -X POST " + js.ReportURL + " -H 'Authorization: Bearer " + key + "' -H 'Content-Type: application/json' -d '" + reportBody + "'"
	js.PowerShell = "Invoke-RestMethod -Method Post -Uri '" + js.ReportURL + "' -Headers @{ Authorization = 'Bearer " + key + "' } -ContentType 'application/json' -Body '" + reportBody + "'"
	v.Data = d
	s.render(ctx, status, "job", v)
}

// baseURL is the address the browser reached the dashboard at.
func baseURL(ctx *fasthttp.RequestCtx) string {
	scheme := "http://"
	if ctx.IsTLS() {
		scheme = "https://"
	}
	return scheme + string(ctx.Host())
}

func truncateRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n])
}

// createReportKey makes a report key (api.md 5.3: a Report API key) named
// after the job and shows the job's page with the key in its ready lines,
// once.
func (s *Server) createReportKey(ctx *fasthttp.RequestCtx, u *engine.SessionUser) {
	name := strings.TrimSpace(string(ctx.PostArgs().Peek("name")))
	k, err := s.eng.CreateKey(u.Workspace.ID, engine.KeyInput{Name: engine.Some(name), Type: engine.Some("report"), Actor: actor(u)})
	if err != nil {
		s.renderJobPage(ctx, u, fasthttp.StatusBadRequest, "", notSaved("Not created", err))
		return
	}
	s.renderJobPage(ctx, u, fasthttp.StatusOK, k.Key, "")
}
