package clustertest

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"backupmon/cluster"
	"backupmon/internal/testserver"
	"backupmon/localcluster"
)

var (
	rounds  = flag.Int("rounds", 3, "chaos rounds to run")
	results = flag.String("results", "", "a RESULTS.md whose chaos section gets the failover times")
	shards  = flag.Int("shards", 4, "the cluster's shard count")
	only    = flag.String("only", "", "run only the rounds whose name has this in it (e.g. SIGTERM)")
	serve   = flag.String("serve", "", "more flags for every node's serve, space-separated (experiments: --cluster-peer-listen= forwards over NATS only)")
	keep    = flag.String("keep", "", "a directory where every process's whole log is copied at the test's end")
)

func TestMain(m *testing.M) {
	flag.Parse()
	testserver.Main(m)
}

// A round does something bad to the cluster while the load runs, and
// undoes it. A planned round (a node stopped and started again, as in a
// rolling upgrade) hands its shards over: its times are counted apart
// from the failovers'.
type round struct {
	name    string
	run     func(h *harness) event
	planned bool
}

// event is what a round did: when, and to which node (-1: none) whose
// answers do not count toward the failover time.
type event struct {
	at       time.Time
	affected int
}

// The rounds: the first three are those `make test` runs (between them
// they kill a node and a NATS server, freeze an owner past its lease, and
// cut a node off); more rounds pick among all of them (-only blackhole:
// the blackhole round alone).
var allRounds = []round{
	{name: "kill a node and a NATS server", run: func(h *harness) event { return h.kill(true, true) }},
	{name: "freeze a shard's owner past its lease", run: (*harness).freezeOwner},
	{name: "cut a node off from NATS", run: (*harness).cutOff},
	{name: "kill a node", run: func(h *harness) event { return h.kill(true, false) }},
	{name: "kill a NATS server", run: func(h *harness) event { return h.kill(false, true) }},
	{name: "restart a node (SIGTERM), as a rolling upgrade does", run: (*harness).restart, planned: true},
	{name: "blackhole a node's links to NATS", run: (*harness).blackhole},
	{name: "delay a shard owner's links to NATS by 200 ms", run: (*harness).delayOwner},
}

// chaosMoveBack is how long a node back from a round is up before the
// shards it ranks first for move back to it (--cluster-move-back; serve's
// default is 30 s): long enough that a failover (5-12 s here) is over
// before, short enough that a round need not wait long for the move.
const chaosMoveBack = 10 * time.Second

// handOverTarget bounds how long a node stopped with SIGTERM leaves its
// shards unanswered: it hands each over with a snapshot instead of
// leaving its lease to expire (docs/decisions.md).
const handOverTarget = 5 * time.Second

