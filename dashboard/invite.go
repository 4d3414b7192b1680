package dashboard

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"

	"backupmon/engine"
	"backupmon/password"
)

// Invitations: an owner or admin invites an e-mail address with a role
// (only an owner invites an owner); the page shows the one-time link to
// copy, and the relay, when there is one, sends it too. The link,
// /invite/<workspace id>/<secret>, lets its holder set a name and password
// once within seven days.

// peopleRoutes adds the pages of invitations, two-factor sign-in and the
// workspace switcher.
func (s *Server) peopleRoutes(r *router.Router) {
	r.GET("/invite/{wid}/{secret}", s.invitePage)
	r.POST("/invite/{wid}/{secret}", s.acceptInvite)
	for _, p := range []struct {
		method, path string
		need         int
		h            handlerFunc
	}{
		{"GET", "/settings/invites", 0, s.invitesPage},
		{"POST", "/settings/invites", canManage, s.createInvite},
		{"POST", "/settings/invites/{iid}/revoke", canManage, s.revokeInvite},
		{"GET", "/settings/password", 0, s.passwordPage},
		{"POST", "/settings/password", 0, s.changePassword},
		{"GET", "/settings/two-factor", 0, s.twoFactorPage},
		{"POST", "/settings/two-factor/enable", 0, s.enableTwoFactor},
		{"POST", "/settings/two-factor/disable", 0, s.disableTwoFactor},
		{"POST", "/settings/two-factor/recovery", 0, s.renewRecovery},
		{"POST", "/settings/two-factor/require", canOwn, s.requireTwoFactor},
		{"POST", "/settings/users/{uid}/two-factor/reset", canManage, s.resetTwoFactor},
		{"POST", "/switch", 0, s.switchWorkspace},
	} {
		r.Handle(p.method, p.path, s.user(p.need, p.h))
	}
}

type invitesData struct {
	Invites []engine.InviteView
	Roles   []string
	// Link is the new invitation's link, shown once; Sent says whether the
	// relay took it, SendError why not.
	Link, LinkEmail, SendError string
	Sent                       bool
}

func (s *Server) invitesPage(ctx *fasthttp.RequestCtx, u *engine.SessionUser) {
	s.renderInvites(ctx, u, fasthttp.StatusOK, invitesData{})
}

func (s *Server) renderInvites(ctx *fasthttp.RequestCtx, u *engine.SessionUser, status int, d invitesData) {
	list, err := s.eng.Invites(u.Workspace.ID)
	if s.failed(ctx, err) {
		return
	}
	d.Invites = list
	d.Roles = []string{engine.RoleOwner, engine.RoleAdmin, engine.RoleMember, engine.RoleViewer}
	s.render(ctx, status, "invites", s.newView(ctx, u, "Invitations", "settings", d))
}

// createInvite records an invitation and shows its link once (a page, not
// a redirect), sending it by mail when a relay is set.
func (s *Server) createInvite(ctx *fasthttp.RequestCtx, u *engine.SessionUser) {
	args := ctx.PostArgs()
	in := engine.InviteInput{Email: optional(args, "email"), Role: optional(args, "role"), Actor: actor(u)}
	if in.Role.V == engine.RoleOwner && u.Role != engine.RoleOwner {
		s.errorPage(ctx, fasthttp.StatusForbidden, "Forbidden", "Only an owner can make another owner.")
		return
	}
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		s.failed(ctx, fmt.Errorf("invitation secret: %w", err))
		return
	}
	token := base64.RawURLEncoding.EncodeToString(secret)
	inv, err := s.eng.CreateInvite(u.Workspace.ID, in, sha256.Sum256([]byte(token)))
	if err != nil {
		redirect(ctx, "/settings/invites", "Not invited: "+engine.ErrorText(err)+".", true)
		return
	}
	link := s.siteURL(ctx) + "/invite/" + u.Workspace.ID + "/" + token
	d := invitesData{Link: link, LinkEmail: inv.Email}
	if s.mailer != nil {
		mctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		err := s.mailer(mctx, inv.Email, "You are invited to "+u.Workspace.Name+" on backupmon", inviteMail(u, inv, link))
		cancel()
		if err != nil {
			s.log.Warn("invitation mail", "workspace", u.Workspace.ID, "err", err)
			d.SendError = "The e-mail could not be sent; copy the link to them instead."
		} else {
			d.Sent = true
		}
	}
	s.renderInvites(ctx, u, fasthttp.StatusOK, d)
}

// inviteMail is an invitation e-mail's text.
func inviteMail(u *engine.SessionUser, inv engine.InviteView, link string) string {
	return fmt.Sprintf("%s (%s) invites you to the workspace %s on backupmon, as %s.\n\n"+
		"Open this link to set your password (it works once, until %s):\n\n%s\n\n"+
		"If you did not expect this, ignore this e-mail.\n",
		u.Name, u.Email, u.Workspace.Name, inv.Role, time.UnixMilli(inv.ExpiresAt).UTC().Format("2006-01-02 15:04 UTC"), link)
}

