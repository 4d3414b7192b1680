package engine

import (
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
}

// take reports whether another item fits; when the page is full it notes
// that there is more and returns false.
func (p *page) take() bool {
	if p.n == p.limit {
		p.more = true
		return false
	}
	if p.n > 0 {
		p.b = append(p.b, ',')
	}
	p.n++
	return true
}

func (w *workspace) listClients(b []byte, q *RESTQuery, now int64) ([]byte, bool, Position) {
	p := page{b: append(b, '['), limit: q.Limit}
	list := w.clientList
	start := 0
	if q.After != nil {
		start = sort.Search(len(list), func(i int) bool { return nameAfter(list[i].key, list[i].id, q.After) })
	}
	var last *client
	for _, c := range list[start:] {
		if q.Status != "" && c.status != q.Status {
			continue
		}
		if q.Search != "" && !containsFold(c.key, q.Search) {
			continue
		}
		if q.NeedsAttention != 0 && w.clientFigures(c, now).NeedsAttention != (q.NeedsAttention > 0) {
			continue
		}
		if !p.take() {
			break
		}
		p.b = w.appendClient(p.b, c, now)
		last = c
	}
	p.b = append(p.b, ']')
	if last == nil {
		return p.b, false, Position{}
	}
	return p.b, p.more, Position{Name: last.key, ID: last.id}
}

// nameAfter reports whether (key, id) sorts after the position.
func nameAfter(key string, id ID, pos *Position) bool {
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
	p := page{b: append(b, '['), limit: q.Limit}
	list := w.jobList
	shorter := func(l []*job) {
		if len(l) < len(list) {
			list = l
		}
	}
	var c *client
	if q.ClientIDSet {
		if c = w.client(q.ClientID); c == nil {
			return append(p.b, ']'), false, Position{}
		}
		list = c.jobList
	}
	if s := statusIndex(q.Status); s >= 0 {
		w.advanceJobIndex(now)
		shorter(w.jobIdx.byStatus[s])
	}
	if v := vendorIndex(q.Vendor); v >= 0 {
		shorter(w.jobIdx.byVendor[v])
	}
	if q.LastResult != "" {
		shorter(w.jobIdx.byLast[resultByName(q.LastResult)]) // "none" is resultNone
	}
	start := 0
	if q.After != nil {
		start = sort.Search(len(list), func(i int) bool { return nameAfter(list[i].key, list[i].id, q.After) })
	}
	var last *job
	for _, j := range list[start:] {
		if c != nil && j.client != c {
			continue
		}
		if q.Vendor != "" && j.vendor != q.Vendor {
			continue
		}
		if q.LastResult != "" && resultName(j.lastResult) != q.LastResult {
			continue
		}
		if q.Search != "" && !containsFold(j.key, q.Search) {
			continue
		}
		if q.Status != "" && w.jobStatus(j, now) != q.Status {
			continue
		}
		if !p.take() {
			break
		}
		p.b = w.appendJob(p.b, j, now)
		last = j
	}
	p.b = append(p.b, ']')
	if last == nil {
		return p.b, false, Position{}
	}
	return p.b, p.more, Position{Name: last.key, ID: last.id}
}

// timeBound returns the exclusive upper bound of a newest-first walk: the
// cursor's position, or just after the window's end.
func timeBound(q *RESTQuery) (int64, ID) {
	if q.After != nil {
		return q.After.Time, q.After.ID
	}
	if q.HasWindow {
		return q.To, maxID
	}
	return 1<<63 - 1, maxID
}

var maxID = ID{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}

// before reports whether (t, id) sorts before (bt, bid).
func before(t int64, id ID, bt int64, bid ID) bool {
	if t != bt {
		return t < bt
	}
	return string(id[:]) < string(bid[:])
}

// resultByName maps a result status name to the stored status (0 for "").
func resultByName(name string) uint8 {
	switch name {
	case "ok":
		return resultOK
	case "warning":
		return resultWarning
	case "failed":
		return resultFailed
	}
	return resultNone
}

// filterJobs returns the jobs a jobId or clientId filter selects: none when
// an id is not of this workspace or the job is not the client's.
func (w *workspace) filterJobs(q *RESTQuery) []*job {
	var c *client
	if q.ClientIDSet {
		if c = w.client(q.ClientID); c == nil {
			return nil
		}
	}
	if q.JobIDSet {
		if j := w.job(q.JobID); j != nil && (c == nil || j.client == c) {
			return []*job{j}
		}
		return nil
	}
	return c.jobList
}

