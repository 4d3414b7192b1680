package mailparse

import (
	"regexp"
	"strings"
)

// The backupexec parser reads Veritas Backup Exec job alerts: a subject
// `Backup Exec Alert: Job <result> (Server: "<server>") (Job: "<job>")`, a
// first line that repeats the result and, for an unsuccessful job, its
// error or the conditions met, then "Label: value" lines (Job name, Job
// started, Byte count, Elapsed time, Job ended, Job completion status,
// Final error). A job may back up several sets, and a verify operation may
// fail (miscompares) after the backup itself succeeded.

func init() { register("backupexec", backupExecParser{}) }

// backupExecParser reads Backup Exec job alerts (see above).
type backupExecParser struct{}

var (
	beSubjectJobRe    = regexp.MustCompile(`(?i)\(\s*(?:job|auftrag|travail|tâche|trabajo|processo|taak)\s*:\s*["“„]?(.+?)["”]?\s*\)`)
	beSubjectResultRe = regexp.MustCompile(`(?i)backup\s*exec[^:]*:\s*(.+?)\s*(?:\(|$)`)
	// beFailedRe and beConditionsRe find the first line's error ("-- The
	// job failed with the following error: ...") and its warnings ("...
	// the following conditions were encountered:").
	beFailedRe     = regexp.MustCompile(`(?i)the job (?:failed|was canceled|was cancelled|completed with (?:exceptions|errors))[^:]*?(?:with the following error|error|reason)\s*:\s*(.*)$`)
	beConditionsRe = regexp.MustCompile(`(?i)(?:following conditions were encountered|following (?:exceptions|errors|warnings) (?:were|was) (?:encountered|reported))\s*:\s*(.*)$`)
	beFinalErrorRe = regexp.MustCompile(`(?i)^\s*(0x[0-9a-f]+)\s*[-–:]\s*(.+)$`)
	beByteCountRe  = regexp.MustCompile(`(?i)^(?:total\s+|gesamt-?)?(?:byte count|byte-anzahl|bytezahl|anzahl der bytes|nombre d'octets|nombre total d'octets|recuento de bytes|numero di byte|aantal bytes)\s*:\s*(.+)$`)
	// beLogProblemRe is a job log's warning or error line ("WARNING:
	// "\\FS02\D:\plan.dwg" is a corrupt file.").
	beLogProblemRe = regexp.MustCompile(`(?i)^(?:warning|error|warnung|fehler|avertissement|erreur)\s*:\s*\S`)
	beProcessedRe  = regexp.MustCompile(`(?i)^processed\s+([\d.,' ]+\s*bytes)\b`)
	beVerifyJobRe  = regexp.MustCompile(`(?i)^(?:job type|job operation|operation)\s*[:\-–]\s*verify\b`)

	beStatusLabels = []string{
		"job completion status", "completion status", "job status", "status",
		"auftragsabschlussstatus", "abschlussstatus", "statut d'achèvement du travail",
		"statut de fin du travail", "estado de finalización del trabajo",
	}
	beJobLabels   = []string{"job name", "job", "auftragsname", "nom du travail", "nombre del trabajo"}
	beStartLabels = []string{"job started", "start time", "started", "auftrag gestartet", "travail démarré", "trabajo iniciado"}
	beEndLabels   = []string{"job ended", "end time", "ended", "auftrag beendet", "travail terminé", "trabajo finalizado"}
	beDurLabels   = []string{"elapsed time", "elapsed", "duration", "verstrichene zeit", "temps écoulé", "tiempo transcurrido"}
)

// Parse reads a Backup Exec job alert.
func (backupExecParser) Parse(m *Message) (Result, error) {
	r := noResult()
	lines := m.Lines
	f := FieldsOf(lines)
	isBE := namesProduct(m, "backup exec", "backupexec", "bex_")

	if v, ok := f.stated(beJobLabels...); ok {
		r.JobName = v
	} else if mm := beSubjectJobRe.FindStringSubmatch(m.Subject); mm != nil {
		r.JobName = mm[1]
	} else if len(lines) > 0 {
		if mm := beSubjectJobRe.FindStringSubmatch(lines[0]); mm != nil {
			r.JobName = mm[1]
		}
	}

	// The status: the completion status line (a plain "Status" only in a
	// mail that names Backup Exec), else the subject's result.
	for _, l := range beStatusLabels {
		v, ok := f[l]
		if !ok || (l != "job completion status" && !isBE) {
			continue // "Job status" alone is too common to trust in another product's mail
		}
		if st := beStatus(v); st != Unknown {
			r.Status = st
			break
		}
	}
	if r.Status == Unknown && isBE {
		if mm := beSubjectResultRe.FindStringSubmatch(m.Subject); mm != nil {
			r.Status = beStatus(mm[1])
		}
	}
	if r.Status == Unknown {
		return r, unreadable("no Backup Exec job status found: no \"Job completion status\" line and no job result in a \"Backup Exec Alert\" subject")
	}

	r.readRun(m, f.Get, beStartLabels, beEndLabels, beDurLabels)
	r.SizeBytes = beSize(m, lines)

	r.IntegrityFailed = integrityFailedIn(m.Subject, lines)
	if !r.IntegrityFailed && r.Status != OK {
		if v, ok := f.Get("final error category", "error category"); ok && strings.Contains(strings.ToLower(v), "verif") {
			r.IntegrityFailed = true
		}
		for _, l := range lines {
			if beVerifyJobRe.MatchString(l) {
				r.IntegrityFailed = true // a verify job that did not succeed
				break
			}
		}
	}

	if r.Status != OK || r.IntegrityFailed {
		r.Summary = beSummary(lines, f, r.IntegrityFailed)
	}
	return r, nil
}

