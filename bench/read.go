package main

// bench read: the REST API's read load (issue 3). Many Pro workspaces, each
// with clients, jobs, past results and an unresolved alert or two, polled
// round-robin with /jobs?limit=50, /alerts?status=unresolved and /health
// over loopback; then the same load against a bare fasthttp handler that
// answers each path with the bytes and headers the server gave for it.

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"backupmon/jsonx"

	"github.com/valyala/fasthttp"
)

// restPerMinutePro is the Pro plan's REST limit per workspace (api.md 8.1):
// every key of a workspace shares it.
const restPerMinutePro = 300

// readPaths are the requests each workspace's poller makes, in turn; the
// bare handler tells them apart by readAnswerPaths.
var (
	readPaths       = []string{"/api/v1/jobs?limit=50", "/api/v1/alerts?status=unresolved", "/api/v1/health"}
	readAnswerPaths = []string{"/api/v1/jobs", "/api/v1/alerts", "/api/v1/health"}
)

// answersFile is where bench read writes the server's sample answers for
// the bare handler.
const answersFile = "bench-answers.json"

type readConfig struct {
	targetFlags
	workspaces    int
	keysPerWS     int
	clientsPerWS  int
	jobsPerWS     int
	resultsPerJob int
	alertsPerWS   int
	planRate      float64
}

func readMain(args []string) int {
	var c readConfig
	return command("read", args, func(fs *flag.FlagSet) {
		c.targetFlags.register(fs)
		fs.IntVar(&c.workspaces, "workspaces", 0, "Pro workspaces polled round-robin (0: enough for -plan-rate within 300 requests each)")
		fs.IntVar(&c.keysPerWS, "keys-per-ws", 1, "REST keys per workspace, used in turn (the limit is the workspace's, whatever the key)")
		fs.IntVar(&c.clientsPerWS, "clients-per-ws", 3, "clients per workspace")
		fs.IntVar(&c.jobsPerWS, "jobs-per-ws", 55, "jobs per workspace (over 50: /jobs?limit=50 answers a full page with a cursor)")
		fs.IntVar(&c.resultsPerJob, "results-per-job", 10, "past results per job, one a day")
		fs.IntVar(&c.alertsPerWS, "alerts-per-ws", 2, "jobs per workspace whose last result failed, each leaving an unresolved alert")
		fs.Float64Var(&c.planRate, "plan-rate", 80000, "requests/s the workspaces are sized for when -workspaces is 0")
	}, func() string {
		if c.conns < 1 || c.workspaces < 0 || c.keysPerWS < 1 || c.clientsPerWS < 1 || c.jobsPerWS < 1 || c.resultsPerJob < 1 ||
			c.alertsPerWS < 0 || c.alertsPerWS > c.jobsPerWS || c.duration <= 0 || c.warmup < 0 {
			return "-conns, -duration, -keys-per-ws, -clients-per-ws, -jobs-per-ws and -results-per-job must be positive, -alerts-per-ws at most -jobs-per-ws"
		}
		return ""
	}, func() (bool, error) {
		res, err := runRead(c, os.Stdout)
		return res.errors == 0, err
	})
}

// sizeReadLayout works out the workspaces the planned request count needs.
// Pro allows 300 REST requests a minute per workspace, whichever key makes
// them; the sample answers take one request per path from workspace 0, so
// each workspace is given 300 − len(readPaths) of the run's requests,
// counted over the whole run (stricter than per minute). budget is how many
// requests the fixture has room for: the load's round-robin gives no
// workspace more than its share of them (see readBuilder).
func sizeReadLayout(c readConfig) (l layout, planned, budget int64) {
	planned = int64(c.planRate * (c.warmup + c.duration).Seconds())
	perWS := int64(restPerMinutePro - len(readPaths))
	w := c.workspaces
	if w == 0 {
		need := float64(planned) * planMargin / float64(perWS)
		w = max(1, int(need+0.999999))
	}
	l = layout{
		workspaces: w, clientsPerWS: c.clientsPerWS, jobsPerWS: c.jobsPerWS, keysPerWS: c.keysPerWS,
		keyType: "rest", resultsPerJob: c.resultsPerJob, alertsPerWS: c.alertsPerWS,
		parallel: 128, workspaceName: "Bench MSP",
	}
	return l, planned, int64(w) * perWS
}

