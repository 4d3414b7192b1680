package clustertest

import (
	"flag"
	"maps"
	"slices"
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
	h := startNodes(t, shardCount, serveFlags("--cluster-move-back", moveBack.String()))
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
	// off, it is not ready, and its metrics say the link is lost; healed,
	// it is ready again.
	checkLink(t, b4, "b4 before the cut", 1, 0)
	n.Cut()
	if !waitReadyz(b4, 503, 10*time.Second) {
		t.Fatal("b4 is still ready 10 s after it was cut off from NATS")
	}
	checkLink(t, b4, "b4 cut off", 0, 1)
	n.Heal()
	if !waitReadyz(b4, 200, 20*time.Second) {
		t.Fatal("b4 not ready 20 s after it could reach NATS again")
	}
	checkLink(t, b4, "b4 healed", 1, 1)
}

// checkLink checks, within 5 s (nats.go reports a lost link after the
// connection's state changed), a node's metrics of its link to NATS.
func checkLink(t *testing.T, c *testserver.Client, when string, connected, disconnects float64) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		up, lost := c.Metric("backupmon_cluster_nats_connected"), c.Metric("backupmon_cluster_nats_disconnects_total")
		if up == connected && lost == disconnects {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("%s: backupmon_cluster_nats_connected %v, backupmon_cluster_nats_disconnects_total %v; want %v and %v", when, up, lost, connected, disconnects)
			return
		}
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
