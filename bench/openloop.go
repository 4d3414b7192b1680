package main

// The open loop of bench report (-rates, issue 21): reports sent on a fixed
// schedule whatever the server's answers do, so that the server's CPU per
// report is measured at the moderate loads a real host sees most of the
// time, not only at saturation.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/valyala/fasthttp"

	"backupmon/transport"
)

// Issue 21's targets for the open loop.
const (
	targetOpenFromRate = 10000                 // reports/s from which the targets apply
	targetOpenCPU      = 35 * time.Microsecond // server CPU per report, at most
	targetOpenP99      = 10 * time.Millisecond // p99 from the scheduled send time, under
	offeredShare       = 0.97                  // a rate counts as offered when this share of its schedule was sent and answered
	failedEvery        = 10                    // one report in failedEvery is failed
)

// parseRates parses -rates: reports/s, comma-separated, each positive.
func parseRates(s string) ([]float64, error) {
	var rates []float64
	for f := range strings.SplitSeq(s, ",") {
		r, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || r <= 0 {
			return nil, fmt.Errorf("rate %q: want a positive number of reports/s", f)
		}
		rates = append(rates, r)
	}
	return rates, nil
}

// checkRates returns the complaint about the open loop's flags, "" when
// they are fine (or there is no open loop).
func (c reportConfig) checkRates() string {
	switch {
	case len(c.rates) == 0:
		return ""
	case c.rateConns < 1 || c.rateConns > transport.DefaultPublicConnsPerAddress:
		return fmt.Sprintf("-rate-conns must be 1 to %d (the server's connections per client address)", transport.DefaultPublicConnsPerAddress)
	case c.traceFile != "":
		return "-trace does not go with -rates"
	}
	return ""
}

// planned returns how many requests the run sends: the closed loop's plan
// rate over its warm-up and measured time or, with -rates, every phase's
// schedule and one request per connection to open it.
func (c reportConfig) planned() int64 {
	if len(c.rates) == 0 {
		return int64(c.planRate * (c.warmup + c.duration).Seconds())
	}
	var n int64
	for _, r := range c.rates {
		n += int64(r*(c.warmup+c.duration).Seconds()) + 1
	}
	return n + int64(c.rateConns)
}

// planText says what planned counts, for the set-up line.
func (c reportConfig) planText() string {
	if len(c.rates) == 0 {
		return fmt.Sprintf("%.0f/s for %s", c.planRate, c.warmup+c.duration)
	}
	return fmt.Sprintf("%s reports/s for %s each, and %d to open the connections", ratesText(c.rates), c.warmup+c.duration, c.rateConns)
}

// openWhat is the first line's account of an open-loop run.
func (c reportConfig) openWhat() string {
	return fmt.Sprintf("open loop at %s reports/s (%d%% failed), %d connections, %s warm-up + %s measured per rate",
		ratesText(c.rates), 100/failedEvery, c.rateConns, c.warmup, c.duration)
}

func ratesText(rates []float64) string {
	s := make([]string, len(rates))
	for i, r := range rates {
		s[i] = thousands(int64(r))
	}
	return strings.Join(s, ", ")
}

