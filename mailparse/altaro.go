package mailparse

import (
	"regexp"
	"strings"
)

// The altaro parser reads Hornetsecurity VM Backup (formerly Altaro VM
// Backup) notifications: a subject `[Hornetsecurity VM Backup] Backup
// Successful - <host> (<n> VMs)`, a headline, labelled values (Host,
// Operation, Result, Start Time, End Time, Duration, Total Transfer Size),
// a table of the VMs (result, transfer size, details) and the VMs' errors
// under it. The operation may be a backup, an offsite copy, or a sandbox
// restore test / backup health check, whose failure is an integrity
// failure. Dates are printed day-first in most locales.

func init() { register("altaro", altaroParser{}) }

// altaroParser reads Hornetsecurity / Altaro VM Backup notifications (see above).
type altaroParser struct{}

var (
	altaroSubjectRe = regexp.MustCompile(`(?i)^\s*(?:\[[^\]]*\]\s*)?(.+?)\s+[-–—]\s+(.+?)(?:\s*\(\s*\d+\s*(?:vms?|virtual machines?|vm\(s\))\s*\))?\s*$`)

	altaroHostLabels   = []string{"host", "hyper-v host", "vmware host", "host name", "hostname", "server", "hôte", "hote"}
	altaroStatusLabels = []string{"result", "status", "operation result", "ergebnis", "résultat", "resultat", "resultado", "risultato"}
	altaroOpLabels     = []string{"operation", "operation type", "vorgang", "opération", "operación"}
	altaroStartLabels  = []string{"start time", "started", "start", "startzeit", "heure de début", "hora de inicio"}
	altaroEndLabels    = []string{"end time", "finished", "end", "completed", "endzeit", "heure de fin", "hora de finalización"}
	altaroDurLabels    = []string{"duration", "dauer", "durée", "duración"}
	altaroSizeLabels   = []string{
		"total transfer size", "transfer size", "total transferred", "data transferred", "transferred",
		"total size transferred", "gesamte übertragungsgröße", "gesamtübertragungsgröße", "übertragungsgröße",
		"übertragene datenmenge", "taille totale du transfert", "taille du transfert", "données transférées",
		"tamaño de transferencia",
	}

	altaroVMKeyRe   = regexp.MustCompile(`(?i)^(?:vm name|vm|virtual machine|vm-name|nom de la vm|nombre de vm)$`)
	altaroVMResult  = regexp.MustCompile(`(?i)^(?:result|status|ergebnis|résultat|resultado)$`)
	altaroVMDetails = regexp.MustCompile(`(?i)^(?:details?|error|errors|message|reason|notes?|détails|detalles)$`)
	altaroVMSize    = regexp.MustCompile(`(?i)^(?:transfer size|transferred|data transferred|size|übertragungsgröße|übertragen|taille du transfert|transféré)`)
	altaroTestOpRe  = regexp.MustCompile(`(?i)sandbox|restore test|test restore|test drill|verification|verify|health monitor|boot test`)
)

// Parse reads a Hornetsecurity / Altaro VM Backup notification.
func (altaroParser) Parse(m *Message) (Result, error) {
	r := noResult()
	lines := m.Lines
	f := FieldsOf(lines)
	isAltaro := namesProduct(m, "altaro", "hornetsecurity")

	subjectHead, subjectHost := "", ""
	if isAltaro {
		subjectHead, subjectHost = subjectPair(altaroSubjectRe, m.Subject)
	}

	if v, ok := f.stated(altaroHostLabels...); ok {
		r.JobName = v
	} else {
		r.JobName = subjectHost
	}

	if !isAltaro {
		return r, unreadable("not a Hornetsecurity/Altaro VM Backup notification: the mail does not name the product")
	}
	// The Result line, the subject, the headline under the product's name
	// ("Backup Failed").
	result, _ := f.Get(altaroStatusLabels...)
	r.Status = firstStatus(StatusOf, result, subjectHead,
		statusLine(lines, 5, func(l string) bool { return strings.Contains(strings.ToLower(l), "vm backup") }))
	if r.Status == Unknown {
		return r, unreadable("no VM Backup result found: no Result line and no result in the subject or headline")
	}

	r.readRun(m, f.Get, altaroStartLabels, altaroEndLabels, altaroDurLabels)

	rows, cols := findTable(lines, altaroVMKeyRe, map[string]*regexp.Regexp{
		"result": altaroVMResult, "details": altaroVMDetails, "size": altaroVMSize,
	})
	r.SizeBytes = sizeOrColumn(m, f, altaroSizeLabels, rows, cols["size"]) // no total: the VMs' sum

	// A failed sandbox restore test, verification or health check is an
	// integrity failure; so is any line that says one failed.
	op, _ := f.Get(altaroOpLabels...)
	r.IntegrityFailed = integrityFailedIn(m.Subject, lines) ||
		(r.Status == Failed && (altaroTestOpRe.MatchString(op) || altaroTestOpRe.MatchString(subjectHead)))

	if r.Status != OK || r.IntegrityFailed {
		r.Summary = altaroSummary(lines, rows, cols)
		if s, ok := objectsSummary(altaroObjects(lines, rows, cols), r.Summary); ok {
			r.Summary = s
		}
	}
	return r, nil
}

// altaroObjects returns the VMs as objects: the rows of the VM table with
// their result and details (the "VM: text" paragraph under the table when
// a row has none), or, in a mail without the table, the "VM: text" lines
// under its Errors heading (failed) and Warnings heading (warned).
func altaroObjects(lines []string, rows [][]string, cols map[string]int) []object {
	if len(rows) == 0 {
		return append(namedLineObjects(lines, altaroListEnd, Failed, "errors", "error", "fehler", "erreurs"),
			namedLineObjects(lines, altaroListEnd, Warn, "warnings", "warning", "warnungen", "avertissements")...)
	}
	return rowObjects(rows, cols, "result", "details", StatusOf, lines)
}

// altaroListEnd ends an Errors or Warnings list: the footer or the next
// list's heading.
var altaroListEnd = footerOrHeading("errors", "error", "warnings", "warning", "fehler", "warnungen", "erreurs", "avertissements")

// altaroSummary returns the first error under the VM table, else the
// details of the first VM that did not succeed, else an Errors list.
func altaroSummary(lines []string, rows [][]string, cols map[string]int) string {
	if len(rows) > 0 {
		// The paragraphs after the table's last row.
		last := rows[len(rows)-1]
		after := -1
		for i, l := range lines {
			if strings.Join(last, "\t") == l {
				after = i + 1
			}
		}
		for i := after; i >= 0 && i < len(lines); i++ {
			l := lines[i]
			if isMailFooter(l) {
				break
			}
			if strings.IndexByte(l, '\t') < 0 {
				if s := cleanSummary(l); s != "" {
					return s
				}
			}
		}
		for _, row := range rows {
			d := cellAt(row, cols["details"])
			if d != "" && StatusOf(cellAt(row, cols["result"])) != OK {
				return cleanSummary(d)
			}
		}
		for _, row := range rows {
			if d := cellAt(row, cols["details"]); d != "" {
				return cleanSummary(d)
			}
		}
	}
	return sectionSummary(lines, isMailFooter, "errors", "error", "warnings", "warning", "details", "fehler", "warnungen", "erreurs")
}
