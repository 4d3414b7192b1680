package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/valyala/fasthttp"

	"backupmon/transport"
)

// Report API limits the load must stay clear of (api.md 8.3).
const (
	perKeyPerMinute = 60
	perJobPerDay    = 100
	planMargin      = 1.10 // fixtures hold 10% more than the plan needs
)

// okBody is the server's answer to a recorded ok report; the bare handler
// answers the same bytes.
const okBody = `{"ok":true,"status":"ok","alert_id":null,"duplicate":false,"superseded":false}`

type reportConfig struct {
	targetFlags
	workspaces    int
	jobs, keys    int
	planRate      float64
	snapshotEvery uint64
	noSync        bool
	rates         []float64 // open loop (openloop.go): reports/s of each phase; none: closed loop
	rateConns     int
}

func reportMain(args []string) int {
	var c reportConfig
	return command("report", args, func(fs *flag.FlagSet) {
		c.targetFlags.register(fs)
		fs.IntVar(&c.workspaces, "workspaces", 1000, "workspaces the reports are spread over")
		fs.IntVar(&c.jobs, "jobs", 0, "jobs in all (0: enough for -plan-rate or -rates; rounded up to a multiple of -workspaces)")
		fs.IntVar(&c.keys, "keys", 0, "report keys in all (0: enough for -plan-rate or -rates; rounded up to a multiple of -workspaces)")
		fs.Float64Var(&c.planRate, "plan-rate", 150000, "requests/s the jobs and keys are sized for when -jobs/-keys are 0 (closed loop; -rates sizes them for its phases)")
		fs.Uint64Var(&c.snapshotEvery, "snapshot-every", 0, "engine SnapshotEvery (0: the server's default)")
		fs.BoolVar(&c.noSync, "nosync", false, "diagnosis only: the server's log skips fsync (not durable; shows what the fsync wait costs)")
		fs.Func("rates", "open loop instead (e.g. 2000,5000,10000,20000): one phase per rate of reports/s sent on a fixed schedule to the server alone, each with -warmup and -duration; issue 21's targets at 10,000/s and more", func(s string) (err error) {
			c.rates, err = parseRates(s)
			return err
		})
		fs.IntVar(&c.rateConns, "rate-conns", transport.DefaultPublicConnsPerAddress, "connections of the open loop, opened before its first phase (at most the server's connections per client address)")
	}, func() string {
		if c.conns < 1 || c.workspaces < 1 || c.duration <= 0 || c.warmup < 0 {
			return "-conns, -workspaces and -duration must be positive"
		}
		return c.checkRates()
	}, func() (bool, error) {
		res, err := runReport(c, os.Stdout)
		return res.errors == 0 && (len(c.rates) == 0 || res.ratesMet), err
	})
}

// reportResult is what runReport measured.
type reportResult struct {
	server, bare targetResult
	errors       int64
	rates        []rateResult // the open loop's phases
	ratesMet     bool         // and its targets, all met
}

// targetResult is one target's measured phase.
type targetResult struct {
	requests int64
	elapsed  time.Duration
	lat      hist
	sides    *[2]hist // with a sided builder: lat split by the requests' side; else nil
	errors   int64
	cpu      time.Duration // user+system CPU of the target process during the measured phase
	genCPU   time.Duration // the same for the load generator (this process)
}

func (t targetResult) rate() float64 { return float64(t.requests) / t.elapsed.Seconds() }

// sizeLayout works out how many jobs and keys per workspace the planned
// request count needs: at most 100 reports per job, 60 per key (counting a
// key's requests over the whole run, which is stricter than per minute).
func sizeLayout(c reportConfig) (l layout, planned int64) {
	planned = c.planned()
	perWS := func(total int, limit int64) int {
		if total > 0 {
			return (total + c.workspaces - 1) / c.workspaces
		}
		need := float64(planned) * planMargin / float64(limit)
		return max(1, int((need+float64(c.workspaces)-1)/float64(c.workspaces)))
	}
	return layout{
		workspaces: c.workspaces, clientsPerWS: 1,
		jobsPerWS: perWS(c.jobs, perJobPerDay), keysPerWS: perWS(c.keys, perKeyPerMinute),
		parallel: 128, workspaceName: "Bench MSP",
	}, planned
}

