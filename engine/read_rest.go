package engine

import (
	"time"

	"backupmon/jsonx"
	"backupmon/state"
)

// The REST API's reads: one request's checks in the contract's order, its
// limits, and its answer's JSON.

// Endpoint names a REST API endpoint (api.md 4.1).
type Endpoint uint8

// REST API endpoints.
const (
	EndpointWorkspace Endpoint = iota + 1
	EndpointClients
	EndpointClient
	EndpointClientHealth
	EndpointJobs
	EndpointJob
	EndpointReports
	EndpointAlerts
	EndpointHealth
)

// Scope returns the name of the scope an endpoint needs (api.md 5.8).
func (ep Endpoint) Scope() string {
	for _, s := range state.ScopeNames {
		if s.Bit == ep.scope() {
			return s.Name
		}
	}
	return ""
}

// scope returns the scope bit an endpoint needs (api.md 5.8).
func (ep Endpoint) scope() uint8 {
	switch ep {
	case EndpointClients, EndpointClient:
		return state.ScopeClients
	case EndpointJobs, EndpointJob:
		return state.ScopeJobs
	case EndpointReports:
		return state.ScopeReports
	case EndpointAlerts:
		return state.ScopeAlerts
	case EndpointClientHealth, EndpointHealth:
		return state.ScopeHealth
	}
	return state.ScopeWorkspace
}

// REST API limits (api.md 8.1, 8.2).
const (
	restPerMinuteGrowth = 60
	restPerMinutePro    = 300
	restMonthlyQuota    = 10000
	pageSizeDefault     = 50
	pageSizeMax         = 100
	maxWindowDays       = 93
)

// Position is a place in an endpoint's order: the last item of a page. Name
// (without case) orders clients and jobs, Time results and alerts; ID breaks
// ties.
type Position struct {
	Name string
	Time int64
	ID   state.ID
}

// RESTQuery is one REST API request as the transport read it. The transport
// checks the parameters' form; a problem it found (Bad) is answered at the
// parameter step of the contract's order, after the key, plan, scope and
// limits.
type RESTQuery struct {
	Endpoint   Endpoint
	PathID     string // clientId or jobId in the path
	Bad        bool   // the transport found a parameter problem
	BadParam   string // the parameter at fault (a name may be empty: "?=1")
	BadMessage string

	Limit int       // page size
	After *Position // the cursor's position; nil on a first page

	ClientID, JobID       string // filters, when set
	ClientIDSet, JobIDSet bool
	Status                string // "" when not given
	Vendor                string
	LastResult            string
	Severity              string
	Search                string // already folded (FoldSearch)
	NeedsAttention        int8   // 0 not given, 1 true, -1 false
	HasWindow             bool   // From and To bound the list
	From, To              int64  // inclusive, Unix milliseconds
	Days                  int    // health period

	// CursorWorkspace is the workspace the cursor was issued in; zero on a
	// first page. A cursor of another workspace than the key's is a
	// parameter problem naming cursor, found at the parameter step; the
	// engine then leaves BadMessage empty for the transport to word.
	CursorWorkspace state.ID
	// Workspace is set by the engine to the key's workspace once the key
	// passed its checks, for the next page's cursor.
	Workspace state.ID
}

// RESTOutcome is the answer's kind, in the contract's check order.
type RESTOutcome uint8

// REST outcomes.
const (
	RESTOK RESTOutcome = iota
	RESTUnauthorized
	RESTWorkspaceInactive
	RESTPlanRequired
	RESTInsufficientScope
	RESTWrongKeyType // also INSUFFICIENT_SCOPE: a report or assistant key
	RESTKeyExpired   // also UNAUTHORIZED
	RESTRateLimited
	RESTQuotaExceeded
	RESTBadParam
	RESTNotFound
	RESTFailed
)

// RESTLimits are the figures of the rate-limit headers (api.md 8.1).
type RESTLimits struct {
	PerMinute, Remaining, Reset            int64
	Quota                                  bool // the workspace has a monthly quota
	QuotaLimit, QuotaRemaining, QuotaReset int64
	RetryAfter                             int64 // seconds, on a 429
}

// RESTAnswer is the engine's answer to a REST request.
type RESTAnswer struct {
	Outcome   RESTOutcome
	HasLimits bool // the request passed key, plan and scope: Limits apply
	Limits    RESTLimits
	Body      []byte // the value of "data", appended to the caller's buffer
	List      bool   // Body is a list: the answer carries pagination
	HasMore   bool
	Next      Position // the last item, when HasMore
}

