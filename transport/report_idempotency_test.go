package transport_test

// Idempotency rules 1-5 of api.md 4.3, with decisions.md 3 (30 days, null
// means absent, 255 characters).

import (
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"backupmon/internal/testserver"
)

func TestReportIdempotency(t *testing.T) {
	s, f := startFixture(t)

	rpRun(t, s, "rule 1: keys are per job", func(t *testing.T) {
		other := s.NewJob(f.WS, f.Client, "Other", testserver.Daily())
		job := s.NewJob(f.WS, f.Client, "One", testserver.Daily())
		s.Advance(time.Minute)
		rpWant(t, "job one", s.Report(job, f.ReportKey, "run-1", `{"status":"ok"}`), 200, rpOK("ok", "", false, false))
		rpWant(t, "job two, same key", s.Report(other, f.ReportKey, "run-1", `{"status":"ok"}`), 200, rpOK("ok", "", false, false))
		for _, j := range []string{job, other} {
			if h := rpHistory(s, f.WS, j); len(h) != 1 {
				t.Errorf("job %s: %d results, want 1", j, len(h))
			}
		}
	})

	rpRun(t, s, "rule 2: a recorded key answers duplicate and nothing happens", func(t *testing.T) {
		job := s.NewJob(f.WS, f.Client, "Dup", testserver.Daily())
		s.Advance(time.Minute)
		id := rpAccepted(t, "first", s.Report(job, f.ReportKey, "run-2", `{"status":"failed"}`), "failed")
		before := rpJob(s, f.WS, job)
		alertsBefore := rpJSONOf(t, rpAlerts(s, f.WS))
		s.Advance(time.Minute)
		// The answer echoes the status sent now, whatever the first was;
		// body fields, even bad-looking ones that parse, change nothing.
		for _, c := range []struct{ status, body string }{
			{"ok", `{"status":"ok"}`},
			{"failed", `{"status":"failed"}`},
			{"warn", `{"status":"warn","size_bytes":5,"duration_seconds":9,"timestamp":"2026-03-04T09:00:00Z"}`},
		} {
			rpWant(t, "duplicate "+c.status, s.Report(job, f.ReportKey, "run-2", c.body), 200, rpDup(c.status))
		}
		after := rpJob(s, f.WS, job)
		if a, b := rpJSONOf(t, after), rpJSONOf(t, before); a != b {
			t.Errorf("a duplicate changed the job:\n%s\nwas\n%s", a, b)
		}
		if a := rpJSONOf(t, rpAlerts(s, f.WS)); a != alertsBefore {
			t.Errorf("a duplicate changed the alerts:\n%s\nwas\n%s", a, alertsBefore)
		}
		rpFields(t, "alert", rpAlert(s, f.WS, id), map[string]any{"status": "open"})
	})

	rpRun(t, s, "key from body, header or both: header wins", func(t *testing.T) {
		job := s.NewJob(f.WS, f.Client, "Carriers", testserver.Daily())
		s.Advance(time.Minute)
		rpWant(t, "body key", s.Report(job, f.ReportKey, "", `{"status":"ok","idempotency_key":"b-1"}`), 200, rpOK("ok", "", false, false))
		rpWant(t, "same key in the header", s.Report(job, f.ReportKey, "b-1", `{"status":"ok"}`), 200, rpDup("ok"))
		rpWant(t, "same key in the body", s.Report(job, f.ReportKey, "", `{"status":"ok","idempotency_key":"b-1"}`), 200, rpDup("ok"))
		s.Advance(time.Minute)
		// Both sent: the header's key is the one recorded.
		rpWant(t, "header h-1, body b-2", s.Report(job, f.ReportKey, "h-1", `{"status":"ok","idempotency_key":"b-2"}`), 200, rpOK("ok", "", false, false))
		rpWant(t, "h-1 again", s.Report(job, f.ReportKey, "h-1", `{"status":"ok"}`), 200, rpDup("ok"))
		s.Advance(time.Minute)
		rpWant(t, "b-2 was not recorded", s.Report(job, f.ReportKey, "", `{"status":"ok","idempotency_key":"b-2"}`), 200, rpOK("ok", "", false, false))
		// Header b-1 (recorded) with a new body key: duplicate, the header wins.
		rpWant(t, "header b-1, body new", s.Report(job, f.ReportKey, "b-1", `{"status":"ok","idempotency_key":"fresh"}`), 200, rpDup("ok"))
		// With a header, the body's key is not read at all (docs/decisions.md).
		s.Advance(time.Minute)
		rpWant(t, "header with a non-string body key", s.Report(job, f.ReportKey, "h-2", `{"status":"ok","idempotency_key":7}`), 200, rpOK("ok", "", false, false))
		if h := rpHistory(s, f.WS, job); len(h) != 4 {
			t.Errorf("%d results, want 4", len(h))
		}
	})

	rpRun(t, s, "rule 5: without a key every request is new; null and empty mean no key", func(t *testing.T) {
		job := s.NewJob(f.WS, f.Client, "NoKey", testserver.Daily())
		for i, body := range []string{
			`{"status":"warn"}`, `{"status":"warn"}`, `{"status":"warn","idempotency_key":null}`,
			`{"status":"warn","idempotency_key":null}`, `{"status":"warn","idempotency_key":""}`, `{"status":"warn","idempotency_key":""}`,
		} {
			s.Advance(time.Minute)
			r := s.Report(job, f.ReportKey, "", body)
			if r.Status != 200 || r.JSON["duplicate"] != false || r.JSON["superseded"] != false {
				t.Errorf("request %d (%s): %d %s", i, body, r.Status, r.Body)
			}
		}
		if h := rpHistory(s, f.WS, job); len(h) != 6 {
			t.Errorf("%d results, want 6", len(h))
		}
	})

	rpRun(t, s, "a body key that is not a string: 400, nothing recorded", func(t *testing.T) {
		job := s.NewJob(f.WS, f.Client, "Typed", testserver.Daily())
		alertsBefore := rpJSONOf(t, rpAlerts(s, f.WS))
		s.Advance(time.Minute)
		for _, c := range []struct{ name, key string }{
			{"number", `7`}, {"negative fraction", `-1.5`}, {"object", `{"k":"v"}`}, {"empty object", `{}`},
			{"array", `["k"]`}, {"empty array", `[]`}, {"true", `true`}, {"false", `false`},
		} {
			t.Run(c.name, func(t *testing.T) {
				body := `{"status":"failed","idempotency_key":` + c.key + `}`
				rpWantErr(t, c.name, s.Report(job, f.ReportKey, "", body), 400, "idempotency_key must be a string")
			})
		}
		if h := rpHistory(s, f.WS, job); len(h) != 0 {
			t.Errorf("%d results recorded, want none", len(h))
		}
		rpFields(t, "job", rpJob(s, f.WS, job), map[string]any{"status": "waiting", "lastResult": "none"})
		if a := rpJSONOf(t, rpAlerts(s, f.WS)); a != alertsBefore {
			t.Errorf("a refused report changed the alerts:\n%s\nwas\n%s", a, alertsBefore)
		}
		// null means absent: each such report is a new one.
		for i := range 2 {
			rpWant(t, "null "+strconv.Itoa(i), s.Report(job, f.ReportKey, "", `{"status":"ok","idempotency_key":null}`), 200, rpOK("ok", "", false, false))
			s.Advance(time.Minute)
		}
		if h := rpHistory(s, f.WS, job); len(h) != 2 {
			t.Errorf("%d results after two reports with a null key, want 2", len(h))
		}
	})

	rpRun(t, s, "key length: 255 characters, header and body", func(t *testing.T) {
		job := s.NewJob(f.WS, f.Client, "Long", testserver.Daily())
		k255 := strings.Repeat("é", 255) // characters, not bytes
		s.Advance(time.Minute)
		rpWant(t, "255 in the body", s.Report(job, f.ReportKey, "", `{"status":"ok","idempotency_key":"`+k255+`"}`), 200, rpOK("ok", "", false, false))
		rpWant(t, "256 in the body", s.Report(job, f.ReportKey, "", `{"status":"ok","idempotency_key":"`+k255+`x"}`), 400, rpErr(rpMsgIdemLong))
		k := strings.Repeat("k", 255)
		s.Advance(time.Minute)
		rpWant(t, "255 in the header", s.Report(job, f.ReportKey, k, `{"status":"ok"}`), 200, rpOK("ok", "", false, false))
		rpWant(t, "256 in the header", s.Report(job, f.ReportKey, k+"k", `{"status":"ok"}`), 400, rpErr(rpMsgIdemLong))
		rpWant(t, "255 again", s.Report(job, f.ReportKey, k, `{"status":"ok"}`), 200, rpDup("ok"))
	})

	rpRun(t, s, "keys are kept 30 days", func(t *testing.T) {
		job := s.NewJob(f.WS, f.Client, "Thirty", testserver.Daily())
		s.Advance(time.Minute)
		first := rpNow(s)
		rpWant(t, "first", s.Report(job, f.ReportKey, "month", `{"status":"ok"}`), 200, rpOK("ok", "", false, false))
		s.SetClock(first.Add(30*24*time.Hour - time.Minute))
		rpWant(t, "a minute before 30 days", s.Report(job, f.ReportKey, "month", `{"status":"ok"}`), 200, rpDup("ok"))
		s.SetClock(first.Add(30*24*time.Hour + time.Minute))
		rpWant(t, "a minute after 30 days", s.Report(job, f.ReportKey, "month", `{"status":"ok"}`), 200, rpOK("ok", "", false, false))
		rpWant(t, "and then it is recorded again", s.Report(job, f.ReportKey, "month", `{"status":"ok"}`), 200, rpDup("ok"))
		if h := rpHistory(s, f.WS, job); len(h) != 2 {
			t.Errorf("%d results, want 2", len(h))
		}
	})

	rpRun(t, s, "the 30 days count from receipt, not from the timestamp", func(t *testing.T) {
		job := s.NewJob(f.WS, f.Client, "ThirtyTS", testserver.Daily())
		s.Advance(time.Minute)
		received := rpNow(s)
		old := received.Add(-20 * 24 * time.Hour)
		rpWant(t, "first, 20 days old", s.Report(job, f.ReportKey, "old-run", `{"status":"ok","timestamp":"`+testserver.TS(old)+`"}`), 200, rpOK("ok", "", false, false))
		s.SetClock(received.Add(30*24*time.Hour - time.Minute))
		rpWant(t, "29 days 23:59 after receipt", s.Report(job, f.ReportKey, "old-run", `{"status":"ok"}`), 200, rpDup("ok"))
	})
}

