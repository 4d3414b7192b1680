package transport_test

// Report API errors (api.md 7.2) and the check order of decisions.md 3:
// Authorization (401) → key type (403) → workspace (403) → per-key minute
// limit (429) → job (404) → body (400/413) → idempotency (200 duplicate or
// 503) → daily cap (429) → record.

import (
	"strings"
	"testing"
	"time"

	"backupmon/internal/testserver"
)

// rpPostRaw posts to the report path of job with exactly these headers.
func rpPostRaw(s *testserver.Server, job string, header map[string]string, body string) testserver.Response {
	s.T.Helper()
	return s.Do("POST", s.PublicURL+"/api/v1/jobs/"+job+"/report", header, []byte(body))
}

// rpBigBody is a valid report body of exactly n bytes (an ignored padding
// field fills it).
func rpBigBody(n int) string {
	const head, tail = `{"status":"ok","pad":"`, `"}`
	return head + strings.Repeat("x", n-len(head)-len(tail)) + tail
}

func TestReportAuthorizationHeader(t *testing.T) {
	s, f := startFixture(t)
	body := `{"status":"ok"}`
	for _, c := range []struct {
		name string
		auth *string // nil: no header
	}{
		{"no header", nil},
		{"empty", rpPtr("")},
		{"scheme only", rpPtr("Bearer")},
		{"scheme and space", rpPtr("Bearer ")},
		{"two spaces", rpPtr("Bearer  " + f.ReportKey)},
		{"tab", rpPtr("Bearer\t" + f.ReportKey)},
		{"no space", rpPtr("Bearer" + f.ReportKey)},
		{"colon", rpPtr("Bearer:" + f.ReportKey)},
		{"key alone", rpPtr(f.ReportKey)},
		{"Basic scheme", rpPtr("Basic " + f.ReportKey)},
		{"Token scheme", rpPtr("Token " + f.ReportKey)},
		{"trailing word", rpPtr("Bearer " + f.ReportKey + " extra")},
		{"key split by a space", rpPtr("Bearer " + f.ReportKey[:20] + " " + f.ReportKey[20:])},
	} {
		rpRun(t, s, c.name, func(t *testing.T) {
			h := map[string]string{"Content-Type": "application/json"}
			if c.auth != nil {
				h["Authorization"] = *c.auth
			}
			rpWantErr(t, c.name, rpPostRaw(s, f.Job, h, body), 401, rpMsgMalformed)
		})
	}
	// Keys are accepted only in the Authorization header, never in the URL
	// (api.md 5.2).
	rpRun(t, s, "key in the query string", func(t *testing.T) {
		for _, q := range []string{"?key=", "?api_key=", "?access_token=", "?token="} {
			r := s.Do("POST", s.PublicURL+"/api/v1/jobs/"+f.Job+"/report"+q+f.ReportKey, map[string]string{"Content-Type": "application/json"}, []byte(body))
			rpWantErr(t, q, r, 401, rpMsgMalformed)
		}
	})
	if h := rpHistory(s, f.WS, f.Job); len(h) != 0 {
		t.Errorf("refused requests were recorded: %v", h)
	}
	// The scheme is read in any letter case (docs/decisions.md).
	rpRun(t, s, "lower-case scheme", func(t *testing.T) {
		r := rpPostRaw(s, f.Job, map[string]string{"Authorization": "bearer " + f.ReportKey}, body)
		rpWant(t, "bearer", r, 200, rpOK("ok", "", false, false))
	})
	// Content-Type is not required (docs/decisions.md).
	rpRun(t, s, "no Content-Type", func(t *testing.T) {
		s.Advance(time.Second)
		r := rpPostRaw(s, f.Job, map[string]string{"Authorization": "Bearer " + f.ReportKey}, body)
		rpWant(t, "no Content-Type", r, 200, rpOK("ok", "", false, false))
	})
}

func rpPtr(s string) *string { return &s }

