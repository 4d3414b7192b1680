package transport_test

// Report API limits (api.md 8.3): 60 requests per minute per key, 100
// reports per job in a trailing 24 hours.

import (
	"strconv"
	"testing"
	"time"

	"backupmon/internal/testserver"
)

// rpRepeat sends n reports and requires each to answer want.
func rpRepeat(s *testserver.Server, n int, job, key, body string, want int) {
	s.T.Helper()
	for i := 0; i < n; i++ {
		if r := s.Report(job, key, "", body); r.Status != want {
			s.T.Fatalf("request %d of %d: %d %s, want %d", i+1, n, r.Status, r.Body, want)
		}
	}
}

func TestReportRateLimit(t *testing.T) {
	s, f := startFixture(t)
	ok := `{"status":"ok"}`
	// Each batch of reports goes to a new job, so that the daily cap of
	// 100 per job never answers instead.
	n := 0
	fresh := func() string {
		n++
		return s.NewJob(f.WS, f.Client, "Limit "+strconv.Itoa(n), testserver.Daily())
	}

	rpRun(t, s, "61st request in the same UTC minute", func(t *testing.T) {
		job := fresh()
		s.SetClock(time.Date(2026, 3, 4, 11, 0, 0, 0, time.UTC))
		rpRepeat(s, 60, job, f.ReportKey, ok, 200)
		r := s.Report(job, f.ReportKey, "", ok)
		rpWantErr(t, "61st", r, 429, rpMsgRateLimit)
		// docs/decisions.md: Retry-After counts to the next UTC minute.
		if ra := r.Header.Get("Retry-After"); ra != "60" {
			t.Errorf("Retry-After %q, want 60", ra)
		}
		if h := rpHistory(s, f.WS, job); len(h) != 60 {
			t.Errorf("%d results, want 60: the refused one is not recorded", len(h))
		}
		// Another key of the same workspace is not affected.
		other, _ := s.NewKey(f.WS, "report", nil)
		rpWant(t, "second key", s.Report(job, other, "", ok), 200, rpOK("ok", "", false, true))
		// Still the same minute at :59.5.
		s.SetClock(time.Date(2026, 3, 4, 11, 0, 59, 500e6, time.UTC))
		r = s.Report(job, f.ReportKey, "", ok)
		rpWantErr(t, "at :59.5", r, 429, rpMsgRateLimit)
		if ra := r.Header.Get("Retry-After"); ra != "1" {
			t.Errorf("Retry-After %q, want 1", ra)
		}
		// The next minute works again, with a fresh allowance of 60.
		s.SetClock(time.Date(2026, 3, 4, 11, 1, 0, 0, time.UTC))
		job = fresh()
		rpRepeat(s, 60, job, f.ReportKey, ok, 200)
		rpWantErr(t, "61st of the next minute", s.Report(job, f.ReportKey, "", ok), 429, rpMsgRateLimit)
	})

	rpRun(t, s, "fixed calendar minutes, not a sliding window", func(t *testing.T) {
		key, _ := s.NewKey(f.WS, "report", nil)
		job := fresh()
		s.SetClock(time.Date(2026, 3, 4, 11, 5, 59, 0, time.UTC))
		rpRepeat(s, 60, job, key, ok, 200)
		s.Advance(time.Second) // 11:06:00: a new minute, one second later
		job = fresh()
		rpRepeat(s, 60, job, key, ok, 200)
		rpWantErr(t, "121st", s.Report(job, key, "", ok), 429, rpMsgRateLimit)
	})

	rpRun(t, s, "refused requests count", func(t *testing.T) {
		key, _ := s.NewKey(f.WS, "report", nil)
		job := fresh()
		s.SetClock(time.Date(2026, 3, 4, 11, 10, 0, 0, time.UTC))
		rpRepeat(s, 15, "nope", key, ok, 404)
		rpRepeat(s, 15, job, key, `{"status":"bad"}`, 400)
		rpRepeat(s, 15, job, key, `{`, 400)
		rpWant(t, "recorded", s.Report(job, key, "dup", ok), 200, rpOK("ok", "", false, false))
		rpRepeat(s, 14, job, key, `{"status":"ok","idempotency_key":"dup"}`, 200) // duplicates
		rpWantErr(t, "61st", s.Report(job, key, "", ok), 429, rpMsgRateLimit)
	})

	rpRun(t, s, "requests refused before the key is known do not count", func(t *testing.T) {
		key, _ := s.NewKey(f.WS, "report", nil)
		job := fresh()
		s.SetClock(time.Date(2026, 3, 4, 11, 20, 0, 0, time.UTC))
		for i := 0; i < 70; i++ {
			if r := rpPostRaw(s, job, map[string]string{"Authorization": "Bearer  " + key}, ok); r.Status != 401 {
				t.Fatalf("malformed header: %d", r.Status)
			}
		}
		rpRepeat(s, 60, job, key, ok, 200)
	})

	rpRun(t, s, "the limit is per key, across jobs", func(t *testing.T) {
		key, _ := s.NewKey(f.WS, "report", nil)
		first, second := fresh(), fresh()
		s.SetClock(time.Date(2026, 3, 4, 11, 30, 0, 0, time.UTC))
		rpRepeat(s, 30, first, key, ok, 200)
		rpRepeat(s, 30, second, key, ok, 200)
		rpWantErr(t, "61st on either job", s.Report(second, key, "", ok), 429, rpMsgRateLimit)
	})
}

