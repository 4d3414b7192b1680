package main

// bench mail: report e-mails per second through the SMTP listener on
// loopback, durable. The server (engine, mail store and smtpin wired as
// `backupmon serve --smtp-listen` wires them) runs in a child process, the
// bench binary re-executed as mail-target; the load generator keeps -conns
// SMTP connections open and sends one transaction after another on each
// (MAIL, RCPT, DATA), every message a sample of testdata/emails grown to a
// real report's size by repeating its per-object rows, with a Message-ID of
// its own, to a job of the sample's vendor.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/smtp"
	"net/textproto"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"backupmon/engine"
	"backupmon/jsonx"
	"backupmon/mailparse"
	"backupmon/mailparse/mailgrow"
	"backupmon/mailstore"
	"backupmon/smtpin"
	"backupmon/transport"
	"backupmon/tune"
	"backupmon/wal"
)

const mailTargetCmd = "mail-target"

// mailFixtureFile is where the mail target writes the jobs it set up.
const mailFixtureFile = "bench-mail-fixture.json"

// mailsPerJobPerDay is the daily cap of reports per job (api.md 8.3); the
// fixture gives each job at most -per-job e-mails, under it.
const mailsPerJobPerDay = 100

type mailConfig struct {
	targetFlags
	workspaces    int
	planRate      float64
	perJob        int
	sizes         []int // bytes
	vendors       []string
	samples       string
	snapshotEvery uint64
	noSync        bool
	dotWriter     bool
}

func mailMain(args []string) int {
	var c mailConfig
	var sizes, vendors string
	return command("mail", args, func(fs *flag.FlagSet) {
		c.registerLoad(fs, "", 32, "SMTP connections, each driven by one goroutine (closed loop), kept open for every transaction")
		fs.IntVar(&c.workspaces, "workspaces", 50, "workspaces the jobs are spread over")
		fs.Float64Var(&c.planRate, "plan-rate", 6000, "e-mails/s the fixture's jobs are sized for (each job takes at most -per-job e-mails)")
		fs.IntVar(&c.perJob, "per-job", 90, "most e-mails a job gets in the run (under the cap of 100 reports per job a day)")
		fs.StringVar(&sizes, "sizes", "12,24,36,48,60", "sizes of the e-mails sent, in KB (1,000 bytes), used in turn; a sample larger than a size is sent as it is")
		fs.StringVar(&vendors, "vendors", "", "comma-separated vendors to send for (default: every vendor with a parser and samples)")
		fs.StringVar(&c.samples, "samples", "testdata/emails", "directory of the sample e-mails, one folder per vendor")
		fs.Uint64Var(&c.snapshotEvery, "snapshot-every", 0, "engine SnapshotEvery (0: the server's default)")
		fs.BoolVar(&c.noSync, "nosync", false, "diagnosis only: the server's log skips fsync (not durable)")
		fs.BoolVar(&c.dotWriter, "dotwriter", false, "write each message through net/smtp's DotWriter, byte by byte, instead of the template dot-stuffed once (costs the load generator more CPU)")
	}, func() string {
		for s := range strings.SplitSeq(sizes, ",") {
			kb, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
			if err != nil || kb <= 0 || kb*1000 > mailparse.MaxMessageBytes {
				return fmt.Sprintf("-sizes: %q is not a size in KB", s)
			}
			c.sizes = append(c.sizes, int(kb*1000))
		}
		if vendors != "" {
			c.vendors = strings.Split(vendors, ",")
		}
		if c.conns < 1 || c.workspaces < 1 || c.duration <= 0 || c.warmup < 0 || c.perJob < 1 || c.perJob > mailsPerJobPerDay || c.planRate <= 0 {
			return "-conns, -workspaces, -duration and -plan-rate must be positive, -per-job from 1 to 100"
		}
		return ""
	}, func() (bool, error) {
		res, err := runMail(c, os.Stdout)
		return res.errors == 0 && res.checked, err
	})
}

