package mailparse

import (
	"regexp"
	"strings"
)

// Tables: the rows of a rendered table (cells joined by '\t', see
// htmlLines) and the columns a header names.

// Cells splits a rendered table row into its cells.
func Cells(line string) []string {
	return strings.Split(line, "\t")
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
			statusCol, msgCol = tableColumns(c, false)
			width = len(c)
			continue
		}
		if len(c) <= statusCol {
			continue
		}
		if st := StatusOf(c[statusCol]); st != Warn && st != Failed {
			continue
		}
		if s := summaryText(messageCell(c, msgCol, width)); s != "" {
			return s
		}
	}
	return ""
}

// tableColumns returns the status column and the message column (Details,
// Message, Error, Reason, Note...) of a table's header row, -1 for one it
// lacks or when both are one column; notes also takes the French and
// German "Remarques" and "Hinweise" for a message column, as the objects'
// tables do (problemRow's do not).
func tableColumns(header []string, notes bool) (statusCol, msgCol int) {
	statusCol, msgCol = -1, -1
	for j, cell := range header {
		switch strings.ToLower(strings.TrimSpace(cell)) {
		case "status", "result", "state", "ergebnis", "statut", "resultaat", "estado", "stato":
			if statusCol < 0 {
				statusCol = j
			}
		case "details", "detail", "message", "messages", "error", "reason", "description", "note",
			"notes", "comment", "info", "fehler", "erreur", "meldung", "détails", "fout":
			msgCol = j
		case "remarques", "hinweise":
			if notes {
				msgCol = j
			}
		}
	}
	if statusCol >= 0 && statusCol == msgCol {
		msgCol = -1
	}
	return statusCol, msgCol
}

// messageCell returns the message of a table's row c: the cell of the
// message column msgCol, or without one, a cell past the header's width
// (the last); "" when there is neither.
func messageCell(c []string, msgCol, width int) string {
	switch {
	case msgCol >= 0 && msgCol < len(c):
		return c[msgCol]
	case msgCol < 0 && len(c) > width:
		return c[len(c)-1]
	}
	return ""
}

// hasCell reports whether one of line's cells reads name (case-insensitively).
func hasCell(line, name string) bool {
	for _, c := range Cells(line) {
		if strings.EqualFold(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(c), ":")), name) {
			return true
		}
	}
	return false
}

// findTable finds the table whose header row has a cell matching key in
// its first or second column and a cell matching at least one of others,
// and returns the rows below the header as cells with the column of each
// of others by name (-1 when missing; "key" is key's column). The rows
// end at the first line with fewer than two cells.
func findTable(lines []string, key *regexp.Regexp, others map[string]*regexp.Regexp) (rows [][]string, cols map[string]int) {
	for i, l := range lines {
		cells := Cells(l)
		if len(cells) < 2 {
			continue
		}
		k := -1
		for j, c := range cells {
			if key.MatchString(strings.TrimSpace(c)) {
				k = j
				break
			}
		}
		if k != 0 && k != 1 {
			continue
		}
		cols = map[string]int{"key": k}
		found := 0
		for name, re := range others {
			cols[name] = -1
			for j, c := range cells {
				if j != k && re.MatchString(strings.TrimSpace(c)) {
					cols[name] = j
					found++
					break
				}
			}
		}
		if found == 0 {
			continue
		}
		for _, r := range lines[i+1:] {
			rc := Cells(r)
			if len(rc) < 2 {
				break
			}
			rows = append(rows, rc)
		}
		return rows, cols
	}
	return nil, nil
}

// cellAt returns row's cell i, "" when the row has none.
func cellAt(row []string, i int) string {
	if i < 0 || i >= len(row) {
		return ""
	}
	return strings.TrimSpace(row[i])
}

// sizeOrColumn returns the size under the first of labels present in f
// (see sizeIn), or, without one or when it reads no size, the sum of the
// size column col of rows, the job's objects (see columnSize).
func sizeOrColumn(m *Message, f Fields, labels []string, rows [][]string, col int) int64 {
	if v, ok := f.Get(labels...); ok {
		if n := sizeIn(m, v); n >= 0 {
			return n
		}
	}
	return columnSize(m, rows, col)
}

// columnSize returns the sum of the sizes (sizeIn, in m's language) in column col of rows,
// -1 when no row has one there.
func columnSize(m *Message, rows [][]string, col int) int64 {
	var sum int64
	found := false
	for _, row := range rows {
		if n := sizeIn(m, cellAt(row, col)); n >= 0 {
			sum += n
			found = true
		}
	}
	if !found {
		return -1
	}
	return sum
}
