package cluster

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/valyala/fasthttp"

	"backupmon/engine"
	"backupmon/jsonx"
)

// forwardTimeout bounds a request forwarded to a shard's owner (an owner
// frozen past it answers 503 through the node that forwarded).
const forwardTimeout = 8 * time.Second

// notServing is what an owner answers a forwarded request with when it has
// stopped serving the shard since the front looked: the front answers 503.
var notServing = []byte("not serving")

// Route answers a request at the node's front (transport.Config.Route): it
// finds the request's shard, runs the shard's handlers here when this node
// owns it, or forwards the request to the owner. It returns false when no
// node serves the shard now.
func (n *Node) Route(ctx *fasthttp.RequestCtx, public bool) bool {
	path := string(ctx.Path())
	if !public {
		switch {
		case path == "/admin/v1/workspaces" && ctx.IsGet():
			return n.gatherWorkspaces(ctx)
		case path == "/admin/v1/workspaces" && ctx.IsPost():
			return n.toNewWorkspace(ctx)
		case path == "/admin/v1/clock":
			return n.moveClock(ctx)
		case strings.HasPrefix(path, "/admin/v1/workspaces/"):
			rest := strings.TrimPrefix(path, "/admin/v1/workspaces/")
			wid, _, _ := strings.Cut(rest, "/")
			if id, ok := engine.ParseID(wid); ok {
				return n.to(ctx, public, WorkspaceShard(id, n.shards))
			}
		}
		return n.toAny(ctx, public)
	}
	if strings.HasPrefix(path, "/api/") || path == "/mcp" {
		if token, ok := bearerToken(ctx); ok {
			if s, ok := n.dir.secretShard(token); ok {
				return n.to(ctx, public, s) // a key made before the cluster
			}
			if s, ok := KeyShard(token, n.shards); ok {
				return n.to(ctx, public, s)
			}
		}
		return n.toAny(ctx, public)
	}
	// The dashboard: its session cookie names the shard; a login, the shard
	// of the user its e-mail address names.
	if path == "/login" && ctx.IsPost() {
		return n.toLogin(ctx)
	}
	// An invitation's link names its workspace: /invite/<wid>/<secret>.
	if rest, ok := strings.CutPrefix(path, "/invite/"); ok {
		wid, _, _ := strings.Cut(rest, "/")
		if id, ok := engine.ParseID(wid); ok {
			return n.to(ctx, public, WorkspaceShard(id, n.shards))
		}
	}
	for _, name := range []string{"__Host-session", "session"} {
		if v := ctx.Request.Header.Cookie(name); len(v) > 0 {
			if s, ok := n.cookieShard(string(v)); ok {
				return n.to(ctx, public, s)
			}
		}
	}
	return n.toAny(ctx, public)
}

// cookieShard returns the shard a session cookie's value names: in the
// directory for a session made before the cluster, else by its prefix.
func (n *Node) cookieShard(value string) (int, bool) {
	if s, ok := n.dir.secretShard(value); ok {
		return s, true
	}
	return CookieShard(value, n.shards)
}

// bearerToken returns the token of an Authorization: Bearer header.
func bearerToken(ctx *fasthttp.RequestCtx) (string, bool) {
	h := ctx.Request.Header.Peek("Authorization")
	if len(h) < 7 || !strings.EqualFold(string(h[:7]), "bearer ") {
		return "", false
	}
	return string(h[7:]), true
}

// to answers a request with shard's handlers: here, or at its owner.
func (n *Node) to(ctx *fasthttp.RequestCtx, public bool, shard int) bool {
	if h := n.local(shard); h != nil {
		if public {
			h.stack.Public(ctx)
		} else {
			h.stack.Admin(ctx)
		}
		return true
	}
	if !n.nc.IsConnected() {
		// Cut off from the cluster: no owner can be reached.
		n.cfg.Metrics.forwarded("no_owner", "nats", 0)
		return false
	}
	start := time.Now()
	buf, done := envelope()
	*buf = appendRequest(*buf, ctx, public)
	outcome, via := n.forward(shard, *buf, ctx)
	done()
	n.cfg.Metrics.forwarded(outcome, via, time.Since(start))
	return outcome == "ok"
}

// forward sends the request message req to the owner of shard, node to
// node when it can, else over NATS, and writes the owner's answer into
// ctx. It returns the outcome ("ok", "no_owner" when no node serves the
// shard, "failed") and the way it went ("peer" or "nats").
func (n *Node) forward(shard int, req []byte, ctx *fasthttp.RequestCtx) (outcome, via string) {
	switch ok, err := n.viaPeer(shard, req, ctx); {
	case ok:
		return "ok", "peer"
	case err != nil:
		return "failed", "peer"
	}
	msg, err := n.nc.Request(subject("http", shard), req, forwardTimeout)
	switch {
	case errors.Is(err, nats.ErrNoResponders):
		return "no_owner", "nats"
	case err != nil:
		return "failed", "nats"
	case bytes.Equal(msg.Data, notServing):
		return "no_owner", "nats"
	}
	if err := answerInto(msg.Data, ctx); err != nil {
		n.log.Warn("a forwarded answer that does not read", "shard", shard, "err", err)
		return "failed", "nats"
	}
	return "ok", "nats"
}