// mailResult is what runMail measured.
type mailResult struct {
	load    mailLoad
	errors  int64
	checked bool // the engine holds one result per 250
}

func runMail(c mailConfig, out io.Writer) (mailResult, error) {
	var res mailResult
	vendors, err := mailVendors(c.samples, c.vendors)
	if err != nil {
		return res, err
	}
	start := time.Now()
	tmpls, err := buildTemplates(c.samples, vendors, c.sizes)
	if err != nil {
		return res, err
	}
	printTemplates(out, tmpls, c.sizes, time.Since(start))

	planned := int64(c.planRate * (c.warmup + c.duration).Seconds())
	jobs := int(float64(planned)*planMargin/float64(c.perJob)) + 1
	jobsPerWS := max((jobs+c.workspaces-1)/c.workspaces, (len(vendors)+c.workspaces-1)/c.workspaces)
	dir, cleanup, err := startLoadRun(out, "mail", c.data, fmt.Sprintf("%d SMTP connections, %s warm-up + %s measured", c.conns, c.warmup, c.duration), c.noSync)
	if err != nil {
		return res, err
	}
	defer cleanup()
	start = time.Now()
	args := []string{"-data", dir, "-workspaces", strconv.Itoa(c.workspaces), "-jobs-per-ws", strconv.Itoa(jobsPerWS),
		"-vendors", strings.Join(vendors, ","), "-snapshot-every", strconv.FormatUint(c.snapshotEvery, 10), "-procs", strconv.Itoa(c.procs)}
	if c.noSync {
		args = append(args, "-nosync")
	}
	if c.cpuProfile != "" {
		args = append(args, "-cpuprofile", c.cpuProfile)
	}
	server, err := startMailTarget(args...)
	if err != nil {
		return res, err
	}
	defer server.kill() // after stop, it does nothing
	f, err := readMailFixture(filepath.Join(dir, mailFixtureFile))
	if err != nil {
		return res, err
	}
	budget := int64(len(f.Jobs)) * int64(c.perJob)
	fmt.Fprintf(out, "set up %d workspaces, %s jobs (%d vendors, %d jobs each workspace) in %s: room for %s e-mails (plan: %.0f/s for %s = %s)\n",
		c.workspaces, thousands(int64(len(f.Jobs))), len(vendors), jobsPerWS, time.Since(start).Round(time.Millisecond),
		thousands(budget), c.planRate, c.warmup+c.duration, thousands(planned))

	var onMeasure func()
	if c.traceFile != "" {
		path, _ := filepath.Abs(c.traceFile)
		onMeasure = func() { server.startTrace(path) }
	}
	plan := newMailPlan(f, tmpls)
	plan.dotWriter = c.dotWriter
	res.load = runMailLoad(out, c.load(), server.addr, plan, budget, server.cpu, onMeasure)
	res.errors = res.load.errors
	printMailLoad(out, res.load)
	if batches, records, syncP50, syncP99, snaps, snapTime, err := server.stats(); err == nil && batches > 0 {
		fmt.Fprintf(out, "server log: %s batches, %.1f records/batch, write+fsync p50 %s p99 %s; %d snapshots taken (%s in all)\n",
			thousands(batches), float64(records)/float64(batches), fmtDur(syncP50), fmtDur(syncP99), snaps, snapTime.Round(time.Millisecond))
	}
	cnt, err := server.mailCount()
	if err != nil {
		return res, err
	}
	res.checked = cnt.Results == res.load.ok250 && cnt.Unparsed == 0
	verdict := "OK"
	if !res.checked {
		verdict = "MISMATCH"
	}
	fmt.Fprintf(out, "check: %s answers 250 in all (warm-up included); the engine holds %s results and %d unparsed e-mails; the listener counted %s: %s\n",
		thousands(res.load.ok250), thousands(cnt.Results), cnt.Unparsed, fmtOutcomes(cnt.Outcomes), verdict)
	if err := server.finish(out, "mail target", int64(res.errors), "transactions"); err != nil {
		return res, err
	}
	fmt.Fprintf(out, "mails/s %.0f\n", res.load.rate())
	return res, nil
}

