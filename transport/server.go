// Package transport is HTTP in and out: routing, authentication, parameters,
// JSON, headers and errors for the public APIs and the admin API. It hands
// every change to the engine's commands and knows nothing of the log's bytes.
package transport

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync/atomic"
	"time"

	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"

	"backupmon/dashboard"
	"backupmon/docs"
	"backupmon/engine"
	"backupmon/password"
	"backupmon/transport/connlimit"
)

// Config wires a Server.
type Config struct {
	Engine     *engine.Engine // nil until recovery is done: see Attach
	Logger     *slog.Logger   // default slog.Default()
	Metrics    *Metrics       // default NewMetrics()
	AdminToken string         // required: the bearer token of the admin API
	DevClock   bool           // serve POST /admin/v1/clock
	TLS        *tls.Config    // serve HTTPS on the public listener when set
	CursorKey  []byte         // signs and encrypts pagination cursors; default: random (cursors then end with the process)
	// ReadTimeout bounds the reading of one request, header and body, on
	// both listeners; default 15 seconds. A request that takes longer is
	// answered 408.
	ReadTimeout time.Duration
	// Reparse reads an unparsed report e-mail again (POST
	// .../unparsed/{id}/reparse); nil: the endpoint answers 409.
	Reparse func(wsID, id string) (engine.MailReply, error)
	// Rules is the mail path of the parsing-rule endpoints (admin_rules.go).
	Rules RulesMail
	// Hasher hashes the passwords the admin API sets; default: one slot.
	Hasher *password.Hasher
	// Dashboard serves every public path outside /api/ (decisions.md 11);
	// nil: those answer the REST API's 404.
	Dashboard fasthttp.RequestHandler
	// Assistant serves /mcp for assistant keys (decisions.md 12); nil: /mcp
	// is not served.
	Assistant Assistant
	// PublicURL is the scheme and host of the dashboard as users reach it,
	// for the links the assistant server gives; "": the request's own.
	PublicURL string
	// Route, when set, makes the server a cluster node's front: every
	// request of the public listener, and every one of the admin listener
	// but /livez, /readyz and /metrics, goes to Route (public says which
	// listener), which answers it with the handlers of the shard it belongs
	// to, here or on the node that owns that shard. Route returns false when
	// no node owns the shard now: the request is answered 503 UNAVAILABLE,
	// with Retry-After, in its path's shape. No engine is attached to a
	// front.
	Route func(ctx *fasthttp.RequestCtx, public bool) bool
	// Ready, when set, says whether /readyz answers ready (a front's).
	Ready func() bool
	// ClusterStatus, when set, answers GET /admin/v1/cluster on this node
	// (the cluster's nodes and shard owners, as JSON).
	ClusterStatus func() ([]byte, error)
	// Backup, when set, answers GET /admin/v1/backup instead of the
	// engine's Backup (a cluster node's front: every shard's workspaces).
	// It prepares the backup and returns the function that writes the
	// file; an error answers 503 UNAVAILABLE with its message.
	Backup func() (write func(w io.Writer) error, err error)
	// PublicConns and AdminConns bound each listener's connections, in
	// all and per client address (decisions.md, connection limits); a
	// zero field takes its default (DefaultPublicConns, ...). A connection
	// over a limit is answered 503 at once and closed.
	PublicConns, AdminConns connlimit.Limits
}

// Listener limits.
const (
	publicMaxBody  = 1 << 20 // larger bodies are refused before routing
	adminMaxBody   = 1 << 20
	readBufferSize = 16 << 10         // also the largest request header accepted
	readTimeout    = 15 * time.Second // unless Config.ReadTimeout says otherwise
	writeTimeout   = 15 * time.Second
	idleTimeout    = 60 * time.Second
)

// Server serves the public listener (REST and Report API under /api/v1) and
// the admin listener (/admin/v1, /livez, /readyz, /metrics).
type Server struct {
	eng      *engine.Engine // written once, before attached is set
	attached atomic.Bool    // eng is set: the admin API answers
	log      *slog.Logger
	metrics  *Metrics
	token    [sha256.Size]byte // SHA-256 of the admin token; zero when none is set
	hasToken bool
	dev      bool
	tls      *tls.Config
	cursors  cursorCodec
	marks    reportMarks // Report API requests whose body is being read
	reparse  func(wsID, id string) (engine.MailReply, error)
	rules    RulesMail
	hasher   *password.Hasher
	dash     fasthttp.RequestHandler

	assistant   Assistant
	testChannel func(n engine.Notice) (ok bool, answer string)
	publicURL   string
	routeTo     func(ctx *fasthttp.RequestCtx, public bool) bool
	ready       func() bool
	status      func() ([]byte, error)
	backup      func() (func(w io.Writer) error, error)

	publicConns, adminConns connlimit.Limits

	public *fasthttp.Server
	admin  *fasthttp.Server
	silent silence // connections of both that have sent nothing yet
}

