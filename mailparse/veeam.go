package mailparse

import (
	"regexp"
	"strings"
	"time"
)

func init() { register("veeam", veeamParser{}) }

// veeamParser reads the job reports of Veeam Backup & Replication (backup,
// backup copy, replication, agent and SureBackup jobs). The report's heading
// names the job ("Backup job: Daily-VMs") beside the result; a table gives
// the session's start and end times, sizes and counts; a table of objects
// (VMs, machines) follows, each with its own status and message. The default
// subject is "[Result] Job (N objects) issues", with "(Retry N)" on retries.
type veeamParser struct{}

var (
	// veeamTitleRe reads the heading "Backup job: X", "Backup Copy job: X",
	// "SureBackup job: X", "Agent backup policy: X".
	veeamTitleRe = regexp.MustCompile(`(?i)^([a-z][\w&-]*(?:\s+[\w&-]+){0,3}?)\s+(job|policy)\s*:\s*(.+)$`)
	// veeamSubjectRe reads the default subject's "[Result] rest".
	veeamSubjectRe = regexp.MustCompile(`(?i)^\s*\[(success|succeeded|warning|failed|failure|error)\]\s*(.*)$`)
	// veeamSuffixRe is what follows the job's name in a subject or heading:
	// the object count, the issue count, a retry or the session's kind.
	veeamSuffixRe = regexp.MustCompile(`(?i)(?:\s+\d+\s+(?:warnings?|failed|errors?)|\s*\(\d+\s+[\w ]+?\)|\s*\((?:retry|retry #)\s*\d+\)|\s*\((?:full|incremental|active full|synthetic full|retry)\))\s*$`)
	// veeamIntegrityRe finds a failed health check, verification or
	// corruption in a message.
	veeamIntegrityRe = regexp.MustCompile(`(?i)(health check|integrity check|consistency check|(?:backup|recovery|data|file|restore point) verification|surebackup|heartbeat test|ping test|script test)[^.]{0,80}?(fail|corrupt|damaged|did not pass)|corrupt\w*[^.]{0,40}?(backup file|restore point|storage|block|data)|(backup file|restore point|block)s?[^.]{0,40}?(corrupt|damaged)`)
)

// veeamWord reads one of the result words Veeam prints.
func veeamWord(s string) Status {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "success", "succeeded", "successful":
		return OK
	case "warning", "warnings":
		return Warn
	case "failed", "failure", "error", "errors":
		return Failed
	}
	return Unknown
}

// veeamName is a job's name without what Veeam adds after it.
func veeamName(s string) string {
	s = strings.TrimSpace(s)
	for range 4 {
		t := veeamSuffixRe.ReplaceAllString(s, "")
		if t == s || t == "" {
			break
		}
		s = strings.TrimSpace(t)
	}
	return s
}

