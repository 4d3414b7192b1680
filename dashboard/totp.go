package dashboard

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/base64"
	"errors"
	"fmt"
	"html/template"
	"strings"

	"github.com/boombuler/barcode/qr"
	"github.com/pquerna/otp/totp"
	"github.com/valyala/fasthttp"

	"backupmon/engine"
	"backupmon/state"
)

// Two-factor sign-in (TOTP, RFC 6238): a user turns it on by scanning the
// secret shown (a QR code drawn inline, or typed) into an authenticator
// and confirming with a code; ten recovery codes are shown once, and the
// engine keeps only their SHA-256. An owner can require it of the
// workspace: a user without it is then taken to this page after the
// password, and can do nothing else until it is on.

type twoFactorData struct {
	On, Required bool
	RecoveryLeft int
	RecoveryAll  int // how many codes a user is given (state.RecoveryCodes)
	// The set-up of a user without two-factor sign-in: the secret, the
	// signed copy the form sends back, its otpauth URL and QR code.
	Secret, SecretToken, URL string
	QR                       template.HTML
	// Recovery holds the new recovery codes, shown once; Renewed says they
	// replace earlier ones.
	Recovery []string
	Renewed  bool
	Error    string
}

func (s *Server) twoFactorPage(ctx *fasthttp.RequestCtx, u *engine.SessionUser) {
	s.renderTwoFactor(ctx, u, fasthttp.StatusOK, twoFactorData{}, "")
}

// renderTwoFactor shows the page; a user without two-factor sign-in gets a
// set-up with secret (a fresh one when "").
func (s *Server) renderTwoFactor(ctx *fasthttp.RequestCtx, u *engine.SessionUser, status int, d twoFactorData, secret string) {
	d.On, d.Required, d.RecoveryLeft, d.RecoveryAll = u.TwoFactor, u.TwoFactorRequired, u.RecoveryLeft, state.RecoveryCodes
	if !u.TwoFactor && d.Recovery == nil {
		if secret == "" {
			key, err := totp.Generate(totp.GenerateOpts{Issuer: "backupmon", AccountName: u.Email})
			if err != nil {
				s.failed(ctx, fmt.Errorf("totp secret: %w", err))
				return
			}
			secret = key.Secret()
		}
		d.Secret, d.SecretToken = secret, s.secretToken(u, secret)
		d.URL = otpauthURL(u, secret)
		d.QR = qrSVG(d.URL)
	}
	s.render(ctx, status, "totp", s.newView(ctx, u, "Two-factor sign-in", "settings", d))
}

// otpauthURL is the key URI authenticators read (Google Authenticator's
// "Key Uri Format"): issuer backupmon, the user's e-mail address and
// workspace as the account, SHA-1, 6 digits, 30 seconds.
func otpauthURL(u *engine.SessionUser, secret string) string {
	key, err := totp.Generate(totp.GenerateOpts{Issuer: "backupmon", AccountName: u.Email + " (" + u.Workspace.Name + ")",
		Secret: mustBase32(secret)})
	if err != nil {
		return ""
	}
	return key.URL()
}

func mustBase32(secret string) []byte {
	b, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(secret)
	if err != nil {
		return nil
	}
	return b
}

// qrSVG draws a QR code of text as inline SVG (the page's policy allows no
// image from anywhere but the site), one path of its dark modules.
func qrSVG(text string) template.HTML {
	code, err := qr.Encode(text, qr.M, qr.Auto)
	if err != nil {
		return ""
	}
	b := code.Bounds()
	w, h := b.Dx(), b.Dy()
	var p strings.Builder
	for y := range h {
		for x := range w {
			if r, _, _, _ := code.At(b.Min.X+x, b.Min.Y+y).RGBA(); r == 0 {
				fmt.Fprintf(&p, "M%d %dh1v1h-1z", x+4, y+4)
			}
		}
	}
	// Every value is a number the code wrote: nothing to escape.
	return template.HTML(fmt.Sprintf(`<svg class="qr" role="img" aria-label="QR code of the secret" viewBox="0 0 %d %d" width="%d" height="%d"><rect width="100%%" height="100%%" fill="#fff"/><path fill="#000" d="%s"/></svg>`,
		w+8, h+8, (w+8)*5, (h+8)*5, p.String()))
}