// New builds a Server from cfg. Without cfg.Engine, the admin listener
// answers as a server still starting until Attach.
func New(cfg Config) *Server {
	s := &Server{log: cfg.Logger, metrics: cfg.Metrics, token: sha256.Sum256([]byte(cfg.AdminToken)), hasToken: cfg.AdminToken != "", dev: cfg.DevClock, tls: cfg.TLS, reparse: cfg.Reparse, rules: cfg.Rules, hasher: cfg.Hasher, dash: cfg.Dashboard,
		assistant: cfg.Assistant, publicURL: strings.TrimRight(cfg.PublicURL, "/"), routeTo: cfg.Route, ready: cfg.Ready, status: cfg.ClusterStatus, backup: cfg.Backup,
		publicConns: limits(cfg.PublicConns, DefaultPublicConns, DefaultPublicConnsPerAddress),
		adminConns:  limits(cfg.AdminConns, DefaultAdminConns, DefaultAdminConnsPerAddress)}
	if s.hasher == nil {
		s.hasher = password.NewHasher(password.Default, 1, 16)
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.metrics == nil {
		s.metrics = NewMetrics()
	}
	key := cfg.CursorKey
	if len(key) == 0 {
		key = make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			panic("transport: no randomness for the cursor key: " + err.Error())
		}
	}
	s.cursors = newCursorCodec(key)
	timeout := cfg.ReadTimeout
	if timeout <= 0 {
		timeout = readTimeout
	}
	s.public = s.newHTTPServer("public", s.publicRouter(), publicMaxBody, timeout, s.publicParseError)
	s.public.HeaderReceived = s.headerReceived
	s.admin = s.newHTTPServer("admin", s.adminRouter(), adminMaxBody, timeout, s.adminParseError)
	s.admin.HeaderReceived = adminHeaderReceived
	if cfg.Engine != nil {
		s.Attach(cfg.Engine)
	}
	return s
}

// Attach gives the server its engine once recovery is done. Before it, the
// admin listener answers /livez 200, /readyz 503 and every other path 503
// UNAVAILABLE, so that it can be served while the engine recovers; the
// public listener must not be served before it. Call it once.
func (s *Server) Attach(eng *engine.Engine) { s.AttachParts(Parts{Engine: eng}) }

// Parts are what a Server hands requests to once the engine is open.
type Parts struct {
	Engine *engine.Engine
	// Reparse, Dashboard and Assistant replace Config's when not nil.
	Reparse   func(wsID, id string) (engine.MailReply, error)
	Dashboard fasthttp.RequestHandler
	Assistant Assistant
	Rules     RulesMail // the parsing-rule endpoints' mail path (admin_rules.go)
	// TestChannel sends a channel's test notice now and says whether the
	// remote took it and what it answered (POST .../channels/{chid}/test);
	// nil: that endpoint answers 409.
	TestChannel func(n engine.Notice) (ok bool, answer string)
}

// Attached reports whether the engine is attached.
func (s *Server) Attached() bool { return s.attached.Load() }

// AttachParts attaches the engine and the parts built on it; the admin API
// answers from then on. Call it once, before ServePublic.
func (s *Server) AttachParts(p Parts) {
	s.eng = p.Engine
	if p.Reparse != nil {
		s.reparse = p.Reparse
	}
	if p.Dashboard != nil {
		s.dash = p.Dashboard
	}
	if p.Rules.Raw != nil {
		s.rules = p.Rules
	}
	if p.Assistant != nil {
		s.assistant = p.Assistant
	}
	s.testChannel = p.TestChannel
	s.attached.Store(true)
}

func (s *Server) newHTTPServer(name string, h fasthttp.RequestHandler, maxBody int, timeout time.Duration, onParseError func(*fasthttp.RequestCtx, error)) *fasthttp.Server {
	return &fasthttp.Server{
		Handler:               framed(h, onParseError),
		ErrorHandler:          onParseError,
		ReadTimeout:           timeout,
		WriteTimeout:          writeTimeout,
		IdleTimeout:           idleTimeout,
		MaxRequestBodySize:    maxBody,
		ReadBufferSize:        readBufferSize,
		NoDefaultServerHeader: true,
		NoDefaultContentType:  true,
		CloseOnShutdown:       true,
		Logger:                &fasthttpLogger{l: s.log.With("listener", name)},
		SecureErrorLogMessage: true,
	}
}

