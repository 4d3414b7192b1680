package transport

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"math"
	"strconv"
	"time"

	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"

	"backupmon/engine"
	"backupmon/jsonx"
)

// adminRouter routes the admin listener (decisions.md 2).
func (s *Server) adminRouter() fasthttp.RequestHandler { return s.adminHandler(nil) }

// adminHandler builds the admin listener's handler; extra, when not nil,
// adds routes first (tests only: a route that panics).
func (s *Server) adminHandler(extra func(r *router.Router)) fasthttp.RequestHandler {
	r := newRouter()
	if extra != nil {
		extra(r)
	}
	a := func(name string, h fasthttp.RequestHandler) fasthttp.RequestHandler {
		return s.route("admin_"+name, s.adminAuth(h))
	}
	const ws = "/admin/v1/workspaces/{wid}"
	r.POST("/admin/v1/workspaces", a("workspace_create", adminWrite(s, fasthttp.StatusCreated, workspaceInput, s.adminCreateWorkspace)))
	r.GET("/admin/v1/workspaces", a("workspace_list", s.adminListWorkspaces))
	r.GET(ws, a("workspace_get", adminRead(s, (*engine.Engine).Workspace)))
	r.PATCH(ws, a("workspace_update", adminWrite(s, fasthttp.StatusOK, workspaceInput, s.adminUpdateWorkspace)))
	r.POST(ws+"/clients", a("client_create", adminCreate(s, clientInput, (*engine.Engine).CreateClient)))
	r.GET(ws+"/clients", a("client_list", adminRead(s, (*engine.Engine).Clients)))
	r.PATCH(ws+"/clients/{cid}", a("client_update", adminUpdate(s, "cid", clientInput, (*engine.Engine).UpdateClient)))
	r.POST(ws+"/jobs", a("job_create", adminCreate(s, jobInput, (*engine.Engine).CreateJob)))
	r.GET(ws+"/jobs", a("job_list", adminRead(s, (*engine.Engine).Jobs)))
	r.GET(ws+"/jobs/{jid}", a("job_get", s.adminGetJob))
	r.PATCH(ws+"/jobs/{jid}", a("job_update", adminUpdate(s, "jid", jobInput, (*engine.Engine).UpdateJob)))
	r.DELETE(ws+"/jobs/{jid}", a("job_delete", adminRemove(s, "jid", (*engine.Engine).DeleteJob)))
	r.POST(ws+"/keys", a("key_create", adminCreate(s, keyInput, (*engine.Engine).CreateKey)))
	r.GET(ws+"/keys", a("key_list", adminRead(s, (*engine.Engine).Keys)))
	r.DELETE(ws+"/keys/{kid}", a("key_revoke", adminRemove(s, "kid", byAdmin((*engine.Engine).RevokeKey))))
	r.POST(ws+"/alerts/{aid}/acknowledge", a("alert_acknowledge", s.adminAlertAction(engine.Acknowledge)))
	r.POST(ws+"/alerts/{aid}/snooze", a("alert_snooze", s.adminAlertAction(engine.Snooze)))
	r.POST(ws+"/alerts/{aid}/resolve", a("alert_resolve", s.adminAlertAction(engine.Resolve)))
	r.GET(ws+"/alerts", a("alert_list", adminRead(s, (*engine.Engine).Alerts)))
	r.GET(ws+"/activity", a("activity_list", adminRead(s, (*engine.Engine).Activity)))
	r.POST(ws+"/channels", a("channel_create", adminCreate(s, channelInput, (*engine.Engine).CreateChannel)))
	r.GET(ws+"/channels", a("channel_list", adminRead(s, (*engine.Engine).Channels)))
	r.DELETE(ws+"/channels/{chid}", a("channel_delete", adminRemove(s, "chid", byAdmin((*engine.Engine).DeleteChannel))))
	r.POST(ws+"/channels/{chid}/test", a("channel_test", s.adminTestChannel))
	r.GET(ws+"/channels/{chid}/clients", a("channel_clients", adminReadOne(s, "chid", (*engine.Engine).ClientMaps)))
	r.PUT(ws+"/channels/{chid}/clients/{cid}", a("channel_client_map", s.adminMapClient))
	r.DELETE(ws+"/channels/{chid}/clients/{cid}", a("channel_client_unmap", s.adminUnmapClient))
	r.POST(ws+"/escalations", a("escalation_create", adminCreate(s, escalationInput, (*engine.Engine).CreateEscalation)))
	r.GET(ws+"/escalations", a("escalation_list", adminRead(s, (*engine.Engine).Escalations)))
	r.DELETE(ws+"/escalations/{eid}", a("escalation_delete", adminRemove(s, "eid", byAdmin((*engine.Engine).DeleteEscalation))))
	r.GET(ws+"/deliveries", a("delivery_list", adminRead(s, (*engine.Engine).Deliveries)))
	r.POST(ws+"/jobs/{jid}/ingest-address/rotate", a("ingest_rotate", adminReadOne(s, "jid", (*engine.Engine).RotateIngestAddress)))
	r.GET(ws+"/unparsed", a("unparsed_list", adminRead(s, (*engine.Engine).Unparsed)))
	r.POST(ws+"/unparsed/{uid}/reparse", a("unparsed_reparse", s.adminReparse))
	r.DELETE(ws+"/unparsed/{uid}", a("unparsed_delete", adminRemove(s, "uid", (*engine.Engine).DropUnparsed)))
	s.ruleRoutes(r, a)
	r.POST(ws+"/users", a("user_create", s.adminCreateUser))
	r.GET(ws+"/users", a("user_list", adminRead(s, (*engine.Engine).Users)))
	r.GET(ws+"/users/{uid}", a("user_get", adminReadOne(s, "uid", (*engine.Engine).User)))
	r.PATCH(ws+"/users/{uid}", a("user_update", s.adminUpdateUser))
	r.DELETE(ws+"/users/{uid}", a("user_delete", adminRemove(s, "uid", byAdmin((*engine.Engine).DeleteUser))))
	r.POST("/admin/v1/clock", a("clock", s.adminClock))
	r.GET("/admin/v1/cluster", a("cluster", s.adminCluster))
	r.GET(backupPath, a("backup", s.adminBackup))

	r.GET("/livez", s.route("livez", func(ctx *fasthttp.RequestCtx) {
		writeJSON(ctx, fasthttp.StatusOK, []byte(`{"status":"ok"}`))
	}))
	r.GET("/readyz", s.route("readyz", func(ctx *fasthttp.RequestCtx) {
		if s.ready != nil && !s.ready() || s.ready == nil && (!s.attached.Load() || !s.eng.Ready()) {
			writeJSON(ctx, fasthttp.StatusServiceUnavailable, []byte(`{"status":"starting"}`))
			return
		}
		writeJSON(ctx, fasthttp.StatusOK, []byte(`{"status":"ready"}`))
	}))
	r.GET("/metrics", s.metrics.handler())

	r.NotFound = s.route("admin_not_found", func(ctx *fasthttp.RequestCtx) {
		adminError(ctx, fasthttp.StatusNotFound, "NOT_FOUND", "No such endpoint")
	})
	r.MethodNotAllowed = s.route("admin_method_not_allowed", func(ctx *fasthttp.RequestCtx) {
		dropOptionsFromAllow(ctx)
		adminError(ctx, fasthttp.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED", "Method not allowed")
	})
	r.PanicHandler = func(ctx *fasthttp.RequestCtx, p any) {
		s.log.Error("panic in admin handler", "path", string(ctx.Path()), "panic", p)
		ctx.Response.Reset()
		adminError(ctx, fasthttp.StatusInternalServerError, "INTERNAL_ERROR", "Internal server error")
	}
	h := r.Handler
	return func(ctx *fasthttp.RequestCtx) {
		if s.routeTo != nil && !isProbe(ctx.Path()) && string(ctx.Path()) != "/metrics" && string(ctx.Path()) != "/admin/v1/cluster" && string(ctx.Path()) != backupPath {
			if !s.routeTo(ctx, false) {
				noOwner(ctx, true)
			}
			s.metrics.countRequest("admin_routed", ctx.Response.StatusCode())
			return
		}
		if s.routeTo == nil && !s.attached.Load() && !isProbe(ctx.Path()) {
			s.metrics.countRequest("admin_starting", fasthttp.StatusServiceUnavailable)
			adminError(ctx, fasthttp.StatusServiceUnavailable, "UNAVAILABLE", "starting")
			return
		}
		h(ctx)
	}
}

// isProbe reports whether path is /livez or /readyz, which answer while
// the engine recovers (docs/decisions.md).
func isProbe(path []byte) bool {
	return string(path) == "/livez" || string(path) == "/readyz"
}

// AdminAuthorized reports whether a request carries the admin token (a
// cluster's front checks it before it gathers from every shard).
func (s *Server) AdminAuthorized(ctx *fasthttp.RequestCtx) bool {
	token, ok := bearer(ctx.Request.Header.Peek("Authorization"))
	sum := sha256.Sum256(token)
	return ok && s.hasToken && subtle.ConstantTimeCompare(sum[:], s.token[:]) == 1
}

// adminAuth checks the admin bearer token in constant time: it compares
// SHA-256 digests, which have one length whatever the tokens' (comparing
// the tokens themselves would return early on a length that differs, and
// tell it).
func (s *Server) adminAuth(h fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		if !s.AdminAuthorized(ctx) {
			adminError(ctx, fasthttp.StatusUnauthorized, "UNAUTHORIZED", "Missing or invalid admin token")
			return
		}
		h(ctx)
	}
}