// secretToken signs a set-up's secret for its user, so that the form
// turns on only a secret this server made for them.
func (s *Server) secretToken(u *engine.SessionUser, secret string) string {
	m := hmac.New(sha256.New, s.deviceKey)
	m.Write([]byte("totp secret\x00" + u.Workspace.ID + "\x00" + u.UserID + "\x00" + secret))
	return secret + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// enableTwoFactor turns on two-factor sign-in with the set-up's secret
// once its code is right, and shows the recovery codes once.
func (s *Server) enableTwoFactor(ctx *fasthttp.RequestCtx, u *engine.SessionUser) {
	args := ctx.PostArgs()
	secret, _, _ := strings.Cut(string(args.Peek("secret")), ".")
	if secret == "" || !hmac.Equal([]byte(s.secretToken(u, secret)), args.Peek("secret")) {
		s.errorPage(ctx, fasthttp.StatusBadRequest, "Bad request", "The set-up form was altered; open two-factor sign-in again.")
		return
	}
	codes, hashes, err := recoveryCodes()
	if err != nil {
		s.failed(ctx, err)
		return
	}
	err = s.eng.EnableTwoFactor(u.Workspace.ID, u.UserID, secret, string(args.Peek("code")), hashes, actor(u))
	var e *engine.Error
	switch {
	case err == nil:
	case errors.Is(err, engine.ErrTwoFactorOn):
		redirect(ctx, "/settings/two-factor", "Two-factor sign-in is already on.", true)
		return
	case errors.As(err, &e) && e.Kind == engine.KindInvalid:
		s.renderTwoFactor(ctx, u, fasthttp.StatusBadRequest, twoFactorData{Error: upperFirst(e.Message) + "."}, secret)
		return
	default:
		s.failed(ctx, err)
		return
	}
	u.TwoFactor, u.MustSetUpTwoFactor, u.RecoveryLeft = true, false, len(codes)
	s.renderTwoFactor(ctx, u, fasthttp.StatusOK, twoFactorData{Recovery: codes}, "")
}

// recoveryCodes makes a user's recovery codes (80 random bits each, shown
// as four groups of four characters) and their hashes.
func recoveryCodes() ([]string, [][32]byte, error) {
	var codes []string
	var hashes [][32]byte
	enc := base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)
	for range state.RecoveryCodes {
		b := make([]byte, 10)
		if _, err := rand.Read(b); err != nil {
			return nil, nil, fmt.Errorf("recovery code: %w", err)
		}
		c := enc.EncodeToString(b)
		c = c[0:4] + "-" + c[4:8] + "-" + c[8:12] + "-" + c[12:16]
		codes = append(codes, c)
		hashes = append(hashes, engine.RecoveryHash(c))
	}
	return codes, hashes, nil
}

// disableTwoFactor turns off the user's own two-factor sign-in with a code
// of it (TOTP or recovery), so that a session alone cannot.
func (s *Server) disableTwoFactor(ctx *fasthttp.RequestCtx, u *engine.SessionUser) {
	if !s.allowCode(ctx, u) {
		return
	}
	err := s.eng.DisableTwoFactor(u.Workspace.ID, u.UserID, false, string(ctx.PostArgs().Peek("code")), actor(u))
	redirectAfter(ctx, "/settings/two-factor", err, "Not turned off", "Two-factor sign-in is off.")
}