// toAny answers a request that names no shard (a missing key, the login
// page): any shard's handlers answer it alike, so one this node serves, or
// else any owned one.
func (n *Node) toAny(ctx *fasthttp.RequestCtx, public bool) bool {
	n.mu.Lock()
	for s, h := range n.hosted {
		if h.serving.Load() {
			n.mu.Unlock()
			return n.to(ctx, public, s)
		}
	}
	n.mu.Unlock()
	start := int(n.rr.Add(1))
	for i := range n.shards {
		if n.to(ctx, public, (start+i)%n.shards) {
			return true
		}
	}
	return false
}

// onForwarded runs a request another node forwarded over NATS to a shard
// this node owns, and answers it.
func (n *Node) onForwarded(h *hosted, m *nats.Msg) {
	buf, done := envelope()
	defer done()
	*buf = n.answerForwarded(h, *buf, m.Data, n.nc.MaxPayload())
	m.Respond(*buf)
}

// answerForwarded runs a forwarded request (its message) through the
// handlers of h's shard and appends the answer's message to dst; it
// appends notServing instead when h no longer serves the shard, the
// request does not read, or the answer is over limit bytes (when limit >
// 0).
func (n *Node) answerForwarded(h *hosted, dst, req []byte, limit int64) []byte {
	if !h.serving.Load() || time.Since(h.renewedAt) > leaseSafe {
		return append(dst, notServing...)
	}
	out, err := runForwarded(dst, req, func(public bool) fasthttp.RequestHandler {
		if public {
			return h.stack.Public
		}
		return h.stack.Admin
	})
	if err != nil {
		n.log.Warn("a forwarded request that does not read", "shard", h.shard, "err", err)
		return append(out[:len(dst)], notServing...)
	}
	if limit > 0 && int64(len(out)-len(dst)) > limit {
		// NATS refuses a message over its max_payload: the front answers
		// 503 (backupmon nats allows 8 MiB; docs/decisions.md).
		n.log.Warn("an answer too large to forward", "shard", h.shard, "bytes", len(out)-len(dst), "max_payload", limit)
		return append(out[:len(dst)], notServing...)
	}
	return out
}

// call is a question a node asks a shard's owner.
type call struct {
	Op    string `json:"op"`
	Email string `json:"email,omitempty"`
	Hash  string `json:"hash,omitempty"` // a session's SHA-256, hex
}

// onCall answers a question about a shard this node owns: whether an
// e-mail address is one of its users' ("login": 1 or 0), the workspaces
// whose users it is ("memberships": a JSON list), and the workspace of a
// session ("session": a JSON object, or null).
func (n *Node) onCall(h *hosted, m *nats.Msg) {
	var c call
	if err := jsonx.Unmarshal(m.Data, &c); err != nil || !h.serving.Load() {
		m.Respond([]byte("0"))
		return
	}
	switch c.Op {
	case "login":
		if _, ok := h.eng.LoginFor(c.Email); ok {
			m.Respond([]byte("1"))
			return
		}
	case "memberships":
		b, err := jsonx.Marshal(h.eng.Memberships(c.Email))
		if err == nil {
			m.Respond(b)
			return
		}
	case "session":
		var hash [32]byte
		if hex.DecodedLen(len(c.Hash)) != len(hash) {
			break
		}
		if _, err := hex.Decode(hash[:], []byte(c.Hash)); err != nil {
			break
		}
		if su, ok := h.eng.Session(hash); ok {
			if b, err := jsonx.Marshal(engine.Membership{ID: su.Workspace.ID, Name: su.Workspace.Name}); err == nil {
				m.Respond(b)
				return
			}
		}
		m.Respond([]byte("null"))
		return
	}
	m.Respond([]byte("0"))
}

// ask sends a question to every shard's owner at once and returns the
// shards that answered yes.
func (n *Node) ask(c call) []int {
	var yes []int
	for s, answer := range n.askAll(c) {
		if string(answer) == "1" {
			yes = append(yes, s)
		}
	}
	return yes
}

// askAll sends a question to every shard's owner at once and returns each
// shard's answer, nil for a shard that gave none within 5 s.
func (n *Node) askAll(c call) [][]byte {
	answers := make([][]byte, n.shards)
	var wg sync.WaitGroup
	for s := range n.shards {
		wg.Go(func() { answers[s] = n.askOne(s, c) })
	}
	wg.Wait()
	return answers
}

// askOne sends a question to the owner of shard and returns its answer,
// nil when it gave none within 5 s.
func (n *Node) askOne(shard int, c call) []byte {
	data, err := jsonx.Marshal(c)
	if err != nil {
		return nil
	}
	msg, err := n.nc.Request(subject("call", shard), data, callTimeout)
	if err != nil {
		return nil
	}
	return msg.Data
}

// callTimeout bounds a question to a shard's owner.
const callTimeout = 5 * time.Second

