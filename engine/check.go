package engine

import (
	"strings"
	"unicode/utf8"
)

// Checks of command input shared by every area: names, notes, text, enums.

// Limits on admin input (decisions.md 2).
const (
	maxNameChars       = 200
	minIntervalMinutes = 5
	maxIntervalMinutes = 44640
	maxGraceMinutes    = 10080
	defaultGrace       = 60
	defaultSLATarget   = 95.0
	maxNoteChars       = 1000
	maxHostnameChars   = 253
)

func checkName(field string, v Opt[string], required bool) *Error {
	if !v.Set || v.Null {
		if required || v.Null {
			return invalid(field, "%s is required", field)
		}
		return nil
	}
	if strings.TrimSpace(v.V) == "" || utf8.RuneCountInString(v.V) > maxNameChars {
		return invalid(field, "%s must be 1 to %d characters", field, maxNameChars)
	}
	return checkText(field, v.V)
}

// checkNote refuses a note over maxNoteChars or not UTF-8.
func checkNote(note string) *Error {
	if utf8.RuneCountInString(note) > maxNoteChars {
		return invalid("note", "note must be at most %d characters", maxNoteChars)
	}
	return checkText("note", note)
}

// checkText refuses text that is not UTF-8: a form or a body may carry any
// bytes, and what is stored is shown and compared as text.
func checkText(field, v string) *Error {
	if !utf8.ValidString(v) {
		return invalid(field, "%s must be valid UTF-8 text", field)
	}
	return nil
}

func checkEnum(field string, v Opt[string], allowed map[string]bool, list string, required bool) *Error {
	if !v.Set || v.Null {
		if required || v.Null {
			return invalid(field, "%s must be one of: %s", field, list)
		}
		return nil
	}
	if !allowed[v.V] {
		return invalid(field, "%s must be one of: %s", field, list)
	}
	return nil
}