// ServePublic serves the public APIs on ln until Shutdown, within the
// public listener's connection limits; a temporary accept error (EMFILE,
// ...) is retried, not returned. The engine must be attached first.
func (s *Server) ServePublic(ln net.Listener) error {
	ln = s.limitPublic(ln)
	if s.tls != nil {
		ln = tls.NewListener(ln, s.tls)
	}
	return s.public.Serve(s.silent.listener(ln))
}

// ServeAdmin serves the admin API on ln until Shutdown, within the admin
// listener's connection limits; it may start before the engine is
// attached.
func (s *Server) ServeAdmin(ln net.Listener) error {
	return s.admin.Serve(s.silent.listener(s.limitAdmin(ln)))
}

// Shutdown stops accepting connections and waits for requests in progress;
// connections idle between requests are closed at once, and those that
// have sent nothing once they have been open a second (silentGrace). It
// returns ctx's error when requests are still in progress at its end.
func (s *Server) Shutdown(ctx context.Context) error {
	done := make(chan struct{})
	defer close(done)
	go s.silent.closeSilent(done)
	return errors.Join(s.public.ShutdownWithContext(ctx), s.admin.ShutdownWithContext(ctx))
}

// newRouter returns a router with path fixing and automatic OPTIONS off: the
// contract answers those itself.
func newRouter() *router.Router {
	r := router.New()
	r.RedirectTrailingSlash = false
	r.RedirectFixedPath = false
	r.HandleOPTIONS = false
	r.HandleMethodNotAllowed = true
	return r
}

// route wraps a handler: request id first, then the handler, then the
// request counted under the route's name.
func (s *Server) route(name string, h fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		h(ctx)
		s.metrics.countRequest(name, ctx.Response.StatusCode())
	}
}

// publicRouter returns the public listener's handler.
func (s *Server) publicRouter() fasthttp.RequestHandler { return s.publicHandler(nil) }

