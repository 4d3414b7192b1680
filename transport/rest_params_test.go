package transport_test

// Query parameters of the REST API (api.md 4.2, decisions.md 5,
// docs/decisions.md "Parameters"): for each endpoint every accepted
// parameter with good and bad values, unknown, repeated and empty
// parameters, the time windows of /reports and /alerts, search, and ids in
// filters and paths.

import (
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"backupmon/internal/testserver"
)

// rsParamCase is one request and its wanted answer: 200, or 400
// INVALID_PARAMETER naming param.
type rsParamCase struct {
	query string // raw, after "?"
	param string // "" for 200
}

func TestRESTParameters(t *testing.T) {
	s, f := startFixture(t)
	admReport(s, f.Job, f.ReportKey, "failed")
	key := f.RestKey
	c, j := f.Client, f.Job

	accepted := map[string][]string{
		"/workspace":                nil,
		"/clients/" + c:             nil,
		"/jobs/" + j:                nil,
		"/clients":                  {"status", "search", "needsAttention", "limit", "cursor"},
		"/jobs":                     {"clientId", "status", "vendor", "lastResult", "search", "limit", "cursor"},
		"/reports":                  {"clientId", "jobId", "status", "vendor", "from", "to", "limit", "cursor"},
		"/alerts":                   {"clientId", "jobId", "status", "severity", "from", "to", "limit", "cursor"},
		"/health":                   {"days"},
		"/clients/" + c + "/health": {"days"},
	}
	// A good value of each parameter (cursor has none without a page).
	good := map[string]string{"status": "", "search": "glo", "needsAttention": "true", "limit": "10", "clientId": c,
		"jobId": j, "vendor": "veeam", "lastResult": "failed", "severity": "critical", "from": "2026-03-01", "to": "2026-03-04",
		"days": "7", "cursor": "x"}
	statusOf := map[string]string{"/clients": "active", "/jobs": "failed", "/reports": "failed", "/alerts": "open"}
	every := []string{"status", "search", "needsAttention", "limit", "cursor", "clientId", "jobId", "vendor", "lastResult",
		"severity", "from", "to", "days"}

	pace := rsPacer{s: s}
	for path, params := range accepted {
		var cases []rsParamCase
		cases = append(cases, rsParamCase{"", ""}, rsParamCase{"bogus=1", "bogus"}, rsParamCase{"Limit=5", "Limit"},
			rsParamCase{"%20=1", " "}, rsParamCase{"lim%69t=0", "limit"}, rsParamCase{"bogus", "bogus"},
			rsParamCase{"key=" + key, "key"}, rsParamCase{"api_key=" + key, "api_key"})
		for _, p := range every {
			if !strings.Contains(","+strings.Join(params, ",")+",", ","+p+",") {
				// Another endpoint's parameter is unknown here.
				cases = append(cases, rsParamCase{p + "=1", p})
			}
		}
		for _, p := range params {
			v := good[p]
			if p == "status" {
				v = statusOf[path]
			}
			cases = append(cases,
				rsParamCase{p + "=", p},                         // empty
				rsParamCase{p, p},                               // no value at all
				rsParamCase{p + "=" + v + "&" + p + "=" + v, p}, // twice
				rsParamCase{p + "=" + v + "&" + p + "=", p},     // twice, once empty
			)
			if p != "cursor" {
				cases = append(cases, rsParamCase{p + "=" + url.QueryEscape(v), ""})
			}
		}
		for _, tc := range cases {
			pace.tick()
			q := path
			if tc.query != "" {
				q += "?" + tc.query
			}
			r := rsGet(s, key, q)
			if tc.param == "" {
				if r.Status != 200 {
					t.Errorf("%s: %d %s, want 200", q, r.Status, r.Body)
				}
				continue
			}
			rsWantErr(t, q, r, 400, "INVALID_PARAMETER", tc.param)
		}
		// A parameter without a name is unknown too, and named "" (rsCheck
		// requires the member).
		pace.tick()
		rsWantErr(t, path+"?=1", rsGet(s, key, path+"?=1"), 400, "INVALID_PARAMETER", "")
	}
}

