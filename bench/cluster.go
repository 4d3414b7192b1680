package main

// bench cluster (issue 20): durable reports/s and REST reads through a
// local cluster (three NATS servers and three nodes, each a process of the
// backupmon binary, on loopback), sent to each workspace's owner or to any
// node, against a single `backupmon serve` of the same binary in the same
// run; the CPU every process spends per request; the targets.

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"backupmon/localcluster"
)

type clusterConfig struct {
	binary           string
	shards           int
	keep             bool
	settle           bool
	duration, warmup time.Duration
	conns            int
	planRate         float64
	singlePlanRate   float64
	readPlanRate     float64
	workspaces       int
	phases           string
}

// clusterPhases are the parts of a run -phases selects.
type clusterPhases struct{ reports, reads, single bool }

func (c clusterConfig) parsePhases() (clusterPhases, bool) {
	var p clusterPhases
	for _, s := range strings.Split(c.phases, ",") {
		switch strings.TrimSpace(s) {
		case "reports":
			p.reports = true
		case "reads":
			p.reads = true
		case "single":
			p.single = true
		default:
			return p, false
		}
	}
	return p, p.reports || p.reads
}

func clusterMain(args []string) int {
	var c clusterConfig
	return command("cluster", args, func(fs *flag.FlagSet) {
		fs.StringVar(&c.binary, "binary", "", "the backupmon binary (default: go build ./cmd/backupmon into the run's directory)")
		fs.IntVar(&c.shards, "shards", 16, "the cluster's shard count")
		fs.BoolVar(&c.keep, "keep", false, "keep the run's directory (every process's data and log)")
		fs.BoolVar(&c.settle, "settle", true, "before the load, wait until the shards have settled on their preferred nodes (33 s after the start: the first node up owns every shard until then); -settle=false only for runs shorter than that")
		fs.DurationVar(&c.duration, "duration", 4*time.Second, "measured time of each phase (after its warm-up)")
		fs.DurationVar(&c.warmup, "warmup", time.Second, "warm-up of each phase, not measured")
		fs.IntVar(&c.conns, "conns", 64, "connections of the load generator, each driven by one goroutine (closed loop)")
		fs.Float64Var(&c.planRate, "plan-rate", 20000, "reports/s per phase the cluster's fixture has room for (two report phases)")
		fs.Float64Var(&c.singlePlanRate, "single-plan-rate", 50000, "reports/s the single node's fixture has room for")
		fs.Float64Var(&c.readPlanRate, "read-plan-rate", 60000, "reads/s per phase each fixture has room for (two read phases on the cluster, one on the single node)")
		fs.IntVar(&c.workspaces, "workspaces", 0, "workspaces of each fixture (0: enough for the reads within the Pro limit of 300 a minute, counted over the run)")
		fs.StringVar(&c.phases, "phases", "reports,reads,single", "comma-separated: reports (durable reports/s, direct and any node), reads (REST reads direct and forwarded), single (the same on a single node)")
	}, func() string {
		if _, ok := c.parsePhases(); !ok {
			return "-phases lists reports, reads and single, with reports or reads"
		}
		if c.shards < 1 || c.conns < 1 || c.duration <= 0 || c.warmup < 0 || c.planRate <= 0 || c.singlePlanRate <= 0 || c.readPlanRate <= 0 || c.workspaces < 0 {
			return "-shards, -conns, -duration and the plan rates must be positive"
		}
		return ""
	}, func() (bool, error) {
		res, err := runCluster(c, os.Stdout)
		return err == nil && res.errors == 0 && res.targetsMet, err
	})
}

// clusterResult is what runCluster measured.
type clusterResult struct {
	errors                     int64
	startup                    time.Duration
	direct, anyNode            phaseResult
	readDirect, readForwarded  phaseResult
	singleReports, singleReads phaseResult
	nodeRSS                    uint64 // the nodes' RSS after the load, in all
	targetsMet                 bool
}

