package main

// The load of bench cluster: Report API writes and REST reads on an
// httpFixture, each request sent to the node a route picks.

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"backupmon/transport"
)

// route returns the node (an index in the hosts) that a request for
// workspace ws goes to.
type route func(ws int) int

// Routes: to the owner of the workspace's shard, to any node at random, to
// a node that does not own the shard (the request is forwarded).
func directRoute(owner []int, f *httpFixture) route {
	return func(ws int) int { return owner[f.shards[ws]] }
}

func anyRoute(nodes int) route { return func(int) int { return rand.IntN(nodes) } }

func forwardedRoute(owner []int, f *httpFixture, nodes int) route {
	return func(ws int) int { return (owner[f.shards[ws]] + 1 + rand.IntN(nodes-1)) % nodes }
}

// multiHostClient is the load generator's client of several servers:
// conns connections at most to each (and no more than a node takes from
// one client address), with loadClient's waits and timeouts.
func multiHostClient(conns int) *fasthttp.Client {
	return &fasthttp.Client{ConfigureClient: func(hc *fasthttp.HostClient) error {
		loadSettings(hc, min(conns, transport.DefaultPublicConnsPerAddress))
		return nil
	}}
}

// routedReports makes Report API requests on f: request i reports an ok
// result for the job and with the key fixture.pick gives, under a unique
// Idempotency-Key, to the node to picks.
type routedReports struct {
	f     *httpFixture
	reqs  *requestSet
	hosts [][]byte
	to    route
}

func (r *routedReports) builder([]byte) requestBuilder {
	return &routedReportBuilder{reportRequest: newReportRequest(nil, "bench-"+r.reqs.nonce+"-"), r: r}
}

type routedReportBuilder struct {
	reportRequest
	r *routedReports
}

func (b *routedReportBuilder) build(req *fasthttp.Request, i uint64) {
	job, key := b.r.f.pick(i)
	b.host = b.r.hosts[b.r.to(key%b.r.f.workspaces)]
	b.set(req, i, b.r.reqs.paths[job], b.r.reqs.auths[key])
	b.body = appendReportBody(b.body[:0], i)
	req.SetBodyRaw(b.body)
}

func (b *routedReportBuilder) check(resp *fasthttp.Response) string { return checkReportAnswer(resp) }

// routedReads makes REST reads on f: request i reads one job of workspace
// i%workspaces (GET /api/v1/jobs/{id}, the workspace's jobs in turn) with
// its REST key, from the node to picks. Over any first N requests no
// workspace makes more than ⌈N/workspaces⌉.
type routedReads struct {
	f     *httpFixture
	uris  [][][]byte // per node, per job: http://node/api/v1/jobs/<id>
	auths [][]byte   // per workspace: Bearer <REST key>
	to    route
}

func newRoutedReads(f *httpFixture, hosts [][]byte, to route) *routedReads {
	r := &routedReads{f: f, to: to}
	for _, h := range hosts {
		var uris [][]byte
		for _, id := range f.jobIDs {
			uris = append(uris, []byte(string(h)+"/api/v1/jobs/"+id))
		}
		r.uris = append(r.uris, uris)
	}
	for _, k := range f.rest {
		r.auths = append(r.auths, []byte("Bearer "+k))
	}
	return r
}

func (r *routedReads) builder([]byte) requestBuilder { return &routedReadBuilder{r: r} }

type routedReadBuilder struct{ r *routedReads }

func (b *routedReadBuilder) build(req *fasthttp.Request, i uint64) {
	w := uint64(b.r.f.workspaces)
	ws := int(i % w)
	job := ws + b.r.f.workspaces*int((i/w)%uint64(b.r.f.jobsPerWS))
	req.SetRequestURIBytes(b.r.uris[b.r.to(ws)][job])
	req.Header.SetBytesV("Authorization", b.r.auths[ws])
}

func (b *routedReadBuilder) check(resp *fasthttp.Response) string { return checkDataAnswer(resp) }

// inTurn sends direct and forwarded reads in turn (request i: direct when
// i is even), so that both meet the same moments of the machine; side 0 is
// direct, 1 forwarded.
type inTurn struct{ direct, forwarded *routedReads }

func (t inTurn) builder([]byte) requestBuilder {
	return &inTurnBuilder{direct: routedReadBuilder{r: t.direct}, forwarded: routedReadBuilder{r: t.forwarded}}
}

type inTurnBuilder struct{ direct, forwarded routedReadBuilder }

