package dashboard

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"backupmon/engine"
	"backupmon/password"
)

// Actions: every change is a POST form, answered by a redirect (303) to
// the page it came from with a message, except a new key, whose secret is
// shown once on the page the POST answers.

// preset is a snooze choice of the bulk bar.
type preset struct{ Value, Label string }

var snoozePresets = []preset{{engine.PresetHour, "1 hour"}, {engine.PresetFourHour, "4 hours"}, {engine.PresetTomorrow, "Tomorrow 08:00"}, {engine.PresetNextRun, "Until the next expected run"}}

// alertsBulk acknowledges, snoozes or resolves the alerts ticked, each with
// the note given.
func (s *Server) alertsBulk(ctx *fasthttp.RequestCtx, u *engine.SessionUser) {
	args := ctx.PostArgs()
	back := string(args.Peek("back"))
	var ids []string
	for _, v := range args.PeekMulti("alert") {
		ids = append(ids, string(v))
	}
	if len(ids) == 0 {
		redirect(ctx, back, "Select at least one alert first.", true)
		return
	}
	if len(ids) > engine.MaxTriage {
		redirect(ctx, back, "Select at most 1,000 alerts at once.", true)
		return
	}
	t := engine.Triage{Preset: string(args.Peek("snooze")), Actor: actor(u), Note: strings.TrimSpace(string(args.Peek("note")))}
	var done string
	switch string(args.Peek("action")) {
	case "acknowledge":
		t.Action, t.Preset, done = engine.Acknowledge, "", "Acknowledged"
	case "snooze":
		t.Action, done = engine.Snooze, "Snoozed"
		if t.Preset == "" {
			redirect(ctx, back, "Choose how long to snooze.", true)
			return
		}
	case "resolve":
		t.Action, t.Preset, done = engine.Resolve, "", "Resolved"
	default:
		redirect(ctx, back, "Choose acknowledge, snooze or resolve.", true)
		return
	}
	outcomes, err := s.eng.TriageAlerts(u.Workspace.ID, ids, t)
	var e *engine.Error
	if errors.As(err, &e) && e.Kind == engine.KindInvalid {
		redirect(ctx, back, upperFirst(e.Message)+".", true)
		return
	}
	if s.failed(ctx, err) {
		return
	}
	var ok, missing int
	var problems []string
	for _, o := range outcomes {
		switch {
		case o.Changed:
			ok++
		case !o.Found:
			missing++
		default:
			problems = append(problems, o.Alert.JobName+": "+o.Problem)
		}
	}
	if missing > 0 {
		problems = append(problems, fmt.Sprintf("%d alert(s) no longer exist", missing))
	}
	msg := fmt.Sprintf("%s %d alert(s).", done, ok)
	if len(problems) > 0 {
		msg += " Not changed: " + strings.Join(problems, "; ") + "."
	}
	redirect(ctx, back, msg, ok == 0)
}

func (s *Server) pauseJob(ctx *fasthttp.RequestCtx, u *engine.SessionUser) {
	jid := ctx.UserValue("jid").(string)
	args := ctx.PostArgs()
	back := "/jobs/" + jid
	note := strings.TrimSpace(string(args.Peek("note")))
	var until time.Time
	if d := strings.TrimSpace(string(args.Peek("until"))); d != "" {
		t, err := time.ParseInLocation("2006-01-02", d, u.Workspace.Loc)
		if err != nil {
			redirect(ctx, back, "The date must be a date (YYYY-MM-DD).", true)
			return
		}
		until = t
	}
	_, err := s.eng.PauseJob(u.Workspace.ID, jid, until, actor(u), note)
	redirectAfter(ctx, back, err, "Not paused", "Monitoring paused.")
}

func (s *Server) resumeJob(ctx *fasthttp.RequestCtx, u *engine.SessionUser) {
	jid := ctx.UserValue("jid").(string)
	back := "/jobs/" + jid
	_, err := s.eng.ResumeJob(u.Workspace.ID, jid, actor(u), strings.TrimSpace(string(ctx.PostArgs().Peek("note"))))
	redirectAfter(ctx, back, err, "Not resumed", "Monitoring resumed.")
}

// keyForm is the key form as sent, to show it again after a mistake.
type keyForm struct {
	Name, Type, Access, Expiry, Date string
	Scopes                           map[string]bool
	Error                            string
}