// renewRecovery replaces the user's recovery codes with ten new ones,
// shown once, given a code of the second factor (TOTP or recovery).
func (s *Server) renewRecovery(ctx *fasthttp.RequestCtx, u *engine.SessionUser) {
	if !s.allowCode(ctx, u) {
		return
	}
	codes, hashes, err := recoveryCodes()
	if err != nil {
		s.failed(ctx, err)
		return
	}
	if err := s.eng.RenewRecovery(u.Workspace.ID, u.UserID, string(ctx.PostArgs().Peek("code")), hashes, actor(u)); err != nil {
		redirectAfter(ctx, "/settings/two-factor", err, "Not renewed", "")
		return
	}
	u.RecoveryLeft = len(codes)
	s.renderTwoFactor(ctx, u, fasthttp.StatusOK, twoFactorData{Recovery: codes, Renewed: true}, "")
}

// allowCode counts a guess of the user's second factor made from a
// session, in the buckets of the login's second step; past them it
// answers 429 and returns false.
func (s *Server) allowCode(ctx *fasthttp.RequestCtx, u *engine.SessionUser) bool {
	if s.throttle.allow(addrKey(remoteAddr(ctx)), "code:"+strings.ToLower(u.Email), "", s.eng.Now()) {
		return true
	}
	ctx.Response.Header.Set("Retry-After", "60")
	s.errorPage(ctx, fasthttp.StatusTooManyRequests, "Too many attempts", "Too many codes tried. Try again in a minute.")
	return false
}

// resetTwoFactor turns off another user's two-factor sign-in (a lost
// phone and lost recovery codes); only an owner resets an owner's. Where
// the workspace requires it, the user sets it up again after their
// password.
func (s *Server) resetTwoFactor(ctx *fasthttp.RequestCtx, u *engine.SessionUser) {
	uid, target, ok := s.targetUser(ctx, u)
	if !ok {
		return
	}
	const back = "/settings/users"
	switch {
	case target.ID == u.UserID:
		redirect(ctx, back, "Turn your own two-factor sign-in off on its page.", true)
		return
	case u.Role != engine.RoleOwner && target.Role == engine.RoleOwner:
		s.errorPage(ctx, fasthttp.StatusForbidden, "Forbidden", "Only an owner can change an owner or make one.")
		return
	}
	err := s.eng.DisableTwoFactor(u.Workspace.ID, uid, true, "", actor(u))
	redirectAfter(ctx, back, err, "Not reset", "Two-factor sign-in of "+target.Email+" is off; they can turn it on again.")
}

// requireTwoFactor sets whether the workspace requires two-factor sign-in;
// an owner requires it only once they use it themselves.
func (s *Server) requireTwoFactor(ctx *fasthttp.RequestCtx, u *engine.SessionUser) {
	on := string(ctx.PostArgs().Peek("required")) == "on"
	if on && !u.TwoFactor {
		redirect(ctx, "/settings/two-factor", "Turn on two-factor sign-in for yourself first.", true)
		return
	}
	done := "Two-factor sign-in is now optional in this workspace."
	if on {
		done = "Two-factor sign-in is now required in this workspace."
	}
	redirectAfter(ctx, "/settings/two-factor", s.eng.RequireTwoFactor(u.Workspace.ID, on, actor(u)), "Not changed", done)
}

// twoFactorSetUp keeps a user whose workspace requires two-factor sign-in,
// and who has not turned it on, to its set-up: any other page redirects
// there, any other action answers 403. It reports whether the request may
// go on.
func (s *Server) twoFactorSetUp(ctx *fasthttp.RequestCtx) bool {
	switch string(ctx.Path()) {
	case "/settings/two-factor", "/settings/two-factor/enable", "/switch":
		return true
	}
	if ctx.IsPost() {
		s.errorPage(ctx, fasthttp.StatusForbidden, "Two-factor sign-in required", "Your workspace requires two-factor sign-in: turn it on first.")
		return false
	}
	redirect(ctx, "/settings/two-factor", "Your workspace requires two-factor sign-in: turn it on to go on.", true)
	return false
}
