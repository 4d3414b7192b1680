package transport_test

// REST API limits (api.md 8.1, decisions.md 3, docs/decisions.md "REST
// API"): per-workspace minute limits by plan in fixed UTC minutes, shared by
// every key of the workspace, counting every request past the scope check
// but a 429; the monthly quota of Growth and trial, counted across a
// restart, reset by a new month; the headers exactly where they belong.

import (
	"strconv"
	"sync"
	"testing"
	"time"

	"backupmon/internal/testserver"
)

// rsBurst sends n GETs, the paths and keys taken in turn, from up to 12
// goroutines, checks each answer with rsCheck and returns how many answered
// each status.
func rsBurst(s *testserver.Server, keys, paths []string, n int) map[int]int {
	s.T.Helper()
	t := s.T
	var mu sync.Mutex
	count := map[int]int{}
	var wg sync.WaitGroup
	next := make(chan int)
	for g := 0; g < 12; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				p := paths[i%len(paths)]
				r, err := rsSend(s, "GET", p, rsAuth(keys[i%len(keys)]))
				if err != nil {
					t.Errorf("%s: %v", p, err)
					continue
				}
				rsCheck(t, "GET", p, r)
				mu.Lock()
				count[r.Status]++
				mu.Unlock()
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	return count
}

// rsWantCounts checks rsBurst's counts.
func rsWantCounts(t *testing.T, what string, got, want map[int]int) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: statuses %v, want %v", what, got, want)
		return
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: statuses %v, want %v", what, got, want)
			return
		}
	}
}

// rsLimits checks the limit headers of an answer: the minute's limit and
// remaining count, its reset at the next minute; the quota's when quota is
// true (Growth, trial) and none otherwise.
func rsLimits(t *testing.T, what string, r testserver.Response, now time.Time, perMinute, remaining int, quota bool, quotaRemaining int) {
	t.Helper()
	want := map[string]string{
		"X-RateLimit-Limit":     strconv.Itoa(perMinute),
		"X-RateLimit-Remaining": strconv.Itoa(remaining),
		"X-RateLimit-Reset":     rsUnix(now.Truncate(time.Minute).Add(time.Minute)),
		"X-Quota-Limit":         "", "X-Quota-Remaining": "", "X-Quota-Reset": "",
	}
	if quota {
		y, m, _ := now.UTC().Date()
		want["X-Quota-Limit"] = "10000"
		want["X-Quota-Remaining"] = strconv.Itoa(quotaRemaining)
		want["X-Quota-Reset"] = rsUnix(time.Date(y, m+1, 1, 0, 0, 0, 0, time.UTC))
	}
	rsHeaders(t, what, r, want)
}