// mailVendors returns the vendors to send for: those asked, or every vendor
// that has both a parser and samples under dir (sorted).
func mailVendors(dir string, asked []string) ([]string, error) {
	have := mailparse.Vendors()
	if len(asked) > 0 {
		for _, v := range asked {
			if !slices.Contains(have, v) {
				return nil, fmt.Errorf("vendor %q has no parser", v)
			}
		}
		return asked, nil
	}
	var out []string
	for _, v := range have {
		if files, _ := filepath.Glob(filepath.Join(dir, v, "*.eml")); len(files) > 0 {
			out = append(out, v)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no samples under %s for any of the parsers %v (run from the module's root, or set -samples)", dir, have)
	}
	slices.Sort(out)
	return out, nil
}

// mailTemplate is one report e-mail ready to send, with CRLF line endings,
// split where its Message-ID's unique part goes.
type mailTemplate struct {
	vendor, name string // name: the sample's file name and the size asked
	head, tail   []byte
	wire         []byte // tail dot-stuffed for DATA, with the final ".\r\n"
	grownBy      string // what was repeated to reach the size; "" for the sample as it is
}

// size is the message's size with an id of n bytes.
func (t *mailTemplate) size(n int) int { return len(t.head) + n + len(t.tail) }

// buildTemplates makes, for each vendor, each of its samples at each size:
// grown to the size by repeating a table row (HTML) or a line (plain text)
// whose repetition leaves the vendor's parse unchanged; a sample already as
// large as a size is used as it is (once).
func buildTemplates(dir string, vendors []string, sizes []int) (map[string][]*mailTemplate, error) {
	out := map[string][]*mailTemplate{}
	for _, vendor := range vendors {
		files, err := filepath.Glob(filepath.Join(dir, vendor, "*.eml"))
		if err != nil || len(files) == 0 {
			return nil, fmt.Errorf("no samples for %s under %s", vendor, dir)
		}
		slices.Sort(files)
		for _, file := range files {
			raw, err := os.ReadFile(file)
			if err != nil {
				return nil, fmt.Errorf("read sample: %w", err)
			}
			name := strings.TrimSuffix(filepath.Base(file), ".eml")
			g, err := mailgrow.New(vendor, raw)
			if err != nil {
				return nil, fmt.Errorf("sample %s/%s: %w", vendor, name, err)
			}
			asIs := false
			for _, size := range sizes {
				if size <= len(g.Raw()) {
					if !asIs {
						out[vendor] = append(out[vendor], newTemplate(vendor, name, g.Raw(), ""))
						asIs = true
					}
					continue
				}
				big, what, err := g.Grow(size)
				if err != nil {
					return nil, fmt.Errorf("sample %s/%s at %d bytes: %w", vendor, name, size, err)
				}
				out[vendor] = append(out[vendor], newTemplate(vendor, fmt.Sprintf("%s@%dKB", name, size/1000), big, what))
			}
		}
	}
	return out, nil
}

// newTemplate turns a message (LF line endings) into a template: its
// Message-ID header is replaced by one at the top whose unique part the
// sender fills in, and its lines end in CRLF.
func newTemplate(vendor, name string, raw []byte, grownBy string) *mailTemplate {
	he := mailgrow.HeaderEnd(raw)
	var hdr bytes.Buffer
	skipping := false
	for line := range strings.SplitAfterSeq(string(raw[:he]), "\n") {
		if skipping && (strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t")) {
			continue
		}
		skipping = len(line) > 11 && strings.EqualFold(line[:11], "message-id:")
		if !skipping {
			hdr.WriteString(line)
		}
	}
	msg := append(hdr.Bytes(), raw[he:]...)
	if !bytes.HasSuffix(msg, []byte("\n")) {
		msg = append(msg, '\n')
	}
	msg = bytes.ReplaceAll(msg, []byte("\n"), []byte("\r\n"))
	t := &mailTemplate{
		vendor: vendor, name: name, grownBy: grownBy,
		head: []byte("Message-ID: <"),
		tail: append([]byte("@mail.bench.example>\r\n"), msg...),
	}
	// RFC 5321 4.5.2: a line that starts with a dot gets one more.
	t.wire = append(bytes.ReplaceAll(t.tail, []byte("\r\n."), []byte("\r\n..")), ".\r\n"...)
	return t
}

func printTemplates(out io.Writer, tmpls map[string][]*mailTemplate, sizes []int, took time.Duration) {
	var n, total, lo, hi int
	vendors := make([]string, 0, len(tmpls))
	for v, list := range tmpls {
		vendors = append(vendors, v)
		for _, t := range list {
			s := t.size(32)
			total += s
			if n == 0 || s < lo {
				lo = s
			}
			hi = max(hi, s)
			n++
		}
	}
	slices.Sort(vendors)
	fmt.Fprintf(out, "e-mails: %d vendors (%s), %d messages (samples grown to %v bytes), %.1f–%.1f KB, mean %.1f KB; built and checked in %s\n",
		len(vendors), strings.Join(vendors, " "), n, sizes, float64(lo)/1000, float64(hi)/1000, float64(total)/float64(max(n, 1))/1000, took.Round(time.Millisecond))
	for _, v := range vendors {
		seen := map[string]bool{}
		for _, t := range tmpls[v] {
			sample, _, _ := strings.Cut(t.name, "@")
			if t.grownBy != "" && !seen[sample] {
				seen[sample] = true
				fmt.Fprintf(out, "  %s %s: %s\n", v, sample, t.grownBy)
			}
		}
	}
}

// mailFixture is the jobs the mail target set up.
type mailFixture struct {
	Jobs        []mailJob
	SetUpMillis int64
}

// mailJob is one job of the fixture and its ingest address.
type mailJob struct {
	Workspace, ID, Vendor, Address string
}

func readMailFixture(path string) (*mailFixture, error) {
	var f mailFixture
	if err := readJSON(path, &f); err != nil {
		return nil, fmt.Errorf("read fixture: %w", err)
	}
	if len(f.Jobs) == 0 {
		return nil, errors.New("read fixture: no jobs")
	}
	return &f, nil
}

// mailPlan says what e-mail i is: to job i mod jobs (so that each job gets
// one in every run of len(jobs)), one of the templates of the job's vendor
// in turn.
type mailPlan struct {
	jobs      []mailJob
	tmpls     [][]*mailTemplate // per job
	dotWriter bool              // send through net/smtp's DotWriter
}

func newMailPlan(f *mailFixture, tmpls map[string][]*mailTemplate) *mailPlan {
	p := &mailPlan{jobs: f.Jobs, tmpls: make([][]*mailTemplate, len(f.Jobs))}
	for i, j := range f.Jobs {
		p.tmpls[i] = tmpls[j.Vendor]
	}
	return p
}

func (p *mailPlan) pick(i uint64) (job int, t *mailTemplate) {
	n := uint64(len(p.jobs))
	job = int(i % n)
	list := p.tmpls[job]
	return job, list[(i/n+uint64(job))%uint64(len(list))]
}

// mailLoad is the load's measured phase.
type mailLoad struct {
	mails   int64 // transactions answered 250, started in the measured phase
	bytes   int64 // their messages' bytes
	ok250   int64 // transactions answered 250 in all, warm-up included
	elapsed time.Duration
	lat     hist
	errors  int64
	cpu     time.Duration // the server process's CPU during the measured phase
	genCPU  time.Duration // the load generator's
}

func (m mailLoad) rate() float64 { return float64(m.mails) / m.elapsed.Seconds() }

// runMailLoad drives addr with c.conns SMTP connections in a closed loop:
// each goroutine keeps its connection and sends e-mail after e-mail on it,
// timing each transaction from MAIL to the answer after the data. Every
// answer must be 250 (354 to DATA); any other is an error, printed by
// command and code. budget is how many e-mails the fixture has room for.
func runMailLoad(out io.Writer, c loadConfig, addr string, p *mailPlan, budget int64, targetCPU func() time.Duration, onMeasure func()) mailLoad {
	var (
		phase  atomic.Int32
		next   atomic.Uint64
		ok250  atomic.Int64
		errs   errorLog
		nerr   atomic.Int64
		counts = make([]int64, c.conns)
		sizes  = make([]int64, c.conns)
		hists  = make([]hist, c.conns)
		wg     sync.WaitGroup
		nonce  = strconv.FormatInt(time.Now().UnixNano(), 36)
	)
	fail := func(kind, example string) {
		nerr.Add(1)
		errs.add(kind, example)
	}
	for w := range c.conns {
		wg.Go(func() {
			var cl *smtp.Client
			defer func() {
				if cl != nil {
					cl.Quit()
				}
			}()
			id := make([]byte, 0, 64)
			h := &hists[w]
			for {
				ph := phase.Load()
				if ph == phaseStop {
					return
				}
				if cl == nil {
					var err error
					if cl, err = dialSMTP(addr); err != nil {
						fail("connect: "+err.Error(), err.Error())
						time.Sleep(100 * time.Millisecond)
						continue
					}
				}
				i := next.Add(1) - 1
				if int64(i) >= budget {
					fail("fixture exhausted", "raise -plan-rate (the jobs' room)")
					return
				}
				job, t := p.pick(i)
				id = append(strconv.AppendUint(append(id[:0], "bench."...), i, 10), '.')
				id = append(id, nonce...)
				t0 := time.Now()
				step, err := sendMail(cl, p.jobs[job].Address, t, id, p.dotWriter)
				lat := time.Since(t0)
				if err != nil {
					var te *textproto.Error
					if errors.As(err, &te) {
						fail(fmt.Sprintf("%s %d", step, te.Code), te.Msg)
						if step != "DATA end" && cl.Reset() != nil {
							cl.Close()
							cl = nil
						}
					} else {
						fail(step+": "+err.Error(), err.Error())
						cl.Close()
						cl = nil
					}
					continue
				}
				ok250.Add(1)
				if ph == phaseMeasure {
					h.record(lat)
					counts[w]++
					sizes[w] += int64(t.size(len(id)))
				}
			}
		})
	}
	elapsed, cpu, tcpu := measurePhases(c, &phase, targetCPU, onMeasure)
	wg.Wait()
	r := mailLoad{elapsed: elapsed, cpu: tcpu, genCPU: cpu, errors: nerr.Load(), ok250: ok250.Load()}
	for w := range c.conns {
		r.mails += counts[w]
		r.bytes += sizes[w]
		r.lat.merge(&hists[w])
	}
	errs.print(out, "smtp")
	return r
}

// dialSMTP opens an SMTP session with the listener at addr.
func dialSMTP(addr string) (*smtp.Client, error) {
	conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	cl, err := smtp.NewClient(conn, engine.DefaultIngestDomain)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("greeting: %w", err)
	}
	if err := cl.Hello("bench-client.example"); err != nil {
		cl.Close()
		return nil, fmt.Errorf("EHLO: %w", err)
	}
	return cl, nil
}

// sendMail sends one transaction: t with the Message-ID id to rcpt. It
// returns the step that failed with the error. The data goes out as the
// template's dot-stuffed bytes on the client's connection, or, with
// dotWriter, through net/smtp's DotWriter (which stuffs byte by byte).
func sendMail(cl *smtp.Client, rcpt string, t *mailTemplate, id []byte, dotWriter bool) (string, error) {
	if err := cl.Mail("reports@bench-client.example"); err != nil {
		return "MAIL", err
	}
	if err := cl.Rcpt(rcpt); err != nil {
		return "RCPT", err
	}
	if !dotWriter {
		cmd, err := cl.Text.Cmd("DATA")
		if err != nil {
			return "DATA", err
		}
		cl.Text.StartResponse(cmd)
		_, _, err = cl.Text.ReadResponse(354)
		cl.Text.EndResponse(cmd)
		if err != nil {
			return "DATA", err
		}
		w := cl.Text.W
		w.Write(t.head)
		w.Write(id)
		w.Write(t.wire)
		if err := w.Flush(); err != nil {
			return "DATA write", err
		}
		if _, _, err := cl.Text.ReadResponse(250); err != nil {
			return "DATA end", err
		}
		return "", nil
	}
	w, err := cl.Data()
	if err != nil {
		return "DATA", err
	}
	if _, err := w.Write(t.head); err != nil {
		return "DATA write", err
	}
	if _, err := w.Write(id); err != nil {
		return "DATA write", err
	}
	if _, err := w.Write(t.tail); err != nil {
		return "DATA write", err
	}
	if err := w.Close(); err != nil {
		return "DATA end", err
	}
	return "", nil
}

func printMailLoad(out io.Writer, m mailLoad) {
	per := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(max(m.mails, 1)) }
	fmt.Fprintf(out, "server %s e-mails in %s: %.0f e-mails/s (%.1f MB/s, mean %.1f KB)  p50 %s  p99 %s  mean %s  max %s  errors %d  (CPU: server %.2f cores %.0fµs/e-mail, load generator %.2f cores %.0fµs/e-mail)\n",
		thousands(m.mails), m.elapsed.Round(time.Millisecond), m.rate(), float64(m.bytes)/m.elapsed.Seconds()/1e6, float64(m.bytes)/float64(max(m.mails, 1))/1000,
		fmtDur(m.lat.quantile(0.50)), fmtDur(m.lat.quantile(0.99)), fmtDur(m.lat.mean()), fmtDur(time.Duration(m.lat.max)), m.errors,
		m.cpu.Seconds()/m.elapsed.Seconds(), per(m.cpu), m.genCPU.Seconds()/m.elapsed.Seconds(), per(m.genCPU))
}

