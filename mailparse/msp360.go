package mailparse

import (
	"regexp"
	"strings"
)

// The msp360 parser reads MSP360 (formerly CloudBerry) Managed Backup plan
// notifications: a subject `[MSP360] Backup plan "<plan>" on <computer>
// completed: <status>`, a heading "Backup plan <plan> on <computer>:
// <status>", a table of labelled values (Status, Start time, Finish time,
// Duration, Uploaded size) and Warnings or Errors lists. Older agents send
// CloudBerry-branded, plain-text mails with "Plan name"/"Result" labels.

func init() { register("msp360", msp360Parser{}) }

// msp360Parser reads MSP360 plan notifications (see above).
type msp360Parser struct{}

var (
	mspSubjectRe = regexp.MustCompile(`(?i)\bplan\s*[„"“'«]\s*(.+?)\s*[”"“'»](.*)$`)
	mspHeadingRe = regexp.MustCompile(`(?i)^(?:(?:backup|restore|image-based backup|file backup|consistency check|full consistency check)\s+)?plan\s+(.+?)\s+on\s+(\S+?)\s*:\s*(.+)$`)

	mspStatusLabels = []string{"status", "result", "plan status", "backup status", "run status", "last run status", "ergebnis", "statut", "estado"}
	mspJobLabels    = []string{"plan name", "plan", "backup plan", "planname", "nom du plan", "nombre del plan"}
	mspStartLabels  = []string{"start time", "started", "start", "started at", "startzeit", "heure de début", "hora de inicio"}
	mspEndLabels    = []string{"finish time", "end time", "finished", "completed", "finished at", "end", "endzeit", "heure de fin", "hora de finalización"}
	mspDurLabels    = []string{"duration", "elapsed time", "dauer", "durée", "duración"}
	mspSizeLabels   = []string{
		"uploaded size", "uploaded", "data uploaded", "size uploaded", "transferred", "data transferred",
		"uploaded data", "hochgeladen", "taille envoyée", "tamaño cargado", "backed up size",
	}
	mspSummaryHeads = []string{
		"errors", "error", "warnings", "warning", "error details", "failed files", "messages",
		"fehler", "warnungen", "erreurs", "avertissements", "errores", "advertencias",
		// A restore verification or consistency check prints its result
		// under a heading of its own.
		"restore verification details", "restore verification", "consistency check details", "consistency check",
	}
)

// Parse reads an MSP360 plan notification.
func (msp360Parser) Parse(m *Message) (Result, error) {
	r := noResult()
	lines := m.Lines
	f := FieldsOf(lines)

	subjectPlan, subjectRest := subjectPair(mspSubjectRe, m.Subject)
	headPlan, headStatus := "", ""
	for i, l := range lines {
		if i > 6 {
			break
		}
		if mm := mspHeadingRe.FindStringSubmatch(l); mm != nil && strings.IndexByte(l, '\t') < 0 {
			headPlan, headStatus = mm[1], mm[3]
			break
		}
	}
	isMSP := namesProduct(m, "msp360", "cloudberry", "mspbackups", "managed backup") || subjectPlan != "" || headPlan != ""

	switch {
	case subjectPlan != "":
		r.JobName = subjectPlan
	case headPlan != "":
		r.JobName = headPlan
	default:
		if v, ok := f.stated(mspJobLabels...); ok {
			r.JobName = strings.Trim(v, `"'“”`)
		}
	}

	if isMSP {
		if v, ok := f.Get(mspStatusLabels...); ok {
			r.Status = mspStatus(v)
		}
		if r.Status == Unknown && headStatus != "" {
			r.Status = mspStatus(headStatus)
		}
		if r.Status == Unknown && subjectRest != "" {
			r.Status = mspStatus(subjectRest)
		}
	}
	if r.Status == Unknown {
		return r, unreadable("no MSP360 plan status found: no Status line, no \"Backup plan ... : <status>\" heading and no status after the plan's name in the subject")
	}

	r.readRun(m, f.Get, mspStartLabels, mspEndLabels, mspDurLabels)
	if v, ok := f.Get(mspSizeLabels...); ok {
		r.SizeBytes = sizeIn(m, v)
	}

	r.IntegrityFailed = integrityFailedIn(m.Subject, lines)

	if r.Status != OK || r.IntegrityFailed {
		r.Summary = sectionSummary(lines, mspSectionEnd, mspSummaryHeads...)
		if r.Summary == "" {
			r.Summary = labelSummary(f, "error", "error message", "last error", "details", "reason", "message")
		}
	}
	return r, nil
}

// mspStatus reads MSP360's plan results: Success, Warning, Failed, and
// Interrupted or Overdue (the plan did not finish or did not run), which
// count as failed.
func mspStatus(s string) Status {
	low := strings.ToLower(s)
	if strings.Contains(low, "interrupted") || strings.Contains(low, "overdue") || strings.Contains(low, "unterbrochen") || strings.Contains(low, "interrompu") {
		return Failed
	}
	return StatusOf(s)
}

// mspSectionEnd ends a Warnings or Errors list at the footer or the next
// list's heading.
var mspSectionEnd = footerOrHeading("errors", "warnings", "details", "summary", "files", "statistics")
