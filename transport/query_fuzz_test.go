package transport

// Fuzz tests of the REST API's query-parameter parser (api.md 4.2,
// decisions.md 5): arbitrary query strings, read by fasthttp's Args as a
// request's are, go through (*Server).parseQuery for every endpoint and the
// outcome is checked against a reference written from the contract's
// tables; and from the `from`/`to` parser, parseWindowTime.

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/valyala/fasthttp"

	"backupmon/engine"
)

// specParams is api.md 4.2's table of parameters per endpoint, written out
// again here so that the parser's own table is checked too.
var specParams = map[engine.Endpoint][]string{
	engine.EndpointWorkspace:    nil,
	engine.EndpointClients:      {"status", "search", "needsAttention", "limit", "cursor"},
	engine.EndpointClient:       nil,
	engine.EndpointClientHealth: {"days"},
	engine.EndpointJobs:         {"clientId", "status", "vendor", "lastResult", "search", "limit", "cursor"},
	engine.EndpointJob:          nil,
	engine.EndpointReports:      {"clientId", "jobId", "status", "vendor", "from", "to", "limit", "cursor"},
	engine.EndpointAlerts:       {"clientId", "jobId", "status", "severity", "from", "to", "limit", "cursor"},
	engine.EndpointHealth:       {"days"},
}

// specStatuses is api.md 4.2's status values per endpoint.
var specStatuses = map[engine.Endpoint][]string{
	engine.EndpointClients: {"active", "paused", "archived"},
	engine.EndpointJobs:    {"healthy", "warning", "failed", "missing", "waiting", "paused"},
	engine.EndpointReports: {"ok", "warning", "failed"},
	engine.EndpointAlerts:  {"open", "acknowledged", "snoozed", "resolved", "unresolved"},
}

var (
	specVendors     = []string{"veeam", "acronis", "datto", "cove", "synology", "nakivo", "backupexec", "msp360", "altaro", "macrium", "generic"}
	specLastResults = []string{"ok", "warning", "failed", "none"}
	specSeverities  = []string{"critical", "warning"}
)

const day = 24 * time.Hour

// refInt reads a parameter that must be plain decimal digits with a value
// from lo to hi (leading zeros allowed, any number of them).
func refInt(v string, lo, hi int) (int, bool) {
	if v == "" || strings.Trim(v, "0123456789") != "" {
		return 0, false
	}
	t := strings.TrimLeft(v, "0")
	if len(t) > 4 {
		return 0, false
	}
	n, _ := strconv.Atoi("0" + t)
	return n, n >= lo && n <= hi
}

type queryArg struct{ k, v string }

func queryPairs(a *fasthttp.Args) []queryArg {
	var out []queryArg
	for k, v := range a.All() {
		out = append(out, queryArg{string(k), string(v)})
	}
	return out
}

// refQuery judges a request's parameters by the contract alone. It returns
// the parameters at fault (empty when none is) and, when none is, the
// resolved window (hasWindow false when the list has none). Any cursor is
// at fault: only the server can make one.
func refQuery(ep engine.Endpoint, pairs []queryArg, now time.Time) (faults map[string]bool, hasWindow bool, from, to int64) {
	faults = map[string]bool{}
	allowed := specParams[ep]
	vals := map[string]string{}
	for _, p := range pairs {
		known := false
		for _, a := range allowed {
			known = known || a == p.k
		}
		_, dup := vals[p.k]
		if !known || dup || p.v == "" {
			faults[p.k] = true
		}
		vals[p.k] = p.v
	}
	if len(faults) > 0 {
		return faults, false, 0, 0
	}
	in := func(v string, list []string) bool {
		for _, s := range list {
			if s == v {
				return true
			}
		}
		return false
	}
	for k, v := range vals {
		ok := true
		switch k {
		case "limit":
			_, ok = refInt(v, 1, 100)
		case "days":
			_, ok = refInt(v, 1, 90)
		case "search":
			ok = utf8.ValidString(v) && utf8.RuneCountInString(v) <= 100
		case "status":
			ok = in(v, specStatuses[ep])
		case "vendor":
			ok = in(v, specVendors)
		case "lastResult":
			ok = in(v, specLastResults)
		case "severity":
			ok = in(v, specSeverities)
		case "needsAttention":
			ok = v == "true" || v == "false"
		case "cursor":
			ok = false
		}
		if !ok {
			faults[k] = true
		}
	}
	if ep != engine.EndpointReports && ep != engine.EndpointAlerts {
		return faults, false, 0, 0
	}
	fromS, hasFrom := vals["from"]
	toS, hasTo := vals["to"]
	if ep == engine.EndpointAlerts && !hasFrom && !hasTo && in(vals["status"], []string{"open", "acknowledged", "snoozed", "unresolved"}) {
		return faults, false, 0, 0
	}
	if len(faults) > 0 {
		// The window is judged too, but a fault found already is the one
		// the parser may name first.
		faults["from"], faults["to"] = true, true
		return faults, false, 0, 0
	}
	toT := now
	if hasTo {
		t, ok := parseWindowTime(toS, true)
		if !ok {
			faults["to"] = true
			return faults, false, 0, 0
		}
		toT = t
	}
	fromT := toT.Add(-30 * day)
	if hasFrom {
		t, ok := parseWindowTime(fromS, false)
		if !ok {
			faults["from"] = true
			return faults, false, 0, 0
		}
		fromT = t
	}
	if fromT.After(toT) || toT.Sub(fromT) > 93*day {
		faults["from"] = true
		return faults, false, 0, 0
	}
	return faults, true, fromT.UnixMilli(), toT.UnixMilli()
}

