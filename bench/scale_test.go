package main

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestScaleReadsStayWithinTheProLimit plays a minute of reads at the
// readers' pace, with the pacer's burst on top: no workspace gets more than
// Pro's 300, and the noisy workspace none.
func TestScaleReadsStayWithinTheProLimit(t *testing.T) {
	for _, workspaces := range []int{2, 3, 100, 10000} {
		f := &scaleFixture{Workspaces: workspaces, RESTSecrets: make([]string, workspaces)}
		others := make([]int, workspaces-1)
		for w := range others {
			others[w] = w
		}
		r := newScaleReads(f, others)([]byte("http://x")).(*scaleReads)
		rate := float64(len(others)) * scaleRESTPerMinute / 60
		n := uint64(rate*60) + uint64(readBurst(len(others), 64)) // a minute, and the pacer's burst with 64 connections
		perWS := make([]int, workspaces)
		for i := range n {
			path, ws := r.pick(i)
			if path != int(i%3) {
				t.Fatalf("request %d: path %d", i, path)
			}
			perWS[ws]++
		}
		for w, c := range perWS {
			if c > restPerMinutePro {
				t.Errorf("%d workspaces: workspace %d gets %d requests in a minute", workspaces, w, c)
			}
		}
		if perWS[f.noisy()] != 0 {
			t.Errorf("%d workspaces: the noisy workspace was read", workspaces)
		}
	}
}

// TestScaleReportsStayWithinTheKeyAndJobLimits plays a minute of reports at
// the reporters' pace: every report goes to a job of the set with a key of
// the job's workspace, no key sends more than 60 in the minute and every
// job reports as often as planned.
func TestScaleReportsStayWithinTheKeyAndJobLimits(t *testing.T) {
	for _, c := range []struct {
		workspaces, jobs int
		every            time.Duration
	}{{10000, 20, 10 * time.Second}, {100, 20, 10 * time.Second}, {7, 3, 2 * time.Second}, {2, 50, 5 * time.Second}} {
		keys := reportKeysFor(c.jobs, c.every)
		f := &scaleFixture{Workspaces: c.workspaces, JobsPerWS: c.jobs, ReportKeysPerWS: keys,
			JobIDs: make([]string, c.workspaces*c.jobs), ReportSecrets: make([]string, c.workspaces*keys)}
		reporting := max(1, c.workspaces/scaleReportFraction)
		set := reportSlice(f, reporting, 0)
		inSet := map[int]bool{}
		for _, w := range set {
			if w == f.noisy() {
				t.Fatalf("%+v: the noisy workspace reports", c)
			}
			inSet[w] = true
		}
		r := newScaleReports(f, set, "t")
		rate := float64(reporting*c.jobs) / c.every.Seconds()
		burst := reportBurst(reporting, keys, 32)
		n := uint64(rate*60) + uint64(burst)
		perKey := make([]int, len(f.ReportSecrets))
		perJob := make([]int, len(f.JobIDs))
		for i := range n {
			job, key, _ := r.pick(set, i)
			if job%c.workspaces != key%c.workspaces || !inSet[job%c.workspaces] {
				t.Fatalf("%+v: report %d: job %d with key %d", c, i, job, key)
			}
			perKey[key]++
			perJob[job]++
		}
		for k, got := range perKey {
			if got > perKeyPerMinute {
				t.Errorf("%+v: key %d sends %d reports in a minute", c, k, got)
			}
		}
		want := int(time.Minute / c.every)
		extra := (burst+reporting*c.jobs-1)/(reporting*c.jobs) + 1
		for g, got := range perJob {
			if inSet[g%c.workspaces] && (got < want || got > want+extra) {
				t.Errorf("%+v: job %d reports %d times in a minute, want %d", c, g, got, want)
			}
		}
	}
}

func TestPacerHoldsItsRate(t *testing.T) {
	const rate, burst = 2000.0, 8
	p := newPacer(rate, burst)
	var n atomic.Int64
	stop := time.Now().Add(300 * time.Millisecond)
	done := make(chan struct{})
	var wg sync.WaitGroup
	for range burst {
		wg.Go(func() {
			for time.Now().Before(stop) && p.wait(done) {
				n.Add(1)
			}
		})
	}
	wg.Wait()
	close(done)
	slow := newPacer(0.001, 1) // a turn every 1,000 s: the second wait ends when done closes
	if !slow.wait(done) || slow.wait(done) {
		t.Error("a wait did not end with done")
	}
	// Never more than the rate and the burst (and the waits that began
	// before the stop); fewer when the machine is busy.
	limit := int64(rate*0.3) + burst*2
	if got := n.Load(); got > limit || got < 1 {
		t.Errorf("%d requests in 300ms at %.0f/s (at most %d)", got, rate, limit)
	}
}

func TestScanHistoryCountsResultsAndTheOlderOnes(t *testing.T) {
	at := func(ms int64) string {
		return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z")
	}
	cut := int64(1_700_000_000_000)
	view := fmt.Sprintf(`{"id":"j","recentResults":[{"receivedAt":"%s"}],"history":[{"receivedAt":"%s","source":"x"},{"receivedAt":"%s","source":"x"},{"receivedAt":"%s","source":"x"}]}`,
		at(cut-5000), at(cut+1000), at(cut), at(cut-1))
	n, older, oldest := scanHistory([]byte(view), cut)
	if n != 3 || older != 1 || oldest != cut-1 {
		t.Errorf("got %d results, %d older, oldest %d; want 3, 1, %d", n, older, oldest, cut-1)
	}
}

// TestScaleRunsAtTinyScale runs every phase on a tiny state, the server,
// the noisy client and the retention step in this process (the restarts
// in recovery children), and checks that each ran and stayed within the
// limits.
func TestScaleRunsAtTinyScale(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a state and starts a server")
	}
	var out bytes.Buffer
	c := scaleConfig{stateFlags: stateFlags{workspaces: 4, clientsPerWS: 2, jobsPerWS: 3, resultsPerJob: 40, parallel: 4}, duration: 300 * time.Millisecond, warmup: 100 * time.Millisecond,
		soak: 400 * time.Millisecond, window: 200 * time.Millisecond, retention: true, phases: "all", conns: 4, reportConns: 2, noisyConns: 2,
		reportEvery: 10 * time.Second, restarts: 1, inProcess: true}
	if _, err := runScale(c, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	s := out.String()
	for _, want := range []string{
		"imported 480 results", "restart (jobs only, no results)", "restart (full state, from the snapshot)", "phase A, reads alone",
		"phase B, reads while", "phase C, reads while one workspace hammers", "window   2", "retention 30 days",
		"answered 429 RATE_LIMITED", "PASS  phase B within the limits", "memory limit: ", "PASS  server RSS under its memory limit", "PASS  retention at 30 days drops every older result", "PASS  soak within the limits",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("no %q in the output:\n%s", want, s)
		}
	}
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "bench scale: ") {
		t.Errorf("last line %q", last)
	}
}
