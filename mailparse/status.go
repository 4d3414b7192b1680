package mailparse

import (
	"regexp"
	"strings"
)

// negatedRe matches phrases that name a problem only to deny it ("no
// errors", "0 warnings", "without errors", "keine Fehler"): StatusOf reads
// the rest of the phrase.
var negatedRe = regexp.MustCompile(`(?i)\b(?:no|0|without|ohne|keine|sans|geen)\s+(?:errors?|warnings?|failures?|issues?|exceptions?|fehler|warnungen|erreurs?|avertissements?|fouten|waarschuwingen)\b`)

// Status is a run's result as a mail states it.
type Status uint8

// Statuses. Unknown means the mail did not say, and makes it unreadable.
const (
	Unknown Status = iota
	OK
	Warn
	Failed
)

// String returns the Report API's word for s ("ok", "warn", "failed"), or
// "unknown".
func (s Status) String() string {
	switch s {
	case OK:
		return "ok"
	case Warn:
		return "warn"
	case Failed:
		return "failed"
	}
	return "unknown"
}

// Vocabulary common to the products, in the order it is tried: a "warning"
// qualifier wins over the success word it qualifies ("Succeeded with
// warnings", "Completed with errors", "partially completed"), and failure
// words win over success words ("Backup Failed", "Unsuccessful").
var (
	warnWords = []string{
		"with warning", "with exception", "with error", "partially", "partial success",
		"partly", "warning", "warnung", "avertissement", "waarschuwing", "advertencia",
		"avviso", "exceptions", "teilweise", "partiellement", "gedeeltelijk", "parcialmente",
		"parzialmente", "avvisi", "aviso", "mit fehler", "mit warnung", "avec erreur",
		"avec des erreur", "met fout", "met waarschuwing", "con error", "con avvis", "com erro",
	}
	failWords = []string{
		"fail", "error", "abort", "unsuccessful", "not completed", "did not complete",
		"cancel", "fehler", "fehlgeschlagen", "échec", "echec", "échoué", "mislukt",
		"fallid", "fallo", "errore", "non riuscit", "crash", "missed", "stopped",
		"terminated", "killed", "critical", "abgebrochen", "annulé", "geannuleerd", "fallit",
		"falhou", "falha",
	}
	okWords = []string{
		"success", "succeeded", "successful", "completed", "complete", "ok", "passed",
		"finished", "done", "erfolgreich", "abgeschlossen", "réussi", "reussi", "terminé",
		"geslaagd", "voltooid", "correcto", "completado", "riuscit", "completato",
		"bem-sucedid", "concluído", "sucesso",
	}
)

// StatusOf reads a status phrase ("Succeeded with warnings", "Backup
// Failed", "Completed") with the vocabulary the products share. It returns
// Unknown when s says none of them.
func StatusOf(s string) Status {
	low := negatedRe.ReplaceAllString(strings.ToLower(s), " ")
	for _, w := range warnWords {
		if strings.Contains(low, w) {
			return Warn
		}
	}
	for _, w := range failWords {
		if strings.Contains(low, w) {
			return Failed
		}
	}
	for _, w := range okWords {
		if containsWord(low, w) {
			return OK
		}
	}
	return Unknown
}

// firstStatus returns the status that of reads in the first of texts that
// says one (empty texts are passed over), Unknown when none does: a
// parser's places for a status, in the order it trusts them.
func firstStatus(of func(string) Status, texts ...string) Status {
	for _, t := range texts {
		if t == "" {
			continue
		}
		if st := of(t); st != Unknown {
			return st
		}
	}
	return Unknown
}

// containsWord reports whether w occurs in s with no letter right before
// or after it ("ok" in "Status: OK" but not in "book").
func containsWord(s, w string) bool {
	for i := 0; ; {
		j := strings.Index(s[i:], w)
		if j < 0 {
			return false
		}
		j += i
		end := j + len(w)
		if (j == 0 || !isLetter(s[j-1])) && (end == len(s) || !isLetter(s[end]) || len(w) > 3) {
			return true
		}
		i = j + 1
	}
}

// isLetter reports whether c is an ASCII letter or part of a multi-byte
// character.
func isLetter(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// statusLine returns the first of the first n lines that is not a table
// row, is not one skip picks out, and says a status (StatusOf); "" when
// none does.
func statusLine(lines []string, n int, skip func(string) bool) string {
	for _, l := range lines[:min(max(n, 0), len(lines))] {
		if strings.IndexByte(l, '\t') < 0 && !skip(l) && StatusOf(l) != Unknown {
			return l
		}
	}
	return ""
}
