package mailparse

import (
	"regexp"
	"strings"
)

// Integrity: whether a mail says a verification, integrity check,
// screenshot or recovery test failed.

var (
	// integrityLowRe finds a failed verification, integrity check,
	// screenshot or recovery test in a lowercased line (without case
	// folding, which made it the costliest step of reading a long mail).
	integrityLowRe    = regexp.MustCompile(`(?:\b(?:verif\w*|integrity|consistency check\w*|screenshot\w*|sandbox\w*|restore test\w*|test restore\w*|recovery test\w*|test drill\w*|boot test\w*|health monitor)\b[^.;:]{0,60}?\b(?:fail\w*|miscompar\w*|mismatch\w*|corrupt\w*|unsuccessful|did not (?:pass|succeed|boot|complete)|not pass\w*|errors? (?:found|detected|occurred|encountered)|detected (?:issues|problems|errors))|\b(?:fail\w*|unable|could not|cannot|can't)\b[^.;:]{0,30}?\b(?:to )?(?:verif\w*|validate)\b|\b(?:verif\w*|integrity check|screenshot verification|sandbox restore|restore test|recovery test)\w*\s*(?::|-|–)\s*(?:fail\w*|error\w*|corrupt\w*))`)
	zeroProblemsRe    = regexp.MustCompile(`(?i)\b(?:0|no|zero|without)\s+(?:errors?|miscompares?|mismatches?|failures?|issues?|problems?)\b`)
	zeroProblemsLowRe = regexp.MustCompile(`\b(?:0|no|zero|without)\s+(?:errors?|miscompares?|mismatches?|failures?|issues?|problems?)\b`)
	integrityLabelRe  = regexp.MustCompile(`(?i)verif|integrity|consistency|screenshot|sandbox|restore test|test restore|recovery test|test drill|boot test|health monitor|überprüfung|vérification`)
	// integrityLocalRe is integrityLowRe's German, French and Dutch
	// sentences: "Screenshot-Überprüfung fehlgeschlagen", "échec de la
	// vérification", "la vérification de l'intégrité a échoué".
	integrityLocalRe = regexp.MustCompile(`(?:überprüfung|verifizierung|prüfung|wiederherstellungstest|vérification|intégrité|test de restauration|test de récupération|verificatie|hersteltest)\S*[^.;]{0,60}?(?:fehlgeschlagen|nicht bestanden|beschädigt|échoué|échec|endommag|mislukt|beschadigd)|(?:échec|fehler)\s+(?:de la |der |bei der )?(?:vérification|überprüfung|verifizierung|prüfung)`)
)

// integrityWords are the words without one of which neither
// integrityLowRe nor integrityLabelRe can match, lowercased: a line holding
// none of them is passed over without running the expressions.
var integrityWords = []string{"verif", "integrity", "consistency", "screenshot", "sandbox", "restore test",
	"test restore", "recovery test", "test drill", "boot test", "health monitor", "validate", "überprüfung", "vérification",
	"prüfung", "wiederherstellungstest", "intégrité", "test de restauration", "test de récupération", "hersteltest"}

// mayTellIntegrity reports whether s holds one of integrityWords, in any
// case, without lowercasing s (it runs on every line of a mail).
func mayTellIntegrity(s string) bool { return integrityWordSet.in(s) }

var integrityWordSet = newWordSet(integrityWords)

// wordSet finds any of a few lowercase words in a text, in any case,
// without lowercasing the text: the cheap test that spares a
// case-folding expression the lines it cannot match.
type wordSet struct {
	byFirst [256][]string // the words by their first byte
}

// newWordSet makes the set of words (lowercase, each starting with an
// ASCII letter or a multi-byte character).
func newWordSet(words []string) *wordSet {
	ws := &wordSet{}
	for _, w := range words {
		ws.byFirst[w[0]] = append(ws.byFirst[w[0]], w)
	}
	return ws
}