func fmtOutcomes(m map[string]int64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+" "+thousands(m[k]))
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, ", ")
}

// startMailTarget starts the mail target child and waits until it listens.
func startMailTarget(args ...string) (*target, error) {
	return startListening("mail target", append([]string{mailTargetCmd}, args...))
}

// mailCount is what the mail target found in the engine after the load.
type mailCount struct {
	Results  int64            // results of the fixture's jobs
	Unparsed int64            // entries of the workspaces' unparsed lists
	Outcomes map[string]int64 // the listener's outcomes, as its Observe hook counted them
}

// mailCount asks the mail target to count the results in its engine.
func (t *target) mailCount() (mailCount, error) {
	var c mailCount
	if _, err := io.WriteString(t.stdin, "count\n"); err != nil {
		return c, fmt.Errorf("ask the mail target to count: %w", err)
	}
	line, err := t.line()
	if err != nil {
		return c, fmt.Errorf("mail target count: %w", err)
	}
	js, ok := strings.CutPrefix(line, "count ")
	if !ok {
		return c, fmt.Errorf("mail target said %q", line)
	}
	if err := jsonx.Unmarshal([]byte(js), &c); err != nil {
		return c, fmt.Errorf("mail target count: %w", err)
	}
	return c, nil
}

// mailServer is the engine, mail store and SMTP listener of the mail
// target, wired as `backupmon serve --smtp-listen` wires them.
type mailServer struct {
	eng   *engine.Engine
	store *mailstore.Store
	smtp  *smtpin.Server
	stats *engineStats
	jobs  []mailJob

	mu       sync.Mutex
	outcomes map[string]int64
}

