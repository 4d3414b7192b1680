package mailparse

import (
	"regexp"
	"strings"
)

// The nakivo parser reads NAKIVO Backup & Replication job reports: a
// subject `Job "<name>" has completed: <status>`, the job's name and status
// as a heading, a table of labelled values (Job status, Started, Finished,
// Duration, Data transferred), a table of the job's VMs (status, notes) and
// an Alerts list. Labels may be localized, the body may be plain text, and
// a VM's screenshot verification may fail while the backup succeeded.

func init() { register("nakivo", nakivoParser{}) }

// nakivoParser reads NAKIVO job reports (see above).
type nakivoParser struct{}

var (
	nakivoSubjectRe = regexp.MustCompile(`(?i)\b(?:job|auftrag|tâche|tache|trabajo|lavoro|taak)\s*[„"“”«']\s*(.+?)\s*[”"“»'](.*)$`)

	nakivoStatusLabels = []string{
		"job status", "job run status", "run status", "jobstatus", "auftragsstatus", "job-status",
		"statut de la tâche", "statut du travail", "statut de la tache", "estado del trabajo",
		"stato del lavoro", "taakstatus",
	}
	nakivoStartLabels = []string{
		"started", "start time", "started at", "job started", "start", "gestartet", "startzeit",
		"beginn", "démarré", "demarre", "début", "debut", "iniciado", "inicio", "avviato", "gestart",
	}
	nakivoEndLabels = []string{
		"finished", "end time", "finished at", "job finished", "completed", "ended", "end",
		"beendet", "endzeit", "abgeschlossen", "terminé", "termine", "fin", "finalizado",
		"completato", "voltooid",
	}
	nakivoDurationLabels = []string{"duration", "job duration", "dauer", "durée", "duree", "duración", "durata", "duur"}
	nakivoSizeLabels     = []string{
		"data transferred", "transferred", "transferred data", "data written", "total transferred",
		"übertragene daten", "übertragen", "datenmenge", "données transférées", "donnees transferees",
		"datos transferidos", "dati trasferiti", "overgedragen gegevens",
	}
	nakivoAlertHeadings = []string{
		"alerts", "alert", "errors", "warnings", "events", "job alerts", "warnungen", "fehler",
		"alarme", "alertes", "erreurs", "alertas", "errores", "avvisi", "errori", "waarschuwingen",
	}

	nakivoVMKeyRe  = regexp.MustCompile(`(?i)^(?:vm|vms|virtual machine|machine|source|object|item|name|instance|host|vm name|server)$`)
	nakivoVMStatus = regexp.MustCompile(`(?i)^(?:status|result|state|statut|estado|ergebnis|stato)$`)
	nakivoVMNotes  = regexp.MustCompile(`(?i)^(?:notes?|details?|description|reason|errors?|message|comment|hinweise?|remarques?|notas?)$`)
	nakivoVMSize   = regexp.MustCompile(`(?i)^(?:data transferred|transferred|übertragen|transféré|transferido)`)
)

// Parse reads a NAKIVO job report.
func (nakivoParser) Parse(m *Message) (Result, error) {
	r := noResult()
	lines := m.Lines
	f := FieldsOf(lines)
	isNakivo := namesProduct(m, "nakivo")

	subjectJob, subjectRest := subjectPair(nakivoSubjectRe, m.Subject)

	// The job: the subject's quoted name, a Job name label, or the heading
	// under the report's title.
	headIdx := -1
	for i, l := range lines {
		if i > 4 {
			break
		}
		if strings.Contains(strings.ToLower(l), "nakivo") && i+1 < len(lines) && strings.IndexByte(lines[i+1], '\t') < 0 {
			headIdx = i + 1
			break
		}
	}
	switch {
	case subjectJob != "":
		r.JobName = subjectJob
	default:
		if v, ok := f.stated("job name", "job", "auftragsname", "nom de la tâche", "nombre del trabajo"); ok {
			r.JobName = v
		} else if headIdx >= 0 {
			r.JobName = lines[headIdx]
		}
	}

	// The status: the Job status label, the subject after the job's name,
	// the badge under the job's name; a plain "Status" label only when the
	// mail names NAKIVO.
	jobStatus, _ := f.Get(nakivoStatusLabels...)
	r.Status = firstStatus(nakivoStatus, jobStatus, subjectRest)
	if r.Status == Unknown && isNakivo {
		status, _ := f.Get("status", "result", "job result")
		badge := ""
		if headIdx >= 0 {
			badge = statusLine(lines[headIdx:], 3, func(l string) bool { return l == r.JobName })
		}
		r.Status = firstStatus(nakivoStatus, status, badge)
	}
	if r.Status == Unknown {
		return r, unreadable("no NAKIVO job status found: no \"Job status\" line and no status after the job's name in the subject")
	}

	r.readRun(m, f.Get, nakivoStartLabels, nakivoEndLabels, nakivoDurationLabels)

	rows, cols := findTable(lines, nakivoVMKeyRe, map[string]*regexp.Regexp{
		"status": nakivoVMStatus, "notes": nakivoVMNotes, "size": nakivoVMSize,
	})

	r.SizeBytes = sizeOrColumn(m, f, nakivoSizeLabels, rows, cols["size"]) // no job total: the VMs' sum

	r.IntegrityFailed = integrityFailedIn(m.Subject, lines)

	// The summary: the first alert, else the notes of the first VM that did
	// not succeed.
	if r.Status != OK || r.IntegrityFailed {
		r.Summary = sectionSummary(lines, nakivoSectionEnd, nakivoAlertHeadings...)
		if r.Summary == "" && len(rows) > 0 {
			for _, row := range rows {
				notes := cellAt(row, cols["notes"])
				st := StatusOf(cellAt(row, cols["status"]))
				if notes != "" && (st != OK || r.Status == OK) {
					r.Summary = cleanSummary(notes)
					break
				}
			}
		}
		if s, ok := objectsSummary(nakivoObjects(lines, rows, cols), r.Summary); ok {
			r.Summary = s
		}
	}
	return r, nil
}

// nakivoObjects returns the job's VMs as objects: each row of the VM
// table with its status and notes, the notes taken from the Alerts list
// ("VM: text") when the row has none.
func nakivoObjects(lines []string, rows [][]string, cols map[string]int) []object {
	if len(rows) == 0 {
		return nil
	}
	alerts := Section(lines, "alerts", nakivoSectionEnd)
	for _, h := range nakivoAlertHeadings[1:] {
		if alerts != nil {
			break
		}
		alerts = Section(lines, h, nakivoSectionEnd)
	}
	return rowObjects(rows, cols, "status", "notes", nakivoStatus, alerts)
}

// nakivoStatus reads a NAKIVO status phrase ("Successful", "Completed with
// warnings", "Partially successful", "Failed", "Stopped": a stopped run
// protected nothing, so it counts as failed).
func nakivoStatus(s string) Status {
	return StatusOf(strings.TrimSpace(s))
}

// nakivoSectionEnd ends an Alerts list: the footer, or a new heading.
var nakivoSectionEnd = footerOrHeading("virtual machines", "vms", "objects", "summary", "details", "job details", "machines")