func runReport(c reportConfig, out io.Writer) (reportResult, error) {
	var res reportResult
	l, planned := sizeLayout(c)
	what := c.targetFlags.what()
	if len(c.rates) > 0 {
		what = c.openWhat()
	}
	dir, cleanup, err := startLoadRun(out, "report", c.data, what, c.noSync)
	if err != nil {
		return res, err
	}
	defer cleanup()

	// The server: engine and transport in a child process, as `backupmon
	// serve` wires them, on loopback; it sets up the fixture through the
	// engine's commands and writes it to the data directory.
	start := time.Now()
	args := []string{"-kind", "server", "-data", dir, "-workspaces", strconv.Itoa(l.workspaces),
		"-jobs-per-ws", strconv.Itoa(l.jobsPerWS), "-keys-per-ws", strconv.Itoa(l.keysPerWS),
		"-snapshot-every", strconv.FormatUint(c.snapshotEvery, 10), "-procs", strconv.Itoa(c.procs)}
	if c.noSync {
		args = append(args, "-nosync")
	}
	server, f, err := c.startServer(dir, args)
	if err != nil {
		return res, err
	}
	defer server.kill() // after stop, it does nothing
	budget := min(int64(len(f.jobIDs))*perJobPerDay, int64(len(f.secrets))*perKeyPerMinute)
	fmt.Fprintf(out, "set up %s workspaces, %s jobs, %s report keys in %s: room for %s requests (plan: %s = %s)\n",
		thousands(int64(l.workspaces)), thousands(int64(len(f.jobIDs))), thousands(int64(len(f.secrets))),
		time.Since(start).Round(time.Millisecond), thousands(budget), c.planText(), thousands(planned))
	if len(c.rates) > 0 {
		return c.runRates(out, server, f, budget)
	}

	reqs := newRequestSet(f)
	return c.runTargets(out, server, []string{"-kind", "bare"}, newReportBuilder(reqs), budget)
}

// startServer starts the server target on dir with args (the profile flag
// added) and reads the fixture it set up.
func (t targetFlags) startServer(dir string, args []string) (*target, *fixture, error) {
	if t.cpuProfile != "" {
		args = append(args, "-cpuprofile", t.cpuProfile)
	}
	server, err := startTarget(args...)
	if err != nil {
		return nil, nil, err
	}
	f, err := readFixture(filepath.Join(dir, fixtureFile))
	if err != nil {
		server.kill()
		return nil, nil, err
	}
	return server, f, nil
}

// runTargets runs the load made by builder against a bare target started
// with bareArgs (unless -server-only), then against the server, whose
// fixture has room for budget requests, and returns what they measured.
func (t targetFlags) runTargets(out io.Writer, server *target, bareArgs []string, builder func(host []byte) requestBuilder, budget int64) (reportResult, error) {
	var res reportResult
	if err := t.runBare(out, &res, bareArgs, builder); err != nil {
		return res, err
	}
	err := t.runServer(out, &res, server, builder, budget)
	return res, err
}

// runBare runs the load against a bare target started with args, unless
// -server-only.
func (t targetFlags) runBare(out io.Writer, res *reportResult, args []string, builder func(host []byte) requestBuilder) error {
	if t.serverOnly {
		return nil
	}
	if t.cpuProfile != "" {
		args = append(args, "-cpuprofile", t.cpuProfile+".bare")
	}
	bare, err := startTarget(args...)
	if err != nil {
		return err
	}
	res.bare = runTarget(out, t.load(), "bare", bare.addr, builder, 0, bare.cpu, nil)
	bare.stop()
	printTarget(out, "bare", res.bare)
	res.errors += res.bare.errors
	return nil
}

// runServer runs the load against the server target (tracing it if asked),
// prints its log statistics, stops it, and prints the errors and the last
// line: ratio <server ÷ bare requests/s> p99x <server p99 ÷ bare p99>.
func (t targetFlags) runServer(out io.Writer, res *reportResult, server *target, builder func(host []byte) requestBuilder, budget int64) error {
	var onMeasure func()
	if t.traceFile != "" {
		path, _ := filepath.Abs(t.traceFile)
		onMeasure = func() { server.startTrace(path) }
	}
	res.server = runTarget(out, t.load(), "server", server.addr, builder, budget, server.cpu, onMeasure)
	printTarget(out, "server", res.server)
	res.errors += res.server.errors
	if batches, records, syncP50, syncP99, snaps, snapTime, err := server.stats(); err == nil && batches > 0 {
		fmt.Fprintf(out, "server log: %s batches, %.1f records/batch, write+fsync p50 %s p99 %s; %d snapshots taken (%s in all)\n",
			thousands(batches), float64(records)/float64(batches), fmtDur(syncP50), fmtDur(syncP99), snaps, snapTime.Round(time.Millisecond))
	}
	if err := server.finish(out, "server target", int64(res.errors), "requests"); err != nil {
		return err
	}
	if !t.serverOnly {
		fmt.Fprintf(out, "ratio %.2f p99x %.2f\n", res.server.rate()/res.bare.rate(),
			float64(res.server.lat.quantile(0.99))/float64(res.bare.lat.quantile(0.99)))
	}
	return nil
}

