package transport

import (
	"crypto/sha256"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"backupmon/engine"
)

// REST API parameter rules (api.md 4.2, decisions.md 5).
const (
	defaultWindow = 30 * 24 * time.Hour
	maxWindow     = 93 * 24 * time.Hour
	maxSearch     = 100
)

// endpointParams lists the parameters each endpoint accepts.
var endpointParams = map[engine.Endpoint][]string{
	engine.EndpointClients:      {"status", "search", "needsAttention", "limit", "cursor"},
	engine.EndpointJobs:         {"clientId", "status", "vendor", "lastResult", "search", "limit", "cursor"},
	engine.EndpointReports:      {"clientId", "jobId", "status", "vendor", "from", "to", "limit", "cursor"},
	engine.EndpointAlerts:       {"clientId", "jobId", "status", "severity", "from", "to", "limit", "cursor"},
	engine.EndpointHealth:       {"days"},
	engine.EndpointClientHealth: {"days"},
}

// Allowed values of the enumerated parameters; status's, by endpoint.
var (
	statuses = map[engine.Endpoint][]string{
		engine.EndpointClients: {"active", "paused", "archived"},
		engine.EndpointJobs:    {"healthy", "warning", "failed", "missing", "waiting", "paused"},
		engine.EndpointReports: {"ok", "warning", "failed"},
		engine.EndpointAlerts:  {"open", "acknowledged", "snoozed", "resolved", "unresolved"},
	}
	lastResults = []string{"ok", "warning", "failed", "none"}
	severities  = []string{"critical", "warning"}
	vendors     = engine.Vendors()
)

// wordParam returns where q keeps the parameter name, one that takes a
// word of a list, and that list for q's endpoint; nil for another name.
func wordParam(q *engine.RESTQuery, name string) (*string, []string) {
	switch name {
	case "status":
		return &q.Status, statuses[q.Endpoint]
	case "vendor":
		return &q.Vendor, vendors
	case "lastResult":
		return &q.LastResult, lastResults
	case "severity":
		return &q.Severity, severities
	}
	return nil, nil
}

// msgBadCursor answers a cursor that is not one of ours, or not for this
// endpoint, these filters or this workspace.
const msgBadCursor = "cursor is not valid for this endpoint, these filters and this workspace; start again without it"

// queryProblem is the first parameter problem found.
type queryProblem struct {
	param, message string
}

// params holds a request's query parameters once each was checked to be
// known, given once and not empty.
type params struct {
	vals map[string]string
}

// readParams checks the query string's names against the endpoint's list:
// an unknown, repeated or empty parameter is a problem naming it.
func readParams(args queryArgs, allowed []string) (params, *queryProblem) {
	p := params{vals: map[string]string{}}
	var prob *queryProblem
	args.VisitAll(func(k, v []byte) {
		if prob != nil {
			return
		}
		name := string(k)
		if !contains(allowed, name) {
			prob = &queryProblem{name, "Unknown parameter: " + strconv.Quote(name)}
			return
		}
		if _, dup := p.vals[name]; dup {
			prob = &queryProblem{name, "Parameter " + name + " is given more than once"}
			return
		}
		if len(v) == 0 {
			prob = &queryProblem{name, "Parameter " + name + " is empty"}
			return
		}
		p.vals[name] = string(v)
	})
	return p, prob
}

// queryArgs is what readParams needs of fasthttp's query arguments.
type queryArgs interface {
	VisitAll(func(k, v []byte))
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func oneOf(name, v string, allowed []string) *queryProblem {
	if contains(allowed, v) {
		return nil
	}
	return &queryProblem{name, name + " must be one of: " + strings.Join(allowed, ", ")}
}

// intParam reads plain decimal digits within lo..hi. Leading zeros are
// digits like any other ("0000000005" is 5); the value stops growing once it
// is past hi, so that no length of digits overflows.
func intParam(name, v string, lo, hi int) (int, *queryProblem) {
	bad := &queryProblem{name, name + " must be an integer from " + strconv.Itoa(lo) + " to " + strconv.Itoa(hi)}
	if len(v) == 0 {
		return 0, bad
	}
	n := 0
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c < '0' || c > '9' {
			return 0, bad
		}
		if n <= hi {
			n = n*10 + int(c-'0')
		}
	}
	if n < lo || n > hi {
		return 0, bad
	}
	return n, nil
}

// parseQuery reads and checks the parameters of a REST request into q (the
// filters, the page size, the resolved time window and the cursor's
// position) and returns the hash of its filters, which the next page's
// cursor carries. The first problem is left in q (Bad, BadParam) for the
// engine to answer in its turn. now is the engine's current time.
func (s *Server) parseQuery(args queryArgs, q *engine.RESTQuery, now time.Time) [8]byte {
	q.Limit = 50
	q.Days = 30
	p, prob := readParams(args, endpointParams[q.Endpoint])
	var hash [8]byte
	if prob == nil {
		hash = filterHash(p)
		prob = s.checkParams(p, q, hash, now)
	}
	if prob != nil {
		q.Bad, q.BadParam, q.BadMessage = true, prob.param, prob.message
	}
	return hash
}

