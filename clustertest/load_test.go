package clustertest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"backupmon/internal/testserver"
)

// sent is one report of the load, by its Idempotency-Key.
type sent struct {
	idem  string
	seq   int64 // its size_bytes: how the report is found again
	to    target
	acked bool // a 200 came back (the report is durable)
}

func (s *sent) body() string {
	return fmt.Sprintf(`{"status":"ok","duration_seconds":1,"size_bytes":%d}`, s.seq)
}

// attempt is one request of the load: when it ended, its shard, the node
// it went to, and whether it was acknowledged.
type attempt struct {
	at    time.Time
	shard int
	node  int
	ok    bool
	code  int  // the HTTP status, 0 for no answer
	retry bool // it came with Retry-After
}

// load sends reports at a steady rate to random live nodes, each with a
// unique Idempotency-Key, and keeps every report and every attempt.
type load struct {
	f     *fixture
	nodes []*testserver.Client
	hc    *http.Client
	down  []atomic.Bool // nodes the round has taken down (not picked)

	mu       sync.Mutex
	reports  []*sent
	attempts []attempt
	seq      atomic.Int64

	stop chan struct{}
	done sync.WaitGroup
}

func newLoad(f *fixture, nodes []*testserver.Client) *load {
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 16, DisableCompression: true}}
	return &load{f: f, nodes: nodes, hc: hc, down: make([]atomic.Bool, len(nodes))}
}

// start sends perSecond reports a second from workers goroutines until
// halt.
func (l *load) start(perSecond float64, workers int) {
	l.stop = make(chan struct{})
	lim := rate.NewLimiter(rate.Limit(perSecond), 1)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-l.stop; cancel() }()
	order := rand.Perm(len(l.f.targets))
	var next atomic.Int64
	for range workers {
		l.done.Go(func() {
			for lim.Wait(ctx) == nil {
				l.send(l.add(l.f.targets[order[int(next.Add(1))%len(order)]]), l.pick())
			}
		})
	}
}

// add keeps a new report to t, with a unique Idempotency-Key and size,
// and returns it (not sent yet).
func (l *load) add(t target) *sent {
	seq := l.seq.Add(1)
	s := &sent{idem: fmt.Sprintf("chaos-%d", seq), seq: seq, to: t}
	l.mu.Lock()
	l.reports = append(l.reports, s)
	l.mu.Unlock()
	return s
}

// halt stops the load and waits for the requests in flight.
func (l *load) halt() {
	close(l.stop)
	l.done.Wait()
}

// pick returns a random node that the round has not taken down.
func (l *load) pick() int {
	for {
		i := rand.IntN(len(l.nodes))
		if !l.down[i].Load() {
			return i
		}
	}
}

// send sends s through node i, records the attempt and returns it.
func (l *load) send(s *sent, i int) attempt {
	h := testserver.Bearer(s.to.key)
	h["Content-Type"] = "application/json"
	h["Idempotency-Key"] = s.idem
	r, err := testserver.Send(l.hc, "POST", l.nodes[i].PublicURL+"/api/v1/jobs/"+s.to.job+"/report", h, []byte(s.body()))
	ok := err == nil && r.Status == http.StatusOK && r.JSON["ok"] == true
	l.mu.Lock()
	defer l.mu.Unlock()
	if ok {
		s.acked = true
	}
	a := attempt{at: time.Now(), shard: s.to.shard, node: i, ok: ok, code: r.Status, retry: r.Header.Get("Retry-After") != ""}
	l.attempts = append(l.attempts, a)
	return a
}

// unacked returns the reports not acknowledged yet.
func (l *load) unacked() []*sent {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []*sent
	for _, s := range l.reports {
		if !s.acked {
			out = append(out, s)
		}
	}
	return out
}

// snapshot returns copies of the reports' states and of the attempts.
func (l *load) snapshot() ([]sent, []attempt) {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]sent, len(l.reports))
	for i, s := range l.reports {
		out[i] = *s
	}
	return out, append([]attempt(nil), l.attempts...)
}

func newClient() *http.Client {
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 16, DisableCompression: true},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// codesSince counts the load's answers since t by HTTP status (0: none).
func (l *load) codesSince(t time.Time) map[int]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[int]int{}
	for _, a := range l.attempts {
		if a.at.After(t) {
			out[a.code]++
		}
	}
	return out
}