func TestRESTMinuteLimit(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	f := s.Fixture(testserver.FixtureOptions{Plan: "growth"})
	second, _ := s.NewKey(f.WS, "rest", nil)
	noScope, _ := s.NewKey(f.WS, "rest", map[string]any{"scopes": []string{}})
	_, otherKey := rsWorkspace(s, "Other", "growth", nil)
	keys := []string{f.RestKey, second}
	minute := time.Date(2026, 3, 4, 11, 0, 0, 0, time.UTC)
	s.SetClock(minute)

	// The first request: 59 left in the minute, 9,999 in the month.
	r := rsGet(s, f.RestKey, "/workspace")
	rsLimits(t, "first", r, minute, 60, 59, true, 9999)
	l := admObj(t, rsData(t, "workspace", r), "limits")
	rpFields(t, "limits", l, map[string]any{"requestsPerMinute": 60, "monthlyQuota": 10000, "monthlyUsed": 1})
	// 400 and 404 answers count, whichever key of the workspace sends them.
	r = rsGet(s, second, "/jobs?limit=0")
	rsWantErr(t, "bad limit", r, 400, "INVALID_PARAMETER", "limit")
	rsLimits(t, "400", r, minute, 60, 58, true, 9998)
	r = rsGet(s, f.RestKey, "/clients/nope")
	rsWantErr(t, "unknown client", r, 404, "NOT_FOUND", "")
	rsLimits(t, "404", r, minute, 60, 57, true, 9997)
	// 401, 403, 405 and unknown paths neither count nor carry the headers
	// (rsCheck checks their headers).
	for i := 0; i < 10; i++ {
		rsWantErr(t, "403", rsGet(s, noScope, "/jobs"), 403, "INSUFFICIENT_SCOPE", "")
		rsWantErr(t, "403", rsGet(s, f.ReportKey, "/jobs"), 403, "INSUFFICIENT_SCOPE", "")
		rsWantErr(t, "401", rsGet(s, rsRandomKey(), "/jobs"), 401, "UNAUTHORIZED", "")
		rsWantErr(t, "405", rsDo(s, "POST", "/jobs", rsAuth(f.RestKey)), 405, "METHOD_NOT_ALLOWED", "")
		r := rsGet(s, f.RestKey, "/nope")
		rsWantErr(t, "unknown path", r, 404, "NOT_FOUND", "")
		rsHeaders(t, "unknown path", r, map[string]string{"X-RateLimit-Limit": "", "X-Quota-Limit": ""})
	}
	rsWantCounts(t, "the rest of the minute",
		rsBurst(s, keys, []string{"/jobs", "/jobs?status=bad", "/jobs/nope", "/health", "/workspace"}, 57), map[int]int{200: 34, 400: 12, 404: 11})

	// The 61st, from any key, on any endpoint, with any parameter.
	for _, c := range []struct{ key, path string }{
		{f.RestKey, "/jobs"}, {second, "/workspace"}, {f.RestKey, "/jobs?limit=0"}, {second, "/clients/nope"},
		{f.RestKey, "/clients/nope?bogus=1"}, {second, "/reports?cursor=bad"},
	} {
		r := rsGet(s, c.key, c.path)
		rsWantErr(t, "61st "+c.path, r, 429, "RATE_LIMITED", "")
		rsLimits(t, "61st "+c.path, r, minute, 60, 0, true, 9940)
		rsHeaders(t, "61st", r, map[string]string{"Retry-After": "60"})
	}
	// Other workspaces have their own minute.
	r = rsGet(s, otherKey, "/workspace")
	rsLimits(t, "other workspace", r, minute, 60, 59, true, 9999)
	// Later in the same minute: Retry-After counts down, rounded up.
	for _, c := range []struct {
		at    time.Duration
		retry string
	}{{time.Millisecond, "60"}, {30 * time.Second, "30"}, {59*time.Second + 500*time.Millisecond, "1"}, {59*time.Second + 999*time.Millisecond, "1"}} {
		s.SetClock(minute.Add(c.at))
		r := rsGet(s, f.RestKey, "/health")
		rsWantErr(t, "still limited", r, 429, "RATE_LIMITED", "")
		rsHeaders(t, "still limited", r, map[string]string{"Retry-After": c.retry, "X-RateLimit-Remaining": "0",
			"X-RateLimit-Reset": rsUnix(minute.Add(time.Minute))})
	}
	// The next minute: 60 again, counted from zero (a fixed calendar
	// minute, not a sliding window).
	next := minute.Add(time.Minute)
	s.SetClock(next)
	r = rsGet(s, second, "/workspace")
	rsLimits(t, "next minute", r, next, 60, 59, true, 9939)
	// The 429s did not count against the month: 60 + this one.
	rpFields(t, "limits", admObj(t, rsData(t, "workspace", r), "limits"), map[string]any{"monthlyUsed": 61})
	rsWantCounts(t, "the next minute", rsBurst(s, keys, []string{"/jobs"}, 60), map[int]int{200: 59, 429: 1})
}

func TestRESTPlanLimits(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	pro := s.Fixture(testserver.FixtureOptions{Plan: "pro"})
	trialWS, trialKey := rsWorkspace(s, "Trial", "trial", map[string]any{"trialEndsAt": admIn(testserver.T0.Add(14 * 24 * time.Hour))})
	minute := testserver.T0.Add(time.Hour)
	s.SetClock(minute)

	rpRun(t, s, "pro: 300 a minute, no quota", func(t *testing.T) {
		r := rsGet(s, pro.RestKey, "/workspace")
		rsLimits(t, "pro", r, minute, 300, 299, false, 0)
		rpFields(t, "pro limits", admObj(t, rsData(t, "workspace", r), "limits"), map[string]any{"requestsPerMinute": 300,
			"monthlyQuota": nil, "monthlyUsed": nil})
		rsWantCounts(t, "pro minute", rsBurst(s, []string{pro.RestKey}, []string{"/jobs"}, 302), map[int]int{200: 299, 429: 3})
		r = rsGet(s, pro.RestKey, "/jobs?limit=0")
		rsWantErr(t, "pro 429 before the parameter", r, 429, "RATE_LIMITED", "")
		rsLimits(t, "pro 429", r, minute, 300, 0, false, 0)
	})
	rpRun(t, s, "trial: 60 a minute and the quota", func(t *testing.T) {
		r := rsGet(s, trialKey, "/workspace")
		rsLimits(t, "trial", r, minute, 60, 59, true, 9999)
		rpFields(t, "trial limits", admObj(t, rsData(t, "workspace", r), "limits"), map[string]any{"requestsPerMinute": 60,
			"monthlyQuota": 10000, "monthlyUsed": 1})
		d := rsData(t, "workspace", rsGet(s, trialKey, "/workspace"))
		rpFields(t, "trial workspace", admObj(t, d, "workspace"), map[string]any{"plan": "trial",
			"trialEndsAt": testserver.TS(testserver.T0.Add(14 * 24 * time.Hour))})
		rpFields(t, "trial limits", admObj(t, d, "limits"), map[string]any{"monthlyUsed": 2})
		rsWantCounts(t, "trial minute", rsBurst(s, []string{trialKey}, []string{"/jobs"}, 60), map[int]int{200: 58, 429: 2})
	})
	rpRun(t, s, "a plan change applies at once", func(t *testing.T) {
		// The trial workspace used its minute; on Pro it has 300.
		s.MustAdmin(200, "PATCH", "/workspaces/"+trialWS, map[string]any{"plan": "pro"})
		r := rsGet(s, trialKey, "/workspace")
		rsLimits(t, "now pro", r, minute, 300, 239, false, 0)
	})
}

