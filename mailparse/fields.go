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