// openMailServer opens the engine on dir (real clock) and the mail store
// under it, and makes the listener.
func openMailServer(dir string, snapshotEvery uint64, noSync bool) (*mailServer, error) {
	store, err := mailstore.Open(filepath.Join(dir, "mail"))
	if err != nil {
		return nil, fmt.Errorf("open mail store: %w", err)
	}
	s := &mailServer{store: store, stats: &engineStats{}, outcomes: map[string]int64{}}
	logger := benchLogger(s.stats)
	metrics := transport.NewMetrics()
	s.eng, err = engine.Open(engine.Options{
		Dir: dir, Logger: logger, SnapshotEvery: snapshotEvery,
		WAL: wal.Options{Logger: logger, NoSync: noSync, Observe: func(records int, sync time.Duration) {
			metrics.ObserveWAL(records, sync)
			s.stats.observe(records, sync)
		}},
		RawDropped: func(refs []string) {
			if err := store.Remove(refs); err != nil {
				logger.Warn("delete kept e-mails", "err", err)
			}
		},
	})
	if err != nil {
		return nil, fmt.Errorf("open engine: %w", err)
	}
	s.smtp = smtpin.New(s.eng, store, smtpin.Config{
		Domain: s.eng.IngestDomain(), Suggest: smtpin.Suggestions, Logger: logger,
		Observe: func(outcome, vendor string) {
			metrics.ObserveMail(outcome, vendor)
			s.mu.Lock()
			s.outcomes[outcome]++
			s.mu.Unlock()
		},
	})
	return s, nil
}