func TestReportKeyErrors(t *testing.T) {
	s, f := startFixture(t)
	body := `{"status":"ok"}`

	for _, c := range []struct{ name, key string }{
		{"unknown key of the right shape", "svc_live_" + strings.Repeat("0", 48)},
		{"unknown key of another shape", "not-a-key"},
		{"the key's prefix only", f.ReportKey[:16]},
		{"the key in upper case", strings.ToUpper(f.ReportKey)},
		{"the key with a character more", f.ReportKey + "0"},
	} {
		rpRun(t, s, c.name, func(t *testing.T) {
			rpWantErr(t, c.name, s.Report(f.Job, c.key, "", body), 401, rpMsgInvalidKey)
		})
	}

	rpRun(t, s, "revoked key", func(t *testing.T) {
		key, id := s.NewKey(f.WS, "report", nil)
		s.Advance(time.Second)
		rpWant(t, "before revoking", s.Report(f.Job, key, "", body), 200, rpOK("ok", "", false, false))
		s.MustAdmin(204, "DELETE", "/workspaces/"+f.WS+"/keys/"+id, nil)
		rpWantErr(t, "after revoking", s.Report(f.Job, key, "", body), 401, rpMsgInvalidKey)
		rpWantErr(t, "after revoking, unknown job", s.Report("nope", key, "", `bad`), 401, rpMsgInvalidKey)
	})

	rpRun(t, s, "expired key", func(t *testing.T) {
		expires := rpNow(s).Add(time.Hour)
		key, _ := s.NewKey(f.WS, "report", map[string]any{"expiresAt": expires.Format(time.RFC3339)})
		s.SetClock(expires.Add(-time.Second))
		rpWant(t, "a second before expiry", s.Report(f.Job, key, "", body), 200, rpOK("ok", "", false, false))
		s.SetClock(expires)
		rpWantErr(t, "at expiry", s.Report(f.Job, key, "", body), 401, rpMsgExpired)
		s.Advance(24 * time.Hour)
		rpWantErr(t, "a day later", s.Report(f.Job, key, "", body), 401, rpMsgExpired)
		// 401 comes before the key type, the workspace, the job and the body.
		restKey, _ := s.NewKey(f.WS, "rest", map[string]any{"expiresAt": rpNow(s).Add(time.Minute).Format(time.RFC3339)})
		s.Advance(time.Minute)
		rpWantErr(t, "expired REST key", s.Report("nope", restKey, "", `bad`), 401, rpMsgExpired)
		rpWantErr(t, "expired key, unknown job, bad body", s.Report("nope", key, "", `bad`), 401, rpMsgExpired)
	})

	rpRun(t, s, "REST and assistant keys", func(t *testing.T) {
		for name, key := range map[string]string{"rest": f.RestKey, "assistant": f.AsstKey} {
			rpWant(t, name, s.Report(f.Job, key, "", body), 403, `{"error":"API key cannot use the Report API"}`)
			rpWantErr(t, name+" on an unknown job", s.Report("00000000-0000-0000-0000-000000000000", key, "", body), 403, rpMsgKeyType)
			rpWantErr(t, name+" with a bad body", s.Report(f.Job, key, "", `{`), 403, rpMsgKeyType)
		}
		rw, _ := s.NewKey(f.WS, "assistant", map[string]any{"access": "read-write"})
		rpWantErr(t, "read-write assistant key", s.Report(f.Job, rw, "", body), 403, rpMsgKeyType)
	})

	rpRun(t, s, "key of another workspace", func(t *testing.T) {
		other := s.Fixture(testserver.FixtureOptions{})
		rpWantErr(t, "other workspace's key on this job", s.Report(f.Job, other.ReportKey, "", body), 404, rpMsgJobNotFound)
		rpWantErr(t, "this key on the other job", s.Report(other.Job, f.ReportKey, "", body), 404, rpMsgJobNotFound)
		if len(rpHistory(s, other.WS, other.Job)) != 0 {
			t.Errorf("a key reported on another workspace's job")
		}
	})

	if h := rpHistory(s, f.WS, f.Job); len(h) != 2 {
		t.Errorf("%d results on the job, want the 2 accepted ones", len(h))
	}
}