func TestRESTParameterValues(t *testing.T) {
	s, f := startFixture(t)
	key := f.RestKey
	c := f.Client
	long := func(s string, n int) string { return strings.Repeat(s, n) }

	type pc struct {
		name, value string
		ok          bool
	}
	table := map[string][]pc{
		"/clients": {
			{"status", "active", true}, {"status", "paused", true}, {"status", "archived", true},
			{"status", "Active", false}, {"status", "deleted", false}, {"status", "healthy", false}, {"status", "active ", false},
			{"needsAttention", "true", true}, {"needsAttention", "false", true},
			{"needsAttention", "TRUE", false}, {"needsAttention", "1", false}, {"needsAttention", "yes", false}, {"needsAttention", "0", false},
			{"search", "a", true}, {"search", long("a", 100), true}, {"search", long("a", 101), false},
			{"search", long("é", 100), true}, {"search", long("é", 101), false}, // 2 bytes each: characters count
			{"search", long("日", 100), true}, {"search", long("日", 101), false},
			{"search", long("🙂", 100), true}, {"search", long("🙂", 101), false},
			{"search", "\xff", false}, {"search", "ab\xc3", false}, // not UTF-8
			{"search", " ", true}, {"search", "%", true}, {"search", "a&b=c", true},
		},
		"/jobs": {
			{"status", "healthy", true}, {"status", "warning", true}, {"status", "failed", true}, {"status", "missing", true},
			{"status", "waiting", true}, {"status", "paused", true},
			{"status", "ok", false}, {"status", "active", false}, {"status", "Healthy", false}, {"status", "open", false},
			{"lastResult", "ok", true}, {"lastResult", "warning", true}, {"lastResult", "failed", true}, {"lastResult", "none", true},
			{"lastResult", "warn", false}, {"lastResult", "healthy", false}, {"lastResult", "OK", false}, {"lastResult", "null", false},
			{"vendor", "Veeam", false}, {"vendor", "veeam ", false}, {"vendor", "unknown", false}, {"vendor", "other", false},
			{"search", long("x", 100), true}, {"search", long("x", 101), false},
			{"clientId", "nope", true}, {"clientId", c, true},
		},
		"/reports": {
			{"status", "ok", true}, {"status", "warning", true}, {"status", "failed", true},
			{"status", "warn", false}, {"status", "healthy", false}, {"status", "missing", false}, {"status", "none", false},
			{"vendor", "VEEAM", false}, {"vendor", "generic ", false},
			{"jobId", "nope", true}, {"clientId", "nope", true},
		},
		"/alerts": {
			{"status", "open", true}, {"status", "acknowledged", true}, {"status", "snoozed", true}, {"status", "resolved", true},
			{"status", "unresolved", true},
			{"status", "closed", false}, {"status", "Open", false}, {"status", "failed", false}, {"status", "ok", false},
			{"severity", "critical", true}, {"severity", "warning", true},
			{"severity", "info", false}, {"severity", "Critical", false}, {"severity", "high", false},
		},
	}
	for _, v := range []string{"veeam", "acronis", "datto", "cove", "synology", "nakivo", "backupexec", "msp360", "altaro", "macrium", "generic"} {
		table["/jobs"] = append(table["/jobs"], pc{"vendor", v, true})
		table["/reports"] = append(table["/reports"], pc{"vendor", v, true})
	}
	// limit: plain decimal digits, 1 to 100 (decisions.md 5).
	for _, p := range []string{"/clients", "/jobs", "/reports", "/alerts"} {
		for _, v := range []string{"1", "2", "50", "99", "100", "05", "0100", "0000000005"} {
			table[p] = append(table[p], pc{"limit", v, true})
		}
		for _, v := range []string{"0", "00", "101", "1000", "-1", "+5", "5.0", "5.", " 5", "5 ", "1e2", "0x10", "five", "٥",
			"99999999999999999999", "4294967297", "5,6"} {
			table[p] = append(table[p], pc{"limit", v, false})
		}
	}
	// days: plain decimal digits, 1 to 90.
	for _, p := range []string{"/health", "/clients/" + c + "/health"} {
		for _, v := range []string{"1", "30", "89", "90", "07", "0000000090"} {
			table[p] = append(table[p], pc{"days", v, true})
		}
		for _, v := range []string{"0", "91", "365", "-1", "+3", "3.0", "1e1", " 3", "three", "99999999999999999999"} {
			table[p] = append(table[p], pc{"days", v, false})
		}
	}
	// from and to: a date-time with a zone, or a date.
	for _, p := range []string{"/reports", "/alerts"} {
		for _, v := range []string{"2026-03-01T00:00:00Z", "2026-03-01T00:00:00.123Z", "2026-03-01T01:00:00+01:00",
			"2026-02-28T19:00:00-05:00", "2026-03-01t00:00:00z", "2026-03-01T00:00Z", "2026-03-01"} {
			table[p] = append(table[p], pc{"from", v, true}, pc{"to", v, true})
		}
		for _, v := range []string{"2026-03-01T00:00:00", "2026-03-01T00:00:00.000", "2026-02-30", "2026-3-1", "2026-03-01T25:00:00Z",
			"yesterday", "1772618400", "2026-03", "2026-03-01Z", "2026-03-01T00:00:00+25:00", "2026-03-01T00:00:60Z"} {
			table[p] = append(table[p], pc{"from", v, false}, pc{"to", v, false})
		}
	}

	pace := rsPacer{s: s}
	for path, cases := range table {
		for _, tc := range cases {
			pace.tick()
			q := path + rsQ(tc.name, tc.value)
			r := rsGet(s, key, q)
			if tc.ok {
				if r.Status != 200 {
					t.Errorf("%s (%q): %d %s, want 200", q, tc.value, r.Status, r.Body)
				}
			} else {
				rsWantErr(t, q+" ("+tc.value+")", r, 400, "INVALID_PARAMETER", tc.name)
			}
		}
	}

	s.Advance(time.Minute) // a fresh minute for what follows
	rpRun(t, s, "a + not escaped before a zone offset", func(t *testing.T) {
		// Query strings decode "+" as a space; a space before an hh:mm or
		// hhmm offset reads as '+' (docs/decisions.md). TestRESTWindows
		// checks the instants.
		for _, v := range []string{"2026-03-01T01:00:00+01:00", "2026-03-01T01:00:00%2B01:00", "2026-03-01T01:00:00+0100",
			"2026-03-01T01:00+01:00", "2026-03-01%2001:00:00.5+01:00"} {
			if r := rsGet(s, key, "/reports?from="+v); r.Status != 200 {
				t.Errorf("from=%s: %d %s", v, r.Status, r.Body)
			}
		}
		for _, v := range []string{"2026-03-01T01:00:00+01", "2026-03-01T01:00:00++01:00", "2026-03-01T01:00:00%20Z",
			"+2026-03-01T01:00:00Z", "2026-03-01T01:00:00Z+", "2026-03-01T01:00:00.5+%2B01:00", "2026-03-01+",
			"2026-03-01T01:00:00+1:00", "2026-03-01T01:00:00+01:00+", "2026-03-01T01+01:00"} {
			rsWantErr(t, "from="+v, rsGet(s, key, "/reports?from="+v), 400, "INVALID_PARAMETER", "from")
		}
	})
	rpRun(t, s, "limit sizes the page", func(t *testing.T) {
		for i := 0; i < 7; i++ {
			s.NewClient(f.WS, "Client "+string(rune('A'+i)))
		}
		for _, c := range []struct {
			limit string
			n     int
		}{{"1", 1}, {"05", 5}, {"0000000005", 5}, {"100", 8}} {
			if got := len(rsList(t, "clients", rsGet(s, key, "/clients?limit="+c.limit)).Items); got != c.n {
				t.Errorf("limit=%s: %d items, want %d", c.limit, got, c.n)
			}
		}
		// Default 50.
		for i := 0; i < 50; i++ {
			s.NewClient(f.WS, "More "+strings.Repeat("x", i+1))
		}
		p := rsList(t, "clients", rsGet(s, key, "/clients"))
		if len(p.Items) != 50 || !p.HasMore {
			t.Errorf("default page: %d items, hasMore %v; want 50, true", len(p.Items), p.HasMore)
		}
		if p := rsList(t, "clients", rsGet(s, key, "/clients?limit=100")); len(p.Items) != 58 || p.HasMore {
			t.Errorf("limit=100: %d items, hasMore %v; want 58, false", len(p.Items), p.HasMore)
		}
	})
	rpRun(t, s, "days sizes the period", func(t *testing.T) {
		now := rpNow(s)
		for _, d := range []int{1, 7, 90} {
			h := rsData(t, "health", rsGet(s, key, "/health?days="+strconv.Itoa(d)))
			rpFields(t, "health period", admObj(t, h, "period"), map[string]any{"days": d,
				"from": testserver.TS(now.Add(-time.Duration(d) * 24 * time.Hour)), "to": testserver.TS(now)})
		}
	})
}

