package mailparse

import "strings"

// maxLabel is the longest text read as a field's label.
const maxLabel = 48

// Fields maps the labelled values of a mail's lines, first one wins:
// "Label: value" lines, "Label\tvalue" table rows and rows of several
// label/value pairs ("Success\t3\tStart time\t22:00:07"). Keys are
// lowercased with any trailing colon removed.
type Fields map[string]string

// FieldsOf collects the labelled values of lines.
func FieldsOf(lines []string) Fields {
	f := Fields{}
	for _, line := range lines {
		if strings.IndexByte(line, '\t') >= 0 {
			cells := strings.Split(line, "\t")
			for i := 0; i+1 < len(cells); i += 2 {
				f.add(cells[i], cells[i+1])
			}
			continue
		}
		if i := strings.Index(line, ": "); i > 0 {
			f.add(line[:i], line[i+2:])
		} else if strings.HasSuffix(line, ":") {
			continue // a heading: its value, if any, is on the lines below
		}
	}
	return f
}

func (f Fields) add(label, value string) {
	label = strings.ToLower(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(label), ":")))
	if label == "" || len(label) > maxLabel {
		return
	}
	if _, ok := f[label]; !ok {
		f[label] = strings.TrimSpace(value)
	}
}

// Get returns the value of the first of labels that is present (labels
// are matched lowercased), and false when none is.
func (f Fields) Get(labels ...string) (string, bool) {
	for _, l := range labels {
		if v, ok := f[strings.ToLower(l)]; ok {
			return v, true
		}
	}
	return "", false
}

// Section returns the lines after the first line that reads heading
// (case-insensitively, a trailing colon ignored) up to the first line for
// which stop returns true (or the end). It returns nil when no line reads
// heading.
func Section(lines []string, heading string, stop func(string) bool) []string {
	for i, l := range lines {
		if strings.EqualFold(strings.TrimSuffix(strings.TrimSpace(l), ":"), heading) {
			j := i + 1
			for j < len(lines) && (stop == nil || !stop(lines[j])) {
				j++
			}
			return lines[i+1 : j]
		}
	}
	return nil
}

// Cells splits a rendered table row into its cells.
func Cells(line string) []string {
	return strings.Split(line, "\t")
}

// Value returns the value of the first of labels that is present and says
// something: a placeholder ("-", "—", "n/a", "none") counts as absent.
func (f Fields) Value(labels ...string) (string, bool) {
	for _, l := range labels {
		if v, ok := f[strings.ToLower(l)]; ok && !placeholder(v) {
			return v, true
		}
	}
	return "", false
}

// placeholder reports whether v is a value products print for "nothing".
func placeholder(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "-", "--", "—", "–", "n/a", "na", "none", "null", "unknown", "(none)":
		return true
	}
	return false
}

// headingAt returns the index of the first line that reads one of names
// (case-insensitively, spaces and a trailing colon ignored, as in "Errors",
// "Warnings:" or "Erreur :"), or -1.
func headingAt(lines []string, names ...string) int {
	for i, l := range lines {
		if strings.IndexByte(l, '\t') >= 0 {
			continue
		}
		l = strings.TrimSpace(strings.TrimRight(strings.TrimSpace(l), ":："))
		for _, n := range names {
			if strings.EqualFold(l, n) {
				return i
			}
		}
	}
	return -1
}

// summaryPrefixes are the labels and list bullets a summary is printed
// after; summaryText drops them.
var summaryPrefixes = []string{
	"error:", "errors:", "warning:", "warnings:", "failed:", "failure:", "reason:", "details:",
	"error message:", "fehler:", "warnung:", "erreur :", "erreur:", "avertissement :",
	"avertissement:", "fout:", "waarschuwing:", "errore:", "avviso:", "advertencia:",
}

// summaryText is s as a summary: without a leading list bullet ("- ",
// "• ", "* ", "1. ") or label ("Error: ", "Warning: ", "Fehler: ").
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

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// sizeValue reads a size with ParseSize and returns -1 when v holds none.
func sizeValue(v string) int64 {
	if n, ok := ParseSize(v); ok {
		return n
	}
	return -1
}

