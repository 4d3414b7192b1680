package mailparse

import (
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// The generic parser reads the mails of scripts and tools that have no
// parser of their own (restic, rsync or pg_dump wrappers, Windows Server
// Backup tasks...): "Label: value" lines (Job, Status, Started, Finished,
// Duration, Size, Verification, Message) under many label names, in plain
// text or HTML, and a status word in the subject when the body has none
// ("Backup OK: x", "[FAILED] x", "SUCCESS").
//
// This file also holds the small helpers the nakivo, backupexec, msp360,
// altaro and macrium parsers share (summaries, sizes, times, integrity).

func init() { register("generic", genericParser{}) }

type genericParser struct{}

// Label names the generic parser reads, first match wins.
var (
	genJobLabels = []string{
		"job", "job name", "jobname", "backup job", "task", "task name", "backup", "backup name",
		"backup set", "plan", "policy", "profile", "name",
	}
	genHostLabels   = []string{"host", "hostname", "server", "computer", "machine", "client", "device"}
	genStatusLabels = []string{
		"status", "result", "state", "outcome", "job status", "backup status", "overall status",
		"final status", "job result", "backup result", "exit status", "ergebnis", "statut", "resultat",
		"résultat", "estado", "resultado", "stato", "esito",
	}
	genExitLabels  = []string{"exit code", "return code", "exit", "rc"}
	genStartLabels = []string{
		"started", "start", "start time", "started at", "starttime", "begin", "began", "begin time",
		"job started", "backup started", "beginn", "gestartet", "début", "debut", "inicio", "avvio",
	}
	genEndLabels = []string{
		"finished", "end", "end time", "completed", "completed at", "finished at", "ended", "ended at",
		"endtime", "stop", "stopped", "finish", "finish time", "job ended", "backup finished",
		"ende", "beendet", "fin", "fine",
	}
	genDurationLabels = []string{
		"duration", "elapsed", "elapsed time", "runtime", "run time", "took", "time taken", "dauer",
		"durée", "duree", "duración", "durata",
	}
	genSizeLabels = []string{
		"transferred", "data transferred", "bytes transferred", "written", "bytes written",
		"data written", "uploaded", "data uploaded", "added", "added to the repository",
		"added to repository", "processed", "size", "backup size", "dump size", "archive size",
		"bytes", "total size", "größe", "taille", "tamaño",
	}
	genSummaryLabels = []string{
		"message", "error", "errors", "error message", "warning", "warnings", "reason", "details",
		"detail", "failure", "failure reason", "fehler", "erreur", "meldung",
	}
	genVerifyLabels = []string{
		"verification", "verify", "verified", "integrity", "integrity check", "check", "restore test",
		"test restore", "recovery test", "verifizierung", "überprüfung", "vérification",
	}
)

var (
	// genSubjectJobRes take the job out of a subject around a status word:
	// "Backup OK: x", "[FAILED] x", "x - SUCCESS", "x: backup failed".
	genSubjectJobRes = []*regexp.Regexp{
		regexp.MustCompile(`(?i)^(?:\[[^\]]*\]\s*)*(?:(?:backup|job|task|cron|restic|rsync|borg|dump)\s+)?(?:ok|success|successful|succeeded|completed|warn|warning|warnings|failed|failure|error|errors|critical)\s*(?:[:\-–—|]\s*|\s+(?:for|of|on)\s+)(.+)$`),
		regexp.MustCompile(`(?i)^(?:\[[^\]]*\]\s*)+(.+)$`),
		regexp.MustCompile(`(?i)^(.+?)\s*(?:[:\-–—|]\s*|\s+)(?:backup\s+|job\s+)?(?:ok|success|successful|succeeded|completed(?: successfully)?|warn|warning|warnings|failed|failure|error|errors|critical)[.!]*$`),
	}
	// genSentenceRe finds a status sentence in a body that has no status
	// label ("The backup operation ... has completed successfully.").
	genSentenceRe  = regexp.MustCompile(`(?i)\b(?:backup|job|operation|task|snapshot|dump|sync|copy|archive)\b.{0,80}?\b(completed successfully|completed with (?:warnings|errors)|succeeded|successfully completed|was successful|failed|did not complete|was aborted|was cancelled|was canceled)\b`)
	genUnitDigitRe = regexp.MustCompile(`([A-Za-z])(\d)`)
	genEpochRe     = regexp.MustCompile(`^\d{10}(?:\.\d+)?$`)
	genDateCmdRe   = regexp.MustCompile(`^\p{L}{2,3}\.?,?\s+(\p{L}{3,4})\.?\s+(\d{1,2}),?\s+(\d{1,2}:\d{2}(?::\d{2})?)(?:\s+[A-Za-z]{1,5})?\s+(\d{4})$`)
	genIntRe       = regexp.MustCompile(`^\d[\d,.' ]*$`)
	// zeroCountRe is a count that says nothing went wrong ("0 errors").
	zeroCountRe  = regexp.MustCompile(`(?i)\b(?:0|no|zero|without)\s+(?:errors?|warnings?|failures?|failed|exceptions?)\b`)
	genLogLineRe = regexp.MustCompile(`(?i)^(?:\[?\d[\d:.\-/ tTz]*\]?\s*)?(?:\[?(?:error|fatal|warning|warn|critical|fehler|erreur)\]?\s*[:\-]|\[(?:error|fatal|warning|warn|critical)\])\s*(.+)$`)
)

// Parse reads a generic report mail.
func (genericParser) Parse(m *Message) (Result, error) {
	r := noResult()
	f := FieldsOf(m.Lines)

	r.Status = genericStatus(m, f)
	if r.Status == Unknown {
		return r, unreadable("no status found: the mail has no Status/Result line and no status word (OK, warning, failed...) in its subject")
	}

	if v, ok := f.Get(genJobLabels...); ok && !emptyValue(v) {
		r.JobName = v
	} else if j := genericSubjectJob(m.Subject); j != "" {
		r.JobName = j
	} else if v, ok := f.Get(genHostLabels...); ok && !emptyValue(v) {
		r.JobName = v
	} else if genericStatusWord(m.Subject) == Unknown {
		r.JobName = strings.Trim(m.Subject, `"'“” `) // the subject names the job
	}

	if v, ok := f.Get(genStartLabels...); ok {
		r.StartedAt = genericTime(v, m)
	}
	if v, ok := f.Get(genEndLabels...); ok {
		r.CompletedAt = genericTime(v, m)
	}
	if v, ok := f.Get(genDurationLabels...); ok {
		// Go-style "31m5s" has no space for ParseDuration's units to end at.
		if d, ok := ParseDuration(genUnitDigitRe.ReplaceAllString(v, "$1 $2")); ok {
			r.DurationSeconds = d
		} else if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil && n >= 0 {
			r.DurationSeconds = n // a bare number of seconds
		}
	}
	r.SizeBytes = genericSize(f)

	r.IntegrityFailed = fieldsSayFailed(f, genVerifyLabels) || integrityFailedIn(m.Subject, m.Lines)

	if r.Status != OK || r.IntegrityFailed {
		r.Summary = genericSummary(m, f)
	}
	return r, nil
}

// genericStatus reads the status from a label, an exit code, the subject or
// a status sentence, keeping the worst of the label and the subject so a
// failure either states is never reported as a success.
func genericStatus(m *Message, f Fields) Status {
	st := Unknown
	labelled := false // a status label whose value is not a known status
	if v, ok := f.Get(genStatusLabels...); ok {
		st = genericStatusWord(v)
		labelled = st == Unknown && !emptyValue(v)
	}
	if st == Unknown {
		if v, ok := f.Get(genExitLabels...); ok {
			if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil {
				st = Failed
				if n == 0 {
					st = OK
				}
			}
		}
	}
	sub := genericStatusWord(m.Subject)
	if labelled && sub == OK {
		// "Status: Interrupted" under a subject that says "completed": do
		// not let the subject turn an unknown status into a success.
		return Unknown
	}
	if st == Unknown || statusWorse(sub, st) {
		st = sub
	}
	if st != Unknown || labelled {
		return st
	}
	if l := genericSentence(m.Lines); l != "" {
		return StatusOf(genSentenceRe.FindStringSubmatch(l)[1])
	}
	return Unknown
}

// genericSentence returns the first of the first lines that states a run's
// result in a sentence, "" when none does.
func genericSentence(lines []string) string {
	for i, l := range lines {
		if i >= 40 {
			break
		}
		if len(l) >= 30 && strings.IndexByte(l, '\t') < 0 && genSentenceRe.MatchString(l) {
			return l
		}
	}
	return ""
}

// genericStatusWord is StatusOf with the short words scripts print ("WARN",
// "ERR", "NOK").
func genericStatusWord(s string) Status {
	low := zeroCountRe.ReplaceAllString(strings.ToLower(s), " ")
	switch {
	case containsWord(low, "warn"):
		return Warn
	case containsWord(low, "err"), containsWord(low, "nok"), containsWord(low, "ko"),
		strings.Contains(low, "interrupted"), strings.Contains(low, "timed out"), containsWord(low, "timeout"),
		strings.Contains(low, "overdue"), strings.Contains(low, "unterbrochen"), strings.Contains(low, "interrompu"):
		return Failed
	}
	return StatusOf(low)
}

// statusWorse reports whether a is a worse known status than b.
func statusWorse(a, b Status) bool {
	return a != Unknown && (b == Unknown || a > b)
}

// genericSubjectJob takes the job out of a subject made of a status word
// and a name; "" when the subject is only a status word.
func genericSubjectJob(subject string) string {
	s := strings.TrimSpace(subject)
	for _, re := range genSubjectJobRes {
		if mm := re.FindStringSubmatch(s); mm != nil {
			j := strings.Trim(strings.TrimSpace(mm[1]), `"'“”`)
			if j != "" && genericStatusWord(j) == Unknown {
				return j
			}
		}
	}
	return ""
}

// genericTime reads a time as scripts print it: any layout ParseTime knows,
// or Unix seconds.
func genericTime(v string, m *Message) time.Time {
	v = strings.TrimSpace(v)
	if genEpochRe.MatchString(v) {
		if n, err := strconv.ParseFloat(v, 64); err == nil {
			return time.Unix(int64(n), 0).UTC()
		}
	}
	if mm := genDateCmdRe.FindStringSubmatch(v); mm != nil {
		// date(1)'s "Mon Mar  2 03:00:01 CET 2026": the year after the zone.
		v = mm[2] + " " + mm[1] + " " + mm[4] + " " + mm[3]
	}
	t, _ := m.Time(v)
	return t
}

// genericSize reads the size from the first size label that holds one; a
// "Bytes" label may hold a bare number.
func genericSize(f Fields) int64 {
	for _, l := range genSizeLabels {
		v, ok := f[l]
		if !ok {
			continue
		}
		if n := sizeIn(v); n >= 0 {
			return n
		}
		if strings.Contains(l, "bytes") && genIntRe.MatchString(strings.TrimSpace(v)) {
			if n, ok := parseNumber(v, true); ok {
				return int64(n)
			}
		}
	}
	return -1
}

// genericSummary finds the first error or warning text: a Message/Error
// label, a section under an Errors or Warnings heading, or a line that
// starts with ERROR or WARNING.
func genericSummary(m *Message, f Fields) string {
	for _, l := range genSummaryLabels {
		if v, ok := f[l]; ok && isText(v) {
			return cleanSummary(v)
		}
	}
	for _, h := range []string{"errors", "error", "warnings", "warning", "messages", "message", "details", "output"} {
		if s := firstSummaryLine(Section(m.Lines, h, isMailFooter)); s != "" {
			return s
		}
	}
	for _, l := range m.Lines {
		if mm := genLogLineRe.FindStringSubmatch(l); mm != nil && isText(mm[1]) {
			return cleanSummary(mm[1])
		}
	}
	// A body that only says so in a sentence ("The backup operation ...
	// has failed with error ...").
	if l := genericSentence(m.Lines); l != "" && StatusOf(genSentenceRe.FindStringSubmatch(l)[1]) != OK {
		return cleanSummary(l)
	}
	return ""
}

// ---- helpers shared by this package's vendor parsers ----

var (
	// summaryPrefixRe is what a summary loses in front: list bullets and a
	// bare severity word ("Error: ", "- ", "• ", "WARNING - ").
	summaryPrefixRe = regexp.MustCompile(`(?i)^(?:[-–—•·*●▪◦>]+\s*|\d{1,2}[.)]\s+)?(?:(?:error|errors|warning|warnings|warn|fatal|critical|fehler|warnung|erreur|avertissement|failure|failed|alert)\s*(?::|-|–)\s+|\[(?:error|warning|warn|fatal|critical)\]\s*)?`)
	summaryBulletRe = regexp.MustCompile(`^[-–—•·*●▪◦>]+\s*`)
	mailFooterRe    = regexp.MustCompile(`(?i)^(?:this (?:is an automated|report was generated|e-?mail was|message was|notification was|alert was)|you are receiving|you received this|to change (?:the )?notification|notification settings|manage notifications|please do not reply|do not reply|for more information, open|click here|view (?:in|the)|go to the console|sincerely|regards|best regards|copyright|©)`)
	// integrityRe finds a failed verification, integrity check, screenshot
	// or recovery test in a line.
	integrityRe      = regexp.MustCompile(`(?i)(?:\b(?:verif\w*|integrity|consistency check\w*|screenshot\w*|sandbox\w*|restore test\w*|test restore\w*|recovery test\w*|test drill\w*|boot test\w*|health monitor)\b[^.;:]{0,60}?\b(?:fail\w*|miscompar\w*|mismatch\w*|corrupt\w*|unsuccessful|did not (?:pass|succeed|boot|complete)|not pass\w*|errors? (?:found|detected|occurred|encountered)|detected (?:issues|problems|errors))|\b(?:fail\w*|unable|could not|cannot|can't)\b[^.;:]{0,30}?\b(?:to )?(?:verif\w*|validate)\b|\b(?:verif\w*|integrity check|screenshot verification|sandbox restore|restore test|recovery test)\w*\s*(?::|-|–)\s*(?:fail\w*|error\w*|corrupt\w*))`)
	zeroProblemsRe   = regexp.MustCompile(`(?i)\b(?:0|no|zero|without)\s+(?:errors?|miscompares?|mismatches?|failures?|issues?|problems?)\b`)
	integrityLabelRe = regexp.MustCompile(`(?i)verif|integrity|consistency|screenshot|sandbox|restore test|test restore|recovery test|test drill|boot test|health monitor|überprüfung|vérification`)
)

// cleanSummary trims a summary line and takes off bullets and a bare
// severity prefix.
func cleanSummary(s string) string {
	s = clean(s)
	for i := 0; i < 3; i++ {
		t := strings.TrimSpace(summaryPrefixRe.ReplaceAllString(s, ""))
		if t == s || t == "" {
			break
		}
		s = t
	}
	return s
}

// firstSummaryLine returns the first line of lines that reads as text, as
// a summary.
func firstSummaryLine(lines []string) string {
	for _, l := range lines {
		if s := cleanSummary(strings.ReplaceAll(l, "\t", " ")); isText(s) {
			return s
		}
	}
	return ""
}

// isText reports whether s reads as a message rather than a number, a
// date or a placeholder: it has at least three letters.
func isText(s string) bool {
	if emptyValue(s) {
		return false
	}
	n := 0
	for _, r := range s {
		if unicode.IsLetter(r) {
			if n++; n >= 3 {
				return true
			}
		}
	}
	return false
}

// isMailFooter reports whether line is a mail's footer rather than content.
func isMailFooter(line string) bool {
	return mailFooterRe.MatchString(strings.TrimSpace(summaryBulletRe.ReplaceAllString(line, "")))
}

// emptyValue reports whether v says nothing ("", "-", "n/a", "none").
func emptyValue(v string) bool {
	switch strings.ToLower(strings.Trim(strings.TrimSpace(v), ".")) {
	case "", "-", "--", "—", "–", "n/a", "na", "none", "null", "nil", "(none)", "keine", "aucun", "aucune", "ninguno":
		return true
	}
	return false
}

// sizeIn reads a size value: -1 when v prints none ("-", "n/a"), 0 for a
// bare 0.
func sizeIn(v string) int64 {
	v = strings.TrimSpace(v)
	if emptyValue(v) {
		return -1
	}
	if n, ok := ParseSize(v); ok {
		return n
	}
	if v == "0" {
		return 0
	}
	return -1
}

// integrityFailedIn reports whether the subject or a line says a
// verification, integrity check or recovery test failed, either in words
// ("Screenshot verification failed") or as a labelled value
// ("Verification: Failed", "Verify\tFailed").
func integrityFailedIn(subject string, lines []string) bool {
	if lineSaysIntegrityFailed(subject) {
		return true
	}
	for _, l := range lines {
		if strings.IndexByte(l, '\t') >= 0 {
			cells := Cells(l)
			for i := 0; i+1 < len(cells); i++ {
				if integrityLabelRe.MatchString(cells[i]) && len(cells[i]) <= maxLabel && StatusOf(cells[i+1]) == Failed && !zeroProblemsRe.MatchString(cells[i+1]) {
					return true
				}
			}
		}
		if lineSaysIntegrityFailed(l) {
			return true
		}
	}
	return integrityColumnFailed(lines)
}

func lineSaysIntegrityFailed(l string) bool {
	if i := strings.Index(l, ": "); i > 0 && i <= maxLabel && integrityLabelRe.MatchString(l[:i]) {
		v := l[i+2:]
		if StatusOf(v) == Failed && !zeroProblemsRe.MatchString(v) {
			return true
		}
	}
	loc := integrityRe.FindStringIndex(l)
	return loc != nil && !zeroProblemsRe.MatchString(l[loc[0]:])
}

// integrityColumnFailed finds a table with a verification column (a header
// cell naming one) and reports whether a row below it says it failed.
func integrityColumnFailed(lines []string) bool {
	col := -1
	for _, l := range lines {
		cells := Cells(l)
		if len(cells) < 3 { // label/value rows are not a table
			col = -1
			continue
		}
		if col < 0 || col >= len(cells) {
			col = -1
			for i, c := range cells {
				if len(c) <= maxLabel && integrityLabelRe.MatchString(c) && StatusOf(c) == Unknown {
					col = i
					break
				}
			}
			continue
		}
		if StatusOf(cells[col]) == Failed && !zeroProblemsRe.MatchString(cells[col]) {
			return true
		}
	}
	return false
}

// fieldsSayFailed reports whether one of labels holds a failure.
func fieldsSayFailed(f Fields, labels []string) bool {
	for _, l := range labels {
		if v, ok := f[l]; ok && StatusOf(v) == Failed && !zeroProblemsRe.MatchString(v) {
			return true
		}
	}
	return false
}

// namesProduct reports whether the subject, the sender or one of the first
// lines of m names one of words (lowercase): how a parser makes sure a
// mail comes from its product before trusting a label as common as
// "Status".
func namesProduct(m *Message, words ...string) bool {
	hay := []string{strings.ToLower(m.Subject), strings.ToLower(m.From)}
	for i, l := range m.Lines {
		if i >= 60 {
			break
		}
		hay = append(hay, strings.ToLower(l))
	}
	if n := len(m.Lines); n > 60 {
		for _, l := range m.Lines[max(60, n-10):] {
			hay = append(hay, strings.ToLower(l))
		}
	}
	for _, h := range hay {
		for _, w := range words {
			if strings.Contains(h, w) {
				return true
			}
		}
	}
	return false
}

// findTable finds the table whose header row has a cell matching key in
// its first or second column and a cell matching at least one of others,
// and returns the rows below the header as cells with the column of each
// of others by name (-1 when missing; "key" is key's column). The rows
// end at the first line with fewer than two cells.
func findTable(lines []string, key *regexp.Regexp, others map[string]*regexp.Regexp) (rows [][]string, cols map[string]int) {
	for i, l := range lines {
		cells := Cells(l)
		if len(cells) < 2 {
			continue
		}
		k := -1
		for j, c := range cells {
			if key.MatchString(strings.TrimSpace(c)) {
				k = j
				break
			}
		}
		if k != 0 && k != 1 {
			continue
		}
		cols = map[string]int{"key": k}
		found := 0
		for name, re := range others {
			cols[name] = -1
			for j, c := range cells {
				if j != k && re.MatchString(strings.TrimSpace(c)) {
					cols[name] = j
					found++
					break
				}
			}
		}
		if found == 0 {
			continue
		}
		for _, r := range lines[i+1:] {
			rc := Cells(r)
			if len(rc) < 2 {
				break
			}
			rows = append(rows, rc)
		}
		return rows, cols
	}
	return nil, nil
}

// cellAt returns row's cell i, "" when the row has none.
func cellAt(row []string, i int) string {
	if i < 0 || i >= len(row) {
		return ""
	}
	return strings.TrimSpace(row[i])
}