// readFixture reads the ids and secrets the server target wrote.
func readFixture(path string) (*fixture, error) {
	var fj fixtureJSON
	if err := readJSON(path, &fj); err != nil {
		return nil, fmt.Errorf("read fixture: %w", err)
	}
	l := layout{workspaces: fj.Layout.Workspaces, clientsPerWS: fj.Layout.ClientsPerWS, jobsPerWS: fj.Layout.JobsPerWS, keysPerWS: fj.Layout.KeysPerWS,
		keyType: fj.Layout.KeyType, resultsPerJob: fj.Layout.ResultsPerJob, alertsPerWS: fj.Layout.AlertsPerWS}
	return &fixture{layout: l, wsIDs: fj.WorkspaceIDs, jobIDs: fj.JobIDs, secrets: fj.Secrets}, nil
}

func printTarget(out io.Writer, name string, t targetResult) {
	perReq := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(max(t.requests, 1)) }
	fmt.Fprintf(out, "%-6s %9s requests in %s: %8.0f requests/s  p50 %s  p99 %s  mean %s  max %s  errors %d  (CPU: target %.2f cores %.0fµs/request, load generator %.2f cores %.0fµs/request)\n",
		name, thousands(t.requests), t.elapsed.Round(time.Millisecond), t.rate(),
		fmtDur(t.lat.quantile(0.50)), fmtDur(t.lat.quantile(0.99)), fmtDur(t.lat.mean()), fmtDur(time.Duration(t.lat.max)), t.errors,
		t.cpu.Seconds()/t.elapsed.Seconds(), perReq(t.cpu), t.genCPU.Seconds()/t.elapsed.Seconds(), perReq(t.genCPU))
}

// processCPU returns the user and system CPU time this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func fmtDur(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.2fs", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.2fms", float64(d)/1e6)
	default:
		return fmt.Sprintf("%.0fµs", float64(d)/1e3)
	}
}

// bareAnswer is a fixed answer of the bare handler: the server's status,
// headers and body for requests whose path ends with Path ("" for any).
type bareAnswer struct {
	Path    string
	Status  int
	Headers [][2]string
	Body    []byte
}

// okAnswer is the bare handler's answer for bench report: the server's ok
// body with its Content-Type.
var okAnswer = bareAnswer{Status: fasthttp.StatusOK, Body: []byte(okBody), Headers: [][2]string{
	{"Content-Type", "application/json; charset=utf-8"},
}}

// bareServer is a fasthttp server with the public listener's settings whose
// handler answers every request with a fixed answer: the first whose Path
// ends the request's path.
func bareServer(answers []bareAnswer) *fasthttp.Server {
	return &fasthttp.Server{
		Handler: func(ctx *fasthttp.RequestCtx) {
			path := ctx.Path()
			a := &answers[0]
			for i := range answers {
				if bytes.HasSuffix(path, []byte(answers[i].Path)) {
					a = &answers[i]
					break
				}
			}
			ctx.SetStatusCode(a.Status)
			for _, h := range a.Headers {
				ctx.Response.Header.Set(h[0], h[1])
			}
			ctx.SetBody(a.Body)
		},
		ReadTimeout:           15 * time.Second,
		WriteTimeout:          15 * time.Second,
		IdleTimeout:           60 * time.Second,
		MaxRequestBodySize:    1 << 20,
		ReadBufferSize:        16 << 10,
		NoDefaultServerHeader: true,
		NoDefaultContentType:  true,
		CloseOnShutdown:       true,
	}
}

// requestSet holds what varies between requests, prepared once.
type requestSet struct {
	f     *fixture
	paths [][]byte // per job: /api/v1/jobs/<id>/report
	auths [][]byte // per key: Bearer <secret>
	nonce string   // makes the run's idempotency keys unique
}

