package mailparse

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// The generic parser reads the mails of scripts and tools that have no
// parser of their own (restic, rsync or pg_dump wrappers, Windows Server
// Backup tasks...): "Label: value" lines (Job, Status, Started, Finished,
// Duration, Size, Verification, Message) under many label names, in plain
// text or HTML, and a status word in the subject when the body has none
// ("Backup OK: x", "[FAILED] x", "SUCCESS").

func init() { register("generic", genericParser{}) }

// genericParser reads script and tool mails (see above).
type genericParser struct{}

// Label names the generic parser reads, first match wins.
var (
	genJobLabels = []string{
		"job", "job name", "jobname", "backup job", "task", "task name", "backup", "backup name",
		"backup set", "plan", "policy", "profile", "name", "auftrag", "aufgabe", "sicherungsauftrag", "tâche",
		"travail", "taak", "trabajo",
	}
	genHostLabels   = []string{"host", "hostname", "server", "computer", "machine", "client", "device", "rechner", "hôte", "ordinateur"}
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

	if v, ok := f.stated(genJobLabels...); ok {
		r.JobName = v
	} else if j := genericSubjectJob(m.Subject); j != "" {
		r.JobName = j
	} else if v, ok := f.stated(genHostLabels...); ok {
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
	r.SizeBytes = genericSize(m, f)

	r.IntegrityFailed = fieldsSayFailed(f, genVerifyLabels) || integrityFailedIn(m.Subject, m.Lines)

	if r.Status != OK || r.IntegrityFailed {
		r.Summary = genericSummary(m, f)
		// A script that backs up several hosts or databases prints a
		// table of them, each with its own status.
		if s, ok := objectsSummary(tableObjects(m.Lines, 0, genericStatusWord), r.Summary); ok {
			r.Summary = s
		}
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
func genericSize(m *Message, f Fields) int64 {
	for _, l := range genSizeLabels {
		v, ok := f[l]
		if !ok {
			continue
		}
		if n := sizeIn(m, v); n >= 0 {
			return n
		}
		if strings.Contains(l, "bytes") {
			if n, ok := byteCount(v); ok {
				return n
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
	if s := sectionSummary(m.Lines, isMailFooter, "errors", "error", "warnings", "warning", "messages", "message", "details", "output"); s != "" {
		return s
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