// adminData answers {"data": v}.
func adminData(ctx *fasthttp.RequestCtx, status int, v any) {
	body, err := jsonx.Marshal(struct {
		Data any `json:"data"`
	}{v})
	if err != nil {
		adminError(ctx, fasthttp.StatusInternalServerError, "INTERNAL_ERROR", "Could not encode the answer")
		return
	}
	writeJSON(ctx, status, body)
}

// answer writes {"data": v} with status (no body for 204), or the admin
// error that err maps to.
func (s *Server) answer(ctx *fasthttp.RequestCtx, status int, v any, err error) {
	switch {
	case err != nil:
		s.adminFail(ctx, err)
	case status == fasthttp.StatusNoContent:
		ctx.SetStatusCode(status)
	default:
		adminData(ctx, status, v)
	}
}

// adminFail answers an engine error in the admin shape.
func (s *Server) adminFail(ctx *fasthttp.RequestCtx, err error) {
	var e *engine.Error
	switch {
	case errors.As(err, &e):
		switch e.Kind {
		case engine.KindNotFound:
			adminError(ctx, fasthttp.StatusNotFound, "NOT_FOUND", upperFirst(e.Message))
		case engine.KindConflict:
			adminError(ctx, fasthttp.StatusConflict, "CONFLICT", upperFirst(e.Message))
		default:
			adminError(ctx, fasthttp.StatusBadRequest, "INVALID_REQUEST", e.Message)
		}
	case errors.Is(err, engine.ErrReadOnly):
		setRetryAfter(ctx, readOnlyRetry)
		adminError(ctx, fasthttp.StatusServiceUnavailable, "UNAVAILABLE", msgReadOnly)
	case errors.Is(err, engine.ErrNoDevClock):
		adminError(ctx, fasthttp.StatusNotFound, "NOT_FOUND", "No such endpoint")
	default:
		s.log.Error("admin request failed", "path", string(ctx.Path()), "err", err)
		adminError(ctx, fasthttp.StatusInternalServerError, "INTERNAL_ERROR", "The change was not recorded")
	}
}

