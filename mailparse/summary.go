package mailparse

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Summaries: a mail's first error or warning text, as a parser finds it
// (under a heading, in a labelled value, in a list) and cleans it (without
// the bullet, number or label printed in front of it).

var (
	// summaryPrefixRe is what a summary loses in front: list bullets and a
	// bare severity word ("Error: ", "- ", "• ", "WARNING - ").
	summaryPrefixRe = regexp.MustCompile(`(?i)^(?:[-–—•·*●▪◦>]+\s*|\d{1,2}[.)]\s+)?(?:(?:error|errors|warning|warnings|warn|fatal|critical|fehler|warnung|erreur|avertissement|failure|failed|alert)\s*(?::|-|–)\s+|\[(?:error|warning|warn|fatal|critical)\]\s*)?`)
)

// summaryPrefixes are the labels and list bullets a summary is printed
// after; summaryText drops them.
var summaryPrefixes = []string{
	"error:", "errors:", "warning:", "warnings:", "failed:", "failure:", "reason:", "details:",
	"error message:", "fehler:", "warnung:", "erreur :", "erreur:", "avertissement :",
	"avertissement:", "fout:", "waarschuwing:", "errore:", "avviso:", "advertencia:",
}

// summaryText is s as a summary: without a leading list bullet ("- ",
// "• ", "* ", "1. ") or label ("Error: ", "Reason: ", "Fehler: "), taken
// off up to three times; "" when nothing else is left. It is what the
// veeam, acronis, datto, cove and synology parsers clean with; cleanSummary
// (the other parsers') takes off other bullets and labels, see there.
func summaryText(s string) string {
	s = clean(s)
	for range 3 {
		before := s
		s = strings.TrimLeft(s, "-•*·–—> ")
		if i := strings.IndexAny(s, ".)"); i > 0 && i <= 3 && i+1 < len(s) && s[i+1] == ' ' && isDigits(s[:i]) {
			s = s[i+2:]
		}
		low := strings.ToLower(s)
		for _, p := range summaryPrefixes {
			if strings.HasPrefix(low, p) {
				s = strings.TrimSpace(s[len(p):])
				break
			}
		}
		if s == before {
			break
		}
	}
	return s
}

// isDigits reports whether s is one or more ASCII digits.
func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// cleanSummary is s as a summary: without a leading bullet or number and
// a bare severity word (summaryPrefixRe: "- ", "● ", "Error: ", "WARNING -
// ", "[error] "), taken off up to three times but never down to "". It
// differs from summaryText: it takes off "● " and "WARNING - " but not
// "Reason: " or "Details: ", and keeps a line that is all prefix.
func cleanSummary(s string) string {
	s = clean(s)
	for i := 0; i < 3; i++ {
		t := strings.TrimSpace(summaryPrefixRe.ReplaceAllString(s, ""))
		if t == s || t == "" {
			break
		}
		s = t
	}
	return s
}

// isText reports whether s reads as a message rather than a number, a
// date or a placeholder: it has at least three letters.
func isText(s string) bool {
	if emptyValue(s) {
		return false
	}
	n := 0
	for _, r := range s {
		if unicode.IsLetter(r) {
			if n++; n >= 3 {
				return true
			}
		}
	}
	return false
}

// firstAfter returns the first line after lines[i] that gives a summary
// (summaryText), joined with its continuation in a wrapped text body; ""
// when a table row or the end comes first.
func firstAfter(m *Message, lines []string, i int) string {
	for _, l := range lines[min(max(i+1, 0), len(lines)):] {
		if strings.IndexByte(l, '\t') >= 0 {
			return ""
		}
		if s := summaryText(wrapped(m, l)); s != "" {
			return s
		}
	}
	return ""
}

// firstSummaryLine returns the first line of lines that reads as text
// (isText) once cleaned by cleanSummary, its cells joined by spaces; ""
// when none does.
func firstSummaryLine(lines []string) string {
	for _, l := range lines {
		if s := cleanSummary(strings.ReplaceAll(l, "\t", " ")); isText(s) {
			return s
		}
	}
	return ""
}

// isMailFooter reports whether line is a mail's footer rather than content.
func isMailFooter(line string) bool {
	line = strings.TrimSpace(trimBullets(line))
	var buf [32]byte
	n := copy(buf[:], line)
	for i := range n {
		buf[i] = lowerASCII(buf[i])
	}
	head := string(buf[:n])
	for _, p := range mailFooterStarts {
		if strings.HasPrefix(head, p) {
			return true
		}
	}
	return false
}

// mailFooterStarts are the lowercase starts of a mail's footer lines: the
// notice, the signature. (A list, not an expression: it is tried on every
// line of every mail.)
var mailFooterStarts = []string{
	"this is an automated", "this report was generated", "this email was", "this e-mail was", "this message was",
	"this notification was", "this alert was", "you are receiving", "you received this", "to change the notification",
	"to change notification", "notification settings", "manage notifications", "please do not reply", "do not reply",
	"for more information, open", "click here", "view in", "view the", "go to the console", "sincerely", "regards",
	"best regards", "copyright", "©",
}

// lowerASCII lowercases an ASCII letter and leaves any other byte.
func lowerASCII(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// trimBullets removes the list bullets at the start of s ("-", "•", "*",
// ">" and the like) and the spaces after them.
func trimBullets(s string) string {
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !strings.ContainsRune("-–—•·*●▪◦>", r) {
			break
		}
		i += n
	}
	if i == 0 {
		return s
	}
	return strings.TrimLeft(s[i:], " \t\r\n\f")
}

// usualSummary returns the summary from where most reports print it: the
// first item under the first of headings in m.Lines (firstAfter), else
// problemSummary's.
func usualSummary(m *Message, f Fields, st Status, headings, labels []string) string {
	if i := headingAt(m.Lines, headings...); i >= 0 {
		if s := firstAfter(m, m.Lines, i); s != "" {
			return s
		}
	}
	return problemSummary(m.Lines, f, st, labels)
}

// problemSummary returns, when st is not OK, the message of the first
// failing row of a table in lines (problemRow: several machines or data
// sources, the first one's problem), else the value of the first of labels
// that says something (f.Value, summaryText); "" when neither gives one.
func problemSummary(lines []string, f Fields, st Status, labels []string) string {
	if st != OK {
		if s := problemRow(lines, 0); s != "" {
			return s
		}
	}
	if v, ok := f.Value(labels...); ok {
		return summaryText(v)
	}
	return ""
}

// sectionSummary returns the first line that reads as text
// (firstSummaryLine) in the section under the first of headings that has
// one, each section ending where stop says; "" when none has one.
func sectionSummary(lines []string, stop func(string) bool, headings ...string) string {
	for _, h := range headings {
		if s := firstSummaryLine(Section(lines, h, stop)); s != "" {
			return s
		}
	}
	return ""
}

// labelSummary returns the value of the first of labels that f holds as a
// summary (cleanSummary), "" when there is none or it says nothing
// (Fields.stated).
func labelSummary(f Fields, labels ...string) string {
	if v, ok := f.stated(labels...); ok {
		return cleanSummary(v)
	}
	return ""
}