// createKey makes an API key (api.md 5.3–5.5) and shows its secret once.
func (s *Server) createKey(ctx *fasthttp.RequestCtx, u *engine.SessionUser) {
	args := ctx.PostArgs()
	f := keyForm{Name: strings.TrimSpace(string(args.Peek("name"))), Type: string(args.Peek("type")), Access: string(args.Peek("access")),
		Expiry: string(args.Peek("expiry")), Date: strings.TrimSpace(string(args.Peek("date"))), Scopes: map[string]bool{}}
	in := engine.KeyInput{Name: engine.Some(f.Name), Type: engine.Some(f.Type), Actor: actor(u)}
	switch f.Type {
	case "rest":
		var scopes []string
		for _, v := range args.PeekMulti("scopes") {
			if _, ok := areaNames[string(v)]; ok {
				scopes = append(scopes, string(v))
				f.Scopes[string(v)] = true
			}
		}
		if len(scopes) == 0 {
			f.Error = "Choose at least one readable area."
		}
		in.Scopes = engine.Some(scopes)
	case "assistant":
		in.Access = engine.Some(f.Access)
	case "report":
	default:
		f.Error = "Choose the key's access."
	}
	switch f.Expiry {
	case "never":
	case "date":
		t, err := time.ParseInLocation("2006-01-02", f.Date, u.Workspace.Loc)
		if err != nil {
			f.Error = "Choose the expiry date."
			break
		}
		// The key works through the whole of the date chosen.
		in.ExpiresAt = engine.Some(t.AddDate(0, 0, 1))
	default:
		f.Error = "Choose an expiry: a date or never."
	}
	if f.Error == "" {
		v, err := s.eng.CreateKey(u.Workspace.ID, in)
		if err == nil {
			s.renderKeys(ctx, u, fasthttp.StatusOK, v.Key, keyForm{Type: "rest", Expiry: "never", Access: "read-only"})
			return
		}
		f.Error = upperFirst(engine.ErrorText(err)) + "."
	}
	s.renderKeys(ctx, u, fasthttp.StatusBadRequest, "", f)
}

func (s *Server) revokeKey(ctx *fasthttp.RequestCtx, u *engine.SessionUser) {
	err := s.eng.RevokeKey(u.Workspace.ID, ctx.UserValue("kid").(string), actor(u))
	redirectAfter(ctx, "/settings/keys", err, "Not revoked", "Key revoked: it answers 401 from now on.")
}

func optional(args *fasthttp.Args, name string) engine.Opt[string] {
	v := strings.TrimSpace(string(args.Peek(name)))
	if v == "" {
		return engine.Opt[string]{}
	}
	return engine.Some(v)
}

func (s *Server) createChannel(ctx *fasthttp.RequestCtx, u *engine.SessionUser) {
	args := ctx.PostArgs()
	in := engine.ChannelInput{Type: optional(args, "type"), Name: optional(args, "name"), URL: optional(args, "url"),
		To: optional(args, "to"), MinSeverity: optional(args, "minSeverity"), Actor: actor(u)}
	if isNewType(in.Type.V) {
		if !allowed(u.Role, canOwn) {
			redirect(ctx, "/settings/channels", "Not added: only owners add PSA, Teams and PagerDuty channels (they hold credentials).", true)
			return
		}
		in.Settings, in.Secrets = channelMaps(args)
	}
	v, err := s.eng.CreateChannel(u.Workspace.ID, in)
	if err != nil {
		redirect(ctx, "/settings/channels", "Not added: "+engine.ErrorText(err)+".", true)
		return
	}
	if v.Secret != "" {
		// A webhook's signing secret is shown once, as the admin API
		// returns it once (decisions.md 7): the page itself, not a redirect.
		s.renderChannels(ctx, u, v.Secret)
		return
	}
	redirect(ctx, "/settings/channels", "Channel added.", false)
}

func (s *Server) deleteChannel(ctx *fasthttp.RequestCtx, u *engine.SessionUser) {
	err := s.eng.DeleteChannel(u.Workspace.ID, ctx.UserValue("chid").(string), actor(u))
	redirectAfter(ctx, "/settings/channels", err, "Not deleted", "Channel deleted, with its escalation rules.")
}