// REST answers one REST API request made with the key whose SHA-256 is
// keyHash. The JSON of "data" is appended to buf and returned in Body.
func (e *Engine) REST(keyHash [32]byte, q *RESTQuery, buf []byte) RESTAnswer {
	ref := e.keys.get(&keyHash)
	if ref == nil {
		return RESTAnswer{Outcome: RESTUnauthorized}
	}
	if e.closed.Load() {
		return RESTAnswer{Outcome: RESTFailed}
	}
	ch := make(chan RESTAnswer, 1)
	if !ref.act.send(func(w *workspace) { ch <- ref.act.rest(w, ref.key, q, buf) }) {
		return RESTAnswer{Outcome: RESTFailed}
	}
	return <-ch
}

// rest runs in the actor: the checks in the contract's order, then the
// endpoint.
func (a *actor) rest(w *workspace, k *state.Key, q *RESTQuery, buf []byte) RESTAnswer {
	now := a.eng.nowMs()
	switch {
	case k.Revoked:
		return RESTAnswer{Outcome: RESTUnauthorized}
	case k.ExpiresAt != 0 && now >= k.ExpiresAt:
		return RESTAnswer{Outcome: RESTKeyExpired}
	case !w.Active(now):
		return RESTAnswer{Outcome: RESTWorkspaceInactive}
	case w.Plan == "starter":
		return RESTAnswer{Outcome: RESTPlanRequired}
	case k.Type != "rest":
		return RESTAnswer{Outcome: RESTWrongKeyType}
	case k.Scopes&q.Endpoint.scope() == 0:
		return RESTAnswer{Outcome: RESTInsufficientScope}
	}
	k.LastUsed.Store(now)
	if !k.FirstUsed {
		a.logAsync(&state.KeyFirstUsed{ID: k.ID, ActivityID: w.IDs.Next(now), At: now})
	}
	ans := RESTAnswer{HasLimits: true}
	if !a.countRequest(w, now, &ans.Limits) {
		if ans.Limits.Quota && ans.Limits.QuotaRemaining <= 0 {
			ans.Outcome = RESTQuotaExceeded
		} else {
			ans.Outcome = RESTRateLimited
		}
		return ans
	}
	q.Workspace = w.ID
	if !q.Bad && !q.CursorWorkspace.IsZero() && q.CursorWorkspace != w.ID {
		q.Bad, q.BadParam, q.BadMessage = true, "cursor", ""
	}
	if q.Bad {
		ans.Outcome = RESTBadParam
		return ans
	}
	ans.Body = buf
	ok := true
	switch q.Endpoint {
	case EndpointClients, EndpointJobs, EndpointReports, EndpointAlerts:
		ans.List = true
		ans.Body, ans.HasMore, ans.Next = w.list(ans.Body, q, now)
	case EndpointWorkspace:
		ans.Body = w.appendWorkspaceAnswer(ans.Body, k, &ans.Limits)
	case EndpointClient:
		c := w.Client(q.PathID)
		if ok = c != nil; ok {
			ans.Body = w.AppendClient(ans.Body, c, now)
		}
	case EndpointClientHealth:
		c := w.Client(q.PathID)
		if ok = c != nil; ok {
			ans.Body = state.AppendHealth(ans.Body, w.Health(now, q.Days, c), c, now)
		}
	case EndpointHealth:
		ans.Body = state.AppendHealth(ans.Body, w.Health(now, q.Days, nil), nil, now)
	case EndpointJob:
		j := w.Job(q.PathID)
		if ok = j != nil; ok {
			ans.Body = w.appendJobDetail(ans.Body, j, now)
		}
	}
	if !ok {
		ans.Outcome = RESTNotFound
		ans.Body = buf
	}
	return ans
}

// logAsync applies rec and hands it to the log without waiting: for
// records whose loss in a crash costs nothing a client was promised (a
// key's first use, the month's request count).
func (a *actor) logAsync(rec state.Record) {
	if err := a.applyNew(rec); err != nil {
		a.eng.logger.Error("apply record", "workspace", a.ws.ID, "type", rec.Type(), "err", err)
		return
	}
	a.eng.submit(rec, nil)
}