// runRates runs the open loop against the server target, whose fixture f
// has room for budget requests: one phase per rate, each printed, then the
// server's close and issue 21's targets. It stops the server.
func (c reportConfig) runRates(out io.Writer, server *target, f *fixture, budget int64) (reportResult, error) {
	var res reportResult
	reqs := newRequestSet(f)
	// The bare handler first, at the same rates: what the same schedule
	// costs a server that only reads each request and writes an answer.
	var bare []rateResult
	if !c.serverOnly {
		args := []string{"-kind", "bare"}
		if c.cpuProfile != "" {
			args = append(args, "-cpuprofile", c.cpuProfile+".bare")
		}
		b, err := startTarget(args...)
		if err != nil {
			return res, err
		}
		// Every answer of the bare handler is the ok one: its load sends
		// ok reports only.
		bare, res.errors = c.runPhases(out, "bare   ", b.addr, serverProbe{cpu: b.cpu}, newReportBuilder(reqs), budget)
		if _, err := b.stop(); err != nil {
			return res, err
		}
	}
	probe := serverProbe{cpu: server.cpu, stats: func() (int64, int64, int64, error) {
		b, r, _, _, snaps, _, err := server.stats()
		return b, r, snaps, err
	}}
	var errs int64
	res.rates, errs = c.runPhases(out, "server ", server.addr, probe, newOpenReportBuilder(reqs), budget)
	res.errors += errs
	if err := server.finish(out, "server target", int64(res.errors), "requests"); err != nil {
		return res, err
	}
	res.ratesMet = printRateTargets(out, res.rates, bare) && res.errors == 0
	return res, nil
}

// runPhases runs one open-loop phase per rate against addr, printing a
// line for each after label, and returns them with the errors counted.
func (c reportConfig) runPhases(out io.Writer, label, addr string, probe serverProbe, builder func(host []byte) requestBuilder, budget int64) ([]rateResult, int64) {
	var rates []rateResult
	load := startOpenLoad(addr, c.rateConns, builder, budget)
	errs := load.opening.total()
	if errs > 0 {
		load.opening.print(out, label+"opening")
	}
	for _, r := range c.rates {
		rr := load.run(r, c.warmup, c.duration, probe)
		fmt.Fprintln(out, label+rr.line())
		rr.errs.print(out, label+"rate "+thousands(int64(r)))
		errs += rr.errors
		rates = append(rates, rr)
	}
	load.close()
	return rates, errs
}

// printRateTargets prints one target line per rate of targetOpenFromRate
// or more: met when the rate was offered, the server's CPU per report was
// at most targetOpenCPU and the p99 under targetOpenP99. It returns false
// when one is not met. bare, when it holds the same rates, adds the bare
// handler's CPU per request at each.
func printRateTargets(out io.Writer, rates, bare []rateResult) bool {
	met, any := true, false
	for i, r := range rates {
		if r.offered < targetOpenFromRate {
			continue
		}
		any = true
		ok, why := r.canOffer(), ""
		if !ok {
			why = fmt.Sprintf("; rate not offered (sent %.1f%%, answered %.1f%% of the schedule)", 100*r.sentShare(), 100*r.answeredShare())
		}
		cpu, p99 := r.cpuPerReport(), r.lat.quantile(0.99)
		if lag := r.lag.quantile(0.99); p99 >= targetOpenP99 && lag >= targetOpenP99/10 {
			why += fmt.Sprintf("; the load generator's own schedule lag p99 %s is in it", fmtDur(lag))
		}
		ok = ok && r.answered > 0 && cpu <= targetOpenCPU && p99 < targetOpenP99
		word := "met    "
		if !ok {
			word, met = "NOT MET", false
		}
		if i < len(bare) && bare[i].answered > 0 {
			why += fmt.Sprintf(" (the bare handler: %s/request, ×%.2f; p99 %s)", fmtMicros(bare[i].cpuPerReport()),
				float64(cpu)/float64(bare[i].cpuPerReport()), fmtDur(bare[i].lat.quantile(0.99)))
		}
		fmt.Fprintf(out, "target %s  at %s reports/s: server CPU %s/report ≤ %s, p99 %s < %s%s\n",
			word, thousands(int64(r.offered)), fmtMicros(cpu), fmtMicros(targetOpenCPU), fmtDur(p99), fmtDur(targetOpenP99), why)
	}
	if !any {
		fmt.Fprintf(out, "target not measured: no rate of %s reports/s or more\n", thousands(targetOpenFromRate))
	}
	return met
}

func fmtMicros(d time.Duration) string { return fmt.Sprintf("%.1fµs", float64(d)/1e3) }

