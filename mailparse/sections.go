package mailparse

import (
	"slices"
	"strings"
)

// Sections: the parts of a body under a heading, and lines a plain-text
// body wrapped.

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

// footerOrHeading returns a Section stop: true at the mail's footer
// (isMailFooter) or at a line that reads one of headings (lowercase; case,
// spaces and a trailing colon ignored).
func footerOrHeading(headings ...string) func(string) bool {
	return func(l string) bool {
		return isMailFooter(l) || slices.Contains(headings, strings.ToLower(strings.TrimSuffix(strings.TrimSpace(l), ":")))
	}
}

// labelLine reports whether l is a "Label: value" line.
func labelLine(l string) bool {
	return strings.Contains(l, ": ")
}