// setUp creates workspaces × jobsPerWS jobs through the engine's commands,
// the vendors in turn: job g (workspace g mod workspaces) is of vendor g mod
// len(vendors), so that consecutive jobs are in different workspaces.
func (s *mailServer) setUp(workspaces, jobsPerWS int, vendors []string) error {
	s.jobs = make([]mailJob, workspaces*jobsPerWS)
	if err := parallelDo(workspaces, min(workspaces, 128), func(w int) error {
		return s.setUpWorkspace(w, workspaces, jobsPerWS, vendors)
	}); err != nil {
		return fmt.Errorf("set up workspace %w", err)
	}
	return nil
}

func (s *mailServer) setUpWorkspace(w, workspaces, jobsPerWS int, vendors []string) error {
	ws, err := s.eng.CreateWorkspace(engine.WorkspaceInput{Name: engine.Some(fmt.Sprintf("Bench mail MSP %d", w)), Plan: engine.Some("pro")})
	if err != nil {
		return fmt.Errorf("create workspace: %w", err)
	}
	cl, err := s.eng.CreateClient(ws.ID, engine.ClientInput{Name: engine.Some(fmt.Sprintf("Client %d", w))})
	if err != nil {
		return fmt.Errorf("create client: %w", err)
	}
	for m := range jobsPerWS {
		g := w + workspaces*m
		vendor := vendors[g%len(vendors)]
		host := fmt.Sprintf("host-%d-%d", w, m)
		jv, err := createServerJob(s.eng, ws.ID, cl.ID, vendor, fmt.Sprintf("Nightly %s backup %d", vendor, m), host, 1440, 120)
		if err != nil {
			return fmt.Errorf("create job: %w", err)
		}
		var view struct {
			IngestAddress string `json:"ingestAddress"`
		}
		if err := jsonx.Unmarshal(jv.JSON, &view); err != nil || view.IngestAddress == "" {
			return fmt.Errorf("job %s has no ingest address in %s", jv.ID, jv.JSON)
		}
		s.jobs[g] = mailJob{Workspace: ws.ID, ID: jv.ID, Vendor: vendor, Address: view.IngestAddress}
	}
	return nil
}