func (s *Server) revokeInvite(ctx *fasthttp.RequestCtx, u *engine.SessionUser) {
	err := s.eng.RevokeInvite(u.Workspace.ID, ctx.UserValue("iid").(string), actor(u))
	redirectAfter(ctx, "/settings/invites", err, "Not revoked", "Invitation revoked; its link no longer works.")
}

// refusedAccept answers an invitation's acceptance the engine refused
// (400 for a field, 409 for a conflict, the link's page when it stopped
// working meanwhile) and reports whether it did.
func (s *Server) refusedAccept(ctx *fasthttp.RequestCtx, d inviteData, err error) bool {
	var e *engine.Error
	switch {
	case err == nil:
		return false
	case errors.As(err, &e) && (e.Kind == engine.KindInvalid || e.Kind == engine.KindConflict):
		d.Error = upperFirst(e.Message) + "."
		status := fasthttp.StatusConflict
		if e.Kind == engine.KindInvalid {
			status = fasthttp.StatusBadRequest
		}
		s.renderInvite(ctx, status, d)
	case errors.As(err, &e) && e.Kind == engine.KindNotFound:
		s.inviteLink(ctx) // used or revoked meanwhile: that page
	default:
		s.failed(ctx, err)
	}
	return true
}

// siteURL is the dashboard's address: --public-url, else the scheme and
// host the request came to.
func (s *Server) siteURL(ctx *fasthttp.RequestCtx) string {
	if s.publicURL != "" {
		return s.publicURL
	}
	if ctx.IsTLS() {
		return "https://" + string(ctx.Host())
	}
	return "http://" + string(ctx.Host())
}

type inviteData struct {
	Invite engine.InviteView
	Name   string
	Error  string
}

// inviteLink returns the invitation a link names, or answers the page
// for a link that does not work: 404 for one unknown (used, revoked,
// mistyped, or another workspace's), 410 for one expired.
func (s *Server) inviteLink(ctx *fasthttp.RequestCtx) (engine.InviteView, [32]byte, bool) {
	hash := sha256.Sum256([]byte(ctx.UserValue("secret").(string)))
	inv, err := s.eng.Invite(ctx.UserValue("wid").(string), hash)
	var e *engine.Error
	switch {
	case err == nil:
		return inv, hash, true
	case errors.Is(err, engine.ErrInviteExpired):
		s.errorPage(ctx, fasthttp.StatusGone, "Invitation expired", "This invitation has expired; ask for a new one.")
	case errors.As(err, &e) && e.Kind == engine.KindNotFound:
		s.errorPage(ctx, fasthttp.StatusNotFound, "Invitation not valid", "This invitation link is not valid: it was used, revoked or mistyped.")
	default:
		s.failed(ctx, err)
	}
	return engine.InviteView{}, hash, false
}

func (s *Server) invitePage(ctx *fasthttp.RequestCtx) {
	inv, _, ok := s.inviteLink(ctx)
	if !ok {
		return
	}
	s.renderInvite(ctx, fasthttp.StatusOK, inviteData{Invite: inv})
}

func (s *Server) renderInvite(ctx *fasthttp.RequestCtx, status int, d inviteData) {
	s.render(ctx, status, "invite", &view{Title: "Join " + d.Invite.Workspace, Theme: theme(ctx), Data: d})
}

// acceptInvite sets the invitee's name and password and ends the
// invitation; they then log in.
func (s *Server) acceptInvite(ctx *fasthttp.RequestCtx) {
	inv, hash, ok := s.inviteLink(ctx)
	if !ok {
		return
	}
	args := ctx.PostArgs()
	name := optional(args, "name")
	d := inviteData{Invite: inv, Name: name.V}
	if pw := string(args.Peek("password")); pw != string(args.Peek("confirm")) {
		d.Error = "The two passwords differ."
	} else if msg := password.Validate(pw); msg != "" {
		d.Error = upperFirst(msg) + "."
	} else if !name.Set {
		d.Error = "Name is required."
	}
	if d.Error != "" {
		s.renderInvite(ctx, fasthttp.StatusBadRequest, d)
		return
	}
	// What the engine would refuse costs no hash: the name, and the
	// address taken meanwhile.
	wid := ctx.UserValue("wid").(string)
	err := s.eng.CheckUser(wid, "", engine.UserInput{Email: engine.Some(inv.Email), Name: name, Role: engine.Some(inv.Role)})
	if s.refusedAccept(ctx, d, err) {
		return
	}
	h, err := s.hasher.Hash(context.Background(), string(args.Peek("password")))
	if err != nil {
		ctx.Response.Header.Set("Retry-After", "1")
		d.Error = "The server is busy; try again in a moment."
		s.renderInvite(ctx, fasthttp.StatusServiceUnavailable, d)
		return
	}
	if _, err = s.eng.AcceptInvite(wid, hash, name, h); s.refusedAccept(ctx, d, err) {
		return
	}
	q := url.Values{"email": {inv.Email}, "workspace": {wid}}
	redirect(ctx, "/login?"+q.Encode(), "Your password is set: log in to "+inv.Workspace+".", false)
}