func newRequestSet(f *fixture) *requestSet {
	s := &requestSet{f: f, nonce: strconv.FormatInt(time.Now().UnixNano(), 36)}
	for _, id := range f.jobIDs {
		s.paths = append(s.paths, []byte("/api/v1/jobs/"+id+"/report"))
	}
	for _, k := range f.secrets {
		s.auths = append(s.auths, []byte("Bearer "+k))
	}
	return s
}

// errorLog counts failed requests by kind and keeps one example of each.
type errorLog struct {
	mu    sync.Mutex
	kinds map[string]int64
	first map[string]string
}

func (e *errorLog) add(kind, example string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.kinds == nil {
		e.kinds, e.first = map[string]int64{}, map[string]string{}
	}
	e.kinds[kind]++
	if _, ok := e.first[kind]; !ok {
		e.first[kind] = example
	}
}

func (e *errorLog) print(out io.Writer, name string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	kinds := make([]string, 0, len(e.kinds))
	for k := range e.kinds {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		fmt.Fprintf(out, "%s error: %s × %d, e.g. %s\n", name, k, e.kinds[k], e.first[k])
	}
}

// Phases of a run.
const (
	phaseWarmup int32 = iota
	phaseMeasure
	phaseStop
)

// loadConfig is how runTarget drives a target.
type loadConfig struct {
	conns            int
	warmup, duration time.Duration
	// pace, when positive, spaces the requests at this many a second
	// (open loop, below the server's capacity: latency at a given load);
	// 0 sends each connection's next request as soon as its answer came.
	pace float64
}

// targetFlags are the flags the load commands share (bench report, read
// and mail): the load and the server process; serverOnly is report's and
// read's, which run the load against a bare handler too.
type targetFlags struct {
	duration, warmup time.Duration
	conns            int
	data             string
	cpuProfile       string
	traceFile        string
	procs            int
	serverOnly       bool
}

// register defines the flags of bench report and bench read.
func (t *targetFlags) register(fs *flag.FlagSet) {
	t.registerLoad(fs, " per target", 64, "connections, each driven by one goroutine (closed loop)")
	fs.BoolVar(&t.serverOnly, "server-only", false, "skip the bare handler (no ratio line)")
}

// registerLoad defines the flags of the load and the server process: per
// follows "measured time" and "warm-up" in their help, and conns is the
// default of -conns, connsHelp its help.
func (t *targetFlags) registerLoad(fs *flag.FlagSet, per string, conns int, connsHelp string) {
	fs.DurationVar(&t.duration, "duration", 10*time.Second, "measured time"+per+" (after the warm-up)")
	fs.DurationVar(&t.warmup, "warmup", 3*time.Second, "warm-up"+per+", not measured")
	fs.IntVar(&t.conns, "conns", conns, connsHelp)
	fs.StringVar(&t.data, "data", "", "data directory for the server (must be empty; kept afterwards); default: a temp dir, removed")
	fs.StringVar(&t.cpuProfile, "cpuprofile", "", "write a CPU profile of the server process (from listening to the end) to this file")
	fs.StringVar(&t.traceFile, "trace", "", "write a 2 s execution trace of the server process's measured phase to this file (go tool trace)")
	fs.IntVar(&t.procs, "procs", 0, "the server process's GOMAXPROCS (0: its own choice, as backupmon serve makes it)")
}

// what is the first line's account of a load run against the server and
// the bare handler: connections, warm-up and measured time.
func (t targetFlags) what() string {
	return fmt.Sprintf("%d connections, %s warm-up + %s measured per target", t.conns, t.warmup, t.duration)
}

func (t targetFlags) load() loadConfig {
	return loadConfig{conns: t.conns, warmup: t.warmup, duration: t.duration}
}

// requestBuilder makes the requests of one load-generator goroutine (each
// goroutine has its own, so it may keep buffers): build sets up request i on
// req, which is the goroutine's own and keeps what the previous build set;
// check returns "" for a good answer, or the kind of fault to count it under.
type requestBuilder interface {
	build(req *fasthttp.Request, i uint64)
	check(resp *fasthttp.Response) string
}

// sided is a requestBuilder whose requests are of two sides (direct and
// forwarded reads sent in turn): runLoad keeps their latencies apart too.
type sided interface {
	side(i uint64) int // 0 or 1
}