// TestChaos: under a steady load of reports, each round kills, freezes or
// cuts off processes of a three-node cluster and restores them; after it,
// every acknowledged report is read back exactly once through the REST
// API, the reports that were not acknowledged are sent again with their
// Idempotency-Key and are then there once too, and no two nodes served a
// shard in one epoch.
func TestChaos(t *testing.T) {
	if testing.Short() {
		t.Skip("the chaos test runs six processes")
	}
	h := startHarness(t, *shards, *rounds, serveFlags("--cluster-move-back", chaosMoveBack.String()))
	h.load.start(12, 8)
	time.Sleep(2 * time.Second)
	pool := allRounds
	if *only != "" {
		pool = slices.DeleteFunc(slices.Clone(allRounds), func(rd round) bool { return !strings.Contains(rd.name, *only) })
		if len(pool) == 0 {
			t.Fatalf("no round's name has %q in it", *only)
		}
	}
	var failovers, handOvers []time.Duration
	restarts := 0
	for r := range *rounds {
		rd := pool[r%len(pool)]
		if r >= 3 {
			rd = pool[rand.IntN(len(pool))]
		}
		h.atRest()
		start := time.Now()
		t.Logf("round %d (%s) begins at %s", r+1, rd.name, start.UTC().Format("15:04:05.000"))
		ev := rd.run(h)
		h.settle()
		took := h.failoverTimes(ev)
		if rd.planned {
			took = h.outages(ev)
		}
		t.Logf("round %d: answers since the last round: %v", r+1, h.load.codesSince(start))
		h.verify(fmt.Sprintf("round %d (%s)", r+1, rd.name))
		t.Logf("round %d: %s: %v, failover times %v", r+1, rd.name, time.Since(start).Round(time.Millisecond), took)
		if rd.planned {
			restarts++
			handOvers = append(handOvers, took...)
			if len(took) > 0 && took[len(took)-1] > handOverTarget/2 {
				h.attemptsAround(ev) // a near miss too: a 4.96 s went unexplained
			}
			if len(took) > 0 && took[len(took)-1] > handOverTarget {
				h.explain(start)
				t.Errorf("round %d: a shard of the node stopped with SIGTERM went unanswered for %v (at most %v)", r+1, took[len(took)-1], handOverTarget)
			}
			continue
		}
		failovers = append(failovers, took...)
		if len(took) > 0 && took[len(took)-1] > 15*time.Second {
			h.explain(start)
		}
	}
	h.load.halt()
	h.resend()
	h.verify("the end")
	h.checkEpochs()
	summary := summarize(failovers, "shard failovers")
	switch {
	case len(handOvers) > 0:
		summary += fmt.Sprintf("; %d nodes stopped with SIGTERM left shards unanswered for %s", restarts, summarize(handOvers, "shards"))
	case restarts > 0:
		summary += fmt.Sprintf("; %d nodes stopped with SIGTERM left no shard unanswered", restarts)
	}
	t.Logf("%d rounds, failover %s", *rounds, summary)
	if *results != "" {
		writeResults(t, *results, *rounds, *shards, summary)
	}
}

// harness is the cluster, its clients, the fixture and the load.
type harness struct {
	t     *testing.T
	c     *localcluster.Cluster
	nodes []*testserver.Client
	f     *fixture
	load  *load
}

// startHarness starts a three-node cluster of shards (with more settings
// when given, as the partition test's proxies between NATS servers) and
// makes a fixture for rounds.
func startHarness(t *testing.T, shards, rounds int, more ...func(*localcluster.Config)) *harness {
	h := startNodes(t, shards, more...)
	h.makeFixture(shards, rounds)
	return h
}

// serveFlags is a setting of startNodes: more serve flags for every node.
func serveFlags(flags ...string) func(*localcluster.Config) {
	return func(cfg *localcluster.Config) { cfg.Serve = append(cfg.Serve, flags...) }
}

// startNodes starts a three-node cluster of shards with more settings, and
// returns its harness without a fixture.
func startNodes(t *testing.T, shards int, more ...func(*localcluster.Config)) *harness {
	dir := t.TempDir()
	cfg := localcluster.Config{Binary: testserver.Binary(t), Dir: dir, Shards: shards,
		AdminToken: testserver.AdminToken, StartTimeout: 90 * time.Second, Serve: strings.Fields(*serve)}
	for _, f := range more {
		f(&cfg)
	}
	c, err := localcluster.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, c: c}
	closeAtEnd(t, c)
	for _, n := range c.Nodes {
		h.nodes = append(h.nodes, &testserver.Client{T: t, HTTP: newClient(), PublicURL: n.PublicURL, AdminURL: n.AdminURL, Token: testserver.AdminToken})
	}
	return h
}

// makeFixture makes the load's workspaces on every one of shards, and the
// load (not started).
func (h *harness) makeFixture(shards, rounds int) {
	// A job takes at most 100 reports a day: enough jobs for the rounds.
	h.f = newFixture(h.t, h.nodes[0], shards, 4+2*rounds)
	h.load = newLoad(h.f, h.nodes)
}

// closeAtEnd stops the cluster at the end of the test, quoting the tail
// of every process's log when the test failed.
func closeAtEnd(t *testing.T, c *localcluster.Cluster) {
	t.Cleanup(func() {
		if t.Failed() {
			for _, p := range c.Procs() {
				t.Logf("%s log tail:\n%s", p.Name, p.Tail(40))
			}
		}
		c.Close()
		if *keep != "" {
			keepLogs(t, c, *keep)
		}
	})
}

