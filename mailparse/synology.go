package mailparse

import (
	"regexp"
	"strings"
)

func init() { register("synology", synologyParser{}) }

// synologyParser reads the notifications a Synology NAS sends for Hyper
// Backup and Active Backup for Business tasks: "[NAS] <package> - Backup
// task <task> [on <device>] <result>", a sentence with the result, the
// error or warning text, then labelled fields (task, device, times,
// duration, transferred size). DSM writes them in its own language, so
// labels and result words are read in several. Hyper Backup's backup
// integrity check reports a failed check with IntegrityFailed.
type synologyParser struct{}

var (
	// synologyTaskRe finds the task in the subject or the result sentence:
	// "Backup task Offsite-C2 on KL-NAS01 has failed".
	synologyTaskRe = regexp.MustCompile(`(?i)(?:backup|integrity check|restore|sicherungs|sauvegarde|back-up|copia de seguridad)?\s*(?:task|aufgabe|tâche|taak|tarea|attività)\s+(?:of\s+|de sauvegarde\s+|de copie\s+|de copia de seguridad\s+)?["'“„«\[]?\s*(.+?)\s*["'”“»\]]?\s+(?:on|auf|sur|op|en|su)\s+(\S+)\s+(.*)$`)
	// synologyTaskEndRe finds a task whose result ends the line, the device
	// perhaps after it: "... of backup task Offsite-C2 failed", "Backup task
	// [Offsite-C2] has been completed on NAS01".
	synologyTaskEndRe  = regexp.MustCompile(`(?i)(?:task|aufgabe|tâche|taak|tarea)\s+(?:de sauvegarde\s+|de copie\s+)?["'“„«\[]?\s*(.+?)\s*["'”“»\]]?\s+((?:has|have|was|is|were|ist|wurde|a|est|werd|ha)?\s*(?:been\s+)?\S+(?:\s+\S+)?)(?:\s+(?:on|auf|sur|op)\s+\S+)?\.?$`)
	synologyTaskLabels = []string{"task", "task name", "backup task", "aufgabe", "aufgabenname", "sicherungsaufgabe", "tâche", "nom de la tâche", "taak", "tarea", "attività"}
	synologyStart      = []string{"start time", "started", "startzeit", "heure de début", "starttijd", "hora de inicio", "ora di inizio", "begintijd"}
	synologyEnd        = []string{"end time", "finished", "completed", "endzeit", "heure de fin", "eindtijd", "hora de finalización", "ora di fine"}
	synologyDur        = []string{"duration", "dauer", "durée", "duur", "duración", "durata"}
	synologySize       = []string{"transferred size", "transferred", "data transferred", "backed up size", "übertragene größe", "übertragene datenmenge", "taille transférée", "overgedragen grootte", "tamaño transferido", "dimensione trasferita"}
	// synologyErrorLabels label the error or warning text.
	synologyErrorLabels = []string{"error", "error message", "details", "reason", "fehler", "erreur", "fout"}
	// synologyCourtesy is the greeting and the signature around the text.
	synologyCourtesy = regexp.MustCompile(`(?i)^(dear|hello|hi|sehr geehrte\w*|liebe\w*|hallo|cher|chère|bonjour|beste|geachte|estimad\w*|gentile|caro)\b.*,$|^(sincerely|best regards|regards|mit freundlichen|cordialement|met vriendelijke|atentamente|cordiali)\b|^synology\b|^from\s`)
	// synologyIntegrityRe names an integrity check.
	synologyIntegrityRe = regexp.MustCompile(`(?i)integrity|integrität|intégrité|integriteit|integridad|integrità`)
	// synologyDamagedRe says what a check found wrong.
	synologyDamagedRe = regexp.MustCompile(`(?i)corrupt|damaged|beschädigt|endommag|beschadigd|dañad|danneggiat|errors? (?:were )?(?:found|detected)`)
)

// synologyStatus reads a result phrase ("completed successfully",
// "partially completed", "has failed", "was canceled", "was suspended").
func synologyStatus(s string) Status {
	low := strings.ToLower(s)
	switch {
	case strings.Contains(low, "suspended"), strings.Contains(low, "skipped"),
		strings.Contains(low, "angehalten"), strings.Contains(low, "suspendu"):
		return Warn
	}
	return StatusOf(s)
}