// toLogin sends a login to the shard of the workspace it names (the
// switcher's), else of the user its e-mail address names (else to any
// shard, which answers as for a wrong password).
func (n *Node) toLogin(ctx *fasthttp.RequestCtx) bool {
	if n.cfg.LoginGate != nil {
		n.cfg.LoginGate(ctx)
	}
	form, _ := url.ParseQuery(string(ctx.Request.Body()))
	if id, ok := engine.ParseID(form.Get("workspace")); ok {
		return n.to(ctx, true, WorkspaceShard(id, n.shards)) // a login to a chosen workspace
	}
	if email := strings.TrimSpace(form.Get("email")); email != "" {
		if shards := n.ask(call{Op: "login", Email: email}); len(shards) > 0 {
			return n.to(ctx, true, shards[0])
		}
	}
	return n.toAny(ctx, true)
}

// toNewWorkspace sends a workspace's creation to a shard picked at random
// among those served now: the shard's engine takes an id that hashes to it.
func (n *Node) toNewWorkspace(ctx *fasthttp.RequestCtx) bool {
	start := rand.IntN(n.shards)
	for i := range n.shards {
		if n.to(ctx, false, (start+i)%n.shards) {
			return true
		}
	}
	return false
}

// gatherWorkspaces answers the admin list of every workspace: each shard's
// owner lists its own, and the lists are merged in id order, as a single
// node orders them. A shard without an owner makes the list unavailable
// rather than short.
func (n *Node) gatherWorkspaces(ctx *fasthttp.RequestCtx) bool {
	type item struct {
		id  string
		raw jsonx.RawMessage
	}
	var all []item
	var first []byte
	for s := range n.shards {
		sub := &fasthttp.RequestCtx{}
		var req fasthttp.Request
		ctx.Request.CopyTo(&req)
		sub.Init(&req, ctx.RemoteAddr(), nil)
		if !n.to(sub, false, s) {
			return false
		}
		if sub.Response.StatusCode() != fasthttp.StatusOK {
			// The token was refused (every shard would): its answer.
			sub.Response.CopyTo(&ctx.Response)
			return true
		}
		if first == nil {
			first = append([]byte(nil), sub.Response.Header.Peek("Content-Type")...)
		}
		var body struct {
			Data []jsonx.RawMessage `json:"data"`
		}
		if err := jsonx.Unmarshal(sub.Response.Body(), &body); err != nil {
			return false
		}
		for _, raw := range body.Data {
			var w struct {
				ID string `json:"id"`
			}
			jsonx.Unmarshal(raw, &w)
			all = append(all, item{w.ID, raw})
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].id < all[j].id })
	out := []byte(`{"data":[`)
	for i, it := range all {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, it.raw...)
	}
	out = append(out, "]}"...)
	ctx.SetStatusCode(fasthttp.StatusOK)
	ctx.Response.Header.SetContentTypeBytes(first)
	ctx.SetBody(out)
	return true
}

// moveClock moves the development clock of the whole cluster: one shard's
// handlers check the request and move this node's clock, then every node
// sets its clock to the same time and runs what came due on its shards
// before the answer.
func (n *Node) moveClock(ctx *fasthttp.RequestCtx) bool {
	if !n.toAny(ctx, false) {
		return false
	}
	if ctx.Response.StatusCode() != fasthttp.StatusOK {
		return true
	}
	var body struct {
		Data struct {
			Now string `json:"now"`
		} `json:"data"`
	}
	if err := jsonx.Unmarshal(ctx.Response.Body(), &body); err != nil {
		return true
	}
	at, err := time.Parse(time.RFC3339Nano, body.Data.Now)
	if err != nil {
		return true
	}
	n.broadcastClock(at)
	return true
}

// broadcastClock sets every node's clock to at, and waits for the nodes it
// knows of to answer (each once the timers due on its shards have run).
func (n *Node) broadcastClock(at time.Time) {
	data := []byte(at.UTC().Format(time.RFC3339Nano))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	live, _ := n.nodes.Keys(ctx)
	ctx2, cancel2 := context.WithTimeout(context.Background(), 2*time.Second)
	n.config.Put(ctx2, "clock", data)
	cancel2()
	inbox := nats.NewInbox()
	sub, err := n.nc.SubscribeSync(inbox)
	if err != nil {
		return
	}
	defer sub.Unsubscribe()
	if err := n.nc.PublishRequest("bm.clock", inbox, data); err != nil {
		return
	}
	for range live {
		if _, err := sub.NextMsg(10 * time.Second); err != nil {
			return
		}
	}
}

// onClock sets this node's development clock and every hosted engine's
// to the time another node's move said, then answers.
func (n *Node) onClock(m *nats.Msg) {
	at, err := time.Parse(time.RFC3339Nano, string(m.Data))
	if err == nil && n.cfg.Clock != nil {
		n.mu.Lock()
		list := make([]*hosted, 0, len(n.hosted))
		for _, h := range n.hosted {
			list = append(list, h)
		}
		n.mu.Unlock()
		n.cfg.Clock.Set(at)
		for _, h := range list {
			if _, err := h.eng.SetClock(at, 0); err != nil {
				n.log.Warn("move a shard's clock", "shard", h.shard, "err", err)
			}
		}
	}
	m.Respond([]byte("ok"))
}