func (s *Server) checkParams(p params, q *engine.RESTQuery, hash [8]byte, now time.Time) *queryProblem {
	ep := q.Endpoint
	for _, name := range endpointParams[ep] {
		v, ok := p.vals[name]
		if !ok {
			continue
		}
		var prob *queryProblem
		switch name {
		case "limit":
			q.Limit, prob = intParam(name, v, 1, 100)
		case "days":
			q.Days, prob = intParam(name, v, 1, 90)
		case "search":
			if utf8.RuneCountInString(v) > maxSearch || !utf8.ValidString(v) {
				prob = &queryProblem{name, "search must be 1 to 100 characters"}
			}
			q.Search = engine.FoldSearch(v)
		case "status", "vendor", "lastResult", "severity":
			field, allowed := wordParam(q, name)
			prob = oneOf(name, v, allowed)
			*field = v
		case "needsAttention":
			switch v {
			case "true":
				q.NeedsAttention = 1
			case "false":
				q.NeedsAttention = -1
			default:
				prob = &queryProblem{name, "needsAttention must be true or false"}
			}
		case "clientId":
			q.ClientID, q.ClientIDSet = v, true
		case "jobId":
			q.JobID, q.JobIDSet = v, true
		}
		if prob != nil {
			return prob
		}
	}
	// A later page keeps the window its first page resolved, which the
	// cursor carries: resolving it again at a later now could move it, or
	// take a window that was 93 days long past the limit.
	if c, ok := p.vals["cursor"]; ok {
		cur, err := s.cursors.decode(c)
		if err != nil || cur.endpoint != ep || cur.filters != hash {
			return &queryProblem{"cursor", msgBadCursor}
		}
		// The engine, which knows the key's workspace, checks this one.
		q.CursorWorkspace = cur.workspace
		q.After = &cur.pos
		q.HasWindow, q.From, q.To = cur.hasWindow, cur.from, cur.to
		return nil
	}
	if ep == engine.EndpointReports || ep == engine.EndpointAlerts {
		if prob := resolveWindow(p, q, now); prob != nil {
			return prob
		}
	}
	return nil
}

// resolveWindow sets the time window of /reports and /alerts (api.md 4.2,
// decisions.md 5): 30 days back from now by default; none for unresolved
// alerts without from or to; only from: to is now; only to: from is 30
// days before it; a date in to is the end of that day; at most 93 days.
func resolveWindow(p params, q *engine.RESTQuery, now time.Time) *queryProblem {
	fromS, hasFrom := p.vals["from"]
	toS, hasTo := p.vals["to"]
	if !hasFrom && !hasTo && q.Endpoint == engine.EndpointAlerts && q.Status != "" && q.Status != "resolved" {
		return nil
	}
	to := now
	if hasTo {
		t, ok := parseWindowTime(toS, true)
		if !ok {
			return &queryProblem{"to", "to must be an ISO 8601 date-time with a time zone or a date (YYYY-MM-DD)"}
		}
		to = t
	}
	from := to.Add(-defaultWindow)
	if hasFrom {
		t, ok := parseWindowTime(fromS, false)
		if !ok {
			return &queryProblem{"from", "from must be an ISO 8601 date-time with a time zone or a date (YYYY-MM-DD)"}
		}
		from = t
	}
	if from.After(to) {
		return &queryProblem{"from", "from must not be after to"}
	}
	if to.Sub(from) > maxWindow {
		return &queryProblem{"from", "the window from from to to must not be longer than 93 days"}
	}
	q.HasWindow, q.From, q.To = true, from.UnixMilli(), to.UnixMilli()
	return nil
}

// parseWindowTime reads a date-time with a zone, or a date in UTC: its
// start, or its end (the last millisecond) when end is true. Times are whole
// milliseconds, so a finer from rounds up and a finer to down: both bounds
// stay inclusive of exactly the milliseconds they cover. A space before an
// hh:mm or hhmm offset reads as '+' (zoneSpaceAsPlus).
func parseWindowTime(v string, end bool) (time.Time, bool) {
	if d, ok := parseDate(v); ok {
		if end {
			return d.Add(24*time.Hour - time.Millisecond), true
		}
		return d, true
	}
	ts, ok := parseTimestamp(zoneSpaceAsPlus(v))
	if !ok || !ts.Zoned {
		return time.Time{}, false
	}
	t := ts.T.Truncate(time.Millisecond)
	if !end && t.Before(ts.T) {
		t = t.Add(time.Millisecond)
	}
	return t, true
}

// zoneSpaceAsPlus returns v with a space before a trailing hh:mm or hhmm
// zone offset made '+'. A query string decodes an unencoded '+' as a space,
// so ?from=2026-11-20T00:00:00+00:00 arrives as "2026-11-20T00:00:00
// 00:00". Only one space, after at least YYYY-MM-DDThh:mm, and only in that
// place: any other space is left as it is, for the parser to refuse.
func zoneSpaceAsPlus(v string) string {
	const minDateTime = len("2006-01-02T15:04")
	n := len(v)
	at := -1
	switch {
	case n >= minDateTime+6 && v[n-3] == ':' && allDigits(v[n-5:n-3]) && allDigits(v[n-2:]):
		at = n - 6 // " hh:mm"
	case n >= minDateTime+5 && allDigits(v[n-4:]):
		at = n - 5 // " hhmm"
	}
	if at < minDateTime || v[at] != ' ' {
		return v
	}
	return v[:at] + "+" + v[at+1:]
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// filterHash sums the filters a cursor is bound to: every parameter but
// cursor and limit (which may change between pages), sorted by name.
func filterHash(p params) [8]byte {
	names := make([]string, 0, len(p.vals))
	for k := range p.vals {
		if k != "cursor" && k != "limit" {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	h := sha256.New()
	for _, k := range names {
		h.Write([]byte(k))
		h.Write([]byte{0})
		h.Write([]byte(p.vals[k]))
		h.Write([]byte{0})
	}
	var out [8]byte
	copy(out[:], h.Sum(nil))
	return out
}