// count counts the fixture's jobs' results (the admin job view's history)
// and the workspaces' unparsed e-mails.
func (s *mailServer) count() (mailCount, error) {
	c := mailCount{Outcomes: map[string]int64{}}
	seen := map[string]bool{}
	for _, j := range s.jobs {
		v, err := s.eng.JobDetail(j.Workspace, j.ID, 1<<20)
		if err != nil {
			return c, fmt.Errorf("job %s: %w", j.ID, err)
		}
		var view struct {
			History []jsonx.RawMessage `json:"history"`
		}
		if err := jsonx.Unmarshal(v.JSON, &view); err != nil {
			return c, fmt.Errorf("job %s: %w", j.ID, err)
		}
		c.Results += int64(len(view.History))
		if !seen[j.Workspace] {
			seen[j.Workspace] = true
			list, err := s.eng.Unparsed(j.Workspace)
			if err != nil {
				return c, fmt.Errorf("unparsed of %s: %w", j.Workspace, err)
			}
			c.Unparsed += int64(len(list))
		}
	}
	s.mu.Lock()
	for k, v := range s.outcomes {
		c.Outcomes[k] = v
	}
	s.mu.Unlock()
	return c, nil
}

// close stops the listener (sessions in progress finish) and closes the
// engine, returning how long the engine's close took.
func (s *mailServer) close() (time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.smtp.Shutdown(ctx); err != nil {
		return 0, fmt.Errorf("smtp shutdown: %w", err)
	}
	start := time.Now()
	if err := s.eng.Close(); err != nil {
		return 0, fmt.Errorf("close engine: %w", err)
	}
	return time.Since(start), nil
}

