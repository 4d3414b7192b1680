package dashboard

import (
	"errors"
	"strings"

	"github.com/valyala/fasthttp"

	"backupmon/engine"
	"backupmon/password"
)

// A user changes their own password with the current one (OWASP ASVS
// 2.1.6); its guesses count in the login's buckets. Owners and admins set
// other users' passwords on the users page.

type passwordData struct{ Error string }

func (s *Server) passwordPage(ctx *fasthttp.RequestCtx, u *engine.SessionUser) {
	s.renderPassword(ctx, u, fasthttp.StatusOK, "")
}

func (s *Server) renderPassword(ctx *fasthttp.RequestCtx, u *engine.SessionUser, status int, msg string) {
	s.render(ctx, status, "password", s.newView(ctx, u, "Password", "settings", passwordData{Error: msg}))
}

// changePassword checks the current password, then sets the new one
// (given twice); every session of the user ends, the browser's too, and
// it goes to the login.
func (s *Server) changePassword(ctx *fasthttp.RequestCtx, u *engine.SessionUser) {
	args := ctx.PostArgs()
	if !s.throttle.allow(addrKey(remoteAddr(ctx)), strings.ToLower(u.Email), s.device(ctx, u.Email), s.eng.Now()) {
		ctx.Response.Header.Set("Retry-After", "60")
		s.renderPassword(ctx, u, fasthttp.StatusTooManyRequests, "Too many attempts. Try again in a minute.")
		return
	}
	current, ok, err := s.checkLogin(u.Email, u.Workspace.ID, string(args.Peek("current")))
	switch {
	case errors.Is(err, password.ErrBusy):
		ctx.Response.Header.Set("Retry-After", "1")
		s.renderPassword(ctx, u, fasthttp.StatusServiceUnavailable, "The server is busy; try again in a moment.")
		return
	case !ok:
		s.renderPassword(ctx, u, fasthttp.StatusBadRequest, "The current password is not right.")
		return
	}
	pw := string(args.Peek("password"))
	if pw != string(args.Peek("confirm")) {
		s.renderPassword(ctx, u, fasthttp.StatusBadRequest, "The two new passwords differ.")
		return
	}
	h, msg := s.hashPassword(pw)
	if msg != "" {
		s.renderPassword(ctx, u, fasthttp.StatusBadRequest, upperFirst(msg)+".")
		return
	}
	if _, err := s.eng.UpdateUser(u.Workspace.ID, u.UserID, engine.UserInput{Hash: engine.Some(h), CheckedHash: current.Hash, Actor: actor(u)}); s.failed(ctx, err) {
		return
	}
	s.setSessionCookie(ctx, "", 0)
	redirect(ctx, "/login", "Password changed. Log in with the new one.", false)
}
