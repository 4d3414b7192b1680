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
		// A heading ("Errors:") has no value here: its value, if any, is
		// on the lines below.
		if i := strings.Index(line, ": "); i > 0 {
			f.add(line[:i], line[i+2:])
		}
	}
	return f
}

// add keeps value under label (lowercased, without a trailing colon)
// unless the label is empty, too long or already there.
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

// stated returns the value of the first of labels that is present, and
// false when none is or that value says nothing (emptyValue): unlike
// Value, it does not look past an empty value to the next label.
func (f Fields) stated(labels ...string) (string, bool) {
	v, ok := f.Get(labels...)
	if !ok || emptyValue(v) {
		return "", false
	}
	return v, true
}

// placeholder reports whether v is a value products print for "nothing";
// Fields.Value skips it. emptyValue, which Fields.stated and the nakivo,
// backupexec, msp360, altaro, macrium and generic parsers check, is
// another list: it knows "nil", "keine", "aucun", "ninguno" and ignores
// dots around the word, but not "unknown".
func placeholder(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "-", "--", "—", "–", "n/a", "na", "none", "null", "unknown", "(none)":
		return true
	}
	return false
}

// emptyValue reports whether v says nothing ("", "-", "n/a", "none",
// "keine"); see placeholder for how the two lists differ.
func emptyValue(v string) bool {
	switch strings.ToLower(strings.Trim(strings.TrimSpace(v), ".")) {
	case "", "-", "--", "—", "–", "n/a", "na", "none", "null", "nil", "(none)", "keine", "aucun", "aucune", "ninguno":
		return true
	}
	return false
}
