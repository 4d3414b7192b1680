// Package dashboard serves the web dashboard: server-rendered pages, their
// forms and embedded assets, for the people of a workspace; every change
// goes through the engine's commands.
package dashboard

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"

	"backupmon/engine"
	"backupmon/password"
)

// Config wires a Server.
type Config struct {
	Engine *engine.Engine
	Hasher *password.Hasher // bounded argon2id hashing; default one slot
	Logger *slog.Logger     // default slog.Default()
	// Secure is false only in tests that cannot send a Secure cookie back
	// (Go's cookie jar over plain HTTP); browsers accept Secure cookies
	// from loopback (decisions.md 11).
	Insecure bool
	// DeviceKey signs the device cookies of browsers that signed in
	// (device.go); default: random, so they end with the process.
	DeviceKey []byte
	// SessionPrefix goes before every session cookie's value: a cluster's
	// shard, so that any node finds the session's owner.
	SessionPrefix string
	// Mailer, when set, sends an invitation's link by e-mail (the
	// notifier's relay, --smtp-relay); without it the link is only shown.
	Mailer func(ctx context.Context, to, subject, body string) error
	// PublicURL is the dashboard's address as users reach it
	// (--public-url), for the links of invitations; "": the address each
	// request came to.
	PublicURL string
	// Rules is the mail path of the parsing rules page (rules.go).
	Rules RulesMail
	// TestChannel sends a channel's test now and says whether the remote
	// took it and what it answered; nil: tests are not offered.
	TestChannel func(n engine.Notice) (ok bool, answer string)
	// Elsewhere, on a cluster, answers for the workspaces the other shards
	// hold (switch.go); nil on a single node, whose engine holds them all.
	Elsewhere Elsewhere
}

// Elsewhere answers for the workspaces of a cluster's other shards, for
// the header's workspace switcher.
type Elsewhere interface {
	// Memberships returns the workspaces of every shard whose users
	// include email, by name.
	Memberships(email string) []engine.Membership
	// SessionWorkspace returns the workspace of the session whose cookie
	// value is value; ok is false when no shard holds it live.
	SessionWorkspace(value string) (m engine.Membership, ok bool)
}

// Server is the dashboard's HTTP handler.
type Server struct {
	eng      *engine.Engine
	hasher   *password.Hasher
	log      *slog.Logger
	insecure bool
	throttle *throttle
	// deviceKey signs device cookies.
	deviceKey     []byte
	sessionPrefix string
	mailer        func(ctx context.Context, to, subject, body string) error
	publicURL     string
	test          func(n engine.Notice) (ok bool, answer string) // Config.TestChannel
	elsewhere     Elsewhere
	cop           *http.CrossOriginProtection
	pages         *pages
	handler       fasthttp.RequestHandler
	rulesMail     RulesMail
}

