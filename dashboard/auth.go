package dashboard

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/valyala/fasthttp"
	"golang.org/x/time/rate"

	"backupmon/engine"
	"backupmon/password"
)

// Login throttling (decisions.md 11): every attempt takes a token from its
// address's bucket and from its e-mail address's bucket, unless it comes
// from a browser holding a device cookie for that e-mail address
// (device.go): then it takes one from that device's bucket alone.
const (
	addrBurst     = 10
	addrEvery     = 6 * time.Second // 10 a minute once the burst is spent
	userBurst     = 5
	userEvery     = 30 * time.Second // 2 a minute once the burst is spent
	throttleLimit = 100000           // buckets kept before idle ones are dropped
	sessionMaxAge = 30 * 24 * 60 * 60
)

type throttle struct {
	mu      sync.Mutex
	buckets map[string]*rate.Limiter
}

func newThrottle() *throttle { return &throttle{buckets: map[string]*rate.Limiter{}} }

// allow takes one attempt at now from the device's bucket when device is
// set, else from the address's and the user's buckets; false when one is
// empty (then none is charged).
func (t *throttle) allow(addr, email, device string, now time.Time) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sweep(now)
	if device != "" {
		d := t.bucket("d:"+device, userEvery, userBurst)
		return d.AllowN(now, 1)
	}
	a := t.bucket("a:"+addr, addrEvery, addrBurst)
	u := t.bucket("u:"+email, userEvery, userBurst)
	ra, ru := a.ReserveN(now, 1), u.ReserveN(now, 1)
	if ra.DelayFrom(now) > 0 || ru.DelayFrom(now) > 0 {
		ra.CancelAt(now)
		ru.CancelAt(now)
		return false
	}
	return true
}

// allowAddr takes one attempt at now from the address's bucket alone
// (LoginGate); false when it is empty.
func (t *throttle) allowAddr(addr string, now time.Time) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sweep(now)
	return t.bucket("a:"+addr, addrEvery, addrBurst).AllowN(now, 1)
}

// sweep drops the full buckets once there are more than throttleLimit.
func (t *throttle) sweep(now time.Time) {
	if len(t.buckets) > throttleLimit {
		for k, l := range t.buckets {
			if l.TokensAt(now) >= float64(l.Burst()) {
				delete(t.buckets, k)
			}
		}
	}
}

// bucket returns key's bucket, made when there is none. The bucket is kept
// under key's SHA-256: a key holds what a client sent (an e-mail address as
// long as a body may be), and kept whole, each would hold that memory until
// the buckets are swept.
func (t *throttle) bucket(key string, every time.Duration, burst int) *rate.Limiter {
	sum := sha256.Sum256([]byte(key))
	l := t.buckets[string(sum[:])]
	if l == nil {
		l = rate.NewLimiter(rate.Every(every), burst)
		t.buckets[string(sum[:])] = l
	}
	return l
}

type loginView struct {
	Email, Next, Error string
	// Workspace is the workspace to log in to ("": the first whose user
	// the password opens); Pending, when set, asks for the second factor
	// of a login whose password was right (secondStep).
	Workspace, Pending string
}

func (s *Server) loginPage(ctx *fasthttp.RequestCtx) {
	q := ctx.QueryArgs()
	v := loginView{Next: string(q.Peek("next")), Email: string(q.Peek("email")), Workspace: string(q.Peek("workspace"))}
	// A browser signed in stays so, unless it asks to log in to another
	// workspace (the switcher).
	if su, ok := s.session(ctx); ok && (v.Workspace == "" || v.Workspace == su.Workspace.ID) {
		ctx.Redirect(localPath(v.Next), fasthttp.StatusSeeOther)
		return
	}
	s.renderLogin(ctx, fasthttp.StatusOK, v)
}

func (s *Server) renderLogin(ctx *fasthttp.RequestCtx, status int, v loginView) {
	w := &view{Title: "Log in", Theme: theme(ctx), Data: v}
	w.Flash, w.FlashError = takeFlash(ctx)
	s.render(ctx, status, "login", w)
}

// login checks an e-mail address and password and starts a session, or
// asks for the second factor of a user who has one.
func (s *Server) login(ctx *fasthttp.RequestCtx) {
	args := ctx.PostArgs()
	email := strings.TrimSpace(string(args.Peek("email")))
	pw := string(args.Peek("password"))
	v := loginView{Email: email, Next: string(args.Peek("next")), Workspace: string(args.Peek("workspace"))}
	addr := addrKey(remoteAddr(ctx))
	// A second factor's guesses are counted apart from the password's, on
	// buckets of the same size: a login spends one of each.
	user, device := strings.ToLower(email), s.device(ctx, email)
	pending := string(args.Peek("pending"))
	if pending != "" {
		user = "code:" + user
		if device != "" {
			device = "code:" + device
		}
	}
	// A cluster's front refuses by the address across every shard (gate.go).
	if len(ctx.Request.Header.Peek(gateHeader)) > 0 || !s.throttle.allow(addr, user, device, s.eng.Now()) {
		ctx.Response.Header.Set("Retry-After", "60")
		v.Error = "Too many login attempts. Try again in a minute."
		s.renderLogin(ctx, fasthttp.StatusTooManyRequests, v)
		return
	}
	if pending != "" {
		s.secondStep(ctx, v, pending, string(args.Peek("code")))
		return
	}
	l, ok, err := s.checkLogin(email, v.Workspace, pw)
	if errors.Is(err, password.ErrBusy) {
		ctx.Response.Header.Set("Retry-After", "1")
		v.Error = "The server is busy; try again in a moment."
		s.renderLogin(ctx, fasthttp.StatusServiceUnavailable, v)
		return
	}
	if err != nil && !errors.Is(err, password.ErrMalformed) {
		s.log.Error("login", "err", err)
	}
	if !ok {
		v.Error = "Wrong e-mail address or password."
		s.renderLogin(ctx, fasthttp.StatusUnauthorized, v)
		return
	}
	if l.TwoFactor {
		// The second step names the workspace, so that a cluster sends it
		// to the same shard.
		v.Pending, v.Workspace = s.pendingToken(email, l, s.eng.Now().UnixMilli()+pendingMs), l.WorkspaceID
		s.renderLogin(ctx, fasthttp.StatusOK, v)
		return
	}
	s.startSession(ctx, v, func(hash [32]byte) error { return s.eng.StartSession(l.WorkspaceID, l.UserID, l.Hash, hash) })
}