func (b *inTurnBuilder) build(req *fasthttp.Request, i uint64) {
	if b.side(i) == 0 {
		b.direct.build(req, i)
	} else {
		b.forwarded.build(req, i)
	}
}

func (b *inTurnBuilder) side(i uint64) int { return int(i % 2) }

func (b *inTurnBuilder) check(resp *fasthttp.Response) string { return checkDataAnswer(resp) }

// phaseRun is what the load phases against one set of servers share: the
// client, the processes whose CPU counts, and the request counters that
// carry on from phase to phase on the same fixture.
type phaseRun struct {
	out   io.Writer
	load  loadConfig
	hc    *fasthttp.Client
	procs []namedProc
	// admins, when set, are the nodes' admin listeners whose /metrics say
	// what the shard logs and the forwarding did in each phase.
	admins []string
	// perfDir, when set, gets a perf profile (perf record -g) of procs
	// over each phase's measured time.
	perfDir string
	// genName names this process in the CPU line.
	genName string
	reports atomic.Uint64
	reads   atomic.Uint64
	errors  int64
}

// forReports sets the run's connections for the report phases that
// follow, closing the read phases' first: a node takes at most 256
// connections from one address.
func (r *phaseRun) forReports(conns int) {
	r.hc.CloseIdleConnections()
	r.load.conns = conns
	r.hc = multiHostClient(conns)
}

// metricsClient reads the nodes' /metrics.
var metricsClient = &http.Client{Timeout: 10 * time.Second}

// phaseResult is a measured phase, the CPU each process used in it and,
// on a cluster, what the nodes' metrics moved by.
type phaseResult struct {
	targetResult
	procCPU []time.Duration
	nodes   metricsDelta
	// scrapeLag is how long the first scrape of the nodes' metrics took:
	// requests answered meanwhile are measured, but may have moved a
	// node's counters before it was read.
	scrapeLag time.Duration
}

// run runs one phase named name with the requests newBuilder makes, paced
// at pace a second (0: closed loop), the request numbers from next (whose
// requests the fixture has budget for), and prints its figures and the CPU
// per request of every process.
func (p *phaseRun) run(name string, pace float64, newBuilder func([]byte) requestBuilder, next *atomic.Uint64, budget int64) phaseResult {
	load := p.load
	load.pace = pace
	m := &cpuMeter{procs: p.procs}
	var before map[string]float64
	var lag time.Duration
	var profile *perfRecord
	onMeasure := func() {
		if p.admins != nil {
			start := time.Now()
			before, _ = scrapeMetrics(metricsClient, p.admins)
			lag = time.Since(start)
		}
		if p.perfDir != "" {
			profile = startPerf(filepath.Join(p.perfDir, strings.ReplaceAll(name, " ", "-")+".data"), p.procs, p.load.duration)
		}
	}
	r := runLoad(p.out, load, name, p.hc, nil, newBuilder, next, budget, m.total, onMeasure)
	printTarget(p.out, name, r)
	if profile != nil {
		fmt.Fprintf(p.out, "  %s\n", profile.wait())
	}
	res := phaseResult{targetResult: r, procCPU: m.used(), scrapeLag: lag}
	if p.admins != nil {
		after, err := scrapeMetrics(metricsClient, p.admins)
		if err != nil {
			fmt.Fprintf(p.out, "  metrics: %v\n", err)
		}
		res.nodes = deltaOf(before, after)
		fmt.Fprintf(p.out, "  %s\n", res.nodes.line(r.requests))
	}
	p.errors += r.errors
	fmt.Fprintf(p.out, "  CPU per request: %s\n", p.cpuLine(res))
	return res
}

// cpuLine says how much CPU each process, this one (genName) included,
// used per measured request of r, and all of them together.
func (p *phaseRun) cpuLine(r phaseResult) string {
	perReq := func(d time.Duration) string {
		return fmt.Sprintf("%.0fµs", float64(d.Nanoseconds())/1e3/float64(max(r.requests, 1)))
	}
	parts := make([]string, 0, len(p.procs)+1)
	all := r.genCPU
	for i, pr := range p.procs {
		parts = append(parts, pr.name+" "+perReq(r.procCPU[i]))
		all += r.procCPU[i]
	}
	parts = append(parts, p.genName+" "+perReq(r.genCPU))
	return fmt.Sprintf("%s; in all %s (%.2f cores)", strings.Join(parts, ", "), perReq(all), all.Seconds()/r.elapsed.Seconds())
}
