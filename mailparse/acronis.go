package mailparse

import (
	"regexp"
	"strings"
)

func init() { register("acronis", acronisParser{}) }

// acronisParser reads the backup notifications of Acronis Cyber Protect
// (Cloud and on-premises): a headline ("Backup succeeded with warnings"),
// labelled fields (workload, protection plan, status, times with their UTC
// offset, duration, backup size) and a list of errors or warnings. The
// console sends them in the user's language, so labels and status words
// are read in English, German, French, Spanish, Italian, Dutch and
// Portuguese. The subject is "<headline>: <workload> - <plan>".
type acronisParser struct{}

var (
	acronisPlanLabels = []string{
		"protection plan", "backup plan", "plan", "schutzplan", "sicherungsplan", "plan de protection",
		"plan de sauvegarde", "plan de protección", "piano di protezione", "beschermingsplan",
		"plano de proteção", "task", "aufgabe",
	}
	acronisWorkloadLabels = []string{
		"workload", "machine", "device", "computer", "arbeitslast", "maschine", "gerät",
		"charge de travail", "machine protégée", "carga de trabajo", "carico di lavoro", "werklast",
		"carga de trabalho",
	}
	// acronisOwnLabels are labels only Acronis prints: one of them (or the
	// name Acronis) tells its notifications from other products' mails.
	acronisOwnLabels = []string{
		"protection plan", "workload", "schutzplan", "arbeitslast", "plan de protection",
		"charge de travail", "plan de protección", "carga de trabajo", "piano di protezione",
		"carico di lavoro", "beschermingsplan", "werklast", "plano de proteção", "carga de trabalho",
	}
	acronisStatusLabels = []string{"status", "statut", "estado", "stato", "result", "ergebnis", "résultat"}
	acronisStartLabels  = []string{
		"start time", "started", "start", "startzeit", "startzeitpunkt", "beginn", "gestartet",
		"heure de début", "début", "hora de inicio", "ora di inizio", "ora inizio", "starttijd",
		"hora de início",
	}
	acronisEndLabels = []string{
		"end time", "finish time", "finished", "completed", "end", "endzeit", "endzeitpunkt", "ende",
		"beendet", "heure de fin", "fin", "hora de finalización", "hora de fin", "ora di fine",
		"ora fine", "eindtijd", "hora de término",
	}
	acronisDurationLabels = []string{"duration", "dauer", "durée", "duración", "durata", "duur", "duração"}
	acronisSizeLabels     = []string{
		"backup size", "size", "data size", "sicherungsgröße", "backup-größe", "größe",
		"taille de la sauvegarde", "taille de sauvegarde", "taille", "tamaño de la copia de seguridad",
		"tamaño del backup", "tamaño", "dimensione del backup", "dimensione", "back-upgrootte",
		"grootte", "tamanho do backup", "tamanho",
	}
	acronisActivityLabels = []string{"activity", "aktivität", "activité", "actividad", "attività", "activiteit", "atividade"}
	// acronisProblemHeadings head the list of errors or warnings.
	acronisProblemHeadings = []string{
		"errors", "error", "warnings", "warning", "details", "error message", "error details",
		"fehler", "fehlermeldung", "warnungen", "warnung", "erreurs", "erreur", "avertissements",
		"avertissement", "errores", "advertencias", "advertencia", "errori", "errore", "avvisi",
		"avviso", "fouten", "fout", "waarschuwingen", "waarschuwing", "erros", "erro", "avisos", "aviso",
	}
	// acronisProblemLabels label the error or warning text: the headings,
	// and the Message field of alerts that print it as one (a validation's
	// "Error code" and "Message").
	acronisProblemLabels = append(append([]string{}, acronisProblemHeadings...),
		"message", "error description", "meldung", "nachricht", "fehlerbeschreibung", "description de l'erreur",
		"mensaje", "messaggio", "bericht", "mensagem")
	// acronisIntegrityRe finds a failed validation or a damaged archive.
	acronisIntegrityRe = regexp.MustCompile(`(?i)(validation|validierung|verification|verifizierung|überprüfung|vérification|validación|verifica|convalida|validatie|integrity|integrität|intégrité|checksum|prüfsumme)[^.]{0,80}?(fail|fehl|échou|echou|error|fallid|mislukt|corrupt|beschädigt|endommag|mismatch)|(archive|archiv|backup|sicherung|sauvegarde|recovery point|wiederherstellungspunkt|point de récupération|block)[^.]{0,60}?(corrupt|beschädigt|endommag|damaged|beschadigd)`)
	// acronisValidationRe names a validation activity.
	acronisValidationRe = regexp.MustCompile(`(?i)validat|validier|verif|überprüf|vérif|convalid`)
)

// Parse reads an Acronis backup notification.
func (acronisParser) Parse(m *Message) (Result, error) {
	r := noResult()
	lines := m.Lines
	f := FieldsOf(lines)
	if len(m.HTMLLines) > 0 && len(m.TextLines) > 0 {
		// Fields the plain text leaves out may be in the HTML.
		for k, v := range FieldsOf(m.HTMLLines) {
			if _, ok := f[k]; !ok {
				f[k] = v
			}
		}
	}
	plan, hasPlan := f.Value(acronisPlanLabels...)
	workload, hasWorkload := f.Value(acronisWorkloadLabels...)
	if _, own := f.Get(acronisOwnLabels...); !own && !mailNames(m, "acronis") {
		return r, unreadable("not an Acronis notification: no protection plan or workload named, and no mention of Acronis")
	}

	// The headline: the subject before its colon, else the body's first
	// line that reads as a status.
	headline := ""
	if i := strings.Index(m.Subject, ": "); i > 0 {
		headline = m.Subject[:i]
	}
	status, _ := f.Value(acronisStatusLabels...)
	r.Status = firstStatus(StatusOf, status, statusLine(lines, 4, labelLine), headline)
	if r.Status == Unknown {
		return r, unreadable("the Acronis notification states no status (no Status field, and neither subject nor headline says succeeded, warnings or failed)")
	}

	// The job is the protection plan; the subject names it after the workload.
	switch {
	case hasPlan:
		r.JobName = plan
	case headline != "":
		rest := strings.TrimSpace(m.Subject[len(headline)+1:])
		if hasWorkload && strings.HasPrefix(rest, workload+" - ") {
			rest = strings.TrimPrefix(rest, workload+" - ")
		}
		r.JobName = rest
	default:
		r.JobName = workload
	}

	r.readRun(m, f.Value, acronisStartLabels, acronisEndLabels, acronisDurationLabels)
	r.readSize(m, f.Value, acronisSizeLabels)

	// The first error or warning: the first item under its heading, else
	// a labelled "Error: text" line.
	r.Summary = usualSummary(m, f, r.Status, acronisProblemHeadings, acronisProblemLabels)
	activity, _ := f.Value(acronisActivityLabels...)
	if acronisIntegrityRe.MatchString(r.Summary) ||
		(r.Status != OK && acronisValidationRe.MatchString(activity+" "+headline)) {
		r.IntegrityFailed = true
	}
	if r.Status == OK && !r.IntegrityFailed {
		r.Summary = ""
	}
	return r, nil
}