// keepLogs copies every process's log into dir, as <name>.log, for a run
// to be read after the test's directory is gone.
func keepLogs(t *testing.T, c *localcluster.Cluster, dir string) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Logf("keep the logs: %v", err)
		return
	}
	for _, p := range c.Procs() {
		b, err := os.ReadFile(p.Log)
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, p.Name+".log"), b, 0o644)
		}
		if err != nil {
			t.Logf("keep %s's log: %v", p.Name, err)
		}
	}
	t.Logf("the processes' logs are in %s", dir)
}

// kill kills (SIGKILL) a random node, a random NATS server, or both, and
// starts them again three seconds later.
func (h *harness) kill(node, nats bool) event {
	ev := event{at: time.Now(), affected: -1}
	var n *localcluster.Node
	var s *localcluster.Proc
	if node {
		ev.affected = rand.IntN(len(h.c.Nodes))
		n = h.c.Nodes[ev.affected]
		h.load.down[ev.affected].Store(true)
		n.Kill()
	}
	if nats {
		s = h.c.NATS[rand.IntN(len(h.c.NATS))]
		s.Kill()
	}
	ev.at = time.Now()
	time.Sleep(3 * time.Second)
	if s != nil {
		if err := s.Start(time.Minute); err != nil {
			h.t.Fatal(err)
		}
	}
	if n != nil {
		if err := n.Start(time.Minute); err != nil {
			h.t.Fatal(err)
		}
		h.load.down[ev.affected].Store(false)
	}
	return ev
}

// restart stops a random node as an operator does (SIGTERM: it hands its
// shards over to the others), starts it again 3 s later, and waits until
// the shards have settled: chaosMoveBack after its start it takes them
// back, handing over again (both hand-overs of a rolling upgrade's step).
func (h *harness) restart() event {
	i := rand.IntN(len(h.c.Nodes))
	n := h.c.Nodes[i]
	other := (i + 1) % len(h.c.Nodes)
	h.load.down[i].Store(true)
	ev := event{at: time.Now(), affected: i}
	if err := n.Term(30 * time.Second); err != nil {
		h.t.Fatal(err)
	}
	h.t.Logf("%s stopped %v after SIGTERM", n.ID, time.Since(ev.at).Round(time.Millisecond))
	time.Sleep(3 * time.Second)
	started := time.Now()
	if err := n.Start(time.Minute); err != nil {
		h.t.Fatal(err)
	}
	h.load.down[i].Store(false)
	time.Sleep(time.Until(started.Add(chaosMoveBack + 3*time.Second)))
	var last []shardOwner
	stable := time.Now()
	for deadline := started.Add(90 * time.Second); ; time.Sleep(250 * time.Millisecond) {
		now := h.served(other)
		if len(now) != *shards || !slices.Equal(now, last) {
			last, stable = now, time.Now()
		} else if time.Since(stable) >= 2*time.Second {
			break
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("the shards' owners still move 90 s after %s started again: %v", n.ID, now)
		}
	}
	time.Sleep(3 * time.Second) // the load meets the shards at their owners
	return ev
}

// shardOwner is a served shard of GET /admin/v1/cluster.
type shardOwner struct {
	Shard int
	State string
	Owner string
	Epoch uint64
}

// served returns the shards served now, from node from's view (none when
// it does not answer).
func (h *harness) served(from int) []shardOwner {
	var st struct{ Owners []shardOwner }
	if err := h.nodes[from].AdminCall(200, "GET", "/cluster", nil, &st); err != nil {
		return nil
	}
	return slices.DeleteFunc(st.Owners, func(o shardOwner) bool { return o.State != "served" })
}