func TestRESTSearchAndFilters(t *testing.T) {
	s, f := startFixture(t)
	key := f.RestKey
	names := map[string]string{f.Client: "Globex"}
	for _, n := range []string{"GLOBAL Corp", "Émile Zola SA", "日本テレビ", "Straße 5", "globe"} {
		names[s.NewClient(f.WS, n)] = n
	}
	byName := map[string]string{}
	for id, n := range names {
		byName[n] = id
	}
	for _, c := range []struct {
		search string
		want   []string
	}{
		{"glob", []string{"GLOBAL Corp", "globe", "Globex"}},
		{"GLOB", []string{"GLOBAL Corp", "globe", "Globex"}},
		{"lObE", []string{"globe", "Globex"}},
		{"bal c", []string{"GLOBAL Corp"}},
		{"émile", []string{"Émile Zola SA"}},
		{"ÉMILE ZOLA", []string{"Émile Zola SA"}},
		{"テレ", []string{"日本テレビ"}},
		{"STRASSE", nil}, // lower case, not case folding of ß
		{"straße", []string{"Straße 5"}},
		{"x", []string{"Globex"}},
		{"zz", nil},
		{"Globex ", nil},
	} {
		items := rsItems(t, "search "+c.search, rsGet(s, key, "/clients"+rsQ("search", c.search)))
		var want []string
		m := map[string]string{}
		for _, n := range c.want {
			m[byName[n]] = n
		}
		want = rsSortedByName(m)
		rsWantIDs(t, "search "+c.search, rsIDs(items), want)
	}
	// Jobs too, with clientId.
	other := s.NewJob(f.WS, byName["globe"], "NIGHTLY db", testserver.Daily())
	items := rsItems(t, "jobs", rsGet(s, key, "/jobs"+rsQ("search", "nightly")))
	rsWantIDs(t, "jobs search nightly", rsIDs(items), rsSortedByName(map[string]string{f.Job: "Nightly backup", other: "NIGHTLY db"}))
	items = rsItems(t, "jobs", rsGet(s, key, "/jobs"+rsQ("search", "nightly", "clientId", byName["globe"])))
	rsWantIDs(t, "jobs search nightly of globe", rsIDs(items), []string{other})
	items = rsItems(t, "jobs", rsGet(s, key, "/jobs"+rsQ("clientId", byName["GLOBAL Corp"])))
	rsWantIDs(t, "jobs of a client without jobs", rsIDs(items), []string{})

	// Malformed ids in filters: an empty list; in paths: 404.
	for _, id := range []string{"nope", "00000000-0000-0000-0000-000000000000", f.Job[:35], f.Job + "0", strings.ToUpper(f.Job[:8]) + "-x",
		"019cb84a-4100-7001-a829-ecbc1250915g", strings.Repeat("a", 5000)} {
		for _, p := range []string{"/jobs?clientId=", "/reports?clientId=", "/reports?jobId=", "/alerts?clientId=", "/alerts?jobId="} {
			items := rsItems(t, p+"malformed", rsGet(s, key, p+url.QueryEscape(id)))
			if len(items) != 0 {
				t.Errorf("%s%q: %d items", p, id, len(items))
			}
		}
		for _, p := range []string{"/clients/", "/jobs/"} {
			rsWantErr(t, p+"malformed", rsGet(s, key, p+url.PathEscape(id)), 404, "NOT_FOUND", "")
		}
		rsWantErr(t, "client health malformed", rsGet(s, key, "/clients/"+url.PathEscape(id)+"/health"), 404, "NOT_FOUND", "")
	}
	// A job id where a client id goes, and the other way round.
	rsWantErr(t, "job id as client", rsGet(s, key, "/clients/"+f.Job), 404, "NOT_FOUND", "")
	rsWantErr(t, "job id as client health", rsGet(s, key, "/clients/"+f.Job+"/health"), 404, "NOT_FOUND", "")
	rsWantErr(t, "client id as job", rsGet(s, key, "/jobs/"+f.Client), 404, "NOT_FOUND", "")
	admReport(s, f.Job, f.ReportKey, "failed")
	for _, p := range []string{"/jobs?clientId=" + f.Job, "/reports?clientId=" + f.Job, "/reports?jobId=" + f.Client,
		"/alerts?clientId=" + f.Job, "/alerts?jobId=" + f.Client,
		// A job of another client of the workspace.
		"/reports?clientId=" + byName["globe"] + "&jobId=" + f.Job, "/alerts?clientId=" + byName["globe"] + "&jobId=" + f.Job} {
		if items := rsItems(t, p, rsGet(s, key, p)); len(items) != 0 {
			t.Errorf("%s: %d items", p, len(items))
		}
	}
	for _, p := range []string{"/reports?clientId=" + f.Client + "&jobId=" + f.Job, "/alerts?clientId=" + f.Client + "&jobId=" + f.Job} {
		if items := rsItems(t, p, rsGet(s, key, p)); len(items) != 1 {
			t.Errorf("%s: %d items, want 1", p, len(items))
		}
	}
}