var querySeeds = []string{
	"", "limit=50", "limit=0", "limit=101", "limit=100", "limit=1", "limit=007", "limit=0000000000001", "limit=+5", "limit=5.0", "limit=",
	"limit", "limit=1&limit=2", "days=90", "days=91", "days=0", "search=Nightly", "search=%C3%89COLE", "search=%FF", "search=" + strings.Repeat("a", 100),
	"search=" + strings.Repeat("%C3%A9", 101), "status=open", "status=unresolved", "status=resolved", "status=healthy", "status=ok", "status=active",
	"status=OPEN", "vendor=veeam", "vendor=Veeam", "lastResult=none", "severity=critical", "needsAttention=true", "needsAttention=1",
	"clientId=x", "jobId=abc&clientId=def", "from=2024-01-01", "to=2024-01-01", "from=2024-01-01&to=2024-03-31", "from=2024-01-01&to=2024-04-03",
	"from=2024-01-01&to=2024-04-04", "from=2024-01-02&to=2024-01-01", "from=2024-01-01T00:00:00Z&to=2024-01-01T00:00:00Z",
	"from=2024-01-01T00:00:00%2B01:00", "from=2024-01-01T00:00:00+01:00", "to=2024-01-01T10:00", "from=2024-02-30", "status=open&from=2024-01-01",
	"status=unresolved&severity=warning&limit=10", "cursor=abc", "cursor=", "unknown=1", "=5", "&&&", "=", "a=b=c", "%00=1", "limit%3D5",
	"status=open;limit=5", "clientId=%20", "search=%20", "days=1&days=1", "from=2024-01-01&from=2024-01-01", "to=9999-12-31", "from=0000-01-01",
}

func newFuzzServer(t testing.TB) *Server {
	t.Helper()
	return New(Config{CursorKey: []byte("fuzz cursor key, 32 bytes long!!")})
}

var allEndpoints = []engine.Endpoint{
	engine.EndpointWorkspace, engine.EndpointClients, engine.EndpointClient, engine.EndpointClientHealth, engine.EndpointJobs,
	engine.EndpointJob, engine.EndpointReports, engine.EndpointAlerts, engine.EndpointHealth,
}

// fuzzNow maps any integer to an instant from year 1 to year 9999: Unix
// milliseconds in that range as they are, others modulo the range.
func fuzzNow(ms int64) time.Time {
	const lo, hi = -62135596800000, 253402300799999
	if ms < lo || ms > hi {
		ms = lo + int64(uint64(ms)%uint64(hi-lo+1))
	}
	return time.UnixMilli(ms).UTC()
}