// New builds a Server.
func New(cfg Config) *Server {
	s := &Server{eng: cfg.Engine, hasher: cfg.Hasher, log: cfg.Logger, insecure: cfg.Insecure,
		throttle: newThrottle(), cop: http.NewCrossOriginProtection(), pages: loadPages()}
	if s.hasher == nil {
		s.hasher = password.NewHasher(password.Default, 1, 16)
	}
	s.deviceKey = cfg.DeviceKey
	s.sessionPrefix = cfg.SessionPrefix
	s.mailer, s.publicURL = cfg.Mailer, strings.TrimRight(cfg.PublicURL, "/")
	s.rulesMail = cfg.Rules
	s.test = cfg.TestChannel
	s.elsewhere = cfg.Elsewhere
	if len(s.deviceKey) == 0 {
		s.deviceKey = make([]byte, 32)
		if _, err := rand.Read(s.deviceKey); err != nil {
			panic("dashboard: no randomness for the device cookie key: " + err.Error())
		}
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	s.handler = s.routes()
	return s
}

// Handler returns the handler of every dashboard path.
func (s *Server) Handler() fasthttp.RequestHandler { return s.handler }

// Permissions of the roles (decisions.md 11).
const (
	canTriage = iota + 1 // acknowledge, snooze, resolve, pause, resume
	canManage            // keys, channels, escalations, users
	canOwn               // the workspace's sign-in rules, PSA credentials and company maps
)

func allowed(role string, need int) bool {
	switch need {
	case canTriage:
		return role == engine.RoleOwner || role == engine.RoleAdmin || role == engine.RoleMember
	case canManage:
		return role == engine.RoleOwner || role == engine.RoleAdmin
	case canOwn:
		return role == engine.RoleOwner
	}
	return true
}

// handlerFunc is a page or action for a logged-in user.
type handlerFunc func(ctx *fasthttp.RequestCtx, u *engine.SessionUser)

func (s *Server) routes() fasthttp.RequestHandler {
	r := router.New()
	r.RedirectTrailingSlash = false
	r.RedirectFixedPath = false
	r.HandleOPTIONS = false
	r.HandleMethodNotAllowed = true

	r.GET("/assets/{name}", serveAsset)
	r.GET("/login", s.loginPage)
	r.POST("/login", s.login)
	r.POST("/logout", s.logout)
	r.POST("/theme", s.theme)

	r.GET("/", s.user(0, s.queuePage))
	r.POST("/alerts/bulk", s.user(canTriage, s.alertsBulk))
	r.GET("/clients", s.user(0, s.clientsPage))
	r.GET("/clients/{cid}", s.user(0, s.clientPage))
	r.GET("/jobs", s.user(0, s.jobsPage))
	r.GET("/jobs/{jid}", s.user(0, s.jobPage))
	r.POST("/jobs/{jid}/pause", s.user(canTriage, s.pauseJob))
	r.POST("/jobs/{jid}/resume", s.user(canTriage, s.resumeJob))
	r.GET("/alerts", s.user(0, s.alertsPage))
	r.GET("/settings/keys", s.user(0, s.keysPage))
	r.POST("/settings/keys", s.user(canManage, s.createKey))
	r.POST("/settings/keys/{kid}/revoke", s.user(canManage, s.revokeKey))
	r.GET("/settings/channels", s.user(0, s.channelsPage))
	r.POST("/settings/channels", s.user(canManage, s.createChannel))
	r.POST("/settings/channels/{chid}/delete", s.user(canManage, s.deleteChannel))
	r.POST("/settings/channels/{chid}/test", s.user(canManage, s.testChannel))
	r.GET("/settings/companies", s.user(0, s.psaClientsPage))
	r.POST("/settings/channels/{chid}/clients/{cid}", s.user(canOwn, s.mapClient))
	r.POST("/settings/escalations", s.user(canManage, s.createEscalation))
	r.POST("/settings/escalations/{eid}/delete", s.user(canManage, s.deleteEscalation))
	r.GET("/settings/users", s.user(0, s.usersPage))
	r.POST("/settings/users", s.user(canManage, s.createUser))
	r.POST("/settings/users/{uid}", s.user(canManage, s.updateUser))
	r.POST("/settings/users/{uid}/delete", s.user(canManage, s.deleteUser))
	r.GET("/settings/activity", s.user(0, s.activityPage))
	s.setupRoutes(r) // setup.go
	s.peopleRoutes(r)
	s.ruleRoutes(r)

	r.NotFound = func(ctx *fasthttp.RequestCtx) {
		s.errorPage(ctx, fasthttp.StatusNotFound, "Not found", "There is no page at this address.")
	}
	r.MethodNotAllowed = func(ctx *fasthttp.RequestCtx) {
		s.errorPage(ctx, fasthttp.StatusMethodNotAllowed, "Method not allowed", "This address does not take that kind of request.")
	}
	r.PanicHandler = func(ctx *fasthttp.RequestCtx, p any) {
		s.log.Error("panic in dashboard handler", "path", string(ctx.Path()), "panic", fmt.Sprint(p))
		ctx.Response.Reset()
		s.errorPage(ctx, fasthttp.StatusInternalServerError, "Something went wrong", "The page could not be shown; try again.")
	}
	h := r.Handler
	return func(ctx *fasthttp.RequestCtx) {
		securityHeaders(ctx)
		// Every request passes the cross-origin rule first (it lets GET,
		// HEAD and OPTIONS through), so no POST of any route can miss it.
		if !s.sameOrigin(ctx) {
			s.errorPage(ctx, fasthttp.StatusForbidden, "Forbidden", "Cross-origin requests are not accepted.")
			return
		}
		h(ctx)
	}
}

// securityHeaders sets the headers every dashboard answer carries: a strict
// Content-Security-Policy (no inline script or style, nothing from
// elsewhere), no framing, no sniffing, no caching of pages.
func securityHeaders(ctx *fasthttp.RequestCtx) {
	h := &ctx.Response.Header
	h.Set("Content-Security-Policy", "default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'; object-src 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
}

// sameOrigin applies net/http.CrossOriginProtection to the request: the
// same rule as Go's own servers, run on the headers it reads.
func (s *Server) sameOrigin(ctx *fasthttp.RequestCtx) bool {
	req := &http.Request{Method: string(ctx.Method()), Header: http.Header{}, Host: string(ctx.Host())}
	if v := ctx.Request.Header.Peek("Sec-Fetch-Site"); v != nil {
		req.Header.Set("Sec-Fetch-Site", string(v))
	}
	if v := ctx.Request.Header.Peek("Origin"); v != nil {
		req.Header.Set("Origin", string(v))
	}
	return s.cop.Check(req) == nil
}

// user wraps a page or action for a logged-in user: without a live session
// a GET goes to the login page and anything else answers 401; the role must
// allow need, else 403.
func (s *Server) user(need int, h handlerFunc) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		u, ok := s.session(ctx)
		if !ok {
			if ctx.IsPost() {
				s.errorPage(ctx, fasthttp.StatusUnauthorized, "Logged out", "Your session has ended; log in again.")
				return
			}
			next := string(ctx.URI().RequestURI())
			ctx.Redirect("/login?next="+url.QueryEscape(next), fasthttp.StatusSeeOther)
			return
		}
		if u.MustSetUpTwoFactor && !s.twoFactorSetUp(ctx) {
			return
		}
		if !allowed(u.Role, need) {
			s.errorPage(ctx, fasthttp.StatusForbidden, "Forbidden", "Your role does not allow this.")
			return
		}
		h(ctx, &u)
	}
}

// session returns the user of the request's session cookie.
func (s *Server) session(ctx *fasthttp.RequestCtx) (engine.SessionUser, bool) {
	v := ctx.Request.Header.Cookie(s.cookieName())
	if len(v) == 0 {
		return engine.SessionUser{}, false
	}
	return s.eng.Session(sha256.Sum256(v))
}

// cookieName is the session cookie's name: __Host- requires Secure.
func (s *Server) cookieName() string {
	if s.insecure {
		return "session"
	}
	return "__Host-session"
}