func upperFirst(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}

// body parses the request body; on a problem it answers and returns nil.
func (s *Server) body(ctx *fasthttp.RequestCtx, emptyOK bool) *fields {
	f, err := parseFields(ctx.PostBody(), emptyOK)
	if err != nil {
		s.adminFail(ctx, err)
		return nil
	}
	return f
}

// finish answers the first problem of f and the nested objects it read;
// it returns false when it answered.
func (s *Server) finish(ctx *fasthttp.RequestCtx, f *fields) bool {
	if err := f.finish(); err != nil {
		s.adminFail(ctx, err)
		return false
	}
	return true
}

func workspaceInput(f *fields) engine.WorkspaceInput {
	return engine.WorkspaceInput{
		Name: f.str("name"), TimeZone: f.str("timeZone"), Plan: f.str("plan"), Status: f.str("status"),
		TrialEndsAt: f.timestamp("trialEndsAt"),
	}
}

func (s *Server) adminListWorkspaces(ctx *fasthttp.RequestCtx) {
	adminData(ctx, fasthttp.StatusOK, s.eng.Workspaces())
}

// adminCreateWorkspace is the engine call of POST /admin/v1/workspaces.
func (s *Server) adminCreateWorkspace(_ *fasthttp.RequestCtx, in engine.WorkspaceInput) (engine.WorkspaceView, error) {
	return s.eng.CreateWorkspace(in)
}