// freezeOwner stops (SIGSTOP) the owner of a random shard until another
// node has taken the shard over, then lets it go on (SIGCONT): its next
// append must fail, and it must stop serving the shard.
func (h *harness) freezeOwner() event {
	shard := rand.IntN(*shards)
	owner, epoch := h.owner(shard)
	i := slices.IndexFunc(h.c.Nodes, func(n *localcluster.Node) bool { return n.ID == owner })
	if i < 0 {
		h.t.Fatalf("shard %d: owner %q is not a node", shard, owner)
	}
	n := h.c.Nodes[i]
	h.load.down[i].Store(true)
	if err := n.Stop(); err != nil {
		h.t.Fatal(err)
	}
	ev := event{at: time.Now(), affected: i}
	deadline := time.Now().Add(30 * time.Second)
	for {
		now, e := h.ownerFrom((i+1)%len(h.nodes), shard)
		if now != "" && now != owner || e != epoch && now != "" {
			break
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("shard %d still owned by the frozen %s (epoch %d) after 30 s", shard, owner, epoch)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err := n.Cont(); err != nil {
		h.t.Fatal(err)
	}
	// The thawed node learns that it lost the lease, or its log is fenced:
	// either way it drops the shard.
	dropped := regexp.MustCompile(fmt.Sprintf(`msg="shard dropped" node=%s shard=%d `, owner, shard))
	for deadline := time.Now().Add(15 * time.Second); !dropped.MatchString(n.Tail(200)); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			// Where the drop waits: the goroutines in it, and those of the
			// shard's log, engine and forwarded requests it waits for.
			tail := n.Tail(30)
			h.t.Fatalf("%s thawed and did not drop shard %d:\n%s\nits goroutines in the cluster's drop, the log and the engine:\n%s", owner, shard, tail,
				n.Stacks("cluster.(*Node).drop", "cluster.(*Node).closeHosted", "jslog.", "engine.(*Engine).", "cluster.(*Node).onForwarded"))
		}
	}
	h.load.down[i].Store(false)
	return ev
}

// cutOff cuts a random node off from NATS past its leases (its
// connections closed: it knows at once): see isolate.
func (h *harness) cutOff() event { return h.isolate("cut-off", (*localcluster.Node).Cut) }

// blackhole lets no byte pass between a random node and NATS, closing
// nothing (a dead switch: the node learns only from its own timeouts),
// past its leases: see isolate.
func (h *harness) blackhole() event { return h.isolate("blackholed", (*localcluster.Node).Blackhole) }

// delayOwner holds every byte between a random shard's owner and NATS
// 200 ms longer, both ways, for 20 s (ten lease renewals): a slow link is
// not a lost one, so the node must lose no lease, fail no log, and
// drop no shard but by a planned hand-over (its log says).
func (h *harness) delayOwner() event {
	owner, _ := h.owner(rand.IntN(*shards))
	i := slices.IndexFunc(h.c.Nodes, func(n *localcluster.Node) bool { return n.ID == owner })
	n := h.c.Nodes[i]
	before, _ := os.ReadFile(n.Log)
	n.Delay(200 * time.Millisecond)
	defer n.Heal()
	ev := event{at: time.Now(), affected: -1}
	time.Sleep(20 * time.Second)
	after, _ := os.ReadFile(n.Log)
	flap := regexp.MustCompile(`.*(msg="lease lost|msg="shard log failed|graceful=false).*`)
	if lines := flap.FindAllString(string(after[min(len(before), len(after)):]), 5); len(lines) > 0 {
		h.t.Fatalf("%s's links to NATS 200 ms slower: it flapped:\n%s", owner, strings.Join(lines, "\n"))
	}
	return ev
}

// leaseMargin is when a node cut off stops serving its shards: 7 s after
// its last good renewal (docs/decisions.md, Leases), which was before the
// fault, plus half a second for a request in flight.
const leaseMargin = 7500 * time.Millisecond