// mailNames reports whether m's sender, subject or first 40 lines of
// either body name word (lowercase) as a word of its own: "cove" is not in
// "recovery".
func mailNames(m *Message, word string) bool {
	if m == nil {
		return false
	}
	if hasWord(strings.ToLower(m.From+" "+m.Subject), word) {
		return true
	}
	for _, lines := range [][]string{m.Lines, m.HTMLLines} {
		for i, l := range lines {
			if i >= 40 {
				break
			}
			if hasWord(strings.ToLower(l), word) {
				return true
			}
		}
	}
	return false
}

// hasWord reports whether w occurs in s with no letter or digit on either side.
func hasWord(s, w string) bool {
	if w == "" {
		return false
	}
	for i := 0; i+len(w) <= len(s); {
		j := strings.Index(s[i:], w)
		if j < 0 {
			return false
		}
		j += i
		end := j + len(w)
		if (j == 0 || !isWordByte(s[j-1])) && (end == len(s) || !isWordByte(s[end])) {
			return true
		}
		i = j + 1
	}
	return false
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

// problemRow reads the first table of lines (from index from) whose header
// row (three cells or more) has a status column, and returns the message of
// its first row whose status is a warning or a failure: the cell under a
// Details, Message, Error, Reason or Note header (or a cell past the
// header's last). It returns "" when no row reports a problem with a
// message.
func problemRow(lines []string, from int) string {
	statusCol, msgCol, width := -1, -1, 0
	for i := max(from, 0); i < len(lines); i++ {
		c := Cells(lines[i])
		if statusCol < 0 {
			if len(c) < 3 { // a label and its value, not a table's header
				continue
			}
			for j, cell := range c {
				switch strings.ToLower(strings.TrimSpace(cell)) {
				case "status", "result", "state", "ergebnis", "statut", "resultaat", "estado", "stato":
					if statusCol < 0 {
						statusCol = j
					}
				case "details", "detail", "message", "messages", "error", "reason", "description", "note",
					"notes", "comment", "info", "fehler", "erreur", "meldung", "détails", "fout":
					msgCol = j
				}
			}
			if statusCol >= 0 && statusCol == msgCol {
				msgCol = -1
			}
			width = len(c)
			continue
		}
		if len(c) <= statusCol {
			continue
		}
		if st := StatusOf(c[statusCol]); st != Warn && st != Failed {
			continue
		}
		msg := ""
		switch {
		case msgCol >= 0 && msgCol < len(c):
			msg = c[msgCol]
		case msgCol < 0 && len(c) > width:
			msg = c[len(c)-1]
		}
		if s := summaryText(msg); s != "" {
			return s
		}
	}
	return ""
}

// wrapped returns line, a line of m's plain-text body, joined with the
// indented lines that continue it there (text bodies wrap long messages:
// "- The backup location is not reachable: the connection to" then "  the
// data center timed out."). It returns line alone when the text body has
// no such continuation.
func wrapped(m *Message, line string) string {
	if m == nil || m.Text == "" || line == "" {
		return line
	}
	raw := strings.Split(m.Text, "\n")
	for i, r := range raw {
		if clean(r) != line {
			continue
		}
		out := line
		for _, next := range raw[i+1:] {
			c := clean(next)
			if c == "" || !(strings.HasPrefix(next, " ") || strings.HasPrefix(next, "\t")) ||
				strings.HasPrefix(c, "- ") || strings.HasPrefix(c, "* ") || strings.HasPrefix(c, "• ") ||
				len(out) > maxBodyBytes/4 {
				break
			}
			if len(c) > 2 && c[0] >= '0' && c[0] <= '9' && (c[1] == '.' || c[1] == ')') && c[2] == ' ' {
				break // the next item of a numbered list
			}
			out += " " + c
		}
		return out
	}
	return line
}

// firstAfter returns the first line after lines[i] as a summary (see
// summaryText), joined with its continuation in a wrapped text body; ""
// when the next line is a table row or there is none.
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