// checkLogin checks pw against the users email names (in workspace only,
// when set), in turn, and returns the first it opens. An unknown address
// spends a hash all the same.
func (s *Server) checkLogin(email, workspace, pw string) (engine.Login, bool, error) {
	var err error
	tried := false
	for _, l := range s.eng.Logins(email) {
		if workspace != "" && l.WorkspaceID != workspace {
			continue
		}
		tried = true
		var ok bool
		if ok, err = s.hasher.Check(context.Background(), l.Hash, pw); ok || errors.Is(err, password.ErrBusy) {
			return l, ok, err
		}
	}
	if !tried {
		err = s.hasher.CheckDummy(context.Background(), pw)
	}
	return engine.Login{}, false, err
}

// startSession starts a session with start (which records it by the
// SHA-256 of its secret) and gives the browser its cookie; a session the
// browser held already is kept for the workspace switcher.
func (s *Server) startSession(ctx *fasthttp.RequestCtx, v loginView, start func(hash [32]byte) error) {
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		s.errorPage(ctx, fasthttp.StatusInternalServerError, "Something went wrong", "No session could be started; try again.")
		return
	}
	value := s.sessionPrefix + base64.RawURLEncoding.EncodeToString(secret)
	if err := start(sha256.Sum256([]byte(value))); err != nil {
		if errors.Is(err, errHandled) {
			return
		}
		v.Error, v.Pending = "Wrong e-mail address or password.", ""
		s.renderLogin(ctx, fasthttp.StatusUnauthorized, v)
		return
	}
	s.setOthers(ctx, append([]string{string(ctx.Request.Header.Cookie(s.cookieName()))}, s.others(ctx)...), value)
	s.setSessionCookie(ctx, value, sessionMaxAge)
	s.setDeviceCookie(ctx, v.Email)
	ctx.Redirect(localPath(v.Next), fasthttp.StatusSeeOther)
}

func (s *Server) setSessionCookie(ctx *fasthttp.RequestCtx, value string, maxAge int) {
	c := fasthttp.AcquireCookie()
	defer fasthttp.ReleaseCookie(c)
	c.SetKey(s.cookieName())
	c.SetValue(value)
	c.SetPath("/")
	c.SetHTTPOnly(true)
	c.SetSecure(!s.insecure)
	c.SetSameSite(fasthttp.CookieSameSiteLaxMode)
	if maxAge > 0 {
		c.SetMaxAge(maxAge)
	} else {
		c.SetExpire(fasthttp.CookieExpireDelete)
	}
	ctx.Response.Header.SetCookie(c)
}

// logout ends the request's session, if any, and the other workspaces'
// sessions the browser holds.
func (s *Server) logout(ctx *fasthttp.RequestCtx) {
	for _, v := range append([]string{string(ctx.Request.Header.Cookie(s.cookieName()))}, s.others(ctx)...) {
		if v == "" {
			continue
		}
		if err := s.eng.EndSession(sha256.Sum256([]byte(v))); err != nil {
			s.errorPage(ctx, fasthttp.StatusServiceUnavailable, "Something went wrong", "The session could not be ended; try again.")
			return
		}
	}
	s.setOthers(ctx, nil, "")
	s.setSessionCookie(ctx, "", 0)
	ctx.Redirect("/login", fasthttp.StatusSeeOther)
}

// theme moves the colour theme on: system → dark → light → system.
func (s *Server) theme(ctx *fasthttp.RequestCtx) {
	next := map[string]string{"": "dark", "dark": "light", "light": ""}[theme(ctx)]
	c := fasthttp.AcquireCookie()
	defer fasthttp.ReleaseCookie(c)
	c.SetKey("theme")
	c.SetValue(next)
	c.SetPath("/")
	c.SetSameSite(fasthttp.CookieSameSiteLaxMode)
	if next == "" {
		c.SetExpire(fasthttp.CookieExpireDelete)
	} else {
		c.SetMaxAge(365 * 24 * 60 * 60)
	}
	ctx.Response.Header.SetCookie(c)
	ctx.Redirect(localPath(string(ctx.PostArgs().Peek("back"))), fasthttp.StatusSeeOther)
}

// theme returns the theme cookie's value: "dark", "light" or "" (the
// system's).
func theme(ctx *fasthttp.RequestCtx) string {
	switch v := string(ctx.Request.Header.Cookie("theme")); v {
	case "dark", "light":
		return v
	}
	return ""
}

// localPath returns p when it is a path on this site, else "/": a login
// never sends anyone elsewhere.
func localPath(p string) string {
	if !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") || strings.HasPrefix(p, "/\\") || strings.ContainsAny(p, "\r\n") {
		return "/"
	}
	return p
}

func remoteAddr(ctx *fasthttp.RequestCtx) string {
	addr := ctx.RemoteAddr().String()
	if host, _, err := net.SplitHostPort(addr); err == nil {
		return host
	}
	return addr
}

// actor names a user in the activity log.
func actor(u *engine.SessionUser) string { return "user:" + u.Email }