// mailTargetChild serves the mail target until its standard input closes:
// it sets up the fixture, writes it to the data directory, prints
// "listening <addr>", and answers the lines "stats" (the log's statistics
// since the last one), "count" (see mailCount) and "trace <file>".
func mailTargetChild(args []string) int {
	fs := flag.NewFlagSet(mailTargetCmd, flag.ContinueOnError)
	dir := fs.String("data", "", "data directory")
	workspaces := fs.Int("workspaces", 50, "")
	jobsPerWS := fs.Int("jobs-per-ws", 20, "")
	vendors := fs.String("vendors", "", "comma-separated vendors, in turn")
	snapshotEvery := fs.Uint64("snapshot-every", 0, "")
	noSync := fs.Bool("nosync", false, "")
	procs := fs.Int("procs", 0, "GOMAXPROCS (0: the server's own choice)")
	cpuProfile := fs.String("cpuprofile", "", "")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *procs > 0 {
		runtime.GOMAXPROCS(*procs)
	} else {
		tune.Procs() // as backupmon serve does
	}
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "bench mail target:", err)
		return 1
	}
	s, err := openMailServer(*dir, *snapshotEvery, *noSync)
	if err != nil {
		return fail(err)
	}
	start := time.Now()
	if err := s.setUp(*workspaces, *jobsPerWS, strings.Split(*vendors, ",")); err != nil {
		return fail(err)
	}
	// The set-up's records are behind a snapshot before the load starts.
	if err := s.eng.Snapshot(); err != nil {
		return fail(fmt.Errorf("snapshot after set-up: %w", err))
	}
	b, _ := jsonx.Marshal(mailFixture{Jobs: s.jobs, SetUpMillis: time.Since(start).Milliseconds()})
	if err := os.WriteFile(filepath.Join(*dir, mailFixtureFile), b, 0o600); err != nil {
		return fail(fmt.Errorf("write fixture: %w", err))
	}
	s.stats.take()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fail(err)
	}
	go func() {
		if err := s.smtp.Serve(ln); err != nil && !errors.Is(err, smtpin.ErrServerClosed) {
			fmt.Fprintln(os.Stderr, "bench mail target: serve:", err)
		}
	}()
	stopProfile := startProfile(*cpuProfile)
	fmt.Printf("listening %s\n", ln.Addr())
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		switch line := in.Text(); {
		case strings.HasPrefix(line, "trace "):
			go writeTrace(strings.TrimPrefix(line, "trace "), 2*time.Second)
		case line == "stats":
			batches, records, p50, p99, snaps, snapTime := s.stats.take()
			fmt.Printf("stats %d %d %d %d %d %d\n", batches, records, p50, p99, snaps, snapTime)
		case line == "count":
			c, err := s.count()
			if err != nil {
				return fail(err)
			}
			b, _ := jsonx.Marshal(c)
			fmt.Printf("count %s\n", b)
		}
	}
	stopProfile()
	closed, err := s.close()
	if err != nil {
		return fail(err)
	}
	fmt.Printf("closed %d\n", closed)
	return 0
}