// serverProbe reads what the server process did over a measured time: its
// CPU so far, and its log batches, records and snapshots since the last
// call (stats may be nil: no log figures).
type serverProbe struct {
	cpu   func() time.Duration
	stats func() (batches, records, snaps int64, err error)
}

// rateResult is one open-loop phase's measured time.
type rateResult struct {
	offered        float64 // reports/s scheduled
	elapsed        time.Duration
	sent, answered int64 // requests sent, answers received (ok or not) in the measured time
	lat            hist  // of the good answers to the requests scheduled in the measured time, from their scheduled time
	lag            hist  // of the same requests: how late the schedule put them in the queue (the generator's own delay)
	wait           hist  // and how late a connection sent them (lag, then every connection busy)
	errors         int64 // failed requests of the phase, warm-up included
	errs           *errorLog
	cpu, genCPU    time.Duration // server's and load generator's CPU over the measured time

	logOK                   bool // the log figures below were read
	batches, records, snaps int64
}

func (r rateResult) sentShare() float64 {
	return float64(r.sent) / max(r.offered*r.elapsed.Seconds(), 1)
}

func (r rateResult) answeredShare() float64 {
	return float64(r.answered) / max(r.offered*r.elapsed.Seconds(), 1)
}

// canOffer tells whether the load generator kept to the schedule: it sent,
// and got answers to, offeredShare of it in the measured time.
func (r rateResult) canOffer() bool {
	return r.sentShare() >= offeredShare && r.answeredShare() >= offeredShare
}

func (r rateResult) cpuPerReport() time.Duration {
	return r.cpu / time.Duration(max(r.answered, 1))
}

// line is the phase's printed line.
func (r rateResult) line() string {
	var b strings.Builder
	fmt.Fprintf(&b, "rate %6s/s: answered %6s/s (%s in %s)  p50 %s  p99 %s  max %s  errors %d  server CPU %s/report (%.2f cores)",
		thousands(int64(r.offered)), thousands(int64(float64(r.answered)/r.elapsed.Seconds())), thousands(r.answered), r.elapsed.Round(time.Millisecond),
		fmtDur(r.lat.quantile(0.50)), fmtDur(r.lat.quantile(0.99)), fmtDur(time.Duration(r.lat.max)), r.errors,
		fmtMicros(r.cpuPerReport()), r.cpu.Seconds()/r.elapsed.Seconds())
	if r.logOK {
		fmt.Fprintf(&b, "  %.1f reports/fsync (%.1f records)", float64(r.answered)/float64(max(r.batches, 1)), float64(r.records)/float64(max(r.batches, 1)))
		switch {
		case r.snaps == 1:
			b.WriteString(" 1 snapshot")
		case r.snaps > 1:
			fmt.Fprintf(&b, " %d snapshots", r.snaps)
		}
	} else {
		b.WriteString("  reports/fsync unknown")
	}
	fmt.Fprintf(&b, "  sent %.1f%% of the schedule, send delay p99 %s, schedule lag p99 %s  load generator %.2f cores",
		100*r.sentShare(), fmtDur(r.wait.quantile(0.99)), fmtDur(r.lag.quantile(0.99)), r.genCPU.Seconds()/r.elapsed.Seconds())
	if !r.canOffer() {
		b.WriteString("  RATE NOT OFFERED")
	}
	return b.String()
}

// openReq is a request of the schedule: when it is due, whether that is in
// the measured time, and its phase.
type openReq struct {
	at       time.Time
	measured bool
	ph       *openPhase
}

// openPhase is what the workers count during one phase, each in its own
// slot; done counts the phase's requests not yet answered.
type openPhase struct {
	slots []openSlot
	errs  errorLog
	done  sync.WaitGroup
}

type openSlot struct {
	sent, answered, errors int64
	lat                    hist
	wait                   hist // from the scheduled time to the send, of the requests scheduled in the measured time
}

