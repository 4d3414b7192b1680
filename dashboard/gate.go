package dashboard

import (
	"strings"
	"time"

	"github.com/valyala/fasthttp"
)

// gateHeader marks a login whose client address has spent its attempts at
// a cluster's front (LoginGate): the shard's dashboard answers it as over
// its own limits. A client that sends it refuses only itself.
const gateHeader = "Backupmon-Login-Refused"

// LoginGate throttles dashboard logins by client address on the node of a
// cluster they arrive at, before they go to the shard that checks them.
// Each shard's dashboard keeps its own buckets (auth.go); the address's
// alone would let a client spread its guesses over the shards' users, with
// a full bucket on each shard (with 256 shards, 256 times the attempts).
// The user's and the device's buckets stay with the shard, where the user
// is. A client that spreads its guesses over the nodes gets a bucket on
// each.
type LoginGate struct {
	throttle *throttle
	key      []byte
	insecure bool
	now      func() time.Time
}

// NewLoginGate returns a gate that reads device cookies with deviceKey and
// insecure, as the shards' Config has them, at the times now gives.
func NewLoginGate(deviceKey []byte, insecure bool, now func() time.Time) *LoginGate {
	return &LoginGate{throttle: newThrottle(), key: deviceKey, insecure: insecure, now: now}
}

// Admit takes one attempt from the bucket of the login's client address,
// as a single node's dashboard does (10, then one every 6 seconds), unless
// the browser holds a device cookie for the e-mail address the login names:
// that device's own bucket, at the shard, counts it. With the address's
// bucket empty, it marks the request, and the shard's dashboard answers
// 429 with Retry-After: 60 and checks nothing. It changes nothing else.
func (g *LoginGate) Admit(ctx *fasthttp.RequestCtx) {
	email := strings.TrimSpace(string(ctx.PostArgs().Peek("email")))
	if deviceOf(ctx, g.key, g.insecure, email) != "" {
		return
	}
	if !g.throttle.allowAddr(addrKey(remoteAddr(ctx)), g.now()) {
		ctx.Request.Header.Set(gateHeader, "1")
	}
}
