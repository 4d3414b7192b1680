package testserver

import (
	"fmt"
	"strings"
)

// Tail returns the last n lines of s, saying how many came before.
func Tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{fmt.Sprintf("... (%d lines before)", len(lines)-n)}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}

// LineDiff returns "" when a and b are equal, else their lines that differ
// (at most max pairs; 0: all), each numbered and shown from 200 bytes
// before its first differing byte, 600 bytes at the most: "-" is a's line,
// "+" b's.
func LineDiff(a, b string, max int) string {
	if a == b {
		return ""
	}
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	var out []string
	for i := 0; i < len(al) || i < len(bl); i++ {
		if max > 0 && len(out) == max {
			break
		}
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x == y {
			continue
		}
		k := 0
		for k < len(x) && k < len(y) && x[k] == y[k] {
			k++
		}
		from := k - 200
		if from < 0 {
			from = 0
		}
		out = append(out, fmt.Sprintf("line %d:\n  - %s\n  + %s", i+1, window(x, from), window(y, from)))
	}
	if len(out) == 0 { // only a missing last line differs
		return fmt.Sprintf("%d lines, then %d", len(al), len(bl))
	}
	return strings.Join(out, "\n")
}

// window returns up to 600 bytes of s from byte from, marked … where cut.
func window(s string, from int) string {
	w := s[from:]
	if len(w) > 600 {
		w = w[:600] + "…"
	}
	if from > 0 {
		w = "…" + w
	}
	return w
}