// countRequest counts a REST request against the workspace's minute and
// month (decisions.md 3: fixed UTC minutes, calendar months in UTC) and
// fills the limit headers. It returns false, counting nothing, when the
// monthly quota or the minute's limit is used up; the quota is checked
// first, since waiting a minute would not help.
func (a *actor) countRequest(w *workspace, now int64, l *RESTLimits) bool {
	perMinute := int64(restPerMinuteGrowth)
	if w.Plan == "pro" {
		perMinute = restPerMinutePro
	}
	minute := now / state.MsPerMinute
	if w.RESTMinute != minute {
		w.RESTMinute, w.RESTMinuteCount = minute, 0
	}
	t := state.MsTime(now)
	month := int64(t.Year())*100 + int64(t.Month())
	// The month's count is state only a RESTUsage record changes (on a
	// plan with a quota): counted here in memory, on another plan or at a
	// month's turn, it would differ from what the log recovers.
	used := w.RESTMonthCount
	if w.RESTMonth != month {
		used = 0
	}
	nextMonth := time.Date(t.Year(), t.Month()+1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	l.PerMinute = perMinute
	l.Reset = (minute + 1) * state.MsPerMinute / state.MsPerSecond
	l.Quota = w.Plan == "growth" || w.Plan == "trial"
	if l.Quota {
		l.QuotaLimit = restMonthlyQuota
		l.QuotaReset = nextMonth / state.MsPerSecond
	}
	switch {
	case l.Quota && used >= restMonthlyQuota:
		l.RetryAfter = ceilSeconds(nextMonth - now)
	case w.RESTMinuteCount >= perMinute:
		l.RetryAfter = ceilSeconds((minute+1)*state.MsPerMinute - now)
	default:
		w.RESTMinuteCount++
		if l.Quota {
			// The month's count must survive a restart; the minute's need
			// not. Applying the record sets it.
			used++
			a.logAsync(&state.RESTUsage{Month: month, Count: used})
		}
	}
	l.Remaining = max(0, perMinute-w.RESTMinuteCount)
	if l.Quota {
		l.QuotaRemaining = max(0, restMonthlyQuota-used)
	}
	return l.RetryAfter == 0
}

// appendWorkspaceAnswer appends the /workspace object (decisions.md 4.1).
func (w *workspace) appendWorkspaceAnswer(b []byte, k *state.Key, l *RESTLimits) []byte {
	b = append(b, `{"workspace":`...)
	b = w.AppendWorkspaceRecord(b)
	b = append(b, `,"key":`...)
	b = state.AppendKeyRecord(b, k)
	b = append(b, `,"limits":{"requestsPerMinute":`...)
	b = jsonx.AppendInt(b, l.PerMinute)
	if l.Quota {
		b = append(b, `,"monthlyQuota":`...)
		b = jsonx.AppendInt(b, l.QuotaLimit)
		b = append(b, `,"monthlyUsed":`...)
		b = jsonx.AppendInt(b, w.RESTMonthCount)
	} else {
		b = append(b, `,"monthlyQuota":null,"monthlyUsed":null`...)
	}
	b = append(b, `,"pageSizeDefault":50,"pageSizeMax":100,"maxWindowDays":93,"healthDaysMax":90,"reportRequestsPerMinute":60,"reportsPerJobPerDay":100}}`...)
	return b
}

// appendJobDetail appends /jobs/{jobId}: the job with its 20 latest results
// and its unresolved alerts (decisions.md 4.4).
func (w *workspace) appendJobDetail(b []byte, j *state.Job, now int64) []byte {
	return w.appendJobAlerts(b, j, now, recentResultsCount)
}

// appendJobAlerts appends the job with its unresolved alerts, and before
// them "recentResults", its results newest first, when results > 0.
func (w *workspace) appendJobAlerts(b []byte, j *state.Job, now int64, results int) []byte {
	b = w.AppendJob(b, j, now)
	b = b[:len(b)-1] // reopen the job object
	if results > 0 {
		b = append(b, `,"recentResults":[`...)
		for i, n := len(j.Results)-1, 0; i >= 0 && n < results; i, n = i-1, n+1 {
			if n > 0 {
				b = append(b, ',')
			}
			b = state.AppendResult(b, j, &j.Results[i])
		}
		b = append(b, ']')
	}
	b = append(b, `,"unresolvedAlerts":[`...)
	if j.Alert != nil {
		b = state.AppendAlert(b, j.Alert, now)
	}
	return append(b, "]}"...)
}