// runTarget drives addr with c.conns connections in a closed loop: each
// goroutine sends a request (newBuilder makes each goroutine's builder; host
// is "http://addr") and waits for the answer. Requests started during the
// measured phase count; every answer must pass the builder's check. budget
// (0: none) is how many requests the fixture has room for.
// measurePhases lets the load warm up, then moves phase to phaseMeasure
// (calling onMeasure) for c.duration, then to phaseStop. It returns the
// measured time and the CPU the bench process and the target used in it.
func measurePhases(c loadConfig, phase *atomic.Int32, targetCPU func() time.Duration, onMeasure func()) (elapsed, genCPU, tcpu time.Duration) {
	time.Sleep(c.warmup)
	cpu0, tcpu0 := processCPU(), targetCPU()
	t1 := time.Now()
	phase.Store(phaseMeasure)
	if onMeasure != nil {
		onMeasure()
	}
	time.Sleep(c.duration)
	phase.Store(phaseStop)
	return time.Since(t1), processCPU() - cpu0, targetCPU() - tcpu0
}

// loadClient returns the HTTP client of a load generator: conns
// connections to addr, waits and timeouts long enough that a loaded server
// answers rather than the client giving up, and no User-Agent header.
func loadClient(addr string, conns int) *fasthttp.HostClient {
	hc := &fasthttp.HostClient{Addr: addr}
	loadSettings(hc, conns)
	return hc
}

// loadSettings gives hc a load generator's settings: conns connections at
// most, waits and timeouts long enough that a loaded server answers rather
// than the client giving up, and no User-Agent header.
func loadSettings(hc *fasthttp.HostClient, conns int) {
	hc.MaxConns = conns
	hc.MaxConnWaitTimeout = 30 * time.Second
	hc.ReadTimeout = 30 * time.Second
	hc.WriteTimeout = 30 * time.Second
	hc.MaxIdleConnDuration = time.Minute
	hc.MaxResponseBodySize = 16 << 20
	hc.NoDefaultUserAgentHeader = true
}

func runTarget(out io.Writer, c loadConfig, name, addr string, newBuilder func(host []byte) requestBuilder, budget int64, targetCPU func() time.Duration, onMeasure func()) targetResult {
	hc := loadClient(addr, c.conns)
	defer hc.CloseIdleConnections()
	return runLoad(out, c, name, hc, []byte("http://"+addr), newBuilder, new(atomic.Uint64), budget, targetCPU, onMeasure)
}

// doer sends a request and waits for its answer: a fasthttp.HostClient
// (one address) or a fasthttp.Client (the host each request's URI names).
type doer interface {
	Do(req *fasthttp.Request, resp *fasthttp.Response) error
}

// runLoad is runTarget's loop over any client: request numbers come from
// next, which may carry on from an earlier phase on the same fixture (the
// budget counts from zero, so it covers every phase that shared next).
func runLoad(out io.Writer, c loadConfig, name string, hc doer, host []byte, newBuilder func(host []byte) requestBuilder, next *atomic.Uint64, budget int64, targetCPU func() time.Duration, onMeasure func()) targetResult {
	var (
		phase  atomic.Int32
		errs   errorLog
		nerr   atomic.Int64
		counts = make([]int64, c.conns)
		hists  = make([]hist, c.conns)
		sides  [][2]hist // with a sided builder only
		wg     sync.WaitGroup
		pace   *pacer
		done   = make(chan struct{})
	)
	if c.pace > 0 {
		pace = newPacer(c.pace, 1)
	}
	if _, ok := newBuilder(host).(sided); ok {
		sides = make([][2]hist, c.conns)
	}
	for w := range c.conns {
		wg.Go(func() {
			req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
			defer fasthttp.ReleaseRequest(req)
			defer fasthttp.ReleaseResponse(resp)
			rb := newBuilder(host)
			sb, isSided := rb.(sided)
			h := &hists[w]
			for {
				if pace != nil && !pace.wait(done) {
					return
				}
				p := phase.Load()
				if p == phaseStop {
					return
				}
				i := next.Add(1) - 1
				if budget > 0 && int64(i) >= budget {
					nerr.Add(1)
					errs.add("fixture exhausted", "raise the fixture's size (-plan-rate, or the workspaces, jobs or keys)")
					return
				}
				rb.build(req, i)
				t0 := time.Now()
				err := hc.Do(req, resp)
				lat := time.Since(t0)
				if err != nil {
					nerr.Add(1)
					errs.add("transport: "+err.Error(), err.Error())
					continue
				}
				if kind := rb.check(resp); kind != "" {
					nerr.Add(1)
					errs.add(kind, string(resp.Body()))
					continue
				}
				if p == phaseMeasure {
					h.record(lat)
					if isSided {
						sides[w][sb.side(i)].record(lat)
					}
					counts[w]++
				}
			}
		})
	}
	elapsed, cpu, tcpu := measurePhases(c, &phase, targetCPU, onMeasure)
	close(done)
	wg.Wait()
	var r targetResult
	r.elapsed, r.cpu, r.genCPU = elapsed, tcpu, cpu
	for w := range c.conns {
		r.requests += counts[w]
		r.lat.merge(&hists[w])
	}
	if sides != nil {
		r.sides = new([2]hist)
		for w := range sides {
			r.sides[0].merge(&sides[w][0])
			r.sides[1].merge(&sides[w][1])
		}
	}
	r.errors = nerr.Load()
	errs.print(out, name)
	return r
}