// openLoad is an open-loop load generator: conns workers, each with its
// own connection to the target, take the due requests from one queue in
// turn; a request that finds every worker busy waits in the queue, and the
// wait counts in its latency.
type openLoad struct {
	queue     chan openReq
	conns     int
	workers   sync.WaitGroup
	measuring atomic.Bool
	next      atomic.Uint64
	budget    int64
	opening   errorCount
}

// errorCount is an errorLog with its total.
type errorCount struct {
	errorLog
	n atomic.Int64
}

func (e *errorCount) add(kind, example string) {
	e.n.Add(1)
	e.errorLog.add(kind, example)
}

func (e *errorCount) total() int64 { return e.n.Load() }

// startOpenLoad starts conns workers against addr and opens their
// connections, each with one request made by its builder (newBuilder makes
// one per worker); budget (0: none) is how many requests the fixture has
// room for. The failures of the opening requests are in opening.
func startOpenLoad(addr string, conns int, newBuilder func(host []byte) requestBuilder, budget int64) *openLoad {
	o := &openLoad{queue: make(chan openReq, 1<<16), conns: conns, budget: budget}
	host := []byte("http://" + addr)
	var opened sync.WaitGroup
	for w := range conns {
		opened.Add(1)
		o.workers.Go(func() {
			hc := loadClient(addr, 1)
			defer hc.CloseIdleConnections()
			req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
			defer fasthttp.ReleaseRequest(req)
			defer fasthttp.ReleaseResponse(resp)
			rb := newBuilder(host)
			if kind, example := o.send(hc, rb, req, resp); kind != "" {
				o.opening.add(kind, example)
			}
			opened.Done()
			for r := range o.queue {
				o.serve(w, r, hc, rb, req, resp)
			}
		})
	}
	opened.Wait()
	return o
}

// send sends the next request of the fixture and returns "" for a good
// answer, or the kind of fault and an example.
func (o *openLoad) send(hc *fasthttp.HostClient, rb requestBuilder, req *fasthttp.Request, resp *fasthttp.Response) (kind, example string) {
	i := o.next.Add(1) - 1
	if o.budget > 0 && int64(i) >= o.budget {
		return "fixture exhausted", "raise the fixture's size (the workspaces, jobs or keys)"
	}
	rb.build(req, i)
	if err := hc.Do(req, resp); err != nil {
		return "transport: " + err.Error(), err.Error()
	}
	if kind := rb.check(resp); kind != "" {
		return kind, string(resp.Body())
	}
	return "", ""
}

// serve sends request r on worker w's connection and counts it.
func (o *openLoad) serve(w int, r openReq, hc *fasthttp.HostClient, rb requestBuilder, req *fasthttp.Request, resp *fasthttp.Response) {
	defer r.ph.done.Done()
	s := &r.ph.slots[w]
	if o.measuring.Load() {
		s.sent++
	}
	if r.measured {
		s.wait.record(time.Since(r.at))
	}
	kind, example := o.send(hc, rb, req, resp)
	lat := time.Since(r.at)
	if o.measuring.Load() && kind != "fixture exhausted" {
		s.answered++
	}
	switch {
	case kind != "":
		s.errors++
		r.ph.errs.add(kind, example)
	case r.measured:
		s.lat.record(lat)
	}
}

