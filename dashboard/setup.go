package dashboard

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"

	"backupmon/engine"
)

// Set-up from the dashboard, for owners and admins: clients (add, rename,
// pause, archive, make active again) and jobs (add, edit, delete). Every
// change is the admin API's own engine command, so the checks and their
// messages are the admin API's (docs/decisions.md "Set-up in the
// dashboard").

// setupRoutes adds the set-up pages and actions to r.
func (s *Server) setupRoutes(r *router.Router) {
	r.POST("/clients", s.user(canManage, s.createClient))
	r.POST("/clients/{cid}", s.user(canManage, s.updateClient))
	r.GET("/jobs/new", s.user(canManage, s.newJobPage))
	r.POST("/jobs", s.user(canManage, s.createJob))
	r.GET("/jobs/{jid}/edit", s.user(canManage, s.editJobPage))
	r.POST("/jobs/{jid}/edit", s.user(canManage, s.editJob))
	r.POST("/jobs/{jid}/delete", s.user(canManage, s.deleteJob))
	r.POST("/jobs/{jid}/report-key", s.user(canManage, s.createReportKey))
}

// notSaved is the message of a refused change: the engine's own message,
// as the admin API answers it, in a sentence.
func notSaved(prefix string, err error) string {
	return prefix + ": " + engine.ErrorText(err) + "."
}

// createClient adds a client and opens its page.
func (s *Server) createClient(ctx *fasthttp.RequestCtx, u *engine.SessionUser) {
	c, err := s.eng.CreateClient(u.Workspace.ID, engine.ClientInput{Name: engine.Some(string(ctx.PostArgs().Peek("name"))), Actor: actor(u)})
	if err != nil {
		redirect(ctx, "/clients", notSaved("Not added", err), true)
		return
	}
	redirect(ctx, "/clients/"+c.ID, "Client added. Add its first job below.", false)
}

// clientStatusDone says what a client's new status does.
var clientStatusDone = map[string]string{
	"active":   "Client active: its jobs are monitored again.",
	"paused":   "Client paused: its jobs raise no alerts until it is active again.",
	"archived": "Client archived: its jobs are no longer monitored and it leaves the health figures.",
}

// updateClient renames a client (name) or changes its status (status).
func (s *Server) updateClient(ctx *fasthttp.RequestCtx, u *engine.SessionUser) {
	cid := ctx.UserValue("cid").(string)
	args := ctx.PostArgs()
	in := engine.ClientInput{Actor: actor(u)}
	done := "Client renamed."
	if args.Has("name") {
		in.Name = engine.Some(string(args.Peek("name")))
	}
	if args.Has("status") {
		in.Status = engine.Some(string(args.Peek("status")))
		done = clientStatusDone[in.Status.V]
	}
	_, err := s.eng.UpdateClient(u.Workspace.ID, cid, in)
	if e, ok := err.(*engine.Error); ok && e.Kind == engine.KindNotFound {
		s.failed(ctx, err)
		return
	}
	redirectAfter(ctx, "/clients/"+cid, err, "Not changed", done)
}

// jobForm is the job form as sent (or as the job is), to show it again.
type jobForm struct {
	ID, ClientID, ClientName         string
	Name, Vendor                     string
	DeviceName, DeviceType, Hostname string
	Interval, Grace, SLA, SizeDrop   string
	Days                             map[string]bool
	Error                            string
	Clients                          []engine.BoardClient
	Vendors, DeviceTypes, Weekdays   []string
	Editing                          bool
	DefaultSizeDrop                  int
	current                          engine.BoardJob // the job before an edit
	currentSizeDrop                  string
}

var (
	weekdays    = []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"}
	deviceTypes = []string{"server", "workstation", "vm", "nas", "cloud", "database", "other"}
)

func (s *Server) newJobForm(u *engine.SessionUser, f jobForm) (jobForm, error) {
	_, clients, err := s.eng.BoardClients(u.Workspace.ID)
	if err != nil {
		return f, err
	}
	f.Clients = slices.DeleteFunc(clients, func(c engine.BoardClient) bool { return c.Status == "archived" && c.ID != f.ClientID })
	f.Vendors, f.DeviceTypes, f.Weekdays, f.DefaultSizeDrop = engine.Vendors(), deviceTypes, weekdays, engine.DefaultSizeDropPercent
	return f, nil
}

func (s *Server) renderJobForm(ctx *fasthttp.RequestCtx, u *engine.SessionUser, status int, f jobForm) {
	f, err := s.newJobForm(u, f)
	if s.failed(ctx, err) {
		return
	}
	title := "Add a job"
	if f.Editing {
		title = "Edit " + f.current.Name
	}
	s.render(ctx, status, "setup_jobform", s.newView(ctx, u, title, "jobs", f))
}