// reportBuilder makes Report API requests: request i reports an ok result
// for the job and with the key fixture.pick gives, under a unique
// idempotency key; the answer must be a 200 with "duplicate":false.
type reportBuilder struct {
	reportRequest
	reqs *requestSet
}

func newReportBuilder(reqs *requestSet) func(host []byte) requestBuilder {
	return func(host []byte) requestBuilder {
		return &reportBuilder{reportRequest: newReportRequest(host, "bench-"+reqs.nonce+"-"), reqs: reqs}
	}
}

func (b *reportBuilder) build(req *fasthttp.Request, i uint64) {
	job, key := b.reqs.f.pick(i)
	b.set(req, i, b.reqs.paths[job], b.reqs.auths[key])
	b.body = appendReportBody(b.body[:0], i)
	req.SetBodyRaw(b.body)
}

// reportRequest is what the Report API requests of one load-generator
// goroutine share: the method and content type, set once, and for request
// i its URI, key and a unique idempotency key (the prefix, then i), built
// in buffers it reuses; body is the caller's buffer for the body.
type reportRequest struct {
	host            []byte
	uri, idem, body []byte
	prefix          int
	started         bool
}

// newReportRequest returns the requests to host whose idempotency keys
// start with idemPrefix.
func newReportRequest(host []byte, idemPrefix string) reportRequest {
	return reportRequest{host: host, idem: []byte(idemPrefix), prefix: len(idemPrefix)}
}

// set makes req the report number i to path, with the Authorization header
// auth; the body is the caller's to set.
func (b *reportRequest) set(req *fasthttp.Request, i uint64, path, auth []byte) {
	if !b.started {
		req.Header.SetMethod(fasthttp.MethodPost)
		req.Header.SetContentType("application/json")
		b.started = true
	}
	b.uri = append(append(b.uri[:0], b.host...), path...)
	req.SetRequestURIBytes(b.uri)
	req.Header.SetBytesV("Authorization", auth)
	b.idem = strconv.AppendUint(b.idem[:b.prefix], i, 10)
	req.Header.SetBytesV("Idempotency-Key", b.idem)
}

func (b *reportBuilder) check(resp *fasthttp.Response) string { return checkReportAnswer(resp) }

// checkReportAnswer returns "" for the answer to a new report (a 200 with
// "ok":true and "duplicate":false), else the kind of fault: "status <code>",
// or "200 without ok:true and duplicate:false".
func checkReportAnswer(resp *fasthttp.Response) string {
	if resp.StatusCode() != fasthttp.StatusOK {
		return fmt.Sprintf("status %d", resp.StatusCode())
	}
	if body := resp.Body(); !bytes.Contains(body, []byte(`"ok":true`)) || !bytes.Contains(body, []byte(`"duplicate":false`)) {
		return "200 without ok:true and duplicate:false"
	}
	return ""
}

// appendReportBody appends a small valid report body that varies with i.
func appendReportBody(b []byte, i uint64) []byte {
	b = append(b, `{"status":"ok","duration_seconds":`...)
	b = strconv.AppendUint(b, 600+i%3600, 10)
	b = append(b, `,"size_bytes":`...)
	b = strconv.AppendUint(b, 1<<30+(i%4096)<<20, 10)
	return append(b, '}')
}