func TestReportWorkspaceErrors(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	body := `{"status":"ok"}`
	for _, status := range []string{"suspended", "cancelled"} {
		rpRun(t, s, status, func(t *testing.T) {
			f := s.Fixture(testserver.FixtureOptions{})
			s.MustAdmin(200, "PATCH", "/workspaces/"+f.WS, map[string]any{"status": status})
			rpWantErr(t, status, s.Report(f.Job, f.ReportKey, "", body), 403, rpMsgSuspended)
			// The workspace is checked before the job and the body.
			rpWantErr(t, status+", bad body", s.Report(f.Job, f.ReportKey, "", `{"status":1`), 403, rpMsgSuspended)
			rpWantErr(t, status+", unknown job", s.Report("nope", f.ReportKey, "", body), 403, rpMsgSuspended)
			rpWantErr(t, status+", 65 KiB", s.Report(f.Job, f.ReportKey, "", rpBigBody(65<<10)), 403, rpMsgSuspended)
			// ... but after the key type.
			rpWantErr(t, status+", REST key", s.Report(f.Job, f.RestKey, "", body), 403, rpMsgKeyType)
			if len(rpHistory(s, f.WS, f.Job)) != 0 {
				t.Errorf("a report was recorded in a %s workspace", status)
			}
			s.MustAdmin(200, "PATCH", "/workspaces/"+f.WS, map[string]any{"status": "active"})
			rpWant(t, "active again", s.Report(f.Job, f.ReportKey, "", body), 200, rpOK("ok", "", false, false))
		})
	}
	rpRun(t, s, "ended trial", func(t *testing.T) {
		ends := rpNow(s).Add(time.Hour)
		ws := s.MustAdmin(201, "POST", "/workspaces", map[string]any{"name": "Trial", "plan": "trial", "trialEndsAt": ends.Format(time.RFC3339)}).Data()["id"].(string)
		client := s.NewClient(ws, "C")
		job := s.NewJob(ws, client, "J", testserver.Daily())
		key, _ := s.NewKey(ws, "report", nil)
		s.SetClock(ends.Add(-time.Second))
		rpWant(t, "during the trial", s.Report(job, key, "", body), 200, rpOK("ok", "", false, false))
		s.SetClock(ends)
		rpWantErr(t, "trial ended", s.Report(job, key, "", body), 403, rpMsgSuspended)
		rpWantErr(t, "trial ended, unknown job", s.Report("nope", key, "", body), 403, rpMsgSuspended)
	})
	rpRun(t, s, "works on every plan", func(t *testing.T) {
		for _, plan := range []string{"starter", "growth", "pro", "trial"} {
			f := s.Fixture(testserver.FixtureOptions{Plan: plan})
			id := rpSend(s, f.Job, f.ReportKey, "failed")
			rpFields(t, plan, rpJob(s, f.WS, f.Job), map[string]any{"status": "failed"})
			rpFields(t, plan+" alert", rpAlert(s, f.WS, id), map[string]any{"status": "open"})
		}
	})
}

func TestReportJobNotFound(t *testing.T) {
	s, f := startFixture(t)
	body := `{"status":"ok"}`
	deleted := s.NewJob(f.WS, f.Client, "Deleted", testserver.Daily())
	s.MustAdmin(204, "DELETE", "/workspaces/"+f.WS+"/jobs/"+deleted, nil)
	for _, c := range []struct{ name, job string }{
		{"unknown UUID", "00000000-0000-0000-0000-000000000000"},
		{"random UUID", "3f2b8c1e-9a4d-4e7b-8c2a-1d5e6f7a8b9c"},
		{"not a UUID", "nightly"},
		{"the client's id", f.Client},
		{"the workspace's id", f.WS},
		{"deleted job", deleted},
		{"escaped slash", "a%2Fb"},
	} {
		rpRun(t, s, c.name, func(t *testing.T) {
			rpWantErr(t, c.name, s.Report(c.job, f.ReportKey, "", body), 404, rpMsgJobNotFound)
			// The job is checked before the body.
			rpWantErr(t, c.name+", bad JSON", s.Report(c.job, f.ReportKey, "", `not json`), 404, rpMsgJobNotFound)
			rpWantErr(t, c.name+", bad status", s.Report(c.job, f.ReportKey, "", `{"status":"OK"}`), 404, rpMsgJobNotFound)
			rpWantErr(t, c.name+", 65 KiB body", s.Report(c.job, f.ReportKey, "", rpBigBody(65<<10)), 404, rpMsgJobNotFound)
		})
	}
}

func TestReportBodyTooLarge(t *testing.T) {
	s, f := startFixture(t)
	// 64 KiB exactly is read.
	rpWant(t, "64 KiB", s.Report(f.Job, f.ReportKey, "", rpBigBody(64<<10)), 200, rpOK("ok", "", false, false))
	// One byte more answers 413, but only after the key and the job.
	big := rpBigBody(64<<10 + 1)
	rpWantErr(t, "64 KiB + 1", s.Report(f.Job, f.ReportKey, "", big), 413, rpMsgTooLarge)
	rpWantErr(t, "65 KiB", s.Report(f.Job, f.ReportKey, "", rpBigBody(65<<10)), 413, rpMsgTooLarge)
	rpWantErr(t, "65 KiB of garbage", s.Report(f.Job, f.ReportKey, "", strings.Repeat("x", 65<<10)), 413, rpMsgTooLarge)
	rpWantErr(t, "65 KiB, no key", rpPostRaw(s, f.Job, nil, big), 401, rpMsgMalformed)
	rpWantErr(t, "65 KiB, unknown key", s.Report(f.Job, "svc_live_"+strings.Repeat("a", 48), "", big), 401, rpMsgInvalidKey)
	rpWantErr(t, "65 KiB, REST key", s.Report(f.Job, f.RestKey, "", big), 403, rpMsgKeyType)
	rpWantErr(t, "65 KiB, unknown job", s.Report("nope", f.ReportKey, "", big), 404, rpMsgJobNotFound)
	// Bodies over 1 MiB, which the listener refuses before routing: see
	// TestUnreadableRequests.
	if h := rpHistory(s, f.WS, f.Job); len(h) != 1 {
		t.Errorf("%d results, want 1", len(h))
	}
}

