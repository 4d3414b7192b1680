package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestReadLayoutKeepsEveryWorkspaceWithinTheProLimit plays the load's
// request order up to the fixture's budget: no workspace gets more than 300
// requests, counting the sample answers taken from workspace 0, and the
// budget covers the plan.
func TestReadLayoutKeepsEveryWorkspaceWithinTheProLimit(t *testing.T) {
	for _, c := range []readConfig{
		{planRate: 40000, keysPerWS: 1, targetFlags: targetFlags{warmup: 3 * time.Second, duration: 10 * time.Second}},
		{planRate: 5000, keysPerWS: 3, targetFlags: targetFlags{warmup: time.Second, duration: 2 * time.Second}},
		{planRate: 1, keysPerWS: 2, targetFlags: targetFlags{duration: time.Second}},
		{planRate: 1000, keysPerWS: 2, workspaces: 7, targetFlags: targetFlags{duration: time.Second}},
	} {
		l, planned, budget := sizeReadLayout(c)
		if c.workspaces == 0 && budget < planned {
			t.Errorf("%+v: room for %d requests, plan %d", c, budget, planned)
		}
		f := &fixture{layout: l, secrets: make([]string, l.keys())}
		r := newReadRequests(f)
		perWS := make([]int, l.workspaces)
		perWS[0] += len(readPaths) // the sample answers
		keys := make([]int, l.keys())
		for i := range uint64(budget) {
			path, key := r.pick(i)
			if path != int(i%uint64(len(readPaths))) {
				t.Fatalf("request %d: path %d", i, path)
			}
			perWS[key%l.workspaces]++
			keys[key]++
		}
		for w, n := range perWS {
			if n > restPerMinutePro {
				t.Errorf("%+v: workspace %d gets %d requests", c, w, n)
			}
		}
		for k, n := range keys {
			if n == 0 && budget >= int64(len(keys)*len(readPaths)) {
				t.Errorf("%+v: key %d unused", c, k)
			}
		}
	}
}

// TestReadRunsEndToEnd runs the read load briefly against both targets and
// checks its output: the server's sample answers are what the bare handler
// serves, and the last line is the ratio.
func TestReadRunsEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	var out bytes.Buffer
	res, err := runRead(readConfig{targetFlags: targetFlags{duration: 400 * time.Millisecond, warmup: 100 * time.Millisecond, conns: 8, data: t.TempDir()}, workspaces: 80, keysPerWS: 2, clientsPerWS: 2, jobsPerWS: 55, resultsPerJob: 3, alertsPerWS: 2}, &out)
	checkLoadRun(t, res, err, out.String())
	if !regexp.MustCompile(`answers: /jobs [\d,]+ B \(\d+ headers\), /alerts [\d,]+ B \(\d+ headers\), /health [\d,]+ B`).MatchString(out.String()) {
		t.Errorf("no answer sizes in the output")
	}
}

// TestReadCountsAnExhaustedFixtureAsErrors gives the load one workspace:
// the run must report errors rather than let the Pro limit answer 429s.
func TestReadCountsAnExhaustedFixtureAsErrors(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	var out bytes.Buffer
	res, err := runRead(readConfig{targetFlags: targetFlags{duration: 500 * time.Millisecond, conns: 4, serverOnly: true}, workspaces: 1, keysPerWS: 1, clientsPerWS: 1, jobsPerWS: 3, resultsPerJob: 1}, &out)
	if err != nil {
		t.Fatal(err)
	}
	if res.errors == 0 || !strings.Contains(out.String(), "fixture exhausted") || strings.Contains(out.String(), "status 429") {
		t.Fatalf("want fixture-exhausted errors and no 429; got %d errors:\n%s", res.errors, out.String())
	}
}
