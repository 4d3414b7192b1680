package dashboard

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"net"
	"strings"

	"github.com/valyala/fasthttp"
)

// Device cookies (OWASP, "Slow Down Online Guessing Attacks with Device
// Cookies"): a browser that signed in as a user gets a cookie naming that
// user, signed by the server. A login for that user from that browser is
// throttled by its own bucket instead of the user's shared one, so that
// guesses from elsewhere, which empty the user's bucket, cannot lock the
// user out of a browser that signed in before (decisions.md "Login
// throttling").
const (
	deviceNonceLen = 16
	deviceMaxAge   = 365 * 24 * 60 * 60
)

// deviceCookieName is the device cookie's name: __Host- requires Secure.
func (s *Server) deviceCookieName() string { return deviceCookieName(s.insecure) }

func deviceCookieName(insecure bool) string {
	if insecure {
		return "device"
	}
	return "__Host-device"
}

// deviceMAC signs a nonce for one login (the e-mail address without case).
func (s *Server) deviceMAC(email string, nonce []byte) []byte {
	return deviceMAC(s.deviceKey, email, nonce)
}

func deviceMAC(key []byte, email string, nonce []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(strings.ToLower(email)))
	m.Write([]byte{0})
	m.Write(nonce)
	return m.Sum(nil)
}

// device returns the nonce of the request's device cookie when the cookie
// was issued for email, else "".
func (s *Server) device(ctx *fasthttp.RequestCtx, email string) string {
	return deviceOf(ctx, s.deviceKey, s.insecure, email)
}

// deviceOf returns the nonce of the request's device cookie when key
// signed it for email, else "".
func deviceOf(ctx *fasthttp.RequestCtx, key []byte, insecure bool, email string) string {
	v := string(ctx.Request.Header.Cookie(deviceCookieName(insecure)))
	nonceText, macText, ok := strings.Cut(v, ".")
	if !ok {
		return ""
	}
	nonce, err1 := base64.RawURLEncoding.Strict().DecodeString(nonceText)
	mac, err2 := base64.RawURLEncoding.Strict().DecodeString(macText)
	if err1 != nil || err2 != nil || len(nonce) != deviceNonceLen || !hmac.Equal(mac, deviceMAC(key, email, nonce)) {
		return ""
	}
	return nonceText
}

// setDeviceCookie gives the browser a new device cookie for email, after a
// successful login.
func (s *Server) setDeviceCookie(ctx *fasthttp.RequestCtx, email string) {
	nonce := make([]byte, deviceNonceLen)
	if _, err := rand.Read(nonce); err != nil {
		return // the login stands; the browser stays untrusted
	}
	c := fasthttp.AcquireCookie()
	defer fasthttp.ReleaseCookie(c)
	c.SetKey(s.deviceCookieName())
	c.SetValue(base64.RawURLEncoding.EncodeToString(nonce) + "." + base64.RawURLEncoding.EncodeToString(s.deviceMAC(email, nonce)))
	c.SetPath("/")
	c.SetHTTPOnly(true)
	c.SetSecure(!s.insecure)
	c.SetSameSite(fasthttp.CookieSameSiteLaxMode)
	c.SetMaxAge(deviceMaxAge)
	ctx.Response.Header.SetCookie(c)
}

// addrKey is the throttle's name for a client address: the address itself
// for IPv4, its /64 for IPv6, since one host or one customer's line holds a
// whole /64 and could otherwise take a fresh bucket per guess.
func addrKey(host string) string {
	ip := net.ParseIP(host)
	if ip == nil {
		return host
	}
	if v4 := ip.To4(); v4 != nil {
		return v4.String()
	}
	return ip.Mask(net.CIDRMask(64, 128)).String() + "/64"
}