// isolate does fault to the links to NATS of a random shard's owner and
// checks that, from the lease margin on, the node answers every request
// 503 with Retry-After (reads too: it serves no shard of its own from its
// state and forwards nothing); that the other nodes take its shards over
// (every shard served, none by it, within 30 s); and that it answers
// 503 to reports and /readyz meanwhile. Then it heals the links: the
// node must be ready again within 20 s, without a restart.
func (h *harness) isolate(what string, fault func(*localcluster.Node)) event {
	// The owner of a random shard, so that it has shards to stop serving.
	owner, _ := h.owner(rand.IntN(*shards))
	i := slices.IndexFunc(h.c.Nodes, func(n *localcluster.Node) bool { return n.ID == owner })
	if i < 0 {
		h.t.Fatalf("owner %q is not a node", owner)
	}
	n := h.c.Nodes[i]
	other := (i + 1) % len(h.c.Nodes)
	// A workspace of each shard, read through the node.
	probes := map[int]string{}
	for ws, key := range h.f.rest {
		probes[h.f.shardOf[ws]] = key
	}
	var held []int
	for _, o := range h.served(other) {
		if o.Owner == n.ID {
			held = append(held, o.Shard)
		}
	}
	h.load.down[i].Store(true)
	fault(n)
	ev := event{at: time.Now(), affected: i}
	h.t.Logf("%s %s, which served shards %v", what, n.ID, held)
	for taken, deadline := false, ev.at.Add(30*time.Second); !taken || time.Since(ev.at) < 12*time.Second; time.Sleep(250 * time.Millisecond) {
		for shard, key := range probes {
			sent := time.Now()
			r, err := h.nodes[i].Send("GET", n.PublicURL+"/api/v1/reports?limit=1", testserver.Bearer(key), nil)
			if sent.Sub(ev.at) < leaseMargin {
				continue
			}
			if err != nil || r.Status != 503 || r.Header.Get("Retry-After") == "" {
				h.t.Fatalf("%s %s answered a read of shard %d %v after the fault with %d %s (Retry-After %q, %v), want 503 with Retry-After",
					what, n.ID, shard, sent.Sub(ev.at).Round(time.Millisecond), r.Status, r.Body, r.Header.Get("Retry-After"), err)
			}
		}
		now := h.served(other)
		taken = len(now) == *shards && !slices.ContainsFunc(now, func(o shardOwner) bool { return o.Owner == n.ID })
		if !taken && time.Now().After(deadline) {
			h.t.Fatalf("%s %s: 30 s after the fault the others serve %v, want every shard, none by %s", what, n.ID, now, n.ID)
		}
	}
	for _, to := range h.f.targets[:min(len(h.f.targets), 8)] {
		r, err := h.nodes[i].ReportSend(to.job, to.key, "", `{"status":"ok"}`)
		if err != nil {
			h.t.Fatalf("%s %s: %v", what, n.ID, err)
		}
		if r.Status != 503 || r.Header.Get("Retry-After") == "" || r.JSON["error"] == nil {
			h.t.Fatalf("%s %s answered a report with %d %s (Retry-After %q), want 503 with Retry-After", what, n.ID, r.Status, r.Body, r.Header.Get("Retry-After"))
		}
	}
	if r, err := h.nodes[i].Send("GET", n.AdminURL+"/readyz", nil, nil); err != nil || r.Status != 503 {
		h.t.Fatalf("%s %s: /readyz %d %s (%v), want 503", what, n.ID, r.Status, r.Body, err)
	}
	n.Heal()
	h.load.down[i].Store(false)
	healed := time.Now()
	if !waitReadyz(h.nodes[i], 200, 20*time.Second) {
		h.t.Fatalf("%s %s not ready 20 s after it could reach NATS again", what, n.ID)
	}
	h.t.Logf("%s %s ready %v after the heal", what, n.ID, time.Since(healed).Round(10*time.Millisecond))
	return ev
}

// owner returns the node that owns shard and its epoch, from node 0's
// view of the cluster.
func (h *harness) owner(shard int) (string, uint64) {
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if o, e := h.ownerFrom(0, shard); o != "" {
			return o, e
		}
	}
	h.t.Fatalf("shard %d has no owner after 30 s", shard)
	return "", 0
}

func (h *harness) ownerFrom(node, shard int) (string, uint64) {
	for _, o := range h.served(node) {
		if o.Shard == shard {
			return o.Owner, o.Epoch
		}
	}
	return "", 0
}

// explain logs what the nodes logged about their shards since start, for
// a failover slower than the target.
func (h *harness) explain(start time.Time) {
	for _, n := range h.c.Nodes {
		b, _ := os.ReadFile(n.Log)
		var lines []string
		for line := range strings.SplitSeq(string(b), "\n") {
			i := strings.Index(line, "time=")
			if i < 0 || !strings.Contains(line, "shard") {
				continue
			}
			at, err := time.Parse(time.RFC3339Nano, strings.Fields(line[i+5:])[0])
			if err == nil && at.After(start) {
				lines = append(lines, line)
			}
		}
		h.t.Logf("%s's shard events since the round began:\n%s", n.ID, strings.Join(lines, "\n"))
	}
}

