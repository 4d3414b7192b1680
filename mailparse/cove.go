package mailparse

import (
	"regexp"
	"strings"
)

func init() { register("cove", coveParser{}) }

// coveParser reads the session notifications of N-able Cove Data
// Protection (formerly Backup Manager): the device is the job; fields give
// the session's type, status, times, sizes and error count; a table lists
// the data sources and an "Errors" list the first errors. Cove's session
// statuses are Completed (ok), Completed with errors (warn), and Failed,
// Aborted, Interrupted, Over quota or Not started (failed); a session "In
// process" has no result yet. A failed recovery test sets IntegrityFailed.
type coveParser struct{}

var (
	coveSubjectRe     = regexp.MustCompile(`(?i)^(?:\[[^\]]*\]\s*)?(?:backup|restore|recovery test\w*|session)?\s*(.+?)\s+[-–]\s+(.+?)(?:\s+\(([^()]*)\))?$`)
	coveDeviceLabels  = []string{"device name", "device", "account", "gerätename", "nom de l'appareil", "apparaatnaam", "nombre del dispositivo"}
	coveTypeLabels    = []string{"session type", "sitzungstyp", "type de session", "sessietype", "tipo de sesión"}
	coveStatusLabels  = []string{"status", "session status", "statut", "estado", "stato"}
	coveStartLabels   = []string{"start time", "started", "startzeit", "heure de début", "starttijd", "hora de inicio"}
	coveEndLabels     = []string{"end time", "finished", "completed", "endzeit", "heure de fin", "eindtijd", "hora de finalización"}
	coveDurLabels     = []string{"duration", "dauer", "durée", "duur", "duración"}
	coveSizeLabels    = []string{"sent size", "transferred size", "gesendete größe", "taille envoyée", "verzonden grootte", "tamaño enviado"}
	coveErrorHeadings = []string{"errors", "error", "warnings", "session errors", "error details", "fehler", "erreurs", "fouten", "errores"}
	coveErrorLabels   = []string{"error message", "last error", "error details"}
	// coveVerifyRe names a recovery test or a verification.
	coveVerifyRe = regexp.MustCompile(`(?i)recovery test|recovery testing|verification|standby image|screenshot|integrity|wiederherstellungstest|überprüfung|test de récupération|test de restauration|vérification|hersteltest|prueba de recuperación`)
)

// coveStatus reads a Cove session status.
func coveStatus(s string) (Status, bool) {
	low := strings.ToLower(strings.TrimSpace(s))
	switch {
	case strings.Contains(low, "in process"), strings.Contains(low, "in progress"), low == "running":
		return Unknown, true // still running
	case strings.Contains(low, "interrupted"), strings.Contains(low, "over quota"),
		strings.Contains(low, "not started"), strings.Contains(low, "unterbrochen"),
		strings.Contains(low, "interrompu"), strings.Contains(low, "onderbroken"):
		return Failed, false
	case strings.Contains(low, "no selection"):
		return Warn, false
	}
	return StatusOf(s), false
}

// coveSources returns the session's data sources as objects: the rows of
// the data sources table with their status, each with the first line of
// the Errors list that names it ("MS SQL: Database ... could not be
// backed up").
func coveSources(lines []string) []object {
	objs := tableObjects(lines, 0, func(s string) Status { st, _ := coveStatus(s); return st })
	if len(objs) < 2 {
		return nil
	}
	var errs []string
	for _, h := range coveErrorHeadings {
		if errs = Section(lines, h, isMailFooter); errs != nil {
			break
		}
	}
	for i := range objs {
		objs[i].text = textOf(errs, objs[i].name)
	}
	return objs
}

// Parse reads a Cove session notification.
func (coveParser) Parse(m *Message) (Result, error) {
	r := noResult()
	lines := m.Lines
	f := FieldsOf(lines)
	device, hasDevice := f.Value(coveDeviceLabels...)
	sessionType, _ := f.Value(coveTypeLabels...)
	_, own := f.Get(append([]string{"device name", "gerätename", "nom de l'appareil", "apparaatnaam", "nombre del dispositivo"}, coveTypeLabels...)...)
	if !own && !mailNames(m, "cove") && !mailNames(m, "backup manager") {
		return r, unreadable("not a Cove Data Protection notification: no device name or session type, and no mention of Cove")
	}
	subj := coveSubjectRe.FindStringSubmatch(m.Subject)

	running := false
	if v, ok := f.Value(coveStatusLabels...); ok {
		r.Status, running = coveStatus(v)
	}
	if r.Status == Unknown && !running && subj != nil {
		r.Status, running = coveStatus(subj[1])
	}
	if r.Status == Unknown {
		if running {
			return r, unreadable("the Cove session is still in process: the notification has no result yet")
		}
		return r, unreadable("the Cove notification states no session status (Completed, Completed with errors, Failed...)")
	}

	r.JobName = fieldOrGroup(device, hasDevice, subj, 2)
	r.readRun(m, f.Value, coveStartLabels, coveEndLabels, coveDurLabels)
	r.readSize(m, f.Value, coveSizeLabels)

	r.Summary = usualSummary(m, f, r.Status, coveErrorHeadings, coveErrorLabels)
	if r.Status != OK {
		if s, ok := objectsSummary(coveSources(lines), r.Summary); ok {
			r.Summary = s
		}
	}
	if r.Status != OK && coveVerifyRe.MatchString(sessionType+" "+m.Subject) {
		r.IntegrityFailed = true
	}
	if r.Status == OK && !r.IntegrityFailed {
		r.Summary = ""
	}
	return r, nil
}
