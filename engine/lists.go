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

func (w *workspace) listJobs(b []byte, q *RESTQuery, now int64) ([]byte, bool, Position) {
	p := page{b: append(b, '['), limit: q.Limit}
	list := w.jobList
	if q.ClientIDSet {
		c := w.client(q.ClientID)
		if c == nil {
			return append(p.b, ']'), false, Position{}
		}
		list = c.jobList
	}
	start := 0
	if q.After != nil {
		start = sort.Search(len(list), func(i int) bool { return nameAfter(list[i].key, list[i].id, q.After) })
	}
	var last *job
	for _, j := range list[start:] {
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

// resultCursor walks one job's results newest first from a bound.
type resultCursor struct {
	j *job
	i int // index of the next result, -1 when done
}

func newResultCursor(j *job, bt int64, bid ID) resultCursor {
	rs := j.results
	i := sort.Search(len(rs), func(i int) bool { return !before(rs[i].receivedAt, rs[i].id, bt, bid) })
	return resultCursor{j: j, i: i - 1}
}

func (w *workspace) listResults(b []byte, q *RESTQuery) ([]byte, bool, Position) {
	p := page{b: append(b, '['), limit: q.Limit}
	bt, bid := timeBound(q)
	var last *result
	keep := func(j *job, r *result) bool {
		if q.HasWindow && r.receivedAt < q.From {
			return false // and nothing older will do: the walk ends
		}
		if (q.Status == "" || resultName(r.status) == q.Status) && (q.Vendor == "" || j.vendor == q.Vendor) {
			if !p.take() {
				return false
			}
			p.b = appendResult(p.b, j, r)
			last = r
		}
		return true
	}
	var cid ID
	if q.ClientIDSet {
		c := w.client(q.ClientID)
		if c == nil {
			return append(p.b, ']'), false, Position{}
		}
		cid = c.id
	}
	switch {
	case q.JobIDSet:
		j := w.job(q.JobID)
		if j == nil || (q.ClientIDSet && j.client.id != cid) {
			break
		}
		for c := newResultCursor(j, bt, bid); c.i >= 0; c.i-- {
			if !keep(j, &j.results[c.i]) {
				break
			}
		}
	case q.ClientIDSet:
		// Merge the client's jobs newest first: at each step take the newest
		// head among them (a client has few jobs).
		c := w.clients[cid]
		heads := make([]resultCursor, 0, len(c.jobList))
		for _, j := range c.jobList {
			if rc := newResultCursor(j, bt, bid); rc.i >= 0 {
				heads = append(heads, rc)
			}
		}
		for len(heads) > 0 {
			best := 0
			for h := 1; h < len(heads); h++ {
				a, z := &heads[h].j.results[heads[h].i], &heads[best].j.results[heads[best].i]
				if before(z.receivedAt, z.id, a.receivedAt, a.id) {
					best = h
				}
			}
			hc := &heads[best]
			if !keep(hc.j, &hc.j.results[hc.i]) {
				break
			}
			if hc.i--; hc.i < 0 {
				heads = append(heads[:best], heads[best+1:]...)
			}
		}
	default:
		list := w.resultList
		i := sort.Search(len(list), func(i int) bool { return !before(list[i].at, list[i].id, bt, bid) })
		for i--; i >= 0; i-- {
			ref := &list[i]
			r := ref.find()
			if r == nil {
				continue
			}
			if !keep(ref.job, r) {
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

func (w *workspace) listAlerts(b []byte, q *RESTQuery, now int64) ([]byte, bool, Position) {
	p := page{b: append(b, '['), limit: q.Limit}
	var cid ID
	if q.ClientIDSet {
		c := w.client(q.ClientID)
		if c == nil {
			return append(p.b, ']'), false, Position{}
		}
		cid = c.id
	}
	var jid ID
	if q.JobIDSet {
		j := w.job(q.JobID)
		if j == nil {
			return append(p.b, ']'), false, Position{}
		}
		jid = j.id
	}
	list := w.alertLog
	if q.Status != "" && q.Status != "resolved" {
		list = w.unresolved // only unresolved alerts can match
	}
	bt, bid := timeBound(q)
	i := sort.Search(len(list), func(i int) bool { return !before(list[i].createdAt, list[i].id, bt, bid) })
	var last *alert
	for i--; i >= 0; i-- {
		a := list[i]
		if q.HasWindow && a.createdAt < q.From {
			break
		}
		if q.ClientIDSet && a.job.client.id != cid || q.JobIDSet && a.job.id != jid {
			continue
		}
		if q.Severity != "" && severityName(a.severity) != q.Severity {
			continue
		}
		if q.Status != "" {
			st := alertStatus(a, now)
			if q.Status == "unresolved" {
				if st == alertResolved {
					continue
				}
			} else if alertStatusName(st) != q.Status {
				continue
			}
		}
		if !p.take() {
			break
		}
		p.b = appendAlert(p.b, a, now)
		last = a
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