func runRead(c readConfig, out io.Writer) (reportResult, error) {
	var res reportResult
	l, planned, budget := sizeReadLayout(c)
	dir, cleanup, err := startLoadRun(out, "read", c.data, c.targetFlags.what(), false)
	if err != nil {
		return res, err
	}
	defer cleanup()

	start := time.Now()
	args := []string{"-kind", "server", "-fixture", "read", "-data", dir, "-workspaces", strconv.Itoa(l.workspaces),
		"-clients-per-ws", strconv.Itoa(l.clientsPerWS), "-jobs-per-ws", strconv.Itoa(l.jobsPerWS), "-keys-per-ws", strconv.Itoa(l.keysPerWS),
		"-results-per-job", strconv.Itoa(l.resultsPerJob), "-alerts-per-ws", strconv.Itoa(l.alertsPerWS), "-procs", strconv.Itoa(c.procs)}
	server, f, err := c.startServer(dir, args)
	if err != nil {
		return res, err
	}
	defer server.kill() // after stop, it does nothing
	fmt.Fprintf(out, "set up %s Pro workspaces, each with %d clients, %d jobs, %d results per job (%s results in all), %d unresolved alerts and %d REST key(s), in %s: room for %s requests (plan: %.0f/s for %s = %s)\n",
		thousands(int64(l.workspaces)), l.clientsPerWS, l.jobsPerWS, l.resultsPerJob, thousands(int64(l.jobs()*l.resultsPerJob)), l.alertsPerWS, l.keysPerWS,
		time.Since(start).Round(time.Millisecond), thousands(budget), c.planRate, c.warmup+c.duration, thousands(planned))

	reqs := newReadRequests(f)
	answers, err := sampleAnswers(server.addr, reqs)
	if err != nil {
		return res, err
	}
	sizes := make([]string, len(answers))
	for i, a := range answers {
		sizes[i] = fmt.Sprintf("%s %s B (%d headers)", strings.TrimPrefix(a.Path, "/api/v1"), thousands(int64(len(a.Body))), len(a.Headers))
	}
	fmt.Fprintf(out, "answers: %s; the bare handler serves these bytes and headers by path\n", strings.Join(sizes, ", "))

	path := filepath.Join(dir, answersFile)
	if !c.serverOnly {
		b, _ := jsonx.Marshal(answers)
		if err := os.WriteFile(path, b, 0o600); err != nil {
			return res, err
		}
	}
	return c.runTargets(out, server, []string{"-kind", "bare", "-answers", path}, reqs.builder, budget)
}

// readRequests holds what varies between read requests, prepared once.
type readRequests struct {
	f     *fixture
	auths [][]byte // per key: Bearer <secret>; key k belongs to workspace k%workspaces
}

func newReadRequests(f *fixture) *readRequests {
	r := &readRequests{f: f}
	for _, k := range f.secrets {
		r.auths = append(r.auths, []byte("Bearer "+k))
	}
	return r
}

// pick returns request i's path and key: workspace w = (i/n)%workspaces
// makes n requests in a row, one to each of the n paths, and the
// workspace's keys take turns. Over any first N requests no workspace makes
// more than n·⌈⌈N/n⌉/workspaces⌉.
func (r *readRequests) pick(i uint64) (path, key int) {
	n := uint64(len(readPaths))
	ws := uint64(r.f.workspaces)
	g := i / n
	return int(i % n), int(g%ws + ws*((g/ws)%uint64(r.f.keysPerWS)))
}

func (r *readRequests) builder(host []byte) requestBuilder {
	b := &readBuilder{r: r}
	for _, p := range readPaths {
		b.uris = append(b.uris, []byte(string(host)+p))
	}
	return b
}

// readBuilder makes GET requests; a good answer is a 200 with a data member.
type readBuilder struct {
	r    *readRequests
	uris [][]byte
}

func (b *readBuilder) build(req *fasthttp.Request, i uint64) {
	path, key := b.r.pick(i)
	req.SetRequestURIBytes(b.uris[path])
	req.Header.SetBytesV("Authorization", b.r.auths[key])
}

func (b *readBuilder) check(resp *fasthttp.Response) string { return checkDataAnswer(resp) }

// checkDataAnswer returns "" for a REST answer with data (a 200 whose body
// starts with {"data":), else the kind of fault: "status <code>" or "body
// without data".
func checkDataAnswer(resp *fasthttp.Response) string {
	if resp.StatusCode() != fasthttp.StatusOK {
		return fmt.Sprintf("status %d", resp.StatusCode())
	}
	if !bytes.HasPrefix(resp.Body(), []byte(`{"data":`)) {
		return "body without data"
	}
	return ""
}

// sampleAnswers asks the server once for each path, with workspace 0's
// first key, and returns its answers for the bare handler: status, the
// headers the handler sets (the listener's own, Content-Length and Date,
// the bare server adds itself) and body.
func sampleAnswers(addr string, reqs *readRequests) ([]bareAnswer, error) {
	c := &fasthttp.Client{ReadTimeout: 30 * time.Second, MaxResponseBodySize: 16 << 20}
	var answers []bareAnswer
	for i, p := range readPaths {
		req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
		req.SetRequestURI("http://" + addr + p)
		req.Header.SetBytesV("Authorization", reqs.auths[0])
		err := c.Do(req, resp)
		if err == nil && resp.StatusCode() != fasthttp.StatusOK {
			err = fmt.Errorf("status %d: %s", resp.StatusCode(), resp.Body())
		}
		if err != nil {
			return nil, fmt.Errorf("sample answer of %s: %w", p, err)
		}
		a := bareAnswer{Path: readAnswerPaths[i], Status: resp.StatusCode(), Body: append([]byte(nil), resp.Body()...)}
		for k, v := range resp.Header.All() {
			switch string(k) {
			case fasthttp.HeaderContentLength, fasthttp.HeaderDate, fasthttp.HeaderServer, fasthttp.HeaderConnection:
				continue
			}
			a.Headers = append(a.Headers, [2]string{string(k), string(v)})
		}
		answers = append(answers, a)
		fasthttp.ReleaseRequest(req)
		fasthttp.ReleaseResponse(resp)
	}
	return answers, nil
}