// adminUpdateWorkspace is the engine call of PATCH /admin/v1/workspaces/{wid}.
func (s *Server) adminUpdateWorkspace(ctx *fasthttp.RequestCtx, in engine.WorkspaceInput) (engine.WorkspaceView, error) {
	return s.eng.UpdateWorkspace(pathParam(ctx, "wid"), in)
}

// jobInput reads a job body; the problems of its nested objects are
// f's (fields.finish).
func jobInput(f *fields) engine.JobInput {
	in := engine.JobInput{
		ClientID: f.str("clientId"), Name: f.str("name"), Vendor: f.str("vendor"),
		SLATarget: f.number("slaTarget"), Paused: f.boolean("paused"), PausedUntil: f.timestamp("pausedUntil"),
	}
	if d, set, null := f.object("device"); set {
		in.Device = engine.Opt[engine.DeviceInput]{Set: true, Null: null}
		if d != nil {
			in.Device.V = engine.DeviceInput{Name: d.str("name"), Type: d.str("type"), Hostname: d.str("hostname")}
		}
	}
	if sc, set, null := f.object("schedule"); set {
		in.Schedule = engine.Opt[engine.ScheduleInput]{Set: true, Null: null}
		if sc != nil {
			in.Schedule.V = engine.ScheduleInput{IntervalMinutes: sc.integer("intervalMinutes"), ExpectedDays: sc.strings("expectedDays"), GraceMinutes: sc.integer("graceMinutes")}
		}
	}
	return in
}

func clientInput(f *fields) engine.ClientInput {
	return engine.ClientInput{Name: f.str("name"), Status: f.str("status")}
}

func keyInput(f *fields) engine.KeyInput {
	return engine.KeyInput{Name: f.str("name"), Type: f.str("type"), Access: f.str("access"), Scopes: f.strings("scopes"), ExpiresAt: f.timestamp("expiresAt")}
}

func channelInput(f *fields) engine.ChannelInput {
	return engine.ChannelInput{Type: f.str("type"), Name: f.str("name"), URL: f.str("url"), To: f.str("to"), MinSeverity: f.str("minSeverity"),
		Settings: f.stringMap("settings"), Secrets: f.stringMap("secrets")}
}

func escalationInput(f *fields) engine.EscalationInput {
	return engine.EscalationInput{ChannelID: f.str("channelId"), AfterMinutes: f.integer("afterMinutes")}
}

// Admin job history limits (decisions.md 2).
const (
	historyDefault = 100
	historyMax     = 1000
)