// TestRESTMonthlyQuota uses up a Growth workspace's 10,000 requests (a
// minute of the development clock per 60), through a restart.
func TestRESTMonthlyQuota(t *testing.T) {
	if testing.Short() {
		t.Skip("10,000 requests")
	}
	s := testserver.Start(t, testserver.Options{})
	f := s.Fixture(testserver.FixtureOptions{Plan: "growth"})
	second, _ := s.NewKey(f.WS, "rest", nil)
	_, otherKey := rsWorkspace(s, "Other", "growth", nil)
	keys := []string{f.RestKey, second}
	paths := []string{"/jobs", "/health", "/clients/nope", "/jobs?limit=0", "/workspace", "/reports"}
	used := 0
	burst := func(n int) {
		t.Helper()
		got := rsBurst(s, keys, paths, n)
		if got[429] != 0 || got[200]+got[400]+got[404] != n {
			t.Fatalf("after %d requests: %v", used, got)
		}
		used += n
	}
	monthlyUsed := func() int {
		t.Helper()
		r := rsGet(s, f.RestKey, "/workspace")
		used++
		rsHeaders(t, "workspace", r, map[string]string{"X-Quota-Remaining": strconv.Itoa(10000 - used)})
		n, _ := admObj(t, rsData(t, "workspace", r), "limits")["monthlyUsed"].(float64)
		return int(n)
	}
	start := testserver.T0 // 10:00:00.000, a minute's start
	s.SetClock(start)
	burst(39)
	if n := monthlyUsed(); n != 40 {
		t.Fatalf("monthlyUsed %d, want 40", n)
	}
	for i := 0; i < 80; i++ {
		s.Advance(time.Minute)
		burst(60)
	}
	s.Advance(time.Minute)
	if n := monthlyUsed(); n != 4841 {
		t.Fatalf("monthlyUsed %d before the restart, want 4841", n)
	}
	// The month's count survives a restart (docs/decisions.md).
	s.Restart()
	if n := monthlyUsed(); n != 4842 {
		t.Fatalf("monthlyUsed %d after the restart, want 4842", n)
	}
	burst(58)
	for used < 10000 {
		s.Advance(time.Minute)
		burst(60)
	}
	if used != 10000 {
		t.Fatalf("used %d", used)
	}
	// The minute is used up too, and the quota answers first.
	now := rpNow(s)
	nextMonth := time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)
	for _, p := range []string{"/jobs", "/workspace", "/jobs?limit=0", "/clients/nope"} {
		r := rsGet(s, f.RestKey, p)
		rsWantErr(t, "quota "+p, r, 429, "QUOTA_EXCEEDED", "")
		rsLimits(t, "quota", r, now, 60, 0, true, 0)
		rsHeaders(t, "quota", r, map[string]string{"Retry-After": strconv.FormatInt(int64(nextMonth.Sub(now)/time.Second), 10)})
	}
	// Another workspace is not affected.
	if r := rsGet(s, otherKey, "/jobs"); r.Status != 200 {
		t.Errorf("other workspace: %d %s", r.Status, r.Body)
	}
	// A new minute does not help; nor does a restart.
	s.Advance(time.Minute)
	rsWantErr(t, "next minute", rsGet(s, second, "/health"), 429, "QUOTA_EXCEEDED", "")
	s.Restart()
	late := time.Date(2026, 3, 31, 23, 59, 59, 0, time.UTC)
	s.SetClock(late)
	r := rsGet(s, f.RestKey, "/health")
	rsWantErr(t, "last second of the month", r, 429, "QUOTA_EXCEEDED", "")
	rsHeaders(t, "last second", r, map[string]string{"Retry-After": "1", "X-Quota-Remaining": "0",
		"X-Quota-Reset": rsUnix(nextMonth)})
	// A new month: the count starts again.
	s.SetClock(nextMonth)
	r = rsGet(s, f.RestKey, "/workspace")
	rsLimits(t, "new month", r, nextMonth, 60, 59, true, 9999)
	rpFields(t, "new month", admObj(t, rsData(t, "workspace", r), "limits"), map[string]any{"monthlyUsed": 1})
}