// Parse reads a Veeam job report.
func (veeamParser) Parse(m *Message) (Result, error) {
	r := noResult()
	lines := m.Lines
	if len(m.HTMLLines) > 0 {
		lines = m.HTMLLines // the HTML report carries the tables
	}

	// The heading: "<kind> job: <name>", among the first lines.
	title, kind := -1, ""
	for i, l := range lines {
		if i >= 12 {
			break
		}
		c := Cells(l)
		if t := veeamTitleRe.FindStringSubmatch(strings.TrimSpace(c[0])); t != nil {
			title, kind = i, strings.ToLower(t[1])
			r.JobName = veeamName(t[3])
			// The result may sit in the same row.
			for _, cell := range c[1:] {
				if st := veeamWord(cell); st != Unknown {
					r.Status = st
				}
			}
			break
		}
	}
	subj := veeamSubjectRe.FindStringSubmatch(m.Subject)
	if title < 0 && subj == nil {
		return r, unreadable("not a Veeam job report: no \"Backup job: <name>\" heading and no [Success], [Warning] or [Failed] subject")
	}
	if r.JobName == "" && subj != nil {
		r.JobName = veeamName(subj[2])
	}

	// The session table: its first row names "Start time".
	stats := -1
	for i, l := range lines {
		if i > title && hasCell(l, "start time") {
			stats = i
			break
		}
	}
	// The objects' table: a header row with a Status and a Name column.
	header, nameCol, statusCol, detailsCol := -1, -1, -1, -1
	for i := max(stats, title) + 1; i < len(lines); i++ {
		c := Cells(lines[i])
		sc, nc, dc := -1, -1, -1
		for j, cell := range c {
			switch strings.ToLower(strings.TrimSpace(cell)) {
			case "status", "result":
				sc = j
			case "name", "vm name", "vm", "object", "machine", "computer", "host":
				nc = j
			case "details", "message", "messages":
				dc = j
			}
		}
		if sc >= 0 && nc >= 0 && sc != nc {
			header, nameCol, statusCol, detailsCol = i, nc, sc, dc
			break
		}
	}
	end := len(lines)
	if header >= 0 {
		end = header
	}
	f := FieldsOf(lines[:end])

	// The result: the heading's own word, else the subject's, else a
	// "Status:" line.
	if r.Status == Unknown {
		stop := stats
		if stop < 0 {
			stop = min(len(lines), title+6)
		}
		for i := title + 1; i >= 0 && i < stop; i++ {
			var words []string
			for _, c := range Cells(lines[i]) {
				if c = strings.TrimSpace(c); c != "" {
					words = append(words, c)
				}
			}
			if len(words) == 1 {
				if st := veeamWord(words[0]); st != Unknown {
					r.Status = st
					break
				}
			}
		}
	}
	if r.Status == Unknown && subj != nil {
		r.Status = veeamWord(subj[1])
	}
	if r.Status == Unknown {
		if v, ok := f.Value("status", "result", "job result"); ok {
			r.Status = StatusOf(v)
		}
	}
	if r.Status == Unknown {
		return r, unreadable("the Veeam report for %q states no result (Success, Warning or Failed) in its heading or subject", r.JobName)
	}

	// The session's date: the line above the session table ("Tuesday, 10
	// February 2026 22:00:07"), not the job's "Created by ... at" line.
	var session time.Time
	from := stats
	if from < 0 {
		from = min(len(lines), title+8)
	}
	for i := from - 1; i > title && i >= 0; i-- {
		l := lines[i]
		if strings.Contains(strings.ToLower(l), "created") {
			continue
		}
		if t, ok := m.Time(l); ok {
			session = t
			break
		}
	}
	r.StartedAt, r.CompletedAt = veeamTimes(m, f, session)
	if v, ok := f.Value("duration", "total duration"); ok {
		if d, ok := ParseDuration(v); ok {
			r.DurationSeconds = d
			if !r.StartedAt.IsZero() && !r.CompletedAt.IsZero() {
				// A clock alone cannot say the run crossed more than one midnight.
				for i := 0; i < 1000 && r.CompletedAt.Sub(r.StartedAt) < time.Duration(d)*time.Second-12*time.Hour; i++ {
					r.CompletedAt = r.CompletedAt.AddDate(0, 0, 1)
				}
			}
		}
	}

	// Size: what the session transferred.
	if v, ok := f.Get("transferred", "data transferred"); ok {
		r.SizeBytes = sizeValue(m, v)
	} else if v, ok := f.Get("backup size"); ok {
		r.SizeBytes = sizeValue(m, v)
	}

	// Messages: the session's own (between its table and the objects'), then
	// each object's, in the order printed.
	var messages []string
	if stats >= 0 {
		for i := stats + 1; i < end; i++ {
			l := lines[i]
			if strings.IndexByte(l, '\t') >= 0 || headingAt([]string{l}, "details", "objects", "vms", "machines") == 0 {
				continue
			}
			if strings.HasPrefix(strings.ToLower(l), "veeam ") {
				continue
			}
			messages = append(messages, l)
		}
	}
	objectFailed := false
	var objs []object
	if header >= 0 {
		for i := header + 1; i < len(lines); i++ {
			c := Cells(lines[i])
			if len(c) == 1 && len(objs) > 0 && objs[len(objs)-1].status != OK && objs[len(objs)-1].text == "" {
				// A row of one cell under an object that failed or warned
				// without a message of its own: its message.
				objs[len(objs)-1].text = c[0]
				messages = append(messages, c[0])
				continue
			}
			if len(c) <= statusCol || len(c) <= nameCol {
				continue
			}
			st := veeamWord(c[statusCol])
			if st == Unknown {
				continue
			}
			if st == Failed {
				objectFailed = true
			}
			msg := ""
			switch {
			case detailsCol >= 0 && detailsCol < len(c):
				msg = c[detailsCol]
			case detailsCol < 0 && len(c) > statusCol+1:
				msg = c[len(c)-1]
			}
			objs = append(objs, object{name: c[nameCol], status: st, text: msg})
			if st != OK && strings.TrimSpace(msg) != "" {
				messages = append(messages, msg)
			}
			if strings.Contains(kind, "surebackup") {
				for _, cell := range c {
					if strings.EqualFold(strings.TrimSpace(cell), "failed") {
						objectFailed = true
					}
				}
			}
		}
	}
	for _, msg := range messages {
		if veeamIntegrityRe.MatchString(msg) {
			r.IntegrityFailed = true
		}
	}
	if strings.Contains(kind, "surebackup") && (r.Status == Failed || objectFailed) {
		r.IntegrityFailed = true
	}
	if r.Status != OK || r.IntegrityFailed {
		for _, msg := range messages {
			if s := summaryText(msg); s != "" {
				r.Summary = s
				break
			}
		}
		if s, ok := objectsSummary(objs, r.Summary); ok {
			r.Summary = s
		}
	}
	return r, nil
}

// veeamTimes reads the session's start and end. The table prints clocks
// ("22:00:07") or full times; clocks are on the session's date (else the
// Date header's), an end before its start being on the next day.
func veeamTimes(m *Message, f Fields, session time.Time) (start, end time.Time) {
	day := session
	if day.IsZero() && !m.Date.IsZero() {
		zone := m.Zone
		if zone == nil {
			zone = time.UTC
		}
		day = m.Date.In(zone)
	}
	read := func(v string) time.Time {
		if t, ok := m.Time(v); ok {
			return t
		}
		if day.IsZero() {
			return time.Time{}
		}
		if t, ok := ParseClock(v, day); ok {
			return t
		}
		return time.Time{}
	}
	if v, ok := f.Value("start time", "started", "start"); ok {
		start = read(v)
	}
	if start.IsZero() {
		start = session
	}
	if v, ok := f.Value("end time", "finished", "end"); ok {
		end = read(v)
	}
	if session.IsZero() && !m.Date.IsZero() {
		// Clocks read on the Date's day: a run cannot end after its mail.
		for _, t := range []*time.Time{&start, &end} {
			if !t.IsZero() && t.After(m.Date.Add(time.Hour)) {
				*t = t.AddDate(0, 0, -1)
			}
		}
	}
	if !start.IsZero() && !end.IsZero() && end.Before(start) {
		end = end.AddDate(0, 0, 1)
	}
	return start, end
}