// FuzzQueryParams: parseQuery never panics, and for every endpoint it
// reports a problem exactly when the contract finds one, naming a parameter
// at fault; without a problem the values it fills in obey the rules. A
// first page's cursor is then accepted later with the same filters, and
// gives the same window; with other filters or another endpoint it is
// refused, naming cursor.
func FuzzQueryParams(f *testing.F) {
	for i, s := range querySeeds {
		f.Add(s, int64(1732320000000+i*3_600_000), uint32(i*1000))
	}
	f.Add("from=2024-01-01T00:00:00Z", int64(1712102400000-1), uint32(2*86400000)) // a window that reaches 93 days on the second page
	s := newFuzzServer(f)
	f.Fuzz(func(t *testing.T, raw string, nowMs int64, later uint32) {
		var args fasthttp.Args
		args.Parse(raw)
		pairs := queryPairs(&args)
		now := fuzzNow(nowMs)
		for _, ep := range allEndpoints {
			checkQuery(t, s, ep, raw, &args, pairs, now, later)
		}
	})
}

func checkQuery(t *testing.T, s *Server, ep engine.Endpoint, raw string, args *fasthttp.Args, pairs []queryArg, now time.Time, later uint32) {
	q := engine.RESTQuery{Endpoint: ep}
	hash := s.parseQuery(args, &q, now)
	faults, hasWindow, from, to := refQuery(ep, pairs, now)
	bad := q.Bad
	if bad != (q.BadMessage != "") || !bad && q.BadParam != "" {
		t.Fatalf("endpoint %d, %q: bad %v, parameter %q, message %q", ep, raw, q.Bad, q.BadParam, q.BadMessage)
	}
	if bad != (len(faults) > 0) {
		t.Fatalf("endpoint %d, %q at %v: problem %q %q; the contract finds faults in %v", ep, raw, now, q.BadParam, q.BadMessage, faults)
	}
	if bad {
		if !faults[q.BadParam] {
			t.Fatalf("endpoint %d, %q: problem names %q (%s); the faults are in %v", ep, raw, q.BadParam, q.BadMessage, faults)
		}
		if q.BadMessage == "" {
			t.Fatalf("endpoint %d, %q: problem %q without a message", ep, raw, q.BadParam)
		}
		return
	}
	// No problem: every value as given (or its default) and within its rule.
	given := map[string]string{}
	for _, p := range pairs {
		given[p.k] = p.v
	}
	want := func(name string, got string) {
		if got != given[name] {
			t.Fatalf("endpoint %d, %q: %s = %q, given %q", ep, raw, name, got, given[name])
		}
	}
	wantLimit, wantDays := 50, 30
	if v, ok := given["limit"]; ok {
		wantLimit, _ = refInt(v, 1, 100)
	}
	if v, ok := given["days"]; ok {
		wantDays, _ = refInt(v, 1, 90)
	}
	if q.Limit != wantLimit || q.Limit < 1 || q.Limit > 100 || q.Days != wantDays || q.Days < 1 || q.Days > 90 {
		t.Fatalf("endpoint %d, %q: limit %d days %d; want %d, %d", ep, raw, q.Limit, q.Days, wantLimit, wantDays)
	}
	if q.Search != engine.FoldSearch(given["search"]) || q.Search != engine.FoldSearch(q.Search) || q.Search != strings.ToLower(q.Search) || utf8.RuneCountInString(q.Search) > 100 || !utf8.ValidString(q.Search) {
		t.Fatalf("endpoint %d, %q: search %q", ep, raw, q.Search)
	}
	want("status", q.Status)
	want("vendor", q.Vendor)
	want("lastResult", q.LastResult)
	want("severity", q.Severity)
	want("clientId", q.ClientID)
	want("jobId", q.JobID)
	_, cidSet := given["clientId"]
	_, jidSet := given["jobId"]
	if q.ClientIDSet != cidSet || q.JobIDSet != jidSet || q.After != nil {
		t.Fatalf("endpoint %d, %q: clientId set %v, jobId set %v, after %v", ep, raw, q.ClientIDSet, q.JobIDSet, q.After)
	}
	switch given["needsAttention"] {
	case "true":
		if q.NeedsAttention != 1 {
			t.Fatalf("endpoint %d, %q: needsAttention %d", ep, raw, q.NeedsAttention)
		}
	case "false":
		if q.NeedsAttention != -1 {
			t.Fatalf("endpoint %d, %q: needsAttention %d", ep, raw, q.NeedsAttention)
		}
	default:
		if q.NeedsAttention != 0 {
			t.Fatalf("endpoint %d, %q: needsAttention %d", ep, raw, q.NeedsAttention)
		}
	}
	if q.HasWindow != hasWindow || q.From != from || q.To != to {
		t.Fatalf("endpoint %d, %q at %v: window %v %d..%d; want %v %d..%d", ep, raw, now, q.HasWindow, q.From, q.To, hasWindow, from, to)
	}
	if ep == engine.EndpointReports && !q.HasWindow {
		t.Fatalf("endpoint %d, %q: /reports without a window", ep, raw)
	}
	if q.HasWindow && (q.From > q.To || q.To-q.From > (93*day).Milliseconds()) {
		t.Fatalf("endpoint %d, %q: window %d..%d", ep, raw, q.From, q.To)
	}

	// The next page: a cursor for this listing, used a little later.
	if !contains(specParams[ep], "cursor") {
		return
	}
	pos := engine.Position{Name: given["search"], Time: q.To - int64(later), ID: engine.ID{byte(later), 1, 2, 3}}
	first := q
	page := func(c cursor) (engine.RESTQuery, [8]byte) {
		var a fasthttp.Args
		a.Parse(raw + "&cursor=" + s.cursors.encode(c))
		q2 := engine.RESTQuery{Endpoint: ep}
		h2 := s.parseQuery(&a, &q2, now.Add(time.Duration(later)*time.Millisecond))
		return q2, h2
	}
	c := cursor{workspace: engine.ID{byte(later), 9}, endpoint: ep, filters: hash, hasWindow: first.HasWindow, from: first.From, to: first.To, pos: pos}
	q2, hash2 := page(c)
	if q2.Bad {
		t.Fatalf("endpoint %d, %q: the next page %v later is refused: %q %s", ep, raw, time.Duration(later)*time.Millisecond, q2.BadParam, q2.BadMessage)
	}
	if hash2 != hash || q2.After == nil || *q2.After != pos || q2.CursorWorkspace != c.workspace {
		t.Fatalf("endpoint %d, %q: next page: hash %x (first %x), after %+v, workspace %x", ep, raw, hash2, hash, q2.After, q2.CursorWorkspace)
	}
	q2.After, q2.CursorWorkspace = nil, engine.ID{}
	if q2 != first {
		t.Fatalf("endpoint %d, %q: next page %+v; first page %+v", ep, raw, q2, first)
	}
	for _, other := range []cursor{
		{endpoint: ep ^ 1, filters: hash, hasWindow: c.hasWindow, from: c.from, to: c.to, pos: pos},
		{endpoint: ep, filters: [8]byte{hash[0] ^ 1, hash[1], hash[2], hash[3], hash[4], hash[5], hash[6], hash[7]}, hasWindow: c.hasWindow, from: c.from, to: c.to, pos: pos},
	} {
		if q3, _ := page(other); !q3.Bad || q3.BadParam != "cursor" {
			t.Fatalf("endpoint %d, %q: a cursor of endpoint %d filters %x: problem %q, want cursor", ep, raw, other.endpoint, other.filters, q3.BadParam)
		}
	}
}