// in reports whether s holds one of the words in any case. An ASCII line
// is lowercased into a buffer on the stack and compared there; other text
// is compared with case folding.
func (ws *wordSet) in(s string) bool {
	var buf [512]byte
	if len(s) <= len(buf) {
		ascii := true
		for i := 0; i < len(s); i++ {
			c := s[i]
			if c >= 0x80 {
				ascii = false
				break
			}
			buf[i] = lowerASCII(c)
		}
		if ascii {
			low := buf[:len(s)]
			for i, c := range low {
				for _, w := range ws.byFirst[c] {
					if len(low)-i >= len(w) && string(low[i:i+len(w)]) == w {
						return true
					}
				}
			}
			return false
		}
	}
	for i := 0; i < len(s); i++ {
		for _, w := range ws.byFirst[lowerASCII(s[i])] {
			if len(s)-i >= len(w) && strings.EqualFold(s[i:i+len(w)], w) {
				return true
			}
		}
	}
	return false
}

// integrityFailedIn reports whether the subject or a line says a
// verification, integrity check or recovery test failed, either in words
// ("Screenshot verification failed") or as a labelled value
// ("Verification: Failed", "Verify\tFailed").
func integrityFailedIn(subject string, lines []string) bool {
	if lineSaysIntegrityFailed(subject) {
		return true
	}
	for _, l := range lines {
		if !mayTellIntegrity(l) {
			continue
		}
		if strings.IndexByte(l, '\t') >= 0 {
			cells := Cells(l)
			for i := 0; i+1 < len(cells); i++ {
				if integrityLabelRe.MatchString(cells[i]) && len(cells[i]) <= maxLabel && StatusOf(cells[i+1]) == Failed && !zeroProblemsRe.MatchString(cells[i+1]) {
					return true
				}
			}
		}
		if lineSaysIntegrityFailed(l) {
			return true
		}
	}
	return integrityColumnFailed(lines)
}

// lineSaysIntegrityFailed reports whether l says a verification, integrity
// check or recovery test failed, as a labelled value or in words.
func lineSaysIntegrityFailed(l string) bool {
	if !mayTellIntegrity(l) {
		return false // most lines: no copy made
	}
	low := strings.ToLower(l)
	if i := strings.Index(l, ": "); i > 0 && i <= maxLabel && integrityLabelRe.MatchString(l[:i]) {
		v := l[i+2:]
		if StatusOf(v) == Failed && !zeroProblemsRe.MatchString(v) {
			return true
		}
	}
	// Every match of the expression lies near one of the words: look only
	// there, so a long line costs its words, not its length.
	for from := 0; from < len(low); {
		at, n := nextIntegrityWord(low, from)
		if at < 0 {
			return false
		}
		start := max(0, at-48)
		for start > 0 && isWordByte(low[start-1]) {
			start-- // a window never starts inside a word
		}
		end := min(len(low), at+n+160)
		for end < len(low) && isWordByte(low[end]) {
			end++
		}
		win := low[start:end]
		if loc := integrityLowRe.FindStringIndex(win); loc != nil && !zeroProblemsLowRe.MatchString(low[start+loc[0]:]) {
			return true
		}
		if integrityLocalRe.MatchString(win) {
			return true
		}
		from = at + n
	}
	return false
}

// nextIntegrityWord returns where the first of integrityWords at or after
// from begins in low, and its length; -1 when there is none.
func nextIntegrityWord(low string, from int) (int, int) {
	at, n := -1, 0
	for _, w := range integrityWords {
		if i := strings.Index(low[from:], w); i >= 0 && (at < 0 || from+i < at) {
			at, n = from+i, len(w)
		}
	}
	return at, n
}

// integrityColumnFailed finds a table with a verification column (a header
// cell naming one) and reports whether a row below it says it failed.
func integrityColumnFailed(lines []string) bool {
	col := -1
	for _, l := range lines {
		cells := Cells(l)
		if len(cells) < 3 { // label/value rows are not a table
			col = -1
			continue
		}
		if col < 0 || col >= len(cells) {
			col = -1
			if !mayTellIntegrity(l) {
				continue
			}
			for i, c := range cells {
				if len(c) <= maxLabel && integrityLabelRe.MatchString(c) && StatusOf(c) == Unknown {
					col = i
					break
				}
			}
			continue
		}
		if StatusOf(cells[col]) == Failed && !zeroProblemsRe.MatchString(cells[col]) {
			return true
		}
	}
	return false
}

// fieldsSayFailed reports whether one of labels holds a failure.
func fieldsSayFailed(f Fields, labels []string) bool {
	for _, l := range labels {
		if v, ok := f[l]; ok && StatusOf(v) == Failed && !zeroProblemsRe.MatchString(v) {
			return true
		}
	}
	return false
}