// publicHandler builds the public listener's handler; extra, when not nil,
// adds routes first (tests only: a route that panics).
func (s *Server) publicHandler(extra func(r *router.Router)) fasthttp.RequestHandler {
	r := newRouter()
	if extra != nil {
		extra(r)
	}
	r.POST("/api/v1/jobs/{jobId}/report", s.route("report", s.report))
	s.addRESTRoutes(r)
	r.GET("/api/v1/openapi.json", s.route("openapi", serveOpenAPI))
	r.GET(dashboard.APIDocsPath, s.route("docs", dashboard.ServeAPIDocs))
	r.GET(dashboard.APIDocsFiles, s.route("docs", dashboard.ServeAPIDocsFile(noEndpoint)))
	r.NotFound = s.route("not_found", noEndpoint)
	r.MethodNotAllowed = s.route("method_not_allowed", func(ctx *fasthttp.RequestCtx) {
		// The router lists OPTIONS too; the contract answers it with 405.
		if isReportPath(ctx.Request.URI().PathOriginal()) {
			ctx.Response.Header.Set("Allow", "POST")
		} else {
			ctx.Response.Header.Set("Allow", "GET")
		}
		restError(ctx, fasthttp.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED", "Method not allowed", "")
	})
	r.PanicHandler = func(ctx *fasthttp.RequestCtx, p any) {
		s.log.Error("panic in public handler", "path", string(ctx.Path()), "panic", fmt.Sprint(p))
		ctx.Response.Reset()
		setRequestID(ctx)
		if isReportPath(ctx.Request.URI().PathOriginal()) {
			reportError(ctx, fasthttp.StatusInternalServerError, msgNotRecorded)
		} else {
			restError(ctx, fasthttp.StatusInternalServerError, "INTERNAL_ERROR", "Internal server error; retry", "")
		}
		s.metrics.countRequest("panic", fasthttp.StatusInternalServerError)
	}
	h := r.Handler
	mcp := s.route("mcp", s.mcp)
	return func(ctx *fasthttp.RequestCtx) {
		// The request was read: the mark headerReceived may have left is
		// not needed any more.
		s.marks.take(&ctx.Request.Header)
		setRequestID(ctx)
		if s.routeTo != nil {
			if !s.routeTo(ctx, true) {
				noOwner(ctx, false)
			}
			s.metrics.countRequest("routed", ctx.Response.StatusCode())
			return
		}
		if s.assistant != nil && bytes.Equal(ctx.Request.URI().PathOriginal(), []byte("/mcp")) {
			mcp(ctx)
			return
		}
		if s.dash != nil && !isAPIPath(ctx.Request.URI().PathOriginal()) {
			s.dash(ctx)
			s.metrics.countRequest("dashboard", ctx.Response.StatusCode())
			return
		}
		h(ctx)
	}
}

// serveOpenAPI answers GET /api/v1/openapi.json with the OpenAPI document
// (api.md 9). It needs no key: the document describes the API, not a
// workspace.
func serveOpenAPI(ctx *fasthttp.RequestCtx) {
	ctx.SetStatusCode(fasthttp.StatusOK)
	ctx.SetContentType(contentTypeJSON)
	ctx.Response.SetBodyRaw(docs.OpenAPI) // read-only for the life of the process
}

// noEndpoint answers a path the public APIs do not have: 404 NOT_FOUND.
func noEndpoint(ctx *fasthttp.RequestCtx) {
	restError(ctx, fasthttp.StatusNotFound, "NOT_FOUND", "No such endpoint", "")
}

// isAPIPath reports whether a raw path is the APIs' (/api or under /api/),
// which the dashboard never serves.
func isAPIPath(p []byte) bool {
	return bytes.Equal(p, []byte("/api")) || bytes.HasPrefix(p, []byte("/api/"))
}

// isReportPath reports whether a raw path is /api/v1/jobs/<id>/report.
func isReportPath(p []byte) bool {
	const pre, suf = "/api/v1/jobs/", "/report"
	return len(p) > len(pre)+len(suf) && bytes.HasPrefix(p, []byte(pre)) && bytes.HasSuffix(p, []byte(suf)) &&
		bytes.IndexByte(p[len(pre):len(p)-len(suf)], '/') < 0
}

// fasthttpLogger sends fasthttp's own messages to slog, without the request
// bytes some of them quote: an error reading a request that does not parse
// ("missing colon", "cannot find whitespace in the first line of request")
// quotes the header buffer, keys and admin token included, whatever
// SecureErrorLogMessage says. Any client causes one such message per
// request it garbles, so one line per 10 seconds goes through, with the
// number not logged since.
type fasthttpLogger struct {
	l    *slog.Logger
	rate connlimit.RateLog
}

func (f *fasthttpLogger) Printf(format string, args ...any) {
	more, ok := f.rate.Allow()
	if !ok {
		return
	}
	for i, a := range args {
		switch v := a.(type) {
		case error:
			args[i] = withoutQuoted(v.Error())
		case string:
			args[i] = withoutQuoted(v)
		case []byte:
			args[i] = withoutQuoted(string(v))
		}
	}
	f.l.Warn(strings.TrimSpace(fmt.Sprintf(format, args...)), "more_since_last_log", more)
}

// withoutQuoted cuts s at its first quote or backquote (fasthttp quotes
// what it read with %q), keeping the reason before it.
func withoutQuoted(s string) string {
	if i := strings.IndexAny(s, "\"`"); i >= 0 {
		return strings.TrimRight(s[:i], " :,.") + " (request bytes not logged)"
	}
	return s
}

// Handlers returns the handlers of the public and admin listeners, for a
// cluster's node to run a shard's requests without listening (the node's
// front listens).
func (s *Server) Handlers() (public, admin fasthttp.RequestHandler) {
	return s.public.Handler, s.admin.Handler
}

// A cluster's shard whose log failed its checks is read-only: its reads
// answer, its changes are refused with this message and Retry-After (an
// operator must repair the log; clients retry later).
const (
	msgReadOnly   = "This workspace is read-only for now: its log failed an integrity check and awaits repair; nothing was changed, retry later"
	readOnlyRetry = 300
)

// noOwner answers a request whose shard no node owns now: 503 with
// Retry-After, in the path's shape.
func noOwner(ctx *fasthttp.RequestCtx, admin bool) {
	const msg = "No node serves this workspace at the moment (a node is taking it over); retry shortly"
	setRetryAfter(ctx, 5)
	switch {
	case admin:
		adminError(ctx, fasthttp.StatusServiceUnavailable, "UNAVAILABLE", msg)
	case isReportPath(ctx.Request.URI().PathOriginal()):
		reportError(ctx, fasthttp.StatusServiceUnavailable, msg)
	default:
		restError(ctx, fasthttp.StatusServiceUnavailable, "UNAVAILABLE", msg, "")
	}
}