// Check-order combinations not covered above.
func TestReportCheckOrder(t *testing.T) {
	s, f := startFixture(t)

	rpRun(t, s, "malformed header beats everything", func(t *testing.T) {
		rpWantErr(t, "no header, unknown job, bad body", rpPostRaw(s, "nope", nil, `{`), 401, rpMsgMalformed)
	})
	rpRun(t, s, "unknown key beats the job", func(t *testing.T) {
		rpWantErr(t, "unknown key, unknown job", s.Report("nope", "svc_live_"+strings.Repeat("1", 48), "", `{`), 401, rpMsgInvalidKey)
	})
	rpRun(t, s, "REST key on an unknown job: 403, not 404", func(t *testing.T) {
		rpWantErr(t, "REST key", s.Report("00000000-0000-0000-0000-000000000000", f.RestKey, "", `{"status":"ok"}`), 403, rpMsgKeyType)
	})
	rpRun(t, s, "suspended workspace with a bad body: 403", func(t *testing.T) {
		g := s.Fixture(testserver.FixtureOptions{})
		s.MustAdmin(200, "PATCH", "/workspaces/"+g.WS, map[string]any{"status": "suspended"})
		rpWantErr(t, "suspended, bad body", s.Report(g.Job, g.ReportKey, "", `[]`), 403, rpMsgSuspended)
	})
	rpRun(t, s, "rate-limited key: 429 before the job and the body", func(t *testing.T) {
		key, _ := s.NewKey(f.WS, "report", nil)
		s.Advance(time.Minute)
		for i := 0; i < 60; i++ {
			if r := s.Report("nope", key, "", `{}`); r.Status != 404 {
				t.Fatalf("request %d: %d %s", i, r.Status, r.Body)
			}
		}
		rpWantErr(t, "unknown job", s.Report("nope", key, "", `{}`), 429, rpMsgRateLimit)
		rpWantErr(t, "bad body", s.Report(f.Job, key, "", `{`), 429, rpMsgRateLimit)
		rpWantErr(t, "valid", s.Report(f.Job, key, "", `{"status":"ok"}`), 429, rpMsgRateLimit)
	})
	rpRun(t, s, "suspension beats the rate limit", func(t *testing.T) {
		g := s.Fixture(testserver.FixtureOptions{})
		s.Advance(time.Minute)
		for i := 0; i < 60; i++ {
			s.Report("nope", g.ReportKey, "", `{}`)
		}
		rpWantErr(t, "limited", s.Report(g.Job, g.ReportKey, "", `{"status":"ok"}`), 429, rpMsgRateLimit)
		s.MustAdmin(200, "PATCH", "/workspaces/"+g.WS, map[string]any{"status": "suspended"})
		rpWantErr(t, "limited and suspended", s.Report(g.Job, g.ReportKey, "", `{"status":"ok"}`), 403, rpMsgSuspended)
		rpWantErr(t, "REST key, limited and suspended", s.Report(g.Job, g.RestKey, "", `{"status":"ok"}`), 403, rpMsgKeyType)
	})
	rpRun(t, s, "unknown job with bad JSON: 404", func(t *testing.T) {
		s.Advance(time.Minute)
		rpWantErr(t, "bad JSON", s.Report("nope", f.ReportKey, "", `{"status":`), 404, rpMsgJobNotFound)
	})
	rpRun(t, s, "bad body on a duplicate key: 400", func(t *testing.T) {
		job := s.NewJob(f.WS, f.Client, "DupBody", testserver.Daily())
		s.Advance(time.Minute)
		rpWant(t, "first", s.Report(job, f.ReportKey, "dk", `{"status":"ok"}`), 200, rpOK("ok", "", false, false))
		rpWantErr(t, "bad JSON", s.Report(job, f.ReportKey, "dk", `{"status":"ok"`), 400, rpMsgInvalidJSON)
		rpWantErr(t, "bad status", s.Report(job, f.ReportKey, "dk", `{"status":"OK"}`), 400, rpMsgStatus)
		rpWantErr(t, "bad size", s.Report(job, f.ReportKey, "dk", `{"status":"ok","size_bytes":"1"}`), 400, rpMsgSize)
		rpWantErr(t, "bad duration", s.Report(job, f.ReportKey, "dk", `{"status":"ok","duration_seconds":604801}`), 400, rpMsgDuration)
		rpWantErr(t, "too large", s.Report(job, f.ReportKey, "dk", rpBigBody(65<<10)), 413, rpMsgTooLarge)
		rpWant(t, "good body", s.Report(job, f.ReportKey, "dk", `{"status":"ok"}`), 200, rpDup("ok"))
	})
}
