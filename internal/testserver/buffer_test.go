package testserver

import (
	"strings"
	"testing"
)

func TestLineDiff(t *testing.T) {
	long := strings.Repeat("x", 700)
	for _, c := range []struct {
		name, a, b string
		max        int
		want       string
	}{
		{"equal", "a\nb", "a\nb", 0, ""},
		{"one line", "a\nb\nc", "a\nB\nc", 0, "line 2:\n  - b\n  + B"},
		{"at most max", "a\nb\nc", "A\nB\nC", 2, "line 1:\n  - a\n  + A\nline 2:\n  - b\n  + B"},
		{"a line more", "a", "a\nb", 0, "line 2:\n  - \n  + b"},
		{"only the last newline", "a", "a\n", 0, "1 lines, then 2"},
		{"a window around the difference", long + "1", long + "2", 0,
			"line 1:\n  - …" + strings.Repeat("x", 200) + "1\n  + …" + strings.Repeat("x", 200) + "2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := LineDiff(c.a, c.b, c.max); got != c.want {
				t.Errorf("LineDiff:\n got %q\nwant %q", got, c.want)
			}
		})
	}
}

func TestTail(t *testing.T) {
	if got := Tail("1\n2\n3\n", 2); got != "... (1 lines before)\n2\n3" {
		t.Errorf("Tail: %q", got)
	}
	if got := Tail("1\n2", 5); got != "1\n2" {
		t.Errorf("Tail of a short text: %q", got)
	}
}