// attemptsAround logs, for each shard whose reports failed after the
// event, its reports from the last acknowledged before the event to the
// first acknowledged after its last failure: when each ended, through
// which node, and how.
func (h *harness) attemptsAround(ev event) {
	_, attempts := h.load.snapshot()
	from, failed := map[int]int{}, map[int]int{} // shard → index in attempts
	for i, a := range attempts {
		switch {
		case !a.at.After(ev.at):
			if a.ok {
				from[a.shard] = i
			}
		case !a.ok:
			failed[a.shard] = i
		}
	}
	for shard, last := range failed {
		var lines []string
		for _, a := range attempts[from[shard]:] {
			if a.shard != shard {
				continue
			}
			lines = append(lines, fmt.Sprintf("%+v via %s: %d (ok %v, Retry-After %v)", a.at.Sub(ev.at).Round(time.Millisecond), h.c.Nodes[a.node].ID, a.code, a.ok, a.retry))
			if a.ok && a.at.After(attempts[last].at) {
				break
			}
		}
		h.t.Logf("shard %d's reports around the event (ended at, relative to it):\n%s", shard, strings.Join(lines, "\n"))
	}
}

// settle waits until every shard is served again.
func (h *harness) settle() {
	if err := h.c.WaitServed(time.Minute); err != nil {
		h.t.Fatal(err)
	}
}

// failoverTimes returns, for each shard whose reports failed after the
// event (sent to nodes the event did not touch), how long after the event
// its reports were acknowledged again: the first acknowledged after its
// first failure. A later failure of the same shard in the round is the
// planned hand-over back to a node the round restored (after
// chaosMoveBack), which is no failover; the outage it leaves is logged
// apart (outages), and atRest keeps it out of the next round.
func (h *harness) failoverTimes(ev event) []time.Duration {
	// The shards are all served (settle); their next reports may still be
	// on their way.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		out, open := h.firstRecoveries(ev)
		if open == 0 || time.Now().After(deadline) {
			return out
		}
	}
}

