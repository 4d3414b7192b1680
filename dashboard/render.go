package dashboard

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"html/template"
	"net/url"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"backupmon/engine"
	"backupmon/state"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed assets/app.css assets/app.js assets/htmx.min.js
var assetFS embed.FS

// pages holds one template set per page: the layout, the partials and the
// page's own "content".
type pages struct {
	sets map[string]*template.Template
}

var pageNames = []string{"login", "error", "queue", "clients", "client", "jobs", "job", "alerts", "keys", "channels", "users", "activity", "setup_jobform", "invite", "invites", "password", "totp", "rules", "psaclients"}

func loadPages() *pages {
	base := template.Must(template.New("").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/partials.html", "templates/setup_parts.html"))
	p := &pages{sets: map[string]*template.Template{}}
	for _, name := range pageNames {
		t := template.Must(base.Clone())
		p.sets[name] = template.Must(t.ParseFS(templateFS, "templates/"+name+".html"))
	}
	return p
}

// view is what every page template gets.
type view struct {
	Title, Nav string
	User       *engine.SessionUser
	Theme      string
	Flash      string
	FlashError bool
	Path       string // the page's path and query, for forms that come back to it
	CanTriage  bool
	CanManage  bool
	Now        int64
	Data       any
	loc        *time.Location
	// Switch lists the workspaces the user's e-mail address belongs to,
	// for the header's switcher (when more than one).
	Switch []engine.Membership
}

func (s *Server) newView(ctx *fasthttp.RequestCtx, u *engine.SessionUser, title, nav string, data any) *view {
	v := &view{Title: title, Nav: nav, User: u, Theme: theme(ctx), Path: string(ctx.URI().RequestURI()),
		CanTriage: allowed(u.Role, canTriage), CanManage: allowed(u.Role, canManage),
		Now: s.eng.Now().UnixMilli(), Data: data, loc: u.Workspace.Loc}
	v.Flash, v.FlashError = takeFlash(ctx)
	if list := s.memberships(u.Email); len(list) > 1 {
		v.Switch = list
	}
	return v
}

// Stamp is a time as pages show it: in the workspace's zone, with UTC on
// hover.
type Stamp struct {
	Zero            bool
	ISO, UTC, Local string
}

// T returns the stamp of a Unix millisecond time (0: none).
func (v *view) T(ms int64) Stamp {
	if ms == 0 {
		return Stamp{Zero: true}
	}
	t := time.UnixMilli(ms).UTC()
	loc := v.loc
	if loc == nil {
		loc = time.UTC
	}
	return Stamp{ISO: t.Format("2006-01-02T15:04:05Z"), UTC: t.Format("2006-01-02 15:04 UTC"), Local: t.In(loc).Format("Mon 2 Jan 15:04")}
}

// Ago says how long before now ms was, shortly ("5 min ago").
func (v *view) Ago(ms int64) string {
	if ms == 0 {
		return ""
	}
	d := time.Duration(v.Now-ms) * time.Millisecond
	switch {
	case d < 0:
		return "in " + short(-d)
	case d < time.Minute:
		return "just now"
	}
	return short(d) + " ago"
}

// In says how long after now ms is ("in 3 h").
func (v *view) In(ms int64) string {
	if ms == 0 {
		return ""
	}
	d := time.Duration(ms-v.Now) * time.Millisecond
	if d < 0 {
		return short(-d) + " ago"
	}
	return "in " + short(d)
}

// short says d as a span of whole minutes ("2 d 8 h").
func short(d time.Duration) string { return state.SpanText(int64(d / time.Minute)) }

// Date returns ms as a date in the workspace's zone (YYYY-MM-DD).
func (v *view) Date(ms int64) string {
	if ms == 0 {
		return ""
	}
	return time.UnixMilli(ms).In(v.loc).Format("2006-01-02")
}

// Today returns the workspace's date today.
func (v *view) Today() string { return v.Date(v.Now) }

var funcs = template.FuncMap{
	"size": engine.SizeText,
	"duration": func(sec int64) string {
		if sec < 0 {
			return "—"
		}
		d := time.Duration(sec) * time.Second
		if d < time.Hour {
			return fmt.Sprintf("%d min %02d s", int(d/time.Minute), int(d%time.Minute/time.Second))
		}
		return fmt.Sprintf("%d h %02d min", int(d/time.Hour), int(d%time.Hour/time.Minute))
	},
	"rate": func(r engine.Rate) string {
		if !r.Valid {
			return "—"
		}
		return fmt.Sprintf("%.1f%%", r.Float())
	},
	"join":     strings.Join,
	"vendor":   vendorName,
	"minutes":  minutesText,
	"span":     state.SpanText,
	"initials": initials,
	"missed":   state.Overdue.MissedText,
	"query": func(pairs ...string) template.URL {
		q := url.Values{}
		for i := 0; i+1 < len(pairs); i += 2 {
			if pairs[i+1] != "" {
				q.Set(pairs[i], pairs[i+1])
			}
		}
		if len(q) == 0 {
			return "?"
		}
		return template.URL("?" + q.Encode())
	},
	"add":  func(a, b int) int { return a + b },
	"list": func(v ...string) []string { return v },
	"psa":  isPSA,
	"rows": func(v *view, jobs []engine.BoardJob) any {
		return struct {
			V    *view
			Jobs []engine.BoardJob
		}{v, jobs}
	},
	"alertrows": func(v *view, alerts []engine.BoardAlert) any {
		return struct {
			V      *view
			Alerts []engine.BoardAlert
		}{v, alerts}
	},
	"asset":  assetPath,
	"scopes": scopeLabels,
}

// vendorName returns a vendor's display name, or its code when unknown.
func vendorName(v string) string {
	if n := engine.VendorName(v); n != "" {
		return n
	}
	return v
}

// minutesText says a number of minutes shortly: "2 d", "3 h", "45 min".
func minutesText(m int64) string {
	switch {
	case m%1440 == 0:
		return fmt.Sprintf("%d d", m/1440)
	case m%60 == 0:
		return fmt.Sprintf("%d h", m/60)
	}
	return fmt.Sprintf("%d min", m)
}

// scopeLabels names a REST key's readable areas as the key form does.
func scopeLabels(scopes []string) string {
	var out []string
	for _, s := range scopes {
		if s == "workspace:read" {
			continue
		}
		out = append(out, areaNames[s])
	}
	return strings.Join(out, ", ")
}

// render writes a page with status.
func (s *Server) render(ctx *fasthttp.RequestCtx, status int, page string, v *view) {
	t := s.pages.sets[page]
	buf := bufPool.Get().(*bytes.Buffer)
	buf.Reset()
	defer bufPool.Put(buf)
	if err := t.ExecuteTemplate(buf, "layout", v); err != nil {
		s.log.Error("render page", "page", page, "err", err)
		ctx.SetStatusCode(fasthttp.StatusInternalServerError)
		ctx.SetContentType("text/plain; charset=utf-8")
		ctx.SetBodyString("The page could not be shown.")
		return
	}
	ctx.SetStatusCode(status)
	ctx.SetContentType("text/html; charset=utf-8")
	ctx.SetBody(buf.Bytes())
}

var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

type errorView struct{ Heading, Text string }

// errorPage answers status with a short page; for a signed-in user, with
// the header and its navigation, as every other page.
func (s *Server) errorPage(ctx *fasthttp.RequestCtx, status int, heading, text string) {
	v := &view{Title: heading, Theme: theme(ctx), Data: errorView{heading, text}}
	if u, ok := s.session(ctx); ok {
		v = s.newView(ctx, &u, heading, "", errorView{heading, text})
	}
	s.render(ctx, status, "error", v)
}

// redirectAfter redirects to page after an action, the flash message
// saying its outcome: "<failed>: <the engine's error>." as an error when
// err is set, done otherwise.
func redirectAfter(ctx *fasthttp.RequestCtx, page string, err error, failed, done string) {
	if err != nil {
		redirect(ctx, page, failed+": "+engine.ErrorText(err)+".", true)
		return
	}
	redirect(ctx, page, done, false)
}

// redirect answers 303 to a local path, leaving a message for the next page
// (an error when bad).
func redirect(ctx *fasthttp.RequestCtx, to, msg string, bad bool) {
	if msg != "" {
		if bad {
			msg = "!" + msg
		}
		c := fasthttp.AcquireCookie()
		c.SetKey("flash")
		c.SetValue(url.QueryEscape(msg))
		c.SetPath("/")
		c.SetHTTPOnly(true)
		c.SetSameSite(fasthttp.CookieSameSiteLaxMode)
		c.SetMaxAge(60)
		ctx.Response.Header.SetCookie(c)
		fasthttp.ReleaseCookie(c)
	}
	// Not ctx.Redirect: it normalises the path, decoding %2F and dot
	// segments, so that "/jobs/..%2F..%2Fsettings%2Fkeys" (an id as sent)
	// would send the browser to /settings/keys.
	scheme := "http://"
	if ctx.IsTLS() {
		scheme = "https://"
	}
	ctx.Response.Header.Set("Location", scheme+string(ctx.Host())+localPath(to))
	ctx.SetStatusCode(fasthttp.StatusSeeOther)
}

// takeFlash returns the message a redirect left, and clears it.
func takeFlash(ctx *fasthttp.RequestCtx) (string, bool) {
	raw := ctx.Request.Header.Cookie("flash")
	if len(raw) == 0 {
		return "", false
	}
	// Not DelClientCookie: its cookie has no path, so the browser would
	// keep the one redirect set (path /) and show the message again.
	c := fasthttp.AcquireCookie()
	c.SetKey("flash")
	c.SetPath("/")
	c.SetHTTPOnly(true)
	c.SetSameSite(fasthttp.CookieSameSiteLaxMode)
	c.SetExpire(fasthttp.CookieExpireDelete)
	ctx.Response.Header.SetCookie(c)
	fasthttp.ReleaseCookie(c)
	msg, err := url.QueryUnescape(string(raw))
	if err != nil {
		return "", false
	}
	if strings.HasPrefix(msg, "!") {
		return msg[1:], true
	}
	return msg, false
}

// assets: name → body, content type and fingerprint.
type asset struct {
	body  []byte
	ctype string
	tag   string
}

var assets = func() map[string]asset {
	m := map[string]asset{}
	for name, ctype := range map[string]string{"app.css": "text/css; charset=utf-8", "app.js": "text/javascript; charset=utf-8", "htmx.min.js": "text/javascript; charset=utf-8"} {
		b, err := assetFS.ReadFile("assets/" + name)
		if err != nil {
			panic(err)
		}
		m[name] = asset{body: b, ctype: ctype, tag: fingerprint(b)}
	}
	return m
}()

// fingerprint returns the first 12 hex digits of b's SHA-256: an asset's
// version in its address.
func fingerprint(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:6])
}

// assetPath returns an asset's address with its fingerprint, so it can be
// cached for ever.
func assetPath(name string) string { return "/assets/" + name + "?v=" + assets[name].tag }

func serveAsset(ctx *fasthttp.RequestCtx) {
	name, _ := ctx.UserValue("name").(string)
	a, ok := assets[path.Base(name)]
	if !ok || path.Base(name) != name {
		ctx.SetStatusCode(fasthttp.StatusNotFound)
		ctx.SetContentType("text/plain; charset=utf-8")
		ctx.SetBodyString("not found")
		return
	}
	ctx.SetStatusCode(fasthttp.StatusOK)
	ctx.SetContentType(a.ctype)
	ctx.Response.Header.Set("Cache-Control", "public, max-age=31536000, immutable")
	ctx.Response.SetBodyRaw(a.body)
}