var windowSeeds = []string{
	"2024-01-01", "2024-02-29", "2023-02-29", "0000-01-01", "9999-12-31", "2024-1-01", "2024-01-01T00:00:00Z", "2024-01-01T00:00:00.9999Z",
	"2024-01-01T00:00:00+01:00", "2024-01-01T00:00:00-0530", "2024-01-01T00:00:00", "2024-01-01T00:00", "2024-01-01 10:00:00Z",
	"2024-01-01T23:59:59.999999999-18:00", "0000-01-01T00:00:00.0001+18:00", "", "2024-13-01", "2024-01-01Z", "20240101",
	"2024-01-01T00:00:00 01:00", "2024-01-01T00:00 0530", "2024-01-01 00:00:00 01:00", "2024-01-01T00:00:00  01:00",
	"2024-01-01T00:00:00 01", "2024-01-01T00:00:00 Z", " 2024-01-01T00:00:00Z", "2024-01-01 00:00",
}

// offsetSpace matches a date-time whose zone offset (hh:mm or hhmm) follows
// a space where a '+' was meant: a query string decodes '+' as a space.
var offsetSpace = regexp.MustCompile(`(?s)^(.{16,}) ([0-9]{2}:?[0-9]{2})$`)

// toMillis is a window bound's instant in whole milliseconds: a finer from
// rounds up and a finer to down, so that both stay inclusive of exactly the
// milliseconds they cover.
func toMillis(t time.Time, end bool) time.Time {
	m := t.Truncate(time.Millisecond)
	if !end && m.Before(t) {
		m = m.Add(time.Millisecond)
	}
	return m.UTC()
}

