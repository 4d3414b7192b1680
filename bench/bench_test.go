package main

import (
	"bytes"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestMain lets the test binary play the bench's child processes (the
// report targets and the recovery child).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == recoveryChildCmd {
		os.Exit(recoveryChild(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == targetChildCmd {
		os.Exit(targetChild(os.Args[2:]))
	}
	os.Exit(m.Run())
}

func TestHistQuantilesWithinBucketError(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var h hist
	var vals []time.Duration
	for range 100000 {
		// Log-uniform from 1µs to about 1s, like latencies.
		v := time.Duration(float64(int64(1000)<<r.IntN(20)) * (1 + r.Float64()))
		vals = append(vals, v)
		h.record(v)
	}
	slices.Sort(vals)
	for _, q := range []float64{0.5, 0.9, 0.99, 0.999} {
		want := vals[int(q*float64(len(vals)))-1]
		got := h.quantile(q)
		if diff := float64(got-want) / float64(want); diff > 1.0/histSub || diff < -1.0/histSub {
			t.Errorf("q%.3f: got %s, want %s (±%.1f%%)", q, got, want, 100.0/histSub)
		}
	}
	if h.n != uint64(len(vals)) || time.Duration(h.max) != vals[len(vals)-1] {
		t.Errorf("n %d max %s, want %d %s", h.n, time.Duration(h.max), len(vals), vals[len(vals)-1])
	}
}

func TestHistIndexIsMonotonicAndLowIsItsInverse(t *testing.T) {
	prev := -1
	for v := uint64(0); v < 1<<20; v++ {
		i := histIndex(v)
		if i < prev || i > prev+1 {
			t.Fatalf("index(%d) = %d after %d", v, i, prev)
		}
		if i != prev && histLow(i) != v {
			t.Fatalf("low(%d) = %d, want %d", i, histLow(i), v)
		}
		prev = i
	}
	if i := histIndex(1<<63 + 12345); i >= histBuckets {
		t.Fatalf("index of a huge value %d ≥ %d buckets", i, histBuckets)
	}
}

func TestPickSpreadsEvenlyAndKeepsKeysInTheJobsWorkspace(t *testing.T) {
	l := layout{workspaces: 7, jobsPerWS: 5, keysPerWS: 3}
	f := &fixture{layout: l, jobIDs: make([]string, l.jobs()), secrets: make([]string, l.keys())}
	jobs := make([]int, l.jobs())
	keys := make([]int, l.keys())
	n := uint64(l.jobs() * l.keys() * 4)
	for i := range n {
		j, k := f.pick(i)
		if j%l.workspaces != k%l.workspaces {
			t.Fatalf("request %d: job %d (workspace %d) with key %d (workspace %d)", i, j, j%l.workspaces, k, k%l.workspaces)
		}
		jobs[j]++
		keys[k]++
	}
	for j, c := range jobs {
		if c != int(n)/len(jobs) {
			t.Errorf("job %d got %d requests, want %d", j, c, int(n)/len(jobs))
		}
	}
	for k, c := range keys {
		if c != int(n)/len(keys) {
			t.Errorf("key %d got %d requests, want %d", k, c, int(n)/len(keys))
		}
	}
}

func TestSizeLayoutLeavesRoomForThePlan(t *testing.T) {
	for _, c := range []reportConfig{
		{planRate: 150000, workspaces: 1000, targetFlags: targetFlags{warmup: 3 * time.Second, duration: 10 * time.Second}},
		{planRate: 5000, workspaces: 3, targetFlags: targetFlags{warmup: time.Second, duration: 2 * time.Second}},
		{planRate: 1, workspaces: 50, targetFlags: targetFlags{warmup: 0, duration: time.Second}},
	} {
		l, planned := sizeLayout(c)
		room := min(int64(l.jobs())*perJobPerDay, int64(l.keys())*perKeyPerMinute)
		if room < planned {
			t.Errorf("%+v: room for %d requests, plan %d", c, room, planned)
		}
	}
	l, _ := sizeLayout(reportConfig{targetFlags: targetFlags{duration: time.Second}, planRate: 1, workspaces: 10, jobs: 25, keys: 31})
	if l.jobs() != 30 || l.keys() != 40 {
		t.Errorf("explicit -jobs 25 -keys 31 over 10 workspaces: %d jobs, %d keys; want 30, 40", l.jobs(), l.keys())
	}
}

// TestReportRunsEndToEnd runs the load generator briefly against both
// targets and checks its output.
func TestReportRunsEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	var out bytes.Buffer
	res, err := runReport(reportConfig{targetFlags: targetFlags{duration: 400 * time.Millisecond, warmup: 100 * time.Millisecond, conns: 8, data: t.TempDir()}, workspaces: 5, planRate: 20000, snapshotEvery: 2000}, &out)
	checkLoadRun(t, res, err, out.String())
}

// checkLoadRun fails t unless a run against the server and the bare
// handler (its result res, its error err and its output out) had no error,
// both targets served requests, and out ends with the ratio line.
func checkLoadRun(t *testing.T, res reportResult, err error, out string) {
	t.Helper()
	t.Log("\n" + out)
	if err != nil {
		t.Fatal(err)
	}
	if res.errors != 0 || res.server.requests == 0 || res.bare.requests == 0 {
		t.Fatalf("errors %d, server %d requests, bare %d requests", res.errors, res.server.requests, res.bare.requests)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if last := lines[len(lines)-1]; !regexp.MustCompile(`^ratio \d+\.\d\d p99x \d+\.\d\d$`).MatchString(last) {
		t.Errorf("last line %q", last)
	}
}

// TestReportCountsAnExhaustedFixtureAsErrors sizes the fixture far too small:
// the run must report errors rather than let the server's limits bite
// unseen.
func TestReportCountsAnExhaustedFixtureAsErrors(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	var out bytes.Buffer
	res, err := runReport(reportConfig{targetFlags: targetFlags{duration: 300 * time.Millisecond, warmup: 0, conns: 4, serverOnly: true}, workspaces: 1, jobs: 1, keys: 1}, &out)
	if err != nil {
		t.Fatal(err)
	}
	if res.errors == 0 || !strings.Contains(out.String(), "fixture exhausted") {
		t.Fatalf("want fixture-exhausted errors; got %d errors:\n%s", res.errors, out.String())
	}
}

func TestRecoveryRunsEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a state and runs child processes")
	}
	for _, idem := range []bool{false, true} {
		err := runRecovery(recoveryConfig{stateFlags: stateFlags{workspaces: 4, clientsPerWS: 2, jobsPerWS: 5, resultsPerJob: 3, parallel: 4}, tail: 25, data: t.TempDir(), idem: idem})
		if err != nil {
			t.Fatalf("idem %v: %v", idem, err)
		}
	}
}
