package dashboard

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/valyala/fasthttp"

	"backupmon/engine"
)

// Several workspaces in one browser: one e-mail address may be a user of
// several workspaces (an MSP's technician), each with its own password and
// second factor. The session cookie holds the workspace in use; the
// "others" cookie the browser's sessions of the other workspaces it logged
// in to, so that the switcher in the header moves between them without a
// new login; a workspace not logged in to yet asks for its login.

const (
	maxOthers = 8
	pendingMs = 5 * 60 * 1000 // how long a login waits for its second factor
)

// othersCookieName is the other sessions' cookie name: __Host- requires
// Secure.
func (s *Server) othersCookieName() string {
	if s.insecure {
		return "others"
	}
	return "__Host-others"
}

// others returns the values of the browser's other sessions.
func (s *Server) others(ctx *fasthttp.RequestCtx) []string {
	v := string(ctx.Request.Header.Cookie(s.othersCookieName()))
	if v == "" {
		return nil
	}
	return strings.Split(v, ".")
}

// setOthers keeps the session values list (without "", active and
// repeats, at most maxOthers) in the others cookie.
func (s *Server) setOthers(ctx *fasthttp.RequestCtx, list []string, active string) {
	var keep []string
	for _, v := range list {
		if v != "" && v != active && !slices.Contains(keep, v) && !strings.ContainsAny(v, ".; ") && len(keep) < maxOthers {
			keep = append(keep, v)
		}
	}
	c := fasthttp.AcquireCookie()
	defer fasthttp.ReleaseCookie(c)
	c.SetKey(s.othersCookieName())
	c.SetValue(strings.Join(keep, "."))
	c.SetPath("/")
	c.SetHTTPOnly(true)
	c.SetSecure(!s.insecure)
	c.SetSameSite(fasthttp.CookieSameSiteLaxMode)
	if len(keep) > 0 {
		c.SetMaxAge(sessionMaxAge)
	} else {
		c.SetExpire(fasthttp.CookieExpireDelete)
	}
	ctx.Response.Header.SetCookie(c)
}

// memberships returns the workspaces whose users include email, by name:
// this engine's, or on a cluster every shard's.
func (s *Server) memberships(email string) []engine.Membership {
	if s.elsewhere != nil {
		return s.elsewhere.Memberships(email)
	}
	return s.eng.Memberships(email)
}

// sessionWorkspace returns the workspace of the browser's session v when
// it is live: here, or on a cluster at the owner of the shard v names.
func (s *Server) sessionWorkspace(v string) (engine.Membership, bool) {
	if su, ok := s.eng.Session(sha256.Sum256([]byte(v))); ok {
		return engine.Membership{ID: su.Workspace.ID, Name: su.Workspace.Name}, true
	}
	if s.elsewhere != nil {
		return s.elsewhere.SessionWorkspace(v)
	}
	return engine.Membership{}, false
}

// switchWorkspace makes the browser's session of another workspace the
// one in use, or sends the browser to log in to it.
func (s *Server) switchWorkspace(ctx *fasthttp.RequestCtx, u *engine.SessionUser) {
	wid := string(ctx.PostArgs().Peek("workspace"))
	if wid == u.Workspace.ID {
		redirect(ctx, "/", "", false)
		return
	}
	others := s.others(ctx)
	for _, v := range others {
		if m, ok := s.sessionWorkspace(v); ok && m.ID == wid {
			s.setOthers(ctx, append([]string{string(ctx.Request.Header.Cookie(s.cookieName()))}, others...), v)
			s.setSessionCookie(ctx, v, sessionMaxAge)
			redirect(ctx, "/", "Switched to "+m.Name+".", false)
			return
		}
	}
	q := url.Values{"workspace": {wid}, "email": {u.Email}, "next": {"/"}}
	redirect(ctx, "/login?"+q.Encode(), "Log in to that workspace to switch to it.", false)
}

// pendingToken signs a login whose password was right, for its second
// step until expires (ms): the e-mail address, the user, and their
// password hash as it was, so that a new password ends it.
func (s *Server) pendingToken(email string, l engine.Login, expires int64) string {
	body := l.WorkspaceID + "." + l.UserID + "." + strconv.FormatInt(expires, 10)
	return body + "." + base64.RawURLEncoding.EncodeToString(s.pendingMAC(email, l.Hash, body))
}

func (s *Server) pendingMAC(email, hash, body string) []byte {
	m := hmac.New(sha256.New, s.deviceKey)
	m.Write([]byte("login second factor\x00" + strings.ToLower(email) + "\x00" + hash + "\x00" + body))
	return m.Sum(nil)
}

// pendingStep is a login's signed first step, as the second step's form
// sends it back: "<workspace>.<user>.<expires ms>.<MAC, base64url>".
type pendingStep struct {
	workspace, user string
	expires         int64
	mac             []byte
	body            string // what the MAC signs
}

// parsePending reads a pending token; ok is false for anything that is not
// one (the MAC is checked by the caller).
func parsePending(token string) (p pendingStep, ok bool) {
	parts := strings.Split(token, ".")
	if len(parts) != 4 || parts[0] == "" || parts[1] == "" {
		return pendingStep{}, false
	}
	exp, err := strconv.ParseInt(parts[2], 10, 64)
	if err != nil || strconv.FormatInt(exp, 10) != parts[2] {
		return pendingStep{}, false
	}
	// The decoder skips CR and LF: a token has one spelling only.
	mac, err := base64.RawURLEncoding.Strict().DecodeString(parts[3])
	if err != nil || len(mac) != sha256.Size || base64.RawURLEncoding.EncodeToString(mac) != parts[3] {
		return pendingStep{}, false
	}
	return pendingStep{workspace: parts[0], user: parts[1], expires: exp, mac: mac, body: strings.Join(parts[:3], ".")}, true
}

// secondStep finishes a login with its second factor: the signed first
// step (pending) and a TOTP or recovery code.
func (s *Server) secondStep(ctx *fasthttp.RequestCtx, v loginView, pending, code string) {
	p, ok := parsePending(pending)
	var l engine.Login
	found := false
	if ok {
		for _, c := range s.eng.Logins(v.Email) {
			if c.WorkspaceID == p.workspace && c.UserID == p.user {
				l, found = c, true
			}
		}
	}
	if !found || !hmac.Equal(p.mac, s.pendingMAC(v.Email, l.Hash, p.body)) || s.eng.Now().UnixMilli() >= p.expires {
		v.Error = "Your login took too long or was changed; start again."
		s.renderLogin(ctx, fasthttp.StatusUnauthorized, v)
		return
	}
	v.Pending = pending
	s.startSession(ctx, v, func(hash [32]byte) error {
		err := s.eng.StartSessionTwoFactor(l.WorkspaceID, l.UserID, l.Hash, code, hash)
		if errors.Is(err, engine.ErrCodeWrong) || errors.Is(err, engine.ErrCodeUsed) {
			v.Error = upperFirst(engine.ErrorText(err)) + "."
			s.renderLogin(ctx, fasthttp.StatusUnauthorized, v)
			return errHandled
		}
		return err
	})
}

// errHandled is what a session's start returns when it already answered.
var errHandled = errors.New("answered")