func runCluster(c clusterConfig, out io.Writer) (clusterResult, error) {
	var res clusterResult
	phases, _ := c.parsePhases()
	dir, err := os.MkdirTemp("", "backupmon-bench-cluster-")
	if err != nil {
		return res, err
	}
	if c.keep {
		defer fmt.Fprintf(out, "kept %s\n", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	bin := c.binary
	if bin == "" {
		start := time.Now()
		if bin, err = buildBinary(dir); err != nil {
			return res, err
		}
		fmt.Fprintf(out, "built %s in %s\n", bin, time.Since(start).Round(time.Millisecond))
	}
	fmt.Fprintf(out, "bench cluster: 3 NATS servers + 3 nodes, %d shards; %d connections, %s warm-up + %s measured per phase; load generator GOMAXPROCS %d; %d CPUs; load average %s; data %s\n",
		c.shards, c.conns, c.warmup, c.duration, runtime.GOMAXPROCS(0), runtime.NumCPU(), loadAverage(), dir)

	if err := c.runOnCluster(out, bin, filepath.Join(dir, "cluster"), phases, &res); err != nil {
		return res, err
	}
	if phases.single {
		if err := c.runOnSingle(out, bin, filepath.Join(dir, "single"), phases, &res); err != nil {
			return res, err
		}
	}
	res.targetsMet = c.printVerdict(out, phases, &res)
	return res, nil
}

// runOnCluster starts the cluster, sets its fixture up, runs the cluster's
// phases and stops it.
func (c clusterConfig) runOnCluster(out io.Writer, bin, dir string, phases clusterPhases, res *clusterResult) (err error) {
	start := time.Now()
	cl, err := localcluster.Start(localcluster.Config{Binary: bin, Dir: dir, Shards: c.shards, AdminToken: benchAdminToken, StartTimeout: 2 * time.Minute})
	if err != nil {
		return fmt.Errorf("start the cluster: %w", err)
	}
	res.startup = time.Since(start)
	defer func() {
		stop := time.Now()
		cerr := cl.Close()
		fmt.Fprintf(out, "cluster stopped in %s\n", time.Since(stop).Round(time.Millisecond))
		if err == nil && cerr != nil {
			err = fmt.Errorf("stop the cluster: %w", cerr)
		}
	}()
	var procs, nodes []namedProc
	var ids, admins []string
	var hosts [][]byte
	for _, n := range cl.Nodes {
		pid, err := childWithArg(filepath.Join(dir, n.ID))
		if err != nil {
			return err
		}
		nodes = append(nodes, namedProc{n.ID, pid})
		ids, admins, hosts = append(ids, n.ID), append(admins, n.AdminURL), append(hosts, []byte(n.PublicURL))
	}
	procs = slices.Clone(nodes)
	for _, p := range cl.NATS {
		pid, err := childWithArg(filepath.Join(dir, p.Name))
		if err != nil {
			return err
		}
		procs = append(procs, namedProc{p.Name, pid})
	}
	rss, _ := rssLine(procs)
	fmt.Fprintf(out, "cluster started in %s (every shard served); RSS %s\n", res.startup.Round(time.Millisecond), rss)

	api := newAdminAPI(admins)
	phase := c.warmup + c.duration
	l := sizeHTTPFixture(c.planRate*phase.Seconds()*2, c.readPlanRate*phase.Seconds()*2, c.workspaces)
	f, err := c.setUp(out, "cluster", api, l, c.shards)
	if err != nil {
		return err
	}
	var owner []int
	var epochs []uint64
	if c.settle {
		var waited time.Duration
		if owner, epochs, waited, err = api.settle(ids, c.shards, start, 3*time.Second, time.Minute); err != nil {
			return err
		}
		fmt.Fprintf(out, "shards settled (%s after the start, waited %s): %s\n", time.Since(start).Round(time.Second), waited.Round(100*time.Millisecond), ownersLine(ids, owner, f))
	} else {
		if owner, epochs, err = api.owners(ids, c.shards); err != nil {
			return err
		}
		fmt.Fprintf(out, "owners (not settled): %s\n", ownersLine(ids, owner, f))
	}

	run := &phaseRun{out: out, load: loadConfig{conns: c.conns, warmup: c.warmup, duration: c.duration}, hc: multiHostClient(c.conns), procs: procs, admins: admins}
	defer run.hc.CloseIdleConnections()
	// The reads first: the jobs they read hold no results yet, as on the
	// single node when its reads run.
	if phases.reads {
		res.readDirect = run.run("cluster reads direct", newRoutedReads(f, hosts, directRoute(owner, f)).builder, &run.reads, f.readBudget())
		res.readForwarded = run.run("cluster reads forwarded", newRoutedReads(f, hosts, forwardedRoute(owner, f, len(hosts))).builder, &run.reads, f.readBudget())
	}
	if phases.reports {
		reqs := newRequestSet(f.fixture)
		res.direct = run.run("cluster reports direct", (&routedReports{f: f, reqs: reqs, hosts: hosts, to: directRoute(owner, f)}).builder, &run.reports, f.reportBudget())
		res.anyNode = run.run("cluster reports any node", (&routedReports{f: f, reqs: reqs, hosts: hosts, to: anyRoute(len(hosts))}).builder, &run.reports, f.reportBudget())
	}
	res.errors += run.errors
	rss, _ = rssLine(procs)
	_, res.nodeRSS = rssLine(nodes)
	fmt.Fprintf(out, "RSS after the load: %s (nodes %.0f MiB in all)\n", rss, float64(res.nodeRSS)/(1<<20))
	owner2, epochs2, err := api.owners(ids, c.shards)
	if err != nil {
		return err
	}
	if !slices.Equal(owner, owner2) || !slices.Equal(epochs, epochs2) {
		fmt.Fprintf(out, "WARNING: shards changed owner during the run (now %s): some direct requests were forwarded\n", ownersLine(ids, owner2, f))
	}
	return nil
}

// runOnSingle starts a single node, sets its fixture up the same way, runs
// the same report and read phases (every request to it) and stops it.
func (c clusterConfig) runOnSingle(out io.Writer, bin, dir string, phases clusterPhases, res *clusterResult) (err error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	start := time.Now()
	n, err := startSingleNode(bin, filepath.Join(dir, "data"), filepath.Join(dir, "serve.log"), benchAdminToken, 2*time.Minute)
	if err != nil {
		return err
	}
	defer func() {
		stop := time.Now()
		serr := n.stop(30 * time.Second)
		fmt.Fprintf(out, "single node stopped in %s\n", time.Since(stop).Round(time.Millisecond))
		if err == nil {
			err = serr
		}
	}()
	procs := []namedProc{{"server", n.pid()}}
	rss, _ := rssLine(procs)
	fmt.Fprintf(out, "single node started in %s; RSS %s\n", time.Since(start).Round(time.Millisecond), rss)
	phase := (c.warmup + c.duration).Seconds()
	l := sizeHTTPFixture(c.singlePlanRate*phase, c.readPlanRate*phase, c.workspaces)
	f, err := c.setUp(out, "single node", newAdminAPI([]string{n.adminURL}), l, 0)
	if err != nil {
		return err
	}
	hosts := [][]byte{[]byte(n.publicURL)}
	one := func(int, uint64) int { return 0 }
	run := &phaseRun{out: out, load: loadConfig{conns: c.conns, warmup: c.warmup, duration: c.duration}, hc: multiHostClient(c.conns), procs: procs}
	defer run.hc.CloseIdleConnections()
	if phases.reads {
		res.singleReads = run.run("single reads", newRoutedReads(f, hosts, one).builder, &run.reads, f.readBudget())
	}
	if phases.reports {
		res.singleReports = run.run("single reports", (&routedReports{f: f, reqs: newRequestSet(f.fixture), hosts: hosts, to: one}).builder, &run.reports, f.reportBudget())
	}
	res.errors += run.errors
	rss, _ = rssLine(procs)
	fmt.Fprintf(out, "RSS after the load: %s\n", rss)
	return nil
}

// setUp makes the fixture of l through api and prints what it made and
// how long it took.
func (c clusterConfig) setUp(out io.Writer, who string, api *adminAPI, l layout, shards int) (*httpFixture, error) {
	start := time.Now()
	f, err := setUpHTTP(api, l, shards)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", who, err)
	}
	took := time.Since(start)
	requests := int64(l.workspaces*3 + l.jobs() + l.keys())
	fmt.Fprintf(out, "%s: set up %s Pro workspaces, each with a client, a REST key, %d jobs and %d report keys, through the admin API in %s (%s requests, %.0f/s, %d at once): room for %s reports and %s reads\n",
		who, thousands(int64(l.workspaces)), l.jobsPerWS, l.keysPerWS, took.Round(time.Millisecond), thousands(requests), float64(requests)/took.Seconds(), l.parallel,
		thousands(f.reportBudget()), thousands(f.readBudget()))
	return f, nil
}

// ratioText returns a ÷ b with two decimals, or "n/a" when b is 0.
func ratioText(a, b float64) string {
	if b == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", a/b)
}

// ownersLine says how many shards and workspaces each node owns.
func ownersLine(ids []string, owner []int, f *httpFixture) string {
	shards, workspaces := make([]int, len(ids)), make([]int, len(ids))
	for _, o := range owner {
		shards[o]++
	}
	for _, s := range f.shards {
		workspaces[owner[s]]++
	}
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = fmt.Sprintf("%s %d shards (%d workspaces)", id, shards[i], workspaces[i])
	}
	return strings.Join(parts, ", ")
}

