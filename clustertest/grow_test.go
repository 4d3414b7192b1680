package clustertest

import (
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"backupmon/cluster"
	"backupmon/internal/testserver"
)

var moveBack = flag.Duration("move-back", 5*time.Second, "TestGrowUnderLoad: how long a node is up before its shards move back to it (--cluster-move-back; the default of serve is 30s)")

// joinToHandOver is about how long after AddNode is called a shard the new
// node ranks first for has been handed over to it: the node's start (half
// a second), moveBack, the owner's next look at the nodes (every 0.5 s)
// and the hand-over (a snapshot, the rate counts, the lease: a few
// hundred milliseconds). Measured: moveBack plus 1.2 s.
func joinToHandOver() time.Duration { return *moveBack + 1500*time.Millisecond }

// TestGrowUnderLoad (the scale-out memo's test 5): under a steady load of
// reports through every node, a fourth node joins a three-node cluster.
// The shards it ranks first for move to it (owner b4, a new epoch), and
// no other shard moves; no request answers 500, and only the moved shards
// answer 503 (with Retry-After), within the hand-over's 5 s; every
// acknowledged report is there once afterwards, and reports through b4
// are acknowledged. A workspace on a moving shard is driven past its
// per-minute limits (REST and Report API) in the minute of the hand-over:
// the new owner goes on counting that minute, so the 2xx answers of the
// minute never exceed the limit and X-RateLimit-Remaining never goes up.
func TestGrowUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("runs seven processes")
	}
	shardCount := *shards // 4: b4 ranks first for shard 3
	three := []string{"b1", "b2", "b3"}
	moving := map[int]bool{}
	for s := range shardCount {
		first, was := cluster.Rank(s, append(slices.Clone(three), "b4"))[0], cluster.Rank(s, three)[0]
		switch {
		case first == "b4":
			moving[s] = true
		case first != was: // rendezvous hashing moves only the joining node's shards
			t.Fatalf("shard %d: the cluster ranks %s first of four nodes and %s of the three", s, first, was)
		}
	}
	if len(moving) == 0 {
		t.Fatalf("b4 ranks first for none of %d shards: nothing would move", shardCount)
	}
	h := startNodes(t, shardCount, "--cluster-move-back", moveBack.String())
	// The workspaces are made once no shard moves: a shard being handed
	// over answers 503 for the moment, also to the admin API.
	h.waitPreferred(three)
	h.makeFixture(shardCount, 3)
	before := map[int]shardOwner{}
	for _, o := range h.served(0) {
		before[o.Shard] = o
	}
	// The load picks b4 once it is up (its client is filled in then).
	b4 := &testserver.Client{}
	h.nodes = append(h.nodes, b4)
	h.load = newLoad(h.f, h.nodes)
	h.load.down[3].Store(true)
	probe := newRateProbe(h, moving)
	w := watchOwners(h.nodes[1])
	defer w.stop()
	h.load.start(12, 8)

	// The minute of the hand-over holds the probe's requests before it
	// and after it: the join waits until the hand-over falls between its
	// 5th and 48th second.
	for sec := time.Now().Add(joinToHandOver()).Second(); sec < 5 || sec > 48; sec = time.Now().Add(joinToHandOver()).Second() {
		time.Sleep(250 * time.Millisecond)
	}
	joined := time.Now()
	minute := joined.Add(joinToHandOver()).Truncate(time.Minute)
	n, err := h.c.AddNode()
	if err != nil {
		t.Fatalf("add b4: %v", err)
	}
	if n.ID != "b4" {
		t.Fatalf("the new node is %s, want b4", n.ID)
	}
	*b4 = testserver.Client{T: t, HTTP: newClient(), PublicURL: n.PublicURL, AdminURL: n.AdminURL, Token: testserver.AdminToken}
	h.load.down[3].Store(false)
	t.Logf("b4 ready %v after AddNode; the probe's minute starts %v after", time.Since(joined).Round(time.Millisecond), minute.Sub(joined).Round(time.Millisecond))

	probe.run(minute, w)
	moved := h.waitMoved(w, moving, joined)
	t.Logf("shards moved to b4 %v after the join", moved.Sub(joined).Round(time.Millisecond))
	time.Sleep(3 * time.Second) // the load meets the moved shards at b4
	h.load.halt()

	owners := map[int]shardOwner{}
	for _, o := range h.served(3) {
		owners[o.Shard] = o
	}
	for s := range shardCount {
		was, now := before[s], owners[s]
		switch {
		case moving[s] && (now.Owner != "b4" || now.Epoch <= was.Epoch):
			t.Errorf("shard %d (b4 ranks first): owner %s epoch %d, was %s epoch %d; want b4 with a new epoch", s, now.Owner, now.Epoch, was.Owner, was.Epoch)
		case !moving[s] && now != was:
			t.Errorf("shard %d (b4 does not rank first) moved: %+v, was %+v", s, now, was)
		}
	}
	w.checkStill(t, before, moving)
	h.checkAnswers(joined, moving, before, w, probe)
	probe.check(minute, w)
	h.resend()
	h.verify("after b4 joined")
	probe.verify()
	h.checkEpochs()

	// b4 reaches NATS through proxies of its own, as the others do: cut
	// off, it is not ready; healed, it is again.
	n.Cut()
	if !waitReadyz(b4, 503, 10*time.Second) {
		t.Fatal("b4 is still ready 10 s after it was cut off from NATS")
	}
	n.Heal()
	if !waitReadyz(b4, 200, 20*time.Second) {
		t.Fatal("b4 not ready 20 s after it could reach NATS again")
	}
}