// resultOlder orders one job's results.
func resultOlder(a, b *result) bool { return before(a.receivedAt, a.id, b.receivedAt, b.id) }

// listResults pages /reports newest received first. A job filter walks that
// job's results; a client filter merges its jobs' results (of the vendor
// asked, if any); otherwise the page merges the result index's lists of the
// status and vendor asked. Only the status filter under a job or client
// filter is checked item by item.
func (w *workspace) listResults(b []byte, q *RESTQuery) ([]byte, bool, Position) {
	p := page{b: append(b, '['), limit: q.Limit}
	bt, bid := timeBound(q)
	status := resultByName(q.Status)
	vendor := -1
	if q.Vendor != "" {
		if vendor = vendorIndex(q.Vendor); vendor < 0 {
			return append(p.b, ']'), false, Position{}
		}
	}
	var last *result
	// keep adds r to the page when it matches; false ends the walk (the
	// page is full, or r is older than the window and so is all after it).
	keep := func(j *job, r *result) bool {
		if q.HasWindow && r.receivedAt < q.From {
			return false
		}
		if (status == resultNone || r.status == status) && (vendor < 0 || int(j.vx) == vendor) {
			if !p.take() {
				return false
			}
			p.b = appendResult(p.b, j, r)
			last = r
		}
		return true
	}
	below := func(r *result) bool { return before(r.receivedAt, r.id, bt, bid) }
	switch {
	case q.JobIDSet || q.ClientIDSet:
		jobs := w.filterJobs(q)
		m := newestFirst[result]{older: resultOlder}
		for _, j := range jobs {
			if vendor < 0 || int(j.vx) == vendor {
				m.add(j.results, j, below)
			}
		}
		for r, j := m.next(); r != nil && keep(j, r); r, j = m.next() {
		}
	default:
		m := newestFirst[resultRef]{older: refOlder}
		w.results.walk(&m, status, vendor, bt, bid)
		for ref, _ := m.next(); ref != nil; ref, _ = m.next() {
			if !keep(ref.job, ref.res()) {
				break
			}
		}
	}
	p.b = append(p.b, ']')
	if last == nil {
		return p.b, false, Position{}
	}
	return p.b, p.more, Position{Time: last.receivedAt, ID: last.id}
}

// listAlerts pages /alerts newest first. A job filter walks that job's
// alerts and a client filter merges its jobs' alerts; otherwise a status
// that only unresolved alerts can have walks the unresolved ones, and the
// rest walks every alert. Severity, and status under a job or client
// filter, are checked item by item: a job has few alerts, and so does the
// unresolved list (at most one per job).
func (w *workspace) listAlerts(b []byte, q *RESTQuery, now int64) ([]byte, bool, Position) {
	p := page{b: append(b, '['), limit: q.Limit}
	bt, bid := timeBound(q)
	var last *alert
	keep := func(a *alert) bool {
		if q.HasWindow && a.createdAt < q.From {
			return false
		}
		if q.Severity != "" && severityName(a.severity) != q.Severity {
			return true
		}
		if q.Status != "" {
			st := alertStatus(a, now)
			if q.Status == "unresolved" {
				if st == alertResolved {
					return true
				}
			} else if alertStatusName(st) != q.Status {
				return true
			}
		}
		if !p.take() {
			return false
		}
		p.b = appendAlert(p.b, a, now)
		last = a
		return true
	}
	below := func(a **alert) bool { return before((*a).createdAt, (*a).id, bt, bid) }
	m := newestFirst[*alert]{older: func(a, b **alert) bool { return alertBefore(*a, *b) }}
	switch {
	case q.JobIDSet || q.ClientIDSet:
		jobs := w.filterJobs(q)
		for _, j := range jobs {
			m.add(j.alerts, j, below)
		}
	case q.Status != "" && q.Status != "resolved":
		m.add(w.unresolved, nil, below) // only unresolved alerts can match
	default:
		m.add(w.alertLog, nil, below)
	}
	for a, _ := m.next(); a != nil && keep(*a); a, _ = m.next() {
	}
	p.b = append(p.b, ']')
	if last == nil {
		return p.b, false, Position{}
	}
	return p.b, p.more, Position{Time: last.createdAt, ID: last.id}
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
