package mailparse

import (
	"regexp"
	"strings"
)

// The macrium parser reads Macrium Reflect backup e-mails: a subject
// `<computer> Macrium Reflect - Backup Success` (or "with Warnings",
// "Failed"), a headline ("Success :)", "Warning :|", "Failed :("),
// labelled values (Computer Name, Backup definition, Backup Status, Start
// Time, End Time, Duration, Data Written, Auto Verify) and the run's log.
// The first warning or error of the log is the summary; a failed image
// verification is an integrity failure.

func init() { register("macrium", macriumParser{}) }

// macriumParser reads Macrium Reflect e-mails (see above).
type macriumParser struct{}

var (
	macriumSubjectRe = regexp.MustCompile(`(?i)^\s*(.*?)\s*macrium\s+reflect\s*[-–—:]\s*(.+)$`)

	macriumStatusLabels = []string{"backup status", "status", "result", "backup result", "job status", "sicherungsstatus", "statut de la sauvegarde", "estado de la copia"}
	macriumJobLabels    = []string{"backup definition", "definition", "backup definition file", "definition file", "job", "job name", "backup name", "task", "sicherungsdefinition", "définition de sauvegarde"}
	macriumHostLabels   = []string{"computer name", "computer", "machine", "host", "computername", "nom de l'ordinateur"}
	macriumStartLabels  = []string{"start time", "started", "backup started", "start", "startzeit", "heure de début", "hora de inicio"}
	macriumEndLabels    = []string{"end time", "finished", "backup completed", "completed", "end", "endzeit", "heure de fin", "hora de finalización"}
	macriumDurLabels    = []string{"duration", "elapsed", "elapsed time", "dauer", "durée", "duración"}
	macriumSizeLabels   = []string{"data written", "backup size", "image size", "written", "total written", "file size", "geschriebene daten", "données écrites"}
	macriumVerifyLabels = []string{"verify", "verification", "verify status", "verify result", "image verification", "auto verify result", "überprüfung", "vérification"}

	// macriumProblemRe finds the log lines that report a problem.
	macriumProblemRe = regexp.MustCompile(`(?i)\b(?:warning|warnung|error|fehler|erreur|unable|failed|failure|fail|cannot|can't|could not|couldn't|not found|denied|aborted|insufficient|no space|disconnected|timed out|timeout|corrupt\w*|invalid|skipped|gave up|is not available|no longer available|lost)\b`)
	// macriumEndLineRe is the log's closing line, which only repeats the
	// status ("Backup completed successfully", "Backup aborted!").
	macriumEndLineRe = regexp.MustCompile(`(?i)^(?:backup|image|file and folder backup|clone|operation|job)\s+(?:completed|aborted|failed|cancel+ed|finished|succeeded)\b[^:]*$`)
	macriumPathRe    = regexp.MustCompile(`^.*[\\/]`)
	// macriumLogHeadings head the run's log, in the languages Reflect
	// writes.
	macriumLogHeadings = []string{"log", "backup log", "operation log", "image log", "log file", "protokoll",
		"sicherungsprotokoll", "vorgangsprotokoll", "journal", "journal des opérations", "journal de sauvegarde"}
)

// Parse reads a Macrium Reflect e-mail.
func (macriumParser) Parse(m *Message) (Result, error) {
	r := noResult()
	lines := m.Lines
	f := FieldsOf(lines)
	isMacrium := namesProduct(m, "macrium")

	subjectHost, subjectStatus := subjectPair(macriumSubjectRe, m.Subject)

	if v, ok := f.stated(macriumJobLabels...); ok {
		r.JobName = macriumJobName(v)
	} else if v, ok := f.stated(macriumHostLabels...); ok {
		r.JobName = v
	} else {
		r.JobName = subjectHost
	}

	if !isMacrium {
		return r, unreadable("not a Macrium Reflect e-mail: the mail does not name the product")
	}
	// The Backup Status line, the subject, the headline ("Success :)",
	// "Warning :|", "Failed :(").
	status, _ := f.Get(macriumStatusLabels...)
	r.Status = firstStatus(StatusOf, status, subjectStatus,
		statusLine(lines, 5, func(l string) bool { return strings.Contains(strings.ToLower(l), "macrium") }))
	if r.Status == Unknown {
		return r, unreadable("no Macrium Reflect backup status found: no Backup Status line and no status in the subject or headline")
	}

	r.readRun(m, f.Get, macriumStartLabels, macriumEndLabels, macriumDurLabels)
	if v, ok := f.Get(macriumSizeLabels...); ok {
		r.SizeBytes = sizeIn(m, v)
	}

	var log []string
	for _, h := range macriumLogHeadings {
		if log = Section(lines, h, isMailFooter); log != nil {
			break
		}
	}
	r.IntegrityFailed = fieldsSayFailed(f, macriumVerifyLabels) || integrityFailedIn(m.Subject, lines)

	if r.Status != OK || r.IntegrityFailed {
		r.Summary = macriumSummary(log, f, r.IntegrityFailed)
	}
	return r, nil
}

// macriumJobName reads a backup definition, which may be printed as its
// XML file's path ("C:\Users\x\Documents\Reflect\Daily Image.xml").
func macriumJobName(v string) string {
	low := strings.ToLower(v)
	if strings.HasSuffix(low, ".xml") || strings.ContainsAny(v, `\/`) && strings.Contains(low, ".xml") {
		v = macriumPathRe.ReplaceAllString(v, "")
		if i := strings.LastIndexByte(v, '.'); i > 0 {
			v = v[:i]
		}
	}
	return strings.TrimSpace(v)
}

// macriumSummary returns the log's first line that reports a problem (the
// first verification failure when that is what went wrong), else an
// error label, else the log's closing line.
// problemWords are the words without one of which macriumProblemRe cannot
// match, lowercased.
var problemWords = []string{"warn", "fehler", "erreur", "error", "unable", "fail", "cannot", "can't", "could",
	"couldn't", "not found", "denied", "aborted", "insufficient", "no space", "disconnected", "timed out",
	"timeout", "corrupt", "invalid", "skipped", "gave up", "available", "lost"}

// mayTellProblem reports whether l holds one of problemWords in any case.
func mayTellProblem(l string) bool { return problemWordSet.in(l) }

var problemWordSet = newWordSet(problemWords)

func macriumSummary(log []string, f Fields, integrity bool) string {
	if integrity {
		for _, l := range log {
			if lineSaysIntegrityFailed(l) {
				return cleanSummary(l)
			}
		}
	}
	closing := ""
	for _, l := range log {
		l = strings.TrimSpace(l)
		if macriumEndLineRe.MatchString(l) {
			if closing == "" {
				closing = l
			}
			continue
		}
		if mayTellProblem(l) && macriumProblemRe.MatchString(l) {
			return cleanSummary(l)
		}
	}
	if s := labelSummary(f, "error", "error message", "reason", "message", "fehler"); s != "" {
		return s
	}
	return cleanSummary(closing)
}