// beStatus reads Backup Exec's completion statuses: Successful, Completed
// with exceptions, Succeeded with exceptions, Failed, Canceled, Canceled
// timed out, Missed, Recovered (failed and recovered by the server),
// Resumed and Failed over (restarted elsewhere: a warning, the run went
// on).
func beStatus(s string) Status {
	low := strings.ToLower(s)
	switch {
	case strings.Contains(low, "failed over"), strings.Contains(low, "resumed"):
		return Warn
	case strings.Contains(low, "recovered"):
		return Failed
	}
	return StatusOf(s)
}

// beSize reads the bytes the job wrote: a total byte count, the sum of the
// backup sets' byte counts, or the first "Processed N bytes" sentence.
func beSize(m *Message, lines []string) int64 {
	var sum int64 = -1
	for _, l := range lines {
		mm := beByteCountRe.FindStringSubmatch(l)
		if mm == nil {
			continue
		}
		n := sizeIn(m, mm[1])
		if n < 0 {
			if v, ok := byteCount(mm[1]); ok {
				n = v
			}
		}
		if n < 0 {
			continue
		}
		if strings.HasPrefix(strings.ToLower(l), "total") {
			return n
		}
		if sum < 0 {
			sum = 0
		}
		sum += n
	}
	if sum >= 0 {
		return sum
	}
	for _, l := range lines {
		if mm := beProcessedRe.FindStringSubmatch(l); mm != nil {
			return sizeIn(m, mm[1])
		}
	}
	return -1
}

// beSummary finds the first error or warning: the first line's error, the
// first condition listed under it, an Errors or Exceptions list, the final
// error's text, or else the job log's line that says the verification
// failed (integrity) or its first WARNING or ERROR line.
func beSummary(lines []string, f Fields, integrity bool) string {
	for i, l := range lines {
		if i > 10 {
			break
		}
		if mm := beFailedRe.FindStringSubmatch(l); mm != nil {
			if s := cleanSummary(mm[1]); s != "" {
				return s
			}
			if i+1 < len(lines) {
				return cleanSummary(lines[i+1])
			}
		}
		if mm := beConditionsRe.FindStringSubmatch(l); mm != nil {
			if s := cleanSummary(mm[1]); s != "" {
				return s
			}
			if i+1 < len(lines) && !beIsHeading(lines[i+1]) {
				return cleanSummary(lines[i+1])
			}
		}
	}
	if s := sectionSummary(lines, beIsHeading, "errors", "exceptions", "job errors", "job exceptions", "fehler", "ausnahmen", "erreurs", "exceptions du travail"); s != "" {
		return s
	}
	if v, ok := f.Get("final error", "letzter fehler", "erreur finale", "error final"); ok {
		if mm := beFinalErrorRe.FindStringSubmatch(v); mm != nil {
			if strings.Trim(strings.ToLower(mm[1]), "0x") != "" {
				return cleanSummary(mm[2])
			}
		} else if !emptyValue(v) {
			return cleanSummary(v)
		}
	}
	if integrity {
		for _, l := range lines {
			if lineSaysIntegrityFailed(l) {
				return cleanSummary(l)
			}
		}
	}
	for _, l := range lines {
		if beLogProblemRe.MatchString(l) {
			return cleanSummary(l)
		}
	}
	return ""
}

// beIsHeading reports whether l starts the next part of the alert.
func beIsHeading(l string) bool {
	low := strings.ToLower(strings.TrimSpace(l))
	if isMailFooter(l) || strings.Trim(low, "-=") == "" {
		return true
	}
	switch low {
	case "job information", "backup set summary", "job completion status", "verify set summary",
		"set detail information", "job operation", "auftragsinformationen", "informations sur le travail":
		return true
	}
	return false
}