// Parse reads a Synology backup notification.
func (synologyParser) Parse(m *Message) (Result, error) {
	r := noResult()
	lines := m.Lines
	f := FieldsOf(lines)
	task, hasTask := f.Value(synologyTaskLabels...)

	// The result sentence: the first line before the fields that names the
	// task (or any task) and says a result; else the subject.
	sentence, rest := -1, ""
	for i, l := range lines {
		if strings.IndexByte(l, '\t') >= 0 || synologyCourtesy.MatchString(l) {
			continue
		}
		if hasTask && strings.Contains(l, task) {
			after := l[strings.Index(l, task)+len(task):]
			if st := synologyStatus(synologyAfterHost(after)); st != Unknown {
				sentence, rest = i, after
				break
			}
		}
		if t := synologyTaskRe.FindStringSubmatch(l); t != nil && synologyStatus(t[3]) != Unknown {
			sentence, rest = i, t[3]
			if !hasTask {
				task = strings.TrimSpace(t[1])
			}
			break
		}
		if t := synologyTaskEndRe.FindStringSubmatch(l); t != nil && synologyStatus(t[2]) != Unknown {
			sentence, rest = i, t[2]
			if !hasTask {
				task = strings.TrimSpace(t[1])
			}
			break
		}
		if i > 6 {
			break
		}
	}
	subjRest := ""
	if t := synologyTaskRe.FindStringSubmatch(m.Subject); t != nil {
		subjRest = t[3]
		if task == "" {
			task = strings.TrimSpace(t[1])
		}
	} else if t := synologyTaskEndRe.FindStringSubmatch(m.Subject); t != nil {
		subjRest = t[2]
		if task == "" {
			task = strings.TrimSpace(t[1])
		}
	}
	if task == "" {
		return r, unreadable("not a Synology backup notification: no backup task named in the subject, the text or a Task field")
	}
	r.JobName = task

	if sentence >= 0 {
		r.Status = synologyStatus(synologyAfterHost(rest))
	}
	if r.Status == Unknown && subjRest != "" {
		r.Status = synologyStatus(subjRest)
	}
	if r.Status == Unknown {
		if v, ok := f.Value("status", "result", "ergebnis", "statut", "resultaat"); ok {
			r.Status = synologyStatus(v)
		}
	}
	if r.Status == Unknown {
		return r, unreadable("the Synology notification for task %q says no result (completed, partially completed, failed)", task)
	}

	r.readRun(m, f.Value, synologyStart, synologyEnd, synologyDur)
	r.readSize(m, f.Value, synologySize)

	// The error or warning: the text after the result sentence, before the
	// fields; else an "Error:"/"Details:" field.
	if sentence >= 0 {
		for _, l := range lines[sentence+1:] {
			if strings.IndexByte(l, '\t') >= 0 || synologyCourtesy.MatchString(l) || synologyFieldLine(l) {
				break
			}
			if s := summaryText(wrapped(m, l)); s != "" {
				r.Summary = s
				break
			}
		}
	}
	if r.Summary == "" {
		r.Summary = problemSummary(lines, f, r.Status, synologyErrorLabels)
	}
	if r.Status != OK {
		// Active Backup's table of machines, each with its own result.
		if s, ok := objectsSummary(tableObjects(lines, 0, synologyStatus), r.Summary); ok {
			r.Summary = s
		}
	}
	whole := m.Subject + " " + rest
	if synologyIntegrityRe.MatchString(whole) && (r.Status != OK || synologyDamagedRe.MatchString(negatedRe.ReplaceAllString(r.Summary, " "))) {
		r.IntegrityFailed = true
	}
	if r.Status == OK && !r.IntegrityFailed {
		r.Summary = ""
	}
	return r, nil
}

// synologyAfterHost drops "on <device>" from the words after a task's name,
// so a device called "Failover-NAS" is not read as a result.
func synologyAfterHost(s string) string {
	s = strings.TrimSpace(s)
	low := strings.ToLower(s)
	for _, p := range []string{"on ", "auf ", "sur ", "op ", "en ", "su "} {
		if strings.HasPrefix(low, p) {
			if i := strings.IndexByte(s[len(p):], ' '); i >= 0 {
				return s[len(p)+i+1:]
			}
			return ""
		}
	}
	return s
}

// synologyFieldLine reports whether l is one of the labelled fields.
func synologyFieldLine(l string) bool {
	i := strings.Index(l, ": ")
	if i <= 0 || i > maxLabel {
		return false
	}
	label := strings.ToLower(strings.TrimSpace(l[:i]))
	for _, list := range [][]string{synologyTaskLabels, synologyStart, synologyEnd, synologyDur, synologySize,
		{"device", "gerät", "appareil", "apparaat", "backup type", "sicherungstyp", "destination", "ziel", "bestemming", "type de sauvegarde"}} {
		for _, k := range list {
			if label == k {
				return true
			}
		}
	}
	return false
}