// Many requests with one key at once: exactly one is recorded; the others
// are duplicates or 503 while it is in flight, never a second result.
func TestReportIdempotencyConcurrent(t *testing.T) {
	s, f := startFixture(t)
	const n = 40
	chans := make([]<-chan rpResult, n)
	for i := range chans {
		chans[i] = rpReportAsync(s, f.Job, f.ReportKey, "same-run", `{"status":"failed"}`)
	}
	recorded := 0
	var alertID string
	for i, ch := range chans {
		r := rpAwait(t, "request", ch)
		switch {
		case r.Status == 200 && r.JSON["duplicate"] == false:
			recorded++
			alertID, _ = r.JSON["alert_id"].(string)
			rpWant(t, "recorded", r, 200, rpOK("failed", alertID, false, false))
		case r.Status == 200:
			rpWant(t, "duplicate", r, 200, rpDup("failed"))
		case r.Status == 503:
			rpWantErr(t, "in flight", r, 503, rpMsgInFlight)
			if ra := r.Header.Get("Retry-After"); ra != "30" {
				t.Errorf("Retry-After %q", ra)
			}
		default:
			t.Errorf("request %d: %d %s", i, r.Status, r.Body)
		}
	}
	if recorded != 1 {
		t.Errorf("%d requests recorded, want 1", recorded)
	}
	if h := rpHistory(s, f.WS, f.Job); len(h) != 1 {
		t.Errorf("%d results, want 1", len(h))
	}
	if a := rpAlerts(s, f.WS); len(a) != 1 || a[0]["id"] != alertID {
		t.Errorf("alerts: %v", a)
	}
}