// TestRESTWindows checks the time windows of /reports (on receivedAt) and
// /alerts (on createdAt): both ends inclusive, a date in to is the end of
// its day, only from (to is now), only to (from is to − 30 days), the
// 30-day default, at most 93 days, and unresolved alerts whenever raised.
func TestRESTWindows(t *testing.T) {
	s, f := startFixture(t)
	key := f.RestKey
	ms := time.Millisecond
	day := 24 * time.Hour
	now := testserver.T0.Add(40 * day) // 2026-04-13T10:00Z
	// One job per alert, so that each failed report opens its own alert.
	n := 0
	failAt := func(at time.Time) (result, alert string) {
		t.Helper()
		n++
		job := s.NewJob(f.WS, f.Client, "Job "+strconv.Itoa(n), testserver.Daily())
		s.SetClock(at)
		r := admReport(s, job, f.ReportKey, "failed")
		return rpHistory(s, f.WS, job)[0]["id"].(string), r.JSON["alert_id"].(string)
	}
	rA, aA := failAt(testserver.T0)                                      // 2026-03-04T10:00Z
	rB, aB := failAt(testserver.T0.Add(day))                             // 2026-03-05T10:00Z
	rC, aC := failAt(time.Date(2026, 3, 5, 23, 59, 59, 999e6, time.UTC)) // the end of 5 March
	rD, aD := failAt(time.Date(2026, 3, 6, 0, 0, 0, 0, time.UTC))
	rF, aF := failAt(now.Add(-30*day - ms)) // a millisecond too old for the default
	rE, aE := failAt(now.Add(-30 * day))    // just in the default window
	rG, aG := failAt(now)
	s.SetClock(now)
	ids := map[string]string{rA: "rA", rB: "rB", rC: "rC", rD: "rD", rE: "rE", rF: "rF", rG: "rG",
		aA: "aA", aB: "aB", aC: "aC", aD: "aD", aE: "aE", aF: "aF", aG: "aG"}
	names := func(items []map[string]any) string {
		var out []string
		for _, it := range items {
			out = append(out, ids[it["id"].(string)])
		}
		return strings.Join(out, ",")
	}
	for _, c := range []struct {
		query string
		want  string // results as r*, the same for alerts as a*
	}{
		{"", "G,E"},
		{rsQ("from", "2026-03-05", "to", "2026-03-05"), "C,B"},
		{rsQ("from", "2026-03-05T10:00:00.000Z", "to", "2026-03-05T23:59:59.999Z"), "C,B"},
		{rsQ("from", "2026-03-05T10:00:00.001Z", "to", "2026-03-05"), "C"},
		{rsQ("from", "2026-03-05", "to", "2026-03-05T23:59:59.998Z"), "B"},
		{rsQ("from", "2026-03-05T11:00:00+01:00", "to", "2026-03-05T11:00:00+01:00"), "B"}, // one instant
		{rsQ("from", "2026-03-04", "to", "2026-03-06"), "D,C,B,A"},
		{rsQ("to", "2026-03-06"), "D,C,B,A"}, // from = to − 30 days
		{rsQ("to", testserver.TS(testserver.T0.Add(30*day))), "E,F,D,C,B,A"},
		{rsQ("to", testserver.TS(testserver.T0.Add(30*day+ms))), "E,F,D,C,B"},
		// Finer than milliseconds: from rounds up, to down (times are whole
		// milliseconds).
		{rsQ("from", "2026-03-05T10:00:00.0001Z", "to", "2026-03-05T10:00:00.9999Z"), ""},
		{rsQ("from", "2026-03-04T10:00:00.0000Z", "to", "2026-03-05T10:00:00.0009Z"), "B,A"},
		{rsQ("from", "2026-03-05T23:59:59.9981Z", "to", "2026-03-05T23:59:59.9999Z"), "C"},
		{rsQ("from", testserver.TS(now.Add(-30*day-ms))), "G,E,F"}, // to = now
		{rsQ("from", testserver.TS(now)), "G"},
		{rsQ("from", "2026-01-11", "to", "2026-04-13"), "G,E,F,D,C,B,A"}, // 93 days less a millisecond
	} {
		for _, ep := range []string{"/reports", "/alerts"} {
			items := rsItems(t, ep+c.query, rsGet(s, key, ep+c.query))
			want := c.want
			if want != "" {
				prefix := "r"
				if ep == "/alerts" {
					prefix = "a"
				}
				want = prefix + strings.ReplaceAll(want, ",", ","+prefix)
			}
			if got := names(items); got != want {
				t.Errorf("%s%s: %s, want %s", ep, c.query, got, want)
			}
		}
	}

	rpRun(t, s, "an unencoded + before the offset", func(t *testing.T) {
		// 11:00+01:00 is 10:00Z, the instant of B; read as -01:00 it would
		// be 12:00Z and list nothing.
		for _, q := range []string{
			"?from=2026-03-05T11:00:00+01:00&to=2026-03-05T11:00:00+01:00",
			"?from=2026-03-05T11:00:00+0100&to=2026-03-05T11:00:00.000+0100",
			"?from=2026-03-05%2011:00:00+01:00&to=2026-03-05T11:00+01:00",
			"?from=2026-03-05T11:00:00%2B01:00&to=2026-03-05T11:00:00%2001:00",
		} {
			for _, ep := range []string{"/reports", "/alerts"} {
				if got, want := names(rsItems(t, ep+q, rsGet(s, key, ep+q))), map[string]string{"/reports": "rB", "/alerts": "aB"}[ep]; got != want {
					t.Errorf("%s%s: %s, want %s", ep, q, got, want)
				}
			}
		}
	})

	rpRun(t, s, "windows refused", func(t *testing.T) {
		for _, c := range []struct{ query, param string }{
			{rsQ("from", "2026-03-06", "to", "2026-03-05"), "from"},
			{rsQ("from", "2026-03-05T10:00:00.001Z", "to", "2026-03-05T10:00:00.000Z"), "from"},
			{rsQ("from", testserver.TS(now.Add(ms))), "from"},                                 // after now
			{rsQ("from", "2026-01-01T00:00:00Z", "to", "2026-04-04T00:00:00Z"), ""},           // 93 days exactly
			{rsQ("from", "2026-01-01T00:00:00Z", "to", "2026-04-04T00:00:00.001Z"), "from"},   // and a millisecond
			{rsQ("from", "2026-01-01T00:00:00+01:00", "to", "2026-04-04T00:00:00+01:00"), ""}, // zones
			{rsQ("from", "2026-01-01T00:00:00Z", "to", "2026-04-04T00:00:00.001+00:00"), "from"},
			{rsQ("from", "2026-01-01", "to", "2026-04-03"), ""},     // 93 days less a millisecond
			{rsQ("from", "2026-01-01", "to", "2026-04-04"), "from"}, // the whole of 4 April too
			{rsQ("from", testserver.TS(now.Add(-93*day))), ""},      // only from: to is now
			{rsQ("from", testserver.TS(now.Add(-93*day-ms))), "from"},
			{rsQ("from", "2025-01-01", "to", "2025-01-31"), ""}, // long ago is fine
			{rsQ("from", "2026-04-14"), "from"},
			{rsQ("to", "2000-01-01"), ""},
			{rsQ("from", "2026-03-01", "to", "nope"), "to"},
			{rsQ("from", "nope", "to", "2026-03-01"), "from"},
		} {
			// Unresolved alerts take a window when one is given.
			for _, ep := range []string{"/reports?", "/alerts?", "/alerts?status=unresolved&"} {
				p := ep + strings.TrimPrefix(c.query, "?")
				r := rsGet(s, key, p)
				if c.param == "" {
					if r.Status != 200 {
						t.Errorf("%s: %d %s", p, r.Status, r.Body)
					}
				} else {
					rsWantErr(t, p, r, 400, "INVALID_PARAMETER", c.param)
				}
			}
		}
	})

	rpRun(t, s, "unresolved alerts whenever raised", func(t *testing.T) {
		// Resolve aB and aD with ok reports on their jobs; acknowledge aC,
		// snooze aE.
		jobOf := map[string]string{}
		for _, a := range rpAlerts(s, f.WS) {
			jobOf[a["id"].(string)] = a["jobId"].(string)
		}
		admReport(s, jobOf[aB], f.ReportKey, "ok")
		admReport(s, jobOf[aD], f.ReportKey, "ok")
		base := "/workspaces/" + f.WS + "/alerts/"
		s.MustAdmin(200, "POST", base+aC+"/acknowledge", nil)
		s.MustAdmin(200, "POST", base+aE+"/snooze", map[string]any{"until": admIn(now.Add(day))})
		for _, c := range []struct{ query, want string }{
			{"?status=unresolved", "aG,aE,aF,aC,aA"},
			{"?status=open", "aG,aF,aA"},
			{"?status=acknowledged", "aC"},
			{"?status=snoozed", "aE"},
			{"?status=resolved", ""}, // the 30-day default applies
			{"?status=resolved&from=2026-03-01", "aD,aB"},
			{"?status=unresolved&from=2026-03-05", "aG,aE,aF,aC"},
			{"?status=unresolved&to=2026-03-05", "aC,aA"}, // from = to − 30 days
			{"?status=open&severity=critical", "aG,aF,aA"},
			{"?status=open&severity=warning", ""},
			{"", "aG,aE"},
		} {
			items := rsItems(t, c.query, rsGet(s, key, "/alerts"+c.query))
			if got := names(items); got != c.want {
				t.Errorf("/alerts%s: %s, want %s", c.query, got, c.want)
			}
		}
		// /reports has no such exception.
		if got := names(rsItems(t, "reports", rsGet(s, key, "/reports?status=failed"))); got != "rG,rE" {
			t.Errorf("/reports?status=failed: %s", got)
		}
	})
}