// waitReadyz waits at most d until the node's /readyz answers want, and
// reports whether it did.
func waitReadyz(c *testserver.Client, want int, d time.Duration) bool {
	for deadline := time.Now().Add(d); ; time.Sleep(100 * time.Millisecond) {
		if r, err := c.Send("GET", c.AdminURL+"/readyz", nil, nil); err == nil && r.Status == want {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}

// waitPreferred waits until every shard is owned by the node it ranks
// first among ids: a cluster's nodes start at about the same time, and a
// shard the first of them took moves to its preferred node 30 s later.
func (h *harness) waitPreferred(ids []string) {
	start := time.Now()
	for deadline := start.Add(90 * time.Second); ; time.Sleep(250 * time.Millisecond) {
		now := h.served(0)
		settled := len(now) == *shards
		for _, o := range now {
			settled = settled && o.Owner == cluster.Rank(o.Shard, ids)[0]
		}
		if settled {
			h.t.Logf("every shard at its preferred node %v after the start", time.Since(start).Round(time.Millisecond))
			return
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("shards not at their preferred nodes 90 s after the start: %+v", now)
		}
	}
}

// waitMoved waits until b4 serves every moving shard (at most a minute
// after the join) and returns when the watcher first saw it so.
func (h *harness) waitMoved(w *ownerWatch, moving map[int]bool, joined time.Time) time.Time {
	for deadline := joined.Add(time.Minute); ; time.Sleep(250 * time.Millisecond) {
		var last time.Time
		done := true
		for s := range moving {
			at, ok := w.firstOwned(s, "b4")
			done = done && ok
			if at.After(last) {
				last = at
			}
		}
		if done {
			return last
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("b4 does not serve shards %v a minute after it joined: %+v", slices.Sorted(maps.Keys(moving)), h.served(0))
		}
	}
}

// checkAnswers checks the load's answers since the join: no status but 200
// and 503, 503s only for moving shards, each with Retry-After, all of a
// shard's within handOverTarget of each other (with the probe's), and no
// moved shard without an acknowledged report for longer over its
// hand-over; reports through b4 were acknowledged, for a moved shard and
// for another.
func (h *harness) checkAnswers(joined time.Time, moving map[int]bool, before map[int]shardOwner, w *ownerWatch, probe *rateProbe) {
	_, attempts := h.load.snapshot()
	unavailable := map[int][]time.Time{}
	throughB4 := map[bool]int{}
	wrong := 0 // answers neither 200 nor a moving shard's 503 (the first 5 shown)
	for _, a := range attempts {
		if !a.at.After(joined) {
			continue
		}
		switch {
		case a.code == 503 && moving[a.shard] && a.retry:
			unavailable[a.shard] = append(unavailable[a.shard], a.at)
		case a.code != 200:
			if wrong++; wrong > 5 {
				continue
			}
			h.t.Errorf("a report to shard %d through node %d answered %d (Retry-After %v) at %s: only 200, and 503 with Retry-After for a shard that moves", a.shard, a.node+1, a.code, a.retry, a.at.Format(time.TimeOnly+".000"))
		case a.node == 3 && a.ok:
			throughB4[moving[a.shard]]++
		}
	}
	if wrong > 0 {
		h.t.Errorf("%d reports since the join answered neither 200 nor 503 (with Retry-After) of a shard that moves", wrong)
	}
	for _, a := range probe.answers {
		if a.code == 503 {
			unavailable[probe.shard] = append(unavailable[probe.shard], a.end)
		}
	}
	if throughB4[true] == 0 || throughB4[false] == 0 {
		h.t.Errorf("reports through b4 acknowledged: %d to moved shards, %d to others; want some of each", throughB4[true], throughB4[false])
	}
	for s, at := range unavailable {
		slices.SortFunc(at, time.Time.Compare)
		if span := at[len(at)-1].Sub(at[0]); span > handOverTarget {
			h.t.Errorf("shard %d answered 503 over %v (from %s to %s), want within %v", s, span.Round(time.Millisecond), at[0].Format(time.TimeOnly), at[len(at)-1].Format(time.TimeOnly), handOverTarget)
		}
	}
	// The longest each shard went without an acknowledged report since the
	// join (the load gives each shard about three a second), and for a
	// moved shard, the stretch without one around its hand-over (from the
	// watcher's last view of the old owner to its first of b4).
	gaps, lastOK := map[int]time.Duration{}, map[int]time.Time{}
	handOver, spans := map[int]time.Duration{}, map[int][2]time.Time{}
	for s := range moving {
		from, to := w.handOver(s, before[s])
		spans[s] = [2]time.Time{from, to}
	}
	for _, a := range attempts { // in the order they ended
		if !a.at.After(joined) || !a.ok {
			continue
		}
		if last, ok := lastOK[a.shard]; ok {
			gap := a.at.Sub(last).Round(10 * time.Millisecond)
			gaps[a.shard] = max(gaps[a.shard], gap)
			if span, ok := spans[a.shard]; ok && a.at.After(span[0]) && last.Before(span[1]) {
				handOver[a.shard] = max(handOver[a.shard], gap)
			}
		}
		lastOK[a.shard] = a.at
	}
	h.t.Logf("since the join: answers %v; 503s by shard %v; the longest each shard went without an acknowledged report %v; over the hand-over of each moved shard %v",
		h.load.codesSince(joined), countTimes(unavailable), gaps, handOver)
	for s := range moving {
		if handOver[s] == 0 || handOver[s] > handOverTarget {
			h.t.Errorf("moved shard %d went %v without an acknowledged report over its hand-over (at most %v; 0: none acknowledged on both sides)", s, handOver[s], handOverTarget)
		}
	}
}

func countTimes(m map[int][]time.Time) map[int]int {
	out := map[int]int{}
	for k, v := range m {
		out[k] = len(v)
	}
	return out
}

// ownerWatch reads GET /admin/v1/cluster through one node every 200 ms and
// keeps what it saw.
type ownerWatch struct {
	mu   sync.Mutex
	seen []ownersAt
	quit chan struct{}
	done sync.WaitGroup
}

type ownersAt struct {
	at     time.Time
	owners []shardOwner
}

func watchOwners(c *testserver.Client) *ownerWatch {
	w := &ownerWatch{quit: make(chan struct{})}
	w.done.Go(func() {
		for {
			var st struct{ Owners []shardOwner }
			if c.AdminCall(200, "GET", "/cluster", nil, &st) == nil {
				w.mu.Lock()
				w.seen = append(w.seen, ownersAt{time.Now(), st.Owners})
				w.mu.Unlock()
			}
			select {
			case <-w.quit:
				return
			case <-time.After(200 * time.Millisecond):
			}
		}
	})
	return w
}

func (w *ownerWatch) stop() {
	select {
	case <-w.quit:
	default:
		close(w.quit)
	}
	w.done.Wait()
}

// firstOwned returns when the watcher first saw node serve shard.
func (w *ownerWatch) firstOwned(shard int, node string) (time.Time, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, s := range w.seen {
		for _, o := range s.owners {
			if o.Shard == shard && o.State == "served" && o.Owner == node {
				return s.at, true
			}
		}
	}
	return time.Time{}, false
}

// lastServed returns the last time the watcher saw o (owner and epoch)
// serve its shard.
func (w *ownerWatch) lastServed(o shardOwner) time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	var last time.Time
	for _, s := range w.seen {
		if slices.Contains(s.owners, o) {
			last = s.at
		}
	}
	return last
}

// handOver returns the watcher's last view of old serving its shard and
// its first of b4 serving it.
func (w *ownerWatch) handOver(shard int, old shardOwner) (time.Time, time.Time) {
	to, _ := w.firstOwned(shard, "b4")
	return w.lastServed(old), to
}

// checkStill fails the test when the watcher saw a shard that does not
// move served by another node or in another epoch than before.
func (w *ownerWatch) checkStill(t *testing.T, before map[int]shardOwner, moving map[int]bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, s := range w.seen {
		for _, o := range s.owners {
			if !moving[o.Shard] && o.State == "served" && o != before[o.Shard] {
				t.Errorf("at %s shard %d was %+v, before the join %+v: only the shards b4 ranks first for move", s.at.Format(time.TimeOnly), o.Shard, o, before[o.Shard])
				return
			}
		}
	}
}

// rateProbe is two workspaces on a shard that moves: one of plan growth
// (60 REST requests a minute), one with a report key (60 reports a minute,
// on any plan: pro, so that its reports can be read back through REST in
// the same minute). One request at a time of each, so that the answers
// come in the order the owner counted them.
type rateProbe struct {
	h      *harness
	rest   string // the growth workspace's REST key
	shard  int
	before shardOwner // the shard's owner before the join
	// reports are the probe's reports (by Idempotency-Key), to the pro
	// workspace's two jobs (a job takes at most 100 reports a day).
	reports *load
	answers []probeAnswer
}

// probeAnswer is one answer to the probe: a REST GET or a report.
type probeAnswer struct {
	rest                    bool
	start, end              time.Time
	node, code              int
	retry                   bool
	limit, remaining, reset string // the REST answer's X-RateLimit-*
}

func newRateProbe(h *harness, moving map[int]bool) *rateProbe {
	c := h.nodes[0]
	p := &rateProbe{h: h, shard: -1}
	f := &fixture{rest: map[string]string{}}
	// onMoving makes workspaces of plan until one is on a moving shard
	// (the same as the first's), and returns it with its REST key.
	onMoving := func(plan string) (string, string) {
		for i := range 40 {
			ws := c.NewWorkspace(map[string]any{"name": fmt.Sprintf("grow %s %d", plan, i), "plan": plan})
			rest, _ := c.NewKey(ws, "rest", nil)
			if shard, _ := cluster.KeyShard(rest, *shards); moving[shard] && (p.shard < 0 || shard == p.shard) {
				p.shard = shard
				return ws, rest
			}
		}
		h.t.Fatalf("40 new workspaces of plan %s, none on a shard that moves", plan)
		return "", ""
	}
	_, p.rest = onMoving("growth")
	ws, rest := onMoving("pro")
	f.rest[ws] = rest
	report, _ := c.NewKey(ws, "report", nil)
	client := c.NewClient(ws, "client")
	for j := range 2 {
		f.targets = append(f.targets, target{ws: ws, job: c.NewJob(ws, client, fmt.Sprintf("job %d", j), testserver.Daily()), key: report, shard: p.shard})
	}
	p.reports = newLoad(f, h.nodes)
	p.before.Shard, p.before.State = p.shard, "served"
	p.before.Owner, p.before.Epoch = h.ownerFrom(0, p.shard)
	return p
}

// run sends the probe's requests through random nodes from the start of
// minute, one pair a second until b4 serves the shard, then ten a second
// until both limits have answered 429 at b4 (or the minute is nearly over).
func (p *rateProbe) run(minute time.Time, w *ownerWatch) {
	time.Sleep(time.Until(minute.Add(300 * time.Millisecond)))
	end := minute.Add(57 * time.Second)
	limited := map[bool]bool{}
	for next := time.Now(); time.Now().Before(end); time.Sleep(time.Until(next)) {
		moved, ok := w.firstOwned(p.shard, "b4")
		if !ok {
			next = next.Add(time.Second)
		} else {
			next = next.Add(100 * time.Millisecond)
		}
		for _, rest := range []bool{true, false} {
			a := p.send(rest, rand.IntN(len(p.h.nodes)))
			p.answers = append(p.answers, a)
			if ok && a.start.After(moved) && a.code == 429 {
				limited[rest] = true
			}
		}
		if limited[true] && limited[false] {
			return
		}
	}
}

// send sends one REST GET or one report through node i.
func (p *rateProbe) send(rest bool, i int) probeAnswer {
	a := probeAnswer{rest: rest, node: i, start: time.Now()}
	if rest {
		c := p.h.nodes[i]
		r, err := c.Send("GET", c.PublicURL+"/api/v1/workspace", testserver.Bearer(p.rest), nil)
		if err == nil {
			a.code, a.retry = r.Status, r.Header.Get("Retry-After") != ""
			a.limit, a.remaining, a.reset = r.Header.Get("X-RateLimit-Limit"), r.Header.Get("X-RateLimit-Remaining"), r.Header.Get("X-RateLimit-Reset")
		}
	} else {
		r := p.reports.send(p.reports.add(p.reports.f.targets[rand.IntN(2)]), i)
		a.code, a.retry = r.code, r.retry
	}
	a.end = time.Now()
	return a
}

// check checks the probe's answers, all in one UTC minute: no 2xx beyond
// the limit of 60, X-RateLimit-Remaining never up, 503s and 429s with
// Retry-After; and that the minute held answers of the old owner (before
// the watcher last saw it) and of b4 (after it first saw b4).
func (p *rateProbe) check(minute time.Time, w *ownerWatch) {
	t := p.h.t
	lastOld := w.lastServed(p.before)
	firstNew, _ := w.firstOwned(p.shard, "b4")
	t.Logf("shard %d: %s last seen serving it %s into the probe's minute, b4 first %s", p.shard, p.before.Owner, lastOld.Sub(minute).Round(time.Millisecond), firstNew.Sub(minute).Round(time.Millisecond))
	for _, rest := range []bool{true, false} {
		kind := map[bool]string{true: "REST", false: "Report API"}[rest]
		ok, old, atB4, limited := 0, 0, 0, 0
		prev, codes := 61, map[int]int{}
		for _, a := range p.answers {
			if a.rest != rest {
				continue
			}
			codes[a.code]++
			if a.start.Truncate(time.Minute) != minute || a.end.Truncate(time.Minute) != minute {
				t.Fatalf("%s: a request of the probe from %s to %s, outside the minute %s", kind, a.start.Format(time.TimeOnly), a.end.Format(time.TimeOnly), minute.Format(time.TimeOnly))
			}
			switch a.code {
			case 200:
				ok++
				if a.end.Before(lastOld) {
					old++
				}
			case 429:
				limited++
			case 503:
			default:
				t.Errorf("%s: answered %d through node %d at %s: want 200, 429, or 503 during the hand-over", kind, a.code, a.node+1, a.end.Format(time.TimeOnly+".000"))
			}
			if (a.code == 429 || a.code == 503) && !a.retry {
				t.Errorf("%s: %d at %s without Retry-After", kind, a.code, a.end.Format(time.TimeOnly+".000"))
			}
			if (a.code == 200 || a.code == 429) && a.start.After(firstNew) {
				atB4++
			}
			if !rest || (a.code != 200 && a.code != 429) {
				continue
			}
			remaining, err := strconv.Atoi(a.remaining)
			if a.limit != "60" || err != nil || a.reset != strconv.FormatInt(minute.Add(time.Minute).Unix(), 10) {
				t.Errorf("REST: X-RateLimit-Limit %q, Remaining %q, Reset %q; want 60, a count, %d", a.limit, a.remaining, a.reset, minute.Add(time.Minute).Unix())
				continue
			}
			if remaining > prev {
				t.Errorf("REST: X-RateLimit-Remaining went up from %d to %d at %s (through node %d): the minute's count did not carry over", prev, remaining, a.end.Format(time.TimeOnly+".000"), a.node+1)
			}
			prev = remaining
		}
		t.Logf("%s in the minute: %v; %d 2xx at %s, %d answered after b4 took the shard", kind, codes, old, p.before.Owner, atB4)
		if ok > 60 {
			t.Errorf("%s: %d requests answered 2xx in one minute, the limit is 60", kind, ok)
		}
		if old == 0 || atB4 == 0 || limited == 0 {
			t.Fatalf("%s: the minute did not straddle the hand-over past the limit (%d 2xx at %s, %d answers at b4, %d 429s)", kind, old, p.before.Owner, atB4, limited)
		}
	}
}

// verify reads the probe's reports back through the REST API: each
// acknowledged one is there once.
func (p *rateProbe) verify() {
	ph := &harness{t: p.h.t, c: p.h.c, nodes: p.h.nodes, f: p.reports.f, load: p.reports}
	ph.verify("the rate probe's reports")
}