func (s *Server) createEscalation(ctx *fasthttp.RequestCtx, u *engine.SessionUser) {
	args := ctx.PostArgs()
	in := engine.EscalationInput{ChannelID: optional(args, "channelId"), Actor: actor(u)}
	if v := strings.TrimSpace(string(args.Peek("afterMinutes"))); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			redirect(ctx, "/settings/channels", "Not added: afterMinutes must be a whole number of minutes.", true)
			return
		}
		in.AfterMinutes = engine.Some(n)
	}
	_, err := s.eng.CreateEscalation(u.Workspace.ID, in)
	redirectAfter(ctx, "/settings/channels", err, "Not added", "Escalation rule added.")
}

func (s *Server) deleteEscalation(ctx *fasthttp.RequestCtx, u *engine.SessionUser) {
	err := s.eng.DeleteEscalation(u.Workspace.ID, ctx.UserValue("eid").(string), actor(u))
	redirectAfter(ctx, "/settings/channels", err, "Not deleted", "Escalation rule deleted.")
}

// hashPassword validates and hashes a password set in a users form; "" and
// a message when it cannot.
func (s *Server) hashPassword(pw string) (string, string) {
	if msg := password.Validate(pw); msg != "" {
		return "", msg
	}
	h, err := s.hasher.Hash(context.Background(), pw)
	if err != nil {
		return "", "the server is busy; try again in a moment"
	}
	return h, ""
}

// Only an owner manages owners: an admin can neither make one nor change
// or delete one (decisions.md of the project).
func (s *Server) createUser(ctx *fasthttp.RequestCtx, u *engine.SessionUser) {
	args := ctx.PostArgs()
	const back = "/settings/users"
	in := engine.UserInput{Email: optional(args, "email"), Name: optional(args, "name"), Role: optional(args, "role"), Actor: actor(u)}
	if in.Role.V == engine.RoleOwner && u.Role != engine.RoleOwner {
		s.errorPage(ctx, fasthttp.StatusForbidden, "Forbidden", "Only an owner can make another owner.")
		return
	}
	h, msg := s.hashPassword(string(args.Peek("password")))
	if msg != "" {
		redirect(ctx, back, "Not added: "+msg+".", true)
		return
	}
	in.Hash = engine.Some(h)
	_, err := s.eng.CreateUser(u.Workspace.ID, in)
	redirectAfter(ctx, back, err, "Not added", "User added.")
}

func (s *Server) updateUser(ctx *fasthttp.RequestCtx, u *engine.SessionUser) {
	args := ctx.PostArgs()
	const back = "/settings/users"
	uid, target, ok := s.targetUser(ctx, u)
	if !ok {
		return
	}
	in := engine.UserInput{Role: optional(args, "role"), Actor: actor(u)}
	if u.Role != engine.RoleOwner && (target.Role == engine.RoleOwner || in.Role.V == engine.RoleOwner) {
		s.errorPage(ctx, fasthttp.StatusForbidden, "Forbidden", "Only an owner can change an owner or make one.")
		return
	}
	if pw := string(args.Peek("password")); pw != "" {
		if uid == u.UserID {
			redirect(ctx, back, "Change your own password on the Password page: it asks for the current one.", true)
			return
		}
		h, msg := s.hashPassword(pw)
		if msg != "" {
			redirect(ctx, back, "Not changed: "+msg+".", true)
			return
		}
		in.Hash = engine.Some(h)
	}
	_, err := s.eng.UpdateUser(u.Workspace.ID, uid, in)
	redirectAfter(ctx, back, err, "Not changed", "User "+target.Email+" changed.")
}

// targetUser returns the id and the user the path's {uid} names, or
// answers the page of their absence (ok false).
func (s *Server) targetUser(ctx *fasthttp.RequestCtx, u *engine.SessionUser) (string, engine.UserView, bool) {
	uid := ctx.UserValue("uid").(string)
	target, err := s.eng.User(u.Workspace.ID, uid)
	return uid, target, !s.failed(ctx, err)
}

func (s *Server) deleteUser(ctx *fasthttp.RequestCtx, u *engine.SessionUser) {
	const back = "/settings/users"
	uid, target, ok := s.targetUser(ctx, u)
	if !ok {
		return
	}
	if u.Role != engine.RoleOwner && target.Role == engine.RoleOwner {
		s.errorPage(ctx, fasthttp.StatusForbidden, "Forbidden", "Only an owner can delete an owner.")
		return
	}
	err := s.eng.DeleteUser(u.Workspace.ID, uid, actor(u))
	redirectAfter(ctx, back, err, "Not deleted", "User "+target.Email+" deleted; their sessions have ended.")
}