// Issue 20's targets.
const (
	targetClusterReports = 10000 // durable reports/s through the cluster, any node
	targetForwardedP99x  = 2.0   // forwarded read p99 ÷ direct read p99, at most
)

// printVerdict prints the errors, the summary line (cluster ÷ single-node
// reports/s, forwarded ÷ direct read p99) and the targets, met or not; it
// returns whether every target the run measured was met.
func (c clusterConfig) printVerdict(out io.Writer, phases clusterPhases, res *clusterResult) bool {
	if res.errors > 0 {
		fmt.Fprintf(out, "ERRORS: %d requests failed (see above)\n", res.errors)
	}
	var summary []string
	if phases.reports && phases.single {
		single := res.singleReports.rate()
		summary = append(summary, fmt.Sprintf("cluster ÷ single-node reports/s: direct %s, any node %s", ratioText(res.direct.rate(), single), ratioText(res.anyNode.rate(), single)))
	}
	p99Direct, p99Forwarded := res.readDirect.lat.quantile(0.99), res.readForwarded.lat.quantile(0.99)
	p99x := float64(p99Forwarded) / float64(p99Direct)
	if phases.reads {
		summary = append(summary, "forwarded ÷ direct read p99 "+ratioText(float64(p99Forwarded), float64(p99Direct)))
		if phases.single {
			summary = append(summary, "cluster direct ÷ single-node reads/s "+ratioText(res.readDirect.rate(), res.singleReads.rate()))
		}
	}
	fmt.Fprintf(out, "summary (%d shards): %s\n", c.shards, strings.Join(summary, "; "))
	met := true
	verdict := func(ok bool, what string) {
		word := "met    "
		if !ok {
			word, met = "NOT MET", false
		}
		fmt.Fprintf(out, "target %s  %s\n", word, what)
	}
	if phases.reports {
		verdict(res.anyNode.rate() >= targetClusterReports, fmt.Sprintf("durable reports/s through the cluster (any node) ≥ %s: %s (direct %s)",
			thousands(targetClusterReports), thousands(int64(res.anyNode.rate())), thousands(int64(res.direct.rate()))))
	}
	if phases.reads {
		verdict(p99Direct > 0 && p99x <= targetForwardedP99x, fmt.Sprintf("forwarded read p99 ≤ %.0f× direct: %s× (%s ÷ %s)",
			targetForwardedP99x, ratioText(float64(p99Forwarded), float64(p99Direct)), fmtDur(p99Forwarded), fmtDur(p99Direct)))
	}
	if res.errors > 0 {
		return false
	}
	return met
}