// newJobPage shows an empty job form: a daily job, every day, the
// admin API's defaults.
func (s *Server) newJobPage(ctx *fasthttp.RequestCtx, u *engine.SessionUser) {
	f := jobForm{ClientID: string(ctx.QueryArgs().Peek("client")), Vendor: "veeam", DeviceType: "server",
		Interval: "1440", Grace: "60", SLA: "95", Days: map[string]bool{}}
	for _, d := range weekdays {
		f.Days[d] = true
	}
	s.renderJobForm(ctx, u, fasthttp.StatusOK, f)
}

// readJobForm reads the job form into f and the engine's input: each field
// as the admin API's JSON member of the same name would carry it. A number
// that is not one gets the admin API's message for a member of the wrong
// type.
func readJobForm(args *fasthttp.Args, f *jobForm) (engine.JobInput, engine.Opt[int64], string) {
	text := func(name string) string { return string(args.Peek(name)) }
	f.Name, f.Vendor = text("name"), text("vendor")
	f.DeviceName, f.DeviceType, f.Hostname = text("deviceName"), text("deviceType"), text("hostname")
	f.Interval, f.Grace, f.SLA, f.SizeDrop = text("intervalMinutes"), text("graceMinutes"), text("slaTarget"), text("sizeDropPercent")
	f.Days = map[string]bool{}
	var days []string
	for _, d := range args.PeekMulti("expectedDays") {
		days = append(days, string(d))
		f.Days[string(d)] = true
	}
	in := engine.JobInput{Name: engine.Some(f.Name), Vendor: engine.Some(f.Vendor),
		Device: engine.Some(engine.DeviceInput{Name: engine.Some(f.DeviceName), Type: engine.Some(f.DeviceType), Hostname: engine.Some(f.Hostname)})}
	sched := engine.ScheduleInput{ExpectedDays: engine.Some(days)}
	var msg string
	integer := func(field, v string) engine.Opt[int64] {
		v = strings.TrimSpace(v)
		if v == "" {
			return engine.Opt[int64]{}
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil && msg == "" {
			msg = field + " must be an integer"
		}
		return engine.Some(n)
	}
	sched.IntervalMinutes = integer("schedule.intervalMinutes", f.Interval)
	sched.GraceMinutes = integer("schedule.graceMinutes", f.Grace)
	in.Schedule = engine.Some(sched)
	if v := strings.TrimSpace(f.SLA); v != "" {
		n, err := strconv.ParseFloat(v, 64)
		if (err != nil || math.IsNaN(n) || math.IsInf(n, 0)) && msg == "" {
			msg = "slaTarget must be a number"
		}
		in.SLATarget = engine.Some(n)
	}
	drop := integer("sizeDropPercent", f.SizeDrop)
	return in, drop, msg
}

// refused shows the job form again (400) with the first problem among: a
// value of the wrong type (msg), the size-drop threshold, the engine's
// refusal (err); it reports whether there was one.
func (s *Server) refused(ctx *fasthttp.RequestCtx, u *engine.SessionUser, f *jobForm, msg string, drop engine.Opt[int64], err error) bool {
	switch {
	case msg != "":
		f.Error = "Not saved: " + msg + "."
	case engine.CheckSizeDropPercent(drop) != nil:
		f.Error = notSaved("Not saved", engine.CheckSizeDropPercent(drop))
	case err != nil:
		f.Error = notSaved("Not saved", err)
	default:
		return false
	}
	s.renderJobForm(ctx, u, fasthttp.StatusBadRequest, *f)
	return true
}

// createJob adds a job with the engine's CreateJob, then its own size-drop
// threshold when one is given, and opens its page.
func (s *Server) createJob(ctx *fasthttp.RequestCtx, u *engine.SessionUser) {
	args := ctx.PostArgs()
	f := jobForm{ClientID: string(args.Peek("clientId"))}
	in, drop, msg := readJobForm(args, &f)
	in.ClientID, in.Actor = engine.Some(f.ClientID), actor(u)
	if s.refused(ctx, u, &f, msg, drop, nil) {
		return
	}
	j, err := s.eng.CreateJob(u.Workspace.ID, in)
	if s.refused(ctx, u, &f, "", drop, err) {
		return
	}
	if drop.Set {
		if err := s.eng.SetSizeDrop(u.Workspace.ID, j.ID, drop, actor(u)); err != nil {
			redirect(ctx, "/jobs/"+j.ID, notSaved("Job added; its size-drop threshold not saved", err), true)
			return
		}
	}
	redirect(ctx, "/jobs/"+j.ID, "Job added. Point the backup product at it as shown below.", false)
}

// editJobPage shows the job form filled with the job as it is.
func (s *Server) editJobPage(ctx *fasthttp.RequestCtx, u *engine.SessionUser) {
	f, ok := s.currentJobForm(ctx, u)
	if !ok {
		return
	}
	j := f.current
	f.Name, f.Vendor, f.DeviceName, f.DeviceType, f.Hostname = j.Name, j.Vendor, j.DeviceName, j.DeviceType, j.Hostname
	f.Interval, f.Grace = strconv.FormatInt(j.IntervalMinutes, 10), strconv.FormatInt(j.GraceMinutes, 10)
	f.SLA, f.SizeDrop = strconv.FormatFloat(j.SLA.Target, 'f', -1, 64), f.currentSizeDrop
	f.Days = map[string]bool{}
	for _, d := range j.ExpectedDays {
		f.Days[d] = true
	}
	s.renderJobForm(ctx, u, fasthttp.StatusOK, f)
}

// currentJobForm returns the edit form of the path's job, without its
// values; false when it answered (no such job).
func (s *Server) currentJobForm(ctx *fasthttp.RequestCtx, u *engine.SessionUser) (jobForm, bool) {
	jid := ctx.UserValue("jid").(string)
	p, err := s.eng.BoardJob(u.Workspace.ID, jid)
	if s.failed(ctx, err) {
		return jobForm{}, false
	}
	set, err := s.eng.JobSetup(u.Workspace.ID, jid, 0)
	if s.failed(ctx, err) {
		return jobForm{}, false
	}
	f := jobForm{ID: p.Job.ID, ClientID: p.Job.ClientID, ClientName: p.Job.ClientName, Editing: true, current: p.Job}
	if !set.SizeDropDefault {
		f.currentSizeDrop = strconv.Itoa(set.SizeDropPercent)
	}
	return f, true
}

// editJob changes what the form changed, with the engine's UpdateJob (the
// admin API's PATCH), then the size-drop threshold.
func (s *Server) editJob(ctx *fasthttp.RequestCtx, u *engine.SessionUser) {
	f, ok := s.currentJobForm(ctx, u)
	if !ok {
		return
	}
	in, drop, msg := readJobForm(ctx.PostArgs(), &f)
	in.Actor = actor(u)
	if s.refused(ctx, u, &f, msg, drop, nil) {
		return
	}
	onlyChanges(&in, f.current)
	_, err := s.eng.UpdateJob(u.Workspace.ID, f.ID, in)
	if s.refused(ctx, u, &f, "", drop, err) {
		return
	}
	if strings.TrimSpace(f.SizeDrop) != f.currentSizeDrop {
		if s.refused(ctx, u, &f, "", drop, s.eng.SetSizeDrop(u.Workspace.ID, f.ID, drop, actor(u))) {
			return
		}
	}
	redirect(ctx, "/jobs/"+f.ID, "Job saved.", false)
}

// onlyChanges leaves in only the fields whose values differ from the job's,
// so that saving an unchanged form changes nothing and logs nothing.
func onlyChanges(in *engine.JobInput, j engine.BoardJob) {
	if in.Name.V == j.Name {
		in.Name = engine.Opt[string]{}
	}
	if in.Vendor.V == j.Vendor {
		in.Vendor = engine.Opt[string]{}
	}
	if d := in.Device.V; d.Name.V == j.DeviceName && d.Type.V == j.DeviceType && d.Hostname.V == j.Hostname {
		in.Device = engine.Opt[engine.DeviceInput]{}
	}
	sc := in.Schedule.V
	if sc.IntervalMinutes.Set && sc.IntervalMinutes.V == j.IntervalMinutes && sc.GraceMinutes.Set && sc.GraceMinutes.V == j.GraceMinutes &&
		slices.Equal(sc.ExpectedDays.V, j.ExpectedDays) {
		in.Schedule = engine.Opt[engine.ScheduleInput]{}
	}
	if in.SLATarget.Set && in.SLATarget.V == j.SLA.Target {
		in.SLATarget = engine.Opt[float64]{}
	}
}

// deleteJob deletes a job with its results and alerts (the admin API's
// DELETE) and opens its client's page.
func (s *Server) deleteJob(ctx *fasthttp.RequestCtx, u *engine.SessionUser) {
	jid := ctx.UserValue("jid").(string)
	p, err := s.eng.BoardJob(u.Workspace.ID, jid)
	if s.failed(ctx, err) {
		return
	}
	if string(ctx.PostArgs().Peek("confirm")) != p.Job.Name {
		redirect(ctx, "/jobs/"+jid+"/edit", "Not deleted: type the job's name to confirm.", true)
		return
	}
	err = s.eng.DeleteJobBy(u.Workspace.ID, jid, actor(u))
	redirectAfter(ctx, "/clients/"+p.Job.ClientID, err, "Not deleted", "Job "+p.Job.Name+" deleted, with its results and alerts.")
}