// rpHold is a BeforeSync hook that holds the first batch written after it
// is armed, until released.
type rpHold struct {
	armed    atomic.Bool
	entered  chan struct{}
	release  chan struct{}
	released sync.Once
	first    atomic.Uint64 // LSNs of the held batch
	last     atomic.Uint64
}

func newRPHold() *rpHold {
	return &rpHold{entered: make(chan struct{}), release: make(chan struct{})}
}

func (h *rpHold) hook(first, last uint64) {
	if !h.armed.CompareAndSwap(true, false) {
		return
	}
	h.first.Store(first)
	h.last.Store(last)
	close(h.entered)
	<-h.release
}

func (h *rpHold) Release() { h.released.Do(func() { close(h.release) }) }

// In-flight rules 3 and 4 of api.md 4.3, shown deterministically: the fsync
// of report A is held in the log's BeforeSync hook.
func TestReportInFlight(t *testing.T) {
	hold := newRPHold()
	s := testserver.Start(t, testserver.Options{BeforeSync: hold.hook})
	t.Cleanup(hold.Release) // runs before the server's Close: never leave the log held
	f := s.Fixture(testserver.FixtureOptions{})
	s.Advance(time.Minute)
	tA := rpNow(s)

	// Nothing else writes to the log from here on, so the next batch is
	// the one that holds report A.
	hold.armed.Store(true)
	aCh := rpReportAsync(s, f.Job, f.ReportKey, "K", `{"status":"failed"}`)
	select {
	case <-hold.entered:
	case r := <-aCh:
		t.Fatalf("report A answered before its fsync: %d %s %v", r.r.Status, r.r.Body, r.err)
	case <-time.After(20 * time.Second):
		t.Fatal("report A never reached the log")
	}
	if first, last := hold.first.Load(), hold.last.Load(); first != last {
		t.Fatalf("the held batch has records %d..%d, want report A alone", first, last)
	}

	// Rule 3: same key while A is processing → 503, Retry-After 30; the
	// key is the same whether it comes in the header or the body.
	r := s.Report(f.Job, f.ReportKey, "K", `{"status":"ok"}`)
	rpWantErr(t, "B while A is in flight", r, 503, rpMsgInFlight)
	if ra := r.Header.Values("Retry-After"); len(ra) != 1 || ra[0] != "30" {
		t.Errorf("Retry-After %q, want 30", ra)
	}
	rpWantErr(t, "B with the key in the body", s.Report(f.Job, f.ReportKey, "", `{"status":"ok","idempotency_key":"K"}`), 503, rpMsgInFlight)
	// A bad body is refused before idempotency is looked at.
	rpWantErr(t, "bad body with K", s.Report(f.Job, f.ReportKey, "K", `{"status":"nope"}`), 400, rpMsgStatus)

	// The development clock is moved in memory, not through POST
	// /admin/v1/clock: the log has one committer, so the clock's own log
	// record would queue behind the held batch and the admin call could
	// not answer until the hook lets go.
	// Exactly 60 seconds later is not "more than 60 seconds": still 503.
	s.Clock.Set(tA.Add(60 * time.Second))
	rpWantErr(t, "B 60 s later", s.Report(f.Job, f.ReportKey, "K", `{"status":"ok"}`), 503, rpMsgInFlight)

	// Rule 4: more than 60 seconds later the retry is processed again. Its
	// record also waits for the committer, so its answer comes after the
	// release; wait until the workspace has taken it (it shows in the
	// admin view, which reads the workspace's state) before releasing, or
	// the retry would find A finished and answer duplicate.
	tC := tA.Add(61 * time.Second)
	s.Clock.Set(tC)
	cCh := rpReportAsync(s, f.Job, f.ReportKey, "K", `{"status":"ok"}`)
	deadline := time.Now().Add(20 * time.Second)
	for len(rpHistory(s, f.WS, f.Job)) < 2 {
		if time.Now().After(deadline) {
			t.Fatal("the retry C was not taken by the workspace")
		}
		select {
		case res := <-cCh:
			t.Fatalf("retry C answered while A's batch is held: %d %s %v", res.r.Status, res.r.Body, res.err)
		case <-time.After(2 * time.Millisecond): // unavoidable: C gives no signal before its fsync
		}
	}
	select {
	case res := <-aCh:
		t.Fatalf("report A answered while its batch is held: %d %s", res.r.Status, res.r.Body)
	default:
	}

	hold.Release()
	rA := rpAwait(t, "report A", aCh)
	alertID, _ := rA.JSON["alert_id"].(string)
	rpWant(t, "report A", rA, 200, rpOK("failed", alertID, false, false))
	rpWant(t, "retry C", rpAwait(t, "retry C", cCh), 200, rpOK("ok", "", false, false))

	// The state afterwards: two results, A (failed, completed at tA) and C
	// (ok, completed at tC), both recorded with the key; the job is
	// healthy; the alert A opened was resolved by C 61 seconds later; the
	// key now belongs to C, which has finished, so K answers duplicate.
	j := rpJob(s, f.WS, f.Job)
	h := admList(t, j, "history")
	if len(h) != 2 {
		t.Fatalf("history: %v", h)
	}
	rpFields(t, "C", h[0], map[string]any{"status": "ok", "completedAt": testserver.TS(tC), "receivedAt": testserver.TS(tC)})
	rpFields(t, "A", h[1], map[string]any{"status": "failed", "completedAt": testserver.TS(tA), "receivedAt": testserver.TS(tA)})
	rpFields(t, "job", j, map[string]any{"status": "healthy", "lastReportAt": testserver.TS(tC), "lastFailureAt": testserver.TS(tA), "failureStreak": 0})
	rpFields(t, "alert", rpAlert(s, f.WS, alertID), map[string]any{"status": "resolved", "resolvedAt": testserver.TS(tC), "recoverySeconds": 61})
	rpWant(t, "K after both", s.Report(f.Job, f.ReportKey, "K", `{"status":"warn"}`), 200, rpDup("warn"))

	// And it survives a restart.
	s.Restart()
	if h := rpHistory(s, f.WS, f.Job); len(h) != 2 {
		t.Errorf("after restart: %d results, want 2", len(h))
	}
	rpWant(t, "K after restart", s.Report(f.Job, f.ReportKey, "K", `{"status":"ok"}`), 200, rpDup("ok"))
}
