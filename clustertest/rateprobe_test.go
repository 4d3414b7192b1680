package clustertest

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"backupmon/cluster"
	"backupmon/internal/testserver"
)

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