func TestReportDailyCap(t *testing.T) {
	s, f := startFixture(t)
	key2, _ := s.NewKey(f.WS, "report", nil)
	other := s.NewJob(f.WS, f.Client, "Other", testserver.Daily())
	ok := `{"status":"ok"}`
	count := func() int {
		t.Helper()
		return len(rpHistory(s, f.WS, f.Job))
	}

	// One report at T0, then 99 a minute later (two keys, to stay within
	// the per-key minute limit).
	first := rpNow(s)
	rpSend(s, f.Job, f.ReportKey, "ok")
	s.Advance(time.Minute)
	second := rpNow(s)
	rpWant(t, "with a key", s.Report(f.Job, f.ReportKey, "cap-key", ok), 200, rpOK("ok", "", false, false))
	rpRepeat(s, 59, f.Job, f.ReportKey, ok, 200)
	rpRepeat(s, 39, f.Job, key2, ok, 200)
	if n := count(); n != 100 {
		t.Fatalf("%d results, want 100", n)
	}

	// The 101st is refused and not recorded; nothing changes on the job.
	before := rpJob(s, f.WS, f.Job)
	r := s.Report(f.Job, key2, "", `{"status":"failed"}`)
	rpWantErr(t, "101st", r, 429, rpMsgDailyCap)
	// docs/decisions.md: Retry-After is when the oldest leaves the window.
	if ra, want := r.Header.Get("Retry-After"), strconv.Itoa(int(first.Add(24*time.Hour).Sub(second)/time.Second)); ra != want {
		t.Errorf("Retry-After %q, want %s", ra, want)
	}
	if a, b := rpJSONOf(t, rpJob(s, f.WS, f.Job)), rpJSONOf(t, before); a != b {
		t.Errorf("a capped report changed the job:\n%s\nwas\n%s", a, b)
	}
	if len(rpAlerts(s, f.WS)) != 0 {
		t.Errorf("a capped failed report opened an alert")
	}
	// Idempotency and the body are checked before the cap.
	rpWant(t, "duplicate on a capped job", s.Report(f.Job, key2, "cap-key", ok), 200, rpDup("ok"))
	rpWantErr(t, "bad body on a capped job", s.Report(f.Job, key2, "", `{"status":"nope"}`), 400, rpMsgStatus)
	// Other jobs are not affected.
	rpWant(t, "other job", s.Report(other, key2, "", ok), 200, rpOK("ok", "", false, false))

	// A second before the oldest is 24 hours old: still capped.
	s.SetClock(first.Add(24*time.Hour - time.Second))
	r = s.Report(f.Job, f.ReportKey, "", ok)
	rpWantErr(t, "24h - 1s", r, 429, rpMsgDailyCap)
	if ra := r.Header.Get("Retry-After"); ra != "1" {
		t.Errorf("Retry-After %q, want 1", ra)
	}
	// Once the oldest has left the window (a retry after Retry-After
	// seconds must work), one more is accepted, and only one: the other 99
	// are still in the window.
	s.SetClock(first.Add(24 * time.Hour))
	rpWant(t, "oldest out", s.Report(f.Job, f.ReportKey, "", ok), 200, rpOK("ok", "", false, false))
	r = s.Report(f.Job, f.ReportKey, "", ok)
	rpWantErr(t, "capped again", r, 429, rpMsgDailyCap)
	if ra, want := r.Header.Get("Retry-After"), strconv.Itoa(int(second.Add(24*time.Hour).Sub(rpNow(s))/time.Second)); ra != want {
		t.Errorf("Retry-After %q, want %s", ra, want)
	}
	if n := count(); n != 101 {
		t.Errorf("%d results, want 101", n)
	}
	// When the 99 leave too, the job takes reports again.
	s.SetClock(second.Add(24 * time.Hour))
	rpRepeat(s, 50, f.Job, f.ReportKey, ok, 200)
}