// FuzzWindowTime: parseWindowTime never panics; a date reads as the start
// (00:00:00.000) or end (23:59:59.999) of that day in UTC; a date-time needs
// a zone and reads as its instant in whole milliseconds (from rounded up, to
// down); and a date-time written from any instant and offset reads back as
// that instant.
func FuzzWindowTime(f *testing.F) {
	for i, s := range windowSeeds {
		f.Add(s, i%2 == 1, int64(1704067200123+i*86_400_017), int16(i*37-600), uint8(i))
	}
	f.Fuzz(func(t *testing.T, s string, end bool, ms int64, offMin int16, form uint8) {
		got, ok := parseWindowTime(s, end)
		if ok && (got.Location() != time.UTC || got.Nanosecond()%int(time.Millisecond) != 0) {
			t.Fatalf("parseWindowTime(%q) = %v: not UTC milliseconds", s, got)
		}
		if d, err := time.Parse(time.DateOnly, s); err == nil && len(s) == 10 {
			want := d
			if end {
				want = d.Add(23*time.Hour + 59*time.Minute + 59*time.Second + 999*time.Millisecond)
			}
			if !ok || !got.Equal(want) {
				t.Fatalf("parseWindowTime(%q, end %v) = %v ok %v; want %v", s, end, got, ok, want)
			}
			if h, m, sec := got.Clock(); end && (h != 23 || m != 59 || sec != 59 || got.Nanosecond() != 999e6) || !end && (h|m|sec|got.Nanosecond()) != 0 {
				t.Fatalf("parseWindowTime(%q, end %v) = %v", s, end, got)
			}
		} else if ok {
			ts, tok := parseTimestamp(offsetSpace.ReplaceAllString(s, "$1+$2"))
			if !tok || !ts.Zoned || !got.Equal(toMillis(ts.T, end)) {
				t.Fatalf("parseWindowTime(%q, end %v) = %v; parseTimestamp gives %v zoned %v ok %v", s, end, got, ts.T, ts.Zoned, tok)
			}
		}
		if want, err := time.Parse(time.RFC3339Nano, s); err == nil && !rfc3339Limits(s, want) {
			if !ok || !got.Equal(toMillis(want, end)) {
				t.Fatalf("parseWindowTime(%q, end %v) = %v ok %v; time.Parse reads %v", s, end, got, ok, want)
			}
		}

		// Round trip: an instant written with an offset in one of the
		// forms the parser takes reads back as the instant written, in
		// whole milliseconds.
		inst := fuzzNow(ms).Add(time.Duration((uint64(ms) / 7) % 1e6))
		off := int(offMin) % (18*60 + 1)
		zone := time.FixedZone("", off*60)
		if y := inst.In(zone).Year(); y > 9999 || y < 0 {
			off, zone = 0, time.UTC
		}
		layouts := []string{
			"2006-01-02T15:04:05.000Z07:00", "2006-01-02T15:04:05.999999999Z07:00", "2006-01-02T15:04:05.000000Z0700",
			"2006-01-02 15:04:05.000Z07:00", "2006-01-02t15:04:05,000Z07:00",
		}
		precision := []time.Duration{time.Millisecond, 1, time.Microsecond, time.Millisecond, time.Millisecond}
		layout := layouts[int(form)%len(layouts)]
		written := inst.Truncate(precision[int(form)%len(layouts)])
		text := inst.In(zone).Format(layout)
		if off%60 == 0 && form&0x80 != 0 && strings.HasSuffix(layout, "Z07:00") && off != 0 {
			text = text[:len(text)-3] // ±hh
		} else if off > 0 && form&0x40 != 0 {
			text = strings.Replace(text, "+", " ", 1) // an unencoded '+' in a query string
		}
		back, ok := parseWindowTime(text, end)
		if !ok || !back.Equal(toMillis(written, end)) {
			t.Fatalf("parseWindowTime(%q) = %v ok %v; written from %v", text, back, ok, inst)
		}
	})
}
