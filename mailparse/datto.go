package mailparse

import (
	"regexp"
	"strings"
)

func init() { register("datto", dattoParser{}) }

// dattoParser reads the alerts of Datto BCDR appliances (SIRIS, ALTO) and
// Datto Endpoint Backup: backup results ("Backup Successful", "Backup
// Completed with Warnings", "Backup Failed") and verification results
// ("Screenshot Verification Failed", "Local Verification Failed"). The
// protected machine is the job; the subject is "Datto Alert: <headline> -
// <machine> on <appliance>". A failed screenshot or local verification
// keeps the alert's own status and sets IntegrityFailed.
type dattoParser struct{}

var (
	dattoSubjectRe = regexp.MustCompile(`(?i)^(?:datto(?:\s+\w+)?\s+alert\s*:\s*)?(.+?)\s+[-–]\s+(.+?)(?:\s+on\s+(\S+))?$`)
	dattoJobLabels = []string{"protected machine", "protected system", "agent", "asset", "protected asset", "machine", "endpoint"}
	dattoStart     = []string{"backup started", "started", "start time", "verification started", "screenshot started"}
	dattoEnd       = []string{"backup completed", "backup failed at", "backup ended", "completed", "finished", "failed at", "end time", "verification completed", "screenshot taken", "screenshot completed"}
	dattoDur       = []string{"duration", "backup duration"}
	dattoSize      = []string{"data transferred", "transferred", "backup size", "data backed up"}
	dattoHeadings  = []string{"error", "errors", "warning", "warnings", "details", "reason", "error details", "screenshot result", "verification result", "failure reason"}
	// dattoVerifyRe names a verification: screenshot, local or boot.
	dattoVerifyRe = regexp.MustCompile(`(?i)screenshot|verification|boot test|integrity`)
)

// Parse reads a Datto alert.
func (dattoParser) Parse(m *Message) (Result, error) {
	r := noResult()
	lines := m.Lines
	f := FieldsOf(lines)
	machine, hasMachine := f.Value(dattoJobLabels...)
	if !hasMachine && !mailNames(m, "datto") {
		return r, unreadable("not a Datto alert: no protected machine named and no mention of Datto")
	}
	subj := dattoSubjectRe.FindStringSubmatch(m.Subject)

	// The alert's headline: the Status field, the subject's, or the body's
	// first line that reads as one.
	phrase := ""
	if v, ok := f.Value("status", "backup status", "result"); ok && StatusOf(v) != Unknown {
		phrase = v
	}
	if phrase == "" && subj != nil && StatusOf(subj[1]) != Unknown {
		phrase = subj[1]
	}
	if phrase == "" {
		phrase = statusLine(lines, 4, labelLine)
	}
	r.Status = StatusOf(phrase)
	if r.Status == Unknown {
		return r, unreadable("the Datto alert states no status (no Status field, and the subject and headline say neither successful, warnings nor failed)")
	}

	r.JobName = fieldOrGroup(machine, hasMachine, subj, 2)

	r.readRun(m, f.Value, dattoStart, dattoEnd, dattoDur)
	r.readSize(m, f.Value, dattoSize)

	// A verification failed: the alert is about one, or a field reports one.
	if dattoVerifyRe.MatchString(phrase) && r.Status != OK {
		r.IntegrityFailed = true
	}
	for _, l := range []string{"screenshot verification", "screenshot", "local verification", "verification", "boot verification"} {
		if v, ok := f.Value(l); ok && StatusOf(v) == Failed {
			r.IntegrityFailed = true
		}
	}

	r.Summary = usualSummary(m, f, r.Status, dattoHeadings, dattoHeadings)
	if r.Summary == "" && (r.Status != OK || r.IntegrityFailed) {
		r.Summary = dattoSentence(lines)
	}
	if r.Status == OK && !r.IntegrityFailed {
		r.Summary = ""
	}
	return r, nil
}

// dattoSentence returns the sentence an alert prints under its headline
// ("The screenshot verification of X failed: the machine booted, but
// ..."), "" when the line after the headline is a field or a table row.
// Alerts without an Error or Details heading say what failed there.
func dattoSentence(lines []string) string {
	for i, l := range lines {
		if i >= 4 {
			break
		}
		if strings.IndexByte(l, '\t') >= 0 || StatusOf(l) == Unknown || dattoFieldLine(l) || i+1 >= len(lines) {
			continue
		}
		next := lines[i+1]
		if strings.IndexByte(next, '\t') >= 0 || dattoFieldLine(next) || isMailFooter(next) {
			return ""
		}
		if s := summaryText(next); isText(s) {
			return s
		}
		return ""
	}
	return ""
}

// dattoFieldLine reports whether l is a "Label: value" field: a label of
// at most four words before ": ".
func dattoFieldLine(l string) bool {
	i := strings.Index(l, ": ")
	return i > 0 && len(strings.Fields(l[:i])) <= 4
}