func (s *Server) adminGetJob(ctx *fasthttp.RequestCtx) {
	limit := historyDefault
	args := ctx.QueryArgs()
	if args.Len() > 0 {
		var bad string
		for k := range args.All() {
			if string(k) != "limit" {
				bad = string(k)
				break
			}
		}
		if bad != "" {
			adminError(ctx, fasthttp.StatusBadRequest, "INVALID_REQUEST", "unknown parameter "+strconv.Quote(bad))
			return
		}
		vals := args.PeekMulti("limit")
		n, err := 0, errors.New("limit given more than once")
		if len(vals) == 1 && plainDigits(vals[0]) {
			n, err = strconv.Atoi(string(vals[0]))
		}
		if err != nil || n < 1 || n > historyMax {
			adminError(ctx, fasthttp.StatusBadRequest, "INVALID_REQUEST", "limit must be an integer from 1 to 1000")
			return
		}
		limit = n
	}
	v, err := s.eng.JobDetail(pathParam(ctx, "wid"), pathParam(ctx, "jid"), limit)
	s.answer(ctx, fasthttp.StatusOK, v, err)
}

func plainDigits(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func (s *Server) adminAlertAction(action engine.AlertAction) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		f := s.body(ctx, true)
		if f == nil {
			return
		}
		note := f.str("note")
		var until engine.Opt[time.Time]
		if action == engine.Snooze {
			until = f.timestamp("until")
		}
		if !s.finish(ctx, f) {
			return
		}
		if action == engine.Snooze && (!until.Set || until.Null) {
			adminError(ctx, fasthttp.StatusBadRequest, "INVALID_REQUEST", "until is required")
			return
		}
		v, err := s.eng.ChangeAlert(pathParam(ctx, "wid"), pathParam(ctx, "aid"), action, until.V, "admin", note.V)
		s.answer(ctx, fasthttp.StatusOK, v, err)
	}
}

// maxAdvanceSeconds is the largest advanceSeconds one clock move takes:
// the seconds of the longest time.Duration, about 292 years.
const maxAdvanceSeconds = int64(math.MaxInt64 / time.Second)

// adminCluster answers the cluster's status on a cluster node, and 404 on a
// single node.
func (s *Server) adminCluster(ctx *fasthttp.RequestCtx) {
	if s.status == nil {
		adminError(ctx, fasthttp.StatusNotFound, "NOT_FOUND", "No such endpoint: this server is not a cluster node")
		return
	}
	body, err := s.status()
	if err != nil {
		s.log.Warn("cluster status", "err", err)
		adminError(ctx, fasthttp.StatusServiceUnavailable, "UNAVAILABLE", "The cluster does not answer (NATS unreachable)")
		return
	}
	writeJSON(ctx, fasthttp.StatusOK, append(append([]byte(`{"data":`), body...), '}'))
}

func (s *Server) adminClock(ctx *fasthttp.RequestCtx) {
	if !s.dev {
		adminError(ctx, fasthttp.StatusNotFound, "NOT_FOUND", "No such endpoint")
		return
	}
	f := s.body(ctx, true)
	if f == nil {
		return
	}
	set := f.timestamp("set")
	adv := f.integer("advanceSeconds")
	if !s.finish(ctx, f) {
		return
	}
	if set.Null {
		adminError(ctx, fasthttp.StatusBadRequest, "INVALID_REQUEST", "set must be an ISO 8601 date-time with a time zone, e.g. 2026-01-31T23:00:00Z")
		return
	}
	if adv.Null || adv.V < 0 {
		adminError(ctx, fasthttp.StatusBadRequest, "INVALID_REQUEST", "advanceSeconds must be a non-negative integer")
		return
	}
	// Checked before it is multiplied: a larger count of seconds does not
	// fit a time.Duration.
	if adv.V > maxAdvanceSeconds {
		adminError(ctx, fasthttp.StatusBadRequest, "INVALID_REQUEST", "advanceSeconds must be at most "+strconv.FormatInt(maxAdvanceSeconds, 10))
		return
	}
	now, err := s.eng.SetClock(set.V, time.Duration(adv.V)*time.Second)
	if err != nil {
		s.adminFail(ctx, err)
		return
	}
	adminData(ctx, fasthttp.StatusOK, struct {
		Now engine.Time `json:"now"`
	}{engine.Time(now.UnixMilli())})
}