// firstRecoveries returns failoverTimes' times, and how many shards have
// failed without a report acknowledged since.
func (h *harness) firstRecoveries(ev event) ([]time.Duration, int) {
	_, attempts := h.load.snapshot()
	firstFail := map[int]time.Time{}
	var out []time.Duration
	for _, a := range attempts { // in the order they ended
		if !a.at.After(ev.at) {
			continue
		}
		failed, seen := firstFail[a.shard]
		switch {
		case !seen && !a.ok && a.node != ev.affected:
			firstFail[a.shard] = a.at
		case seen && !failed.IsZero() && a.ok:
			out = append(out, a.at.Sub(ev.at).Round(10*time.Millisecond))
			firstFail[a.shard] = time.Time{} // counted
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out, len(firstFail) - len(out)
}

// atRest waits until every shard is served by the node it ranks first, as
// it is when no node has been away: a node a round brought back takes its
// shards back chaosMoveBack after its return, and that planned hand-over
// must not fall in the next round's measure (it did: a delay round showed
// a "failover" of 20 s that was a hand-over back). First it waits until
// every stream of JetStream has a leader and every replica is current: a
// round that restarted a NATS server ends with it up, while the streams
// it led are still electing (a node stopped with SIGTERM 3 s after a NATS
// server's kill waited over 30 s for its hand-over's snapshot, whose
// chunks' acknowledgements that election had lost). Last it waits until
// every shard has acknowledged a report since JetStream settled
// (ackedSince).
func (h *harness) atRest() {
	deadline := time.Now().Add(chaosMoveBack + time.Minute)
	js, err := h.c.JetStream()
	if err != nil {
		h.t.Fatal(err)
	}
	defer js.Conn().Close()
	for err := streamsSettled(js); err != nil; err = streamsSettled(js) {
		if time.Now().After(deadline) {
			h.t.Fatalf("JetStream not settled %v after the last round: %v", chaosMoveBack+time.Minute, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
	var ids []string
	for _, n := range h.c.Nodes {
		ids = append(ids, n.ID)
	}
	settled := time.Now()
	var owners []shardOwner
	for ; ; time.Sleep(250 * time.Millisecond) {
		owners = nil
		for i := range h.nodes {
			if owners = h.served(i); owners != nil {
				break
			}
		}
		if len(owners) == *shards && !slices.ContainsFunc(owners, func(o shardOwner) bool { return o.Owner != cluster.Rank(o.Shard, ids)[0] }) {
			break
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("the shards are not with the nodes they rank first %v after the last round: %v", chaosMoveBack+time.Minute, owners)
		}
	}
	for ; ; time.Sleep(250 * time.Millisecond) {
		acked := h.ackedSince(settled)
		if len(acked) == *shards {
			return
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("only shards %v acknowledged a report in the %v since JetStream settled", slices.Sorted(maps.Keys(acked)), time.Since(settled).Round(time.Millisecond))
		}
	}
}

// ackedSince returns the shards that acknowledged a report after t. Once
// JetStream has settled, atRest waits for every shard's: an append caught
// in the last round's election is resolved, or fails its shard's log (10 s
// after its first error), before the next round begins. Twice a round that
// slows a node's links began while a shard's append from the NATS kill
// before was still unresolved, and was blamed for the shard's log failing.
func (h *harness) ackedSince(t time.Time) map[int]bool {
	_, attempts := h.load.snapshot()
	acked := map[int]bool{}
	for _, a := range attempts {
		if a.ok && a.at.After(t) {
			acked[a.shard] = true
		}
	}
	return acked
}

// streamsSettled returns nil when every stream of js has a leader and all
// its replicas are current, or what is not. Each stream is asked itself:
// the list of streams, answered by the metadata leader, once showed every
// stream led and current while a shard's stream was still without a
// leader after a NATS server's kill, and the next round (a node's links
// slowed) saw its append go unresolved for 10 s.
func streamsSettled(js jetstream.JetStream) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	names := js.StreamNames(ctx)
	var list []string
	for name := range names.Name() {
		list = append(list, name)
	}
	if err := names.Err(); err != nil {
		return err
	}
	for _, name := range list {
		st, err := js.Stream(ctx, name)
		if err != nil {
			return fmt.Errorf("stream %s: %w", name, err)
		}
		info := st.CachedInfo()
		if info.Cluster == nil || info.Cluster.Leader == "" {
			return fmt.Errorf("stream %s has no leader", name)
		}
		for _, r := range info.Cluster.Replicas {
			if !r.Current || r.Offline {
				return fmt.Errorf("stream %s: replica %s is not current", name, r.Name)
			}
		}
	}
	return nil
}

// outages returns, for each shard whose reports failed after the event
// (sent to nodes the event did not touch), the longest time it went
// unanswered: from its last acknowledged report before a failure (or the
// event) to the next one acknowledged.
func (h *harness) outages(ev event) []time.Duration {
	_, attempts := h.load.snapshot()
	lastOK := map[int]time.Time{}
	failing := map[int]bool{}
	longest := map[int]time.Duration{}
	for _, a := range attempts { // in the order they ended
		switch {
		case a.node == ev.affected:
		case !a.at.After(ev.at):
			if a.ok {
				lastOK[a.shard] = a.at
			}
		case !a.ok:
			failing[a.shard] = true
		default:
			if failing[a.shard] {
				from := lastOK[a.shard]
				if from.Before(ev.at) {
					from = ev.at
				}
				longest[a.shard] = max(longest[a.shard], a.at.Sub(from).Round(10*time.Millisecond))
				failing[a.shard] = false
			}
			lastOK[a.shard] = a.at
		}
	}
	out := slices.Collect(maps.Values(longest))
	slices.Sort(out)
	return out
}

// resend sends every report not acknowledged yet again, with its
// Idempotency-Key, until it is.
func (h *harness) resend() {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		left := h.load.unacked()
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("%d reports still not acknowledged after 2 minutes of retries", len(left))
		}
		for _, s := range left {
			h.load.send(s, rand.IntN(len(h.nodes)))
		}
		time.Sleep(time.Second)
	}
}

// verify reads every workspace's results through the REST API: each
// acknowledged report is there exactly once, and no report is there
// twice.
func (h *harness) verify(when string) {
	h.t.Helper()
	reports, _ := h.load.snapshot()
	found := map[int64]int{}
	for ws, key := range h.f.rest {
		for _, seq := range h.readAll(ws, key) {
			found[seq]++
		}
	}
	missing, doubled, acked := 0, 0, 0
	for _, s := range reports {
		if s.acked {
			acked++
			if found[s.seq] == 0 {
				missing++
				if missing <= 5 {
					h.t.Errorf("%s: report %s (workspace %s, shard %d) was acknowledged and is not there", when, s.idem, s.to.ws, s.to.shard)
				}
			}
		}
		if found[s.seq] > 1 {
			doubled++
			if doubled <= 5 {
				h.t.Errorf("%s: report %s is there %d times", when, s.idem, found[s.seq])
			}
		}
	}
	if missing+doubled > 0 {
		h.t.Fatalf("%s: %d of %d acknowledged reports missing, %d doubled", when, missing, acked, doubled)
	}
	h.t.Logf("%s: %d reports sent, %d acknowledged, all there once", when, len(reports), acked)
}

// readAll returns the size_bytes of every result of a workspace, page by
// page, through a random node.
func (h *harness) readAll(ws, key string) []int64 {
	var out []int64
	cursor := ""
	for {
		path := "/reports?limit=100"
		if cursor != "" {
			path += "&cursor=" + cursor
		}
		var r testserver.Response
		var err error
		for try := 0; ; try++ {
			c := h.nodes[rand.IntN(len(h.nodes))]
			r, err = c.Send("GET", c.PublicURL+"/api/v1"+path, testserver.Bearer(key), nil)
			if err == nil && r.Status == 200 {
				break
			}
			if try == 20 {
				h.t.Fatalf("read workspace %s: %v %d %s", ws, err, r.Status, r.Body)
			}
			time.Sleep(500 * time.Millisecond)
		}
		for _, item := range r.List() {
			if size, ok := item["sizeBytes"].(float64); ok {
				out = append(out, int64(size))
			}
		}
		page, _ := r.JSON["pagination"].(map[string]any)
		next, _ := page["nextCursor"].(string)
		if next == "" {
			return out
		}
		cursor = next
	}
}

// checkEpochs reads every node's log: no two nodes served a shard in one
// epoch.
func (h *harness) checkEpochs() {
	served := regexp.MustCompile(`msg="shard served" node=(\S+) shard=(\d+) epoch=(\d+)`)
	by := map[string]string{}
	for _, n := range h.c.Nodes {
		b, err := os.ReadFile(n.Log)
		if err != nil {
			h.t.Fatal(err)
		}
		for _, m := range served.FindAllStringSubmatch(string(b), -1) {
			k := m[2] + "/" + m[3]
			if other, ok := by[k]; ok && other != m[1] {
				h.t.Errorf("shard %s epoch %s served by %s and %s", m[2], m[3], other, m[1])
			}
			by[k] = m[1]
		}
	}
	if len(by) < *shards {
		h.t.Errorf("the logs show %d shard epochs served, want at least %d", len(by), *shards)
	}
}

// summarize gives p50, p99 and max of times, over their count of what.
func summarize(d []time.Duration, what string) string {
	if len(d) == 0 {
		return "none measured"
	}
	slices.Sort(d)
	q := func(p float64) time.Duration { return d[min(len(d)-1, int(p*float64(len(d))))] }
	return fmt.Sprintf("p50 %v, p99 %v, max %v over %d %s", q(0.50), q(0.99), d[len(d)-1], len(d), what)
}

// writeResults puts the run's figures in the chaos section of a
// RESULTS.md (between its markers).
func writeResults(t *testing.T, path string, rounds, shards int, summary string) {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- chaos:begin -->", "<!-- chaos:end -->"
	i, j := strings.Index(string(b), begin), strings.Index(string(b), end)
	if i < 0 || j < i {
		t.Fatalf("%s has no %s … %s section", path, begin, end)
	}
	host, _ := os.Hostname()
	text := fmt.Sprintf("%s\n`make chaos` on %s (%s), %d rounds, %d shards, three NATS servers and three nodes on loopback: failover %s.\n%s",
		begin, host, time.Now().UTC().Format("2006-01-02"), rounds, shards, summary, end)
	out := string(b[:i]) + text + string(b[j+len(end):])
	if err := os.WriteFile(filepath.Clean(path), []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
}
