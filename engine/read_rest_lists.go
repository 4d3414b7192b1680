package engine

import (
	"backupmon/state"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The REST API's lists, one page at a time (decisions.md 5): a binary search
// to the cursor's position in an ordered index, then a walk that keeps what
// matches the filters until the page is full and one more match shows that
// there is more. A filter with its own index (a client's jobs, a job's
// results, the unresolved alerts) walks that index instead of the
// workspace's.

// page collects a list's items into b.
type page struct {
	b     []byte
	limit int
	n     int
	more  bool
	last  Position // the last item's place in its order, for the next page's cursor
}

// openPage starts a page of q's size after b.
func openPage(b []byte, q *RESTQuery) page {
	return page{b: append(b, '['), limit: q.Limit}
}

// end closes the list and returns it, whether more items follow, and the
// position of the last item (none for an empty page).
func (p *page) end() ([]byte, bool, Position) {
	p.b = append(p.b, ']')
	if p.n == 0 {
		return p.b, false, Position{}
	}
	return p.b, p.more, p.last
}

// take reports whether another item, at position at in its list's order,
// fits; when the page is full it notes that there is more and returns
// false.
func (p *page) take(at Position) bool {
	if p.n == p.limit {
		p.more = true
		return false
	}
	if p.n > 0 {
		p.b = append(p.b, ',')
	}
	p.n++
	p.last = at
	return true
}

// list appends the page of q's list endpoint (clients, jobs, reports or
// alerts) to b; it returns it, whether more items follow and the position
// of its last item.
func (w *workspace) list(b []byte, q *RESTQuery, now int64) ([]byte, bool, Position) {
	switch q.Endpoint {
	case EndpointClients:
		return w.listClients(b, q, now)
	case EndpointJobs:
		return w.listJobs(b, q, now)
	case EndpointReports:
		return w.listResults(b, q)
	default:
		return w.listAlerts(b, q, now)
	}
}

func (w *workspace) listClients(b []byte, q *RESTQuery, now int64) ([]byte, bool, Position) {
	p := openPage(b, q)
	list := w.ClientList
	start := 0
	if q.After != nil {
		start = sort.Search(len(list), func(i int) bool { return nameAfter(list[i].Key, list[i].ID, q.After) })
	}
	for _, c := range list[start:] {
		if !w.clientMatches(c, q, now) {
			continue
		}
		if !p.take(Position{Name: c.Key, ID: c.ID}) {
			break
		}
		p.b = w.AppendClient(p.b, c, now)
	}
	return p.end()
}

// clientMatches reports whether c passes the filters of a /clients page.
func (w *workspace) clientMatches(c *state.Client, q *RESTQuery, now int64) bool {
	return (q.Status == "" || c.Status == q.Status) &&
		(q.Search == "" || containsFold(c.Key, q.Search)) &&
		(q.NeedsAttention == 0 || w.ClientFigures(c, now).NeedsAttention == (q.NeedsAttention > 0))
}

// nameAfter reports whether (key, id) sorts after the position.
func nameAfter(key string, id state.ID, pos *Position) bool {
	if key != pos.Name {
		return key > pos.Name
	}
	return string(id[:]) > string(pos.ID[:])
}

// listJobs pages /jobs by name. It walks the shortest of the name-ordered
// lists its filters select (a client's jobs, the jobs of a status, of a
// vendor, of a last result; all jobs without a filter) and checks every
// filter on each job it meets.
func (w *workspace) listJobs(b []byte, q *RESTQuery, now int64) ([]byte, bool, Position) {
	p := openPage(b, q)
	list := w.JobList
	shorter := func(l []*state.Job) {
		if len(l) < len(list) {
			list = l
		}
	}
	var c *state.Client
	if q.ClientIDSet {
		if c = w.Client(q.ClientID); c == nil {
			return p.end()
		}
		list = c.JobList
	}
	if s := state.StatusIndex(q.Status); s >= 0 {
		w.AdvanceJobIndex(now)
		shorter(w.JobIdx.ByStatus[s])
	}
	if v := state.VendorIndex(q.Vendor); v >= 0 {
		shorter(w.JobIdx.ByVendor[v])
	}
	if q.LastResult != "" {
		shorter(w.JobIdx.ByLast[resultByName(q.LastResult)]) // "none" is resultNone
	}
	start := 0
	if q.After != nil {
		start = sort.Search(len(list), func(i int) bool { return nameAfter(list[i].Key, list[i].ID, q.After) })
	}
	for _, j := range list[start:] {
		if c != nil && j.Client != c {
			continue
		}
		if q.Vendor != "" && j.Vendor != q.Vendor {
			continue
		}
		if q.LastResult != "" && state.ResultName(j.LastResult) != q.LastResult {
			continue
		}
		if q.Search != "" && !containsFold(j.Key, q.Search) {
			continue
		}
		if q.Status != "" && w.JobStatus(j, now) != q.Status {
			continue
		}
		if !p.take(Position{Name: j.Key, ID: j.ID}) {
			break
		}
		p.b = w.AppendJob(p.b, j, now)
	}
	return p.end()
}

// timeBound returns the exclusive upper bound of a newest-first walk: the
// cursor's position, or just after the window's end.
func timeBound(q *RESTQuery) (int64, state.ID) {
	if q.After != nil {
		return q.After.Time, q.After.ID
	}
	if q.HasWindow {
		return q.To, state.MaxID
	}
	return 1<<63 - 1, state.MaxID
}

// resultByName maps a result status name to the stored status (0 for "").
func resultByName(name string) uint8 {
	switch name {
	case "ok":
		return state.ResultOK
	case "warning":
		return state.ResultWarning
	case "failed":
		return state.ResultFailed
	}
	return state.ResultNone
}

// filterJobs returns the jobs a jobId or clientId filter selects: none when
// an id is not of this workspace or the job is not the client's.
func (w *workspace) filterJobs(q *RESTQuery) []*state.Job {
	var c *state.Client
	if q.ClientIDSet {
		if c = w.Client(q.ClientID); c == nil {
			return nil
		}
	}
	if q.JobIDSet {
		if j := w.Job(q.JobID); j != nil && (c == nil || j.Client == c) {
			return []*state.Job{j}
		}
		return nil
	}
	return c.JobList
}

// resultOlder orders one job's results.
func resultOlder(a, b *state.Result) bool {
	return state.Before(a.ReceivedAt, a.ID, b.ReceivedAt, b.ID)
}

// listResults pages /reports newest received first. A job filter walks that
// job's results; a client filter merges its jobs' results (of the vendor
// asked, if any); otherwise the page merges the result index's lists of the
// status and vendor asked. Only the status filter under a job or client
// filter is checked item by item.
func (w *workspace) listResults(b []byte, q *RESTQuery) ([]byte, bool, Position) {
	p := openPage(b, q)
	bt, bid := timeBound(q)
	status := resultByName(q.Status)
	vendor := -1
	if q.Vendor != "" {
		if vendor = state.VendorIndex(q.Vendor); vendor < 0 {
			return p.end()
		}
	}
	// keep adds r to the page when it matches; false ends the walk (the
	// page is full, or r is older than the window and so is all after it).
	keep := func(j *state.Job, r *state.Result) bool {
		if q.HasWindow && r.ReceivedAt < q.From {
			return false
		}
		if (status == state.ResultNone || r.Status == status) && (vendor < 0 || int(j.Vx) == vendor) {
			if !p.take(Position{Time: r.ReceivedAt, ID: r.ID}) {
				return false
			}
			p.b = state.AppendResult(p.b, j, r)
		}
		return true
	}
	below := func(r *state.Result) bool { return state.Before(r.ReceivedAt, r.ID, bt, bid) }
	switch {
	case q.JobIDSet || q.ClientIDSet:
		jobs := w.filterJobs(q)
		m := state.NewestFirst[state.Result]{Older: resultOlder}
		for _, j := range jobs {
			if vendor < 0 || int(j.Vx) == vendor {
				m.Add(j.Results, j, below)
			}
		}
		for r, j := m.Next(); r != nil && keep(j, r); r, j = m.Next() {
		}
	default:
		m := state.NewestFirst[state.ResultRef]{Older: state.RefOlder}
		w.Results.Walk(&m, status, vendor, bt, bid)
		for ref, _ := m.Next(); ref != nil; ref, _ = m.Next() {
			if !keep(ref.Job, ref.Res()) {
				break
			}
		}
	}
	return p.end()
}

// listAlerts pages /alerts newest first. A job filter walks that job's
// alerts and a client filter merges its jobs' alerts; otherwise a status
// that only unresolved alerts can have walks the unresolved ones, and the
// rest walks every alert. Severity, and status under a job or client
// filter, are checked item by item: a job has few alerts, and so does the
// unresolved list (at most one per job).
func (w *workspace) listAlerts(b []byte, q *RESTQuery, now int64) ([]byte, bool, Position) {
	p := openPage(b, q)
	bt, bid := timeBound(q)
	keep := func(a *state.Alert) bool {
		if q.HasWindow && a.CreatedAt < q.From {
			return false
		}
		if q.Severity != "" && state.SeverityName(a.Severity) != q.Severity {
			return true
		}
		if q.Status != "" {
			st := state.AlertStatus(a, now)
			if q.Status == "unresolved" {
				if st == state.AlertResolved {
					return true
				}
			} else if state.AlertStatusName(st) != q.Status {
				return true
			}
		}
		if !p.take(Position{Time: a.CreatedAt, ID: a.ID}) {
			return false
		}
		p.b = state.AppendAlert(p.b, a, now)
		return true
	}
	below := func(a **state.Alert) bool { return state.Before((*a).CreatedAt, (*a).ID, bt, bid) }
	m := state.NewestFirst[*state.Alert]{Older: func(a, b **state.Alert) bool { return state.AlertBefore(*a, *b) }}
	switch {
	case q.JobIDSet || q.ClientIDSet:
		jobs := w.filterJobs(q)
		for _, j := range jobs {
			m.Add(j.Alerts, j, below)
		}
	case q.Status != "" && q.Status != "resolved":
		m.Add(w.Unresolved, nil, below) // only unresolved alerts can match
	default:
		m.Add(w.AlertLog, nil, below)
	}
	for a, _ := m.Next(); a != nil && keep(*a); a, _ = m.Next() {
	}
	return p.end()
}

// FoldSearch returns the form in which search text is matched against names
// (decisions.md 5: case-insensitive): lower case, as names are kept for
// their order, then each letter as one representative of the letters that
// are the same without case, so that σ, ς and Σ match each other, and k
// the Kelvin sign.
func FoldSearch(s string) string {
	s = strings.ToLower(s)
	b := make([]byte, 0, len(s))
	for _, r := range s {
		b = utf8.AppendRune(b, foldRune(r))
	}
	return string(b)
}

// foldRune returns the representative of r's case-folding orbit: the lower
// case of its smallest member (for ASCII, its lower case).
func foldRune(r rune) rune {
	if r < utf8.RuneSelf {
		if 'A' <= r && r <= 'Z' {
			r += 'a' - 'A'
		}
		return r
	}
	m := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if f < m {
			m = f
		}
	}
	return unicode.ToLower(m)
}

// containsFold reports whether key (a name in lower case) contains sub (a
// FoldSearch result) when both are folded.
func containsFold(key, sub string) bool {
	if strings.Contains(key, sub) {
		return true
	}
	ascii := true
	for i := 0; i < len(key); i++ {
		if key[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return false // an ASCII name in lower case is folded already
	}
	for start := 0; start < len(key); {
		i, j := start, 0
		for j < len(sub) && i < len(key) {
			kr, kn := utf8.DecodeRuneInString(key[i:])
			sr, sn := utf8.DecodeRuneInString(sub[j:])
			if foldRune(kr) != sr {
				break
			}
			i, j = i+kn, j+sn
		}
		if j == len(sub) {
			return true
		}
		_, n := utf8.DecodeRuneInString(key[start:])
		start += n
	}
	return false
}