// run offers rate requests/s for warmup, then for duration, the measured
// time, and waits for the last answers: request k of the phase is due k/rate
// seconds after its start, sent then or, when every connection is busy, as
// soon as one is free. probe reads the server over the measured time.
func (o *openLoad) run(rate float64, warmup, duration time.Duration, probe serverProbe) rateResult {
	ph := &openPhase{slots: make([]openSlot, o.conns)}
	res := rateResult{offered: rate, errs: &ph.errs}
	every := float64(time.Second) / rate
	start := time.Now().Add(time.Millisecond)
	first, end := int64(rate*warmup.Seconds()), int64(rate*(warmup+duration).Seconds())
	window := make(chan struct{})
	go func() {
		defer close(window)
		time.Sleep(time.Until(start.Add(warmup)))
		if probe.stats != nil {
			probe.stats() // from zero
		}
		cpu0, gen0, t0 := probe.cpu(), processCPU(), time.Now()
		o.measuring.Store(true)
		time.Sleep(time.Until(start.Add(warmup + duration)))
		o.measuring.Store(false)
		res.elapsed, res.cpu, res.genCPU = time.Since(t0), probe.cpu()-cpu0, processCPU()-gen0
		if probe.stats != nil {
			var err error
			res.batches, res.records, res.snaps, err = probe.stats()
			res.logOK = err == nil
		}
	}()
	for k := range end {
		at := start.Add(time.Duration(float64(k) * every))
		sleepUntil(at)
		ph.done.Add(1)
		o.queue <- openReq{at: at, measured: k >= first, ph: ph}
		if k >= first {
			res.lag.record(time.Since(at))
		}
	}
	<-window
	ph.done.Wait()
	for i := range ph.slots {
		s := &ph.slots[i]
		res.sent += s.sent
		res.answered += s.answered
		res.errors += s.errors
		res.lat.merge(&s.lat)
		res.wait.merge(&s.wait)
	}
	return res
}

// close stops the workers and closes their connections.
func (o *openLoad) close() {
	close(o.queue)
	o.workers.Wait()
}

// sleepUntil returns at t or just after. It sleeps in nanosleep, whose
// wake-up is some 60 µs late, rather than in a Go timer, which is up to a
// millisecond late: that delay would count in every request's latency.
func sleepUntil(t time.Time) {
	for {
		d := time.Until(t)
		if d <= 0 {
			return
		}
		ts := syscall.NsecToTimespec(int64(d))
		if err := syscall.Nanosleep(&ts, nil); err != nil && !errors.Is(err, syscall.EINTR) {
			time.Sleep(d)
		}
	}
}

// openReportBuilder makes the open loop's Report API requests: as
// reportBuilder, but one report in failedEvery (spread over the jobs by a
// hash of the request number) is failed.
type openReportBuilder struct {
	reportRequest
	reqs   *requestSet
	status []byte // `"status":"<sent>"`, which the answer must hold
}

func newOpenReportBuilder(reqs *requestSet) func(host []byte) requestBuilder {
	return func(host []byte) requestBuilder {
		return &openReportBuilder{reportRequest: newReportRequest(host, "bench-"+reqs.nonce+"-"), reqs: reqs}
	}
}

func (b *openReportBuilder) build(req *fasthttp.Request, i uint64) {
	job, key := b.reqs.f.pick(i)
	b.set(req, i, b.reqs.paths[job], b.reqs.auths[key])
	status := "ok"
	if reportFails(i) {
		status = "failed"
	}
	b.body = appendStatusBody(b.body[:0], status, i)
	req.SetBodyRaw(b.body)
	b.status = append(append(append(b.status[:0], `"status":"`...), status...), '"')
}

// check is checkReportAnswer's, and the answer must echo the status sent.
func (b *openReportBuilder) check(resp *fasthttp.Response) string {
	if kind := checkReportAnswer(resp); kind != "" {
		return kind
	}
	if !bytes.Contains(resp.Body(), b.status) {
		return "200 without the status sent"
	}
	return ""
}

// reportFails tells whether request i reports a failure: one in
// failedEvery, by a multiplicative hash of i, so that no job fails every
// time or never.
func reportFails(i uint64) bool { return (i*0x9E3779B97F4A7C15)>>32%failedEvery == 0 }

// appendStatusBody appends a small valid report body of status that varies
// with i.
func appendStatusBody(b []byte, status string, i uint64) []byte {
	b = append(b, `{"status":"`...)
	b = append(b, status...)
	b = append(b, `","duration_seconds":`...)
	b = strconv.AppendUint(b, 600+i%3600, 10)
	b = append(b, `,"size_bytes":`...)
	b = strconv.AppendUint(b, 1<<30+(i%4096)<<20, 10)
	return append(b, '}')
}
