package jsonx

import (
	"bytes"
	"unicode/utf8"
)

// ValidText reports whether the JSON text b can stand for Unicode text as
// sent: it is UTF-8 (RFC 8259 8.1) and every \u escape of a UTF-16
// surrogate is half of a pair (8.2). The JSON decoders here, like
// encoding/json, would otherwise turn each bad byte or lone surrogate into
// U+FFFD, so that two different texts read as one. It does not check the
// JSON syntax.
func ValidText(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	for i := bytes.Index(b, []byte(`\u`)); i >= 0; {
		// Count the backslashes before: an even number means this one
		// starts an escape.
		n := 0
		for k := i - 1; k >= 0 && b[k] == '\\'; k-- {
			n++
		}
		next := i + 2
		if n%2 == 0 {
			r, ok := hex4(b, i+2)
			switch {
			case !ok:
			case r >= 0xD800 && r <= 0xDBFF:
				low, ok := rune(0), false
				if i+8 <= len(b) && b[i+6] == '\\' && b[i+7] == 'u' {
					low, ok = hex4(b, i+8)
				}
				if !ok || low < 0xDC00 || low > 0xDFFF {
					return false
				}
				next = i + 12
			case r >= 0xDC00 && r <= 0xDFFF:
				return false
			}
		}
		j := bytes.Index(b[min(next, len(b)):], []byte(`\u`))
		if j < 0 {
			break
		}
		i = min(next, len(b)) + j
	}
	return true
}

// hex4 reads four hex digits at b[i:].
func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, false
		}
	}
	return r, true
}
