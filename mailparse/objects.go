package mailparse

import (
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Objects: the VMs, machines, data sources, hosts or backup sets that one
// mail reports on, each with its own result, and the summary of a mail
// where several of them did not succeed (decisions.md, "Report e-mails").

// object is one thing a mail reports on with a result of its own.
type object struct {
	name   string
	status Status
	text   string // its own error or warning text; "" when the mail gives none
}

const (
	// maxOthers is the longest the list of the other objects that warned or
	// failed may be, in characters: the lead's text gets the rest.
	maxOthers = 200
	// maxObjectName is the longest an object's name is shown in that list.
	maxObjectName = 40
)

// objectsSummary returns the summary of a mail that lists objs, when more
// than one of them warned or failed:
//
//	<lead>: <lead's text> [also failed (N): A, B; warned (M): C]
//
// The lead is the first object that failed, else the first that warned:
// the object whose result is the mail's. Its text is its own (fallback when
// the mail gives it none) and is cut with "…" so that the whole fits in
// MaxSummary; "<lead>: " is left out when the text already starts with the
// lead's name. The bracket counts the other objects that failed and those
// that warned and names them in the mail's order, as many as fit in
// maxOthers characters ("A, B and 3 more"); a group with none is left out.
//
// It returns false, leaving the parser's own summary, when fewer than two
// objects warned or failed, or when every object listed failed (or every
// one warned) with the same text: one cause that the mail's first error
// already states.
func objectsSummary(objs []object, fallback string) (string, bool) {
	objs = mergeObjects(objs)
	lead := -1
	problems := 0
	for i, o := range objs {
		if o.status != Warn && o.status != Failed {
			continue
		}
		problems++
		if lead < 0 || o.status == Failed && objs[lead].status != Failed {
			lead = i
		}
	}
	if problems < 2 || sameFailure(objs) {
		return "", false
	}
	var failed, warned []string
	for i, o := range objs {
		switch {
		case i == lead:
		case o.status == Failed:
			failed = append(failed, o.name)
		case o.status == Warn:
			warned = append(warned, o.name)
		}
	}
	l := objs[lead]
	text := summaryText(l.text)
	if text == "" {
		text = summaryText(fallback)
	}
	if text == "" {
		text = "failed"
		if l.status == Warn {
			text = "completed with warnings"
		}
	}
	prefix := l.name + ": "
	if startsWithName(text, l.name) {
		prefix = ""
	}
	suffix := othersList(failed, warned)
	room := MaxSummary - utf8.RuneCountInString(prefix) - utf8.RuneCountInString(suffix)
	return prefix + Truncate(text, max(room, 1)) + suffix, true
}

// mergeObjects returns objs with each name once (case-insensitively): a
// later row of the same object fills in the text the first one lacked.
func mergeObjects(objs []object) []object {
	out := make([]object, 0, len(objs))
	for _, o := range objs {
		o.name = clean(o.name)
		if o.name == "" {
			continue
		}
		dup := false
		for i := range out {
			if strings.EqualFold(out[i].name, o.name) {
				if out[i].text == "" {
					out[i].text = o.text
				}
				if out[i].status == Unknown {
					out[i].status = o.status
				}
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, o)
		}
	}
	return out
}

// sameFailure reports whether every object of objs has one result that is
// not a success and the same text.
func sameFailure(objs []object) bool {
	for _, o := range objs {
		if o.status != objs[0].status || o.status != Warn && o.status != Failed ||
			summaryText(o.text) != summaryText(objs[0].text) {
			return false
		}
	}
	return len(objs) > 0
}

// startsWithName reports whether text starts with name and a colon
// ("KV-FS01: ...", "KV-FS01 : ...").
func startsWithName(text, name string) bool {
	if len(text) <= len(name) || !strings.EqualFold(text[:len(name)], name) {
		return false
	}
	rest := strings.TrimLeft(text[len(name):], " ")
	return strings.HasPrefix(rest, ":")
}

// othersList is the bracket that names the other objects that failed and
// warned (" [also failed (2): A, B; warned (1): C]"), "" when there are
// none; names are dropped from the longer list first until it fits in
// maxOthers characters.
func othersList(failed, warned []string) string {
	if len(failed) == 0 && len(warned) == 0 {
		return ""
	}
	nf, nw := len(failed), len(warned)
	for {
		var groups []string
		if len(failed) > 0 {
			groups = append(groups, "failed ("+strconv.Itoa(len(failed))+")"+nameList(failed, nf))
		}
		if len(warned) > 0 {
			groups = append(groups, "warned ("+strconv.Itoa(len(warned))+")"+nameList(warned, nw))
		}
		s := " [also " + strings.Join(groups, "; ") + "]"
		if utf8.RuneCountInString(s) <= maxOthers || nf+nw == 0 {
			return s
		}
		if nw >= nf {
			nw--
		} else {
			nf--
		}
	}
}

// nameList is ": A, B and 3 more" for the first shown of names (each cut
// to maxObjectName characters), "" when none is shown.
func nameList(names []string, shown int) string {
	if shown <= 0 {
		return ""
	}
	cut := make([]string, 0, shown)
	for _, n := range names[:shown] {
		cut = append(cut, Truncate(n, maxObjectName))
	}
	s := ": " + strings.Join(cut, ", ")
	if more := len(names) - shown; more > 0 {
		s += " and " + strconv.Itoa(more) + " more"
	}
	return s
}

// tableObjects reads the objects of the first table of lines (from index
// from) whose header row (three cells or more) has a status column: the
// name is the row's first cell that is not its status, the result status
// reads its status cell, and the text is the cell under a Details,
// Message, Error, Reason or Note header (or a cell past the header's
// last). It returns nil when there is no such table. The rows end at the
// first line with fewer than two cells.
func tableObjects(lines []string, from int, status func(string) Status) []object {
	statusCol, msgCol, width := -1, -1, 0
	var objs []object
	for i := max(from, 0); i < len(lines); i++ {
		c := Cells(lines[i])
		if statusCol < 0 {
			if len(c) < 3 {
				continue
			}
			statusCol, msgCol = tableColumns(c, true)
			width = len(c)
			continue
		}
		if len(c) < 2 {
			if objs != nil {
				break
			}
			continue
		}
		if len(c) <= statusCol {
			continue
		}
		name := strings.TrimSpace(c[0])
		if statusCol == 0 {
			name = strings.TrimSpace(c[1])
		}
		objs = append(objs, object{name: name, status: status(c[statusCol]), text: summaryText(messageCell(c, msgCol, width))})
	}
	return objs
}

// namedLineObjects reads the lines under the first of headings (up to
// stop) that name an object before their text ("KV-FS01: The offsite copy
// was throttled", "BK-CAISSE02 : ..."), as objects with status st. A name
// is one word of at most 64 characters with a digit, a hyphen, an
// underscore or a dot in it, as machines are named.
func namedLineObjects(lines []string, stop func(string) bool, st Status, headings ...string) []object {
	var objs []object
	for _, h := range headings {
		for _, l := range Section(lines, h, stop) {
			if name, text, ok := namedLine(l); ok {
				objs = append(objs, object{name: name, status: st, text: text})
			}
		}
		if objs != nil {
			break
		}
	}
	return objs
}

// namedLine splits "NAME: text" (or "NAME : text") into the object's name
// and its text; false when the line does not start with a machine's name.
func namedLine(l string) (string, string, bool) {
	l = strings.TrimSpace(trimBullets(l))
	i := strings.Index(l, ":")
	if i <= 0 || i > 65 || i+1 >= len(l) || l[i+1] != ' ' {
		return "", "", false
	}
	name := strings.TrimSpace(l[:i])
	if name == "" || strings.ContainsAny(name, " \t\\/") || !strings.ContainsAny(name, "0123456789-_.") {
		return "", "", false
	}
	text := strings.TrimSpace(l[i+1:])
	if !isText(text) {
		return "", "", false
	}
	return name, text, true
}

// textOf returns the text that a line of lines gives for the object
// named name ("NAME: text"), "" when none does.
// fieldOrGroup returns a field's value when the mail has the field (ok),
// else group i of the subject's match, else "".
func fieldOrGroup(value string, ok bool, match []string, i int) string {
	switch {
	case ok:
		return value
	case match != nil:
		return match[i]
	}
	return ""
}

// subjectPair returns the first two groups of re in subject, or two empty
// strings when it does not match.
func subjectPair(re *regexp.Regexp, subject string) (string, string) {
	if mm := re.FindStringSubmatch(subject); mm != nil {
		return mm[1], mm[2]
	}
	return "", ""
}

// rowObjects makes one object of each table row: its name from the key
// column, its status (status reads the status column's cell) and its text
// from the text column, or, for a row without text, the "name: text" line
// of lines (textOf).
func rowObjects(rows [][]string, cols map[string]int, statusCol, textCol string, status func(string) Status, lines []string) []object {
	objs := make([]object, 0, len(rows))
	for _, row := range rows {
		o := object{name: cellAt(row, cols["key"]), status: status(cellAt(row, cols[statusCol])), text: cellAt(row, cols[textCol])}
		if o.text == "" {
			o.text = textOf(lines, o.name)
		}
		objs = append(objs, o)
	}
	return objs
}

func textOf(lines []string, name string) string {
	for _, l := range lines {
		if startsWithName(l, name) {
			rest := strings.TrimLeft(l[len(name):], " ")
			return strings.TrimSpace(rest[1:])
		}
	}
	return ""
}
