package mailparse

import (
	"bytes"
	"encoding/base64"
)

// Transfer decodings of a body already in memory, tolerant the way mail
// readers are: a malformed escape is kept as it is, and base64 is decoded
// up to the first character that cannot be.

// decodeQP decodes quoted-printable text (RFC 2045 6.7): "=XX" is a byte,
// "=" at the end of a line joins it to the next, and the spaces and tabs
// that end a line are transport padding.
func decodeQP(src []byte) []byte {
	dst := make([]byte, 0, len(src))
	for len(src) > 0 {
		line, rest, hadNL := src, []byte(nil), false
		if i := bytes.IndexByte(src, '\n'); i >= 0 {
			line, rest, hadNL = src[:i], src[i+1:], true
		}
		line = bytes.TrimRight(line, " \t\r")
		soft := len(line) > 0 && line[len(line)-1] == '='
		if soft {
			line = line[:len(line)-1]
		}
		for i := 0; i < len(line); i++ {
			if c := line[i]; c == '=' && i+2 < len(line) && isHex(line[i+1]) && isHex(line[i+2]) {
				dst = append(dst, unhex(line[i+1])<<4|unhex(line[i+2]))
				i += 2
			} else {
				dst = append(dst, c)
			}
		}
		if hadNL && !soft {
			dst = append(dst, '\n')
		}
		src = rest
	}
	return dst
}

// isHex reports whether c is a hexadecimal digit.
func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// unhex returns the value of the hexadecimal digit c.
func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

// decodeBase64 decodes base64 with line breaks and other whitespace in it,
// up to its padding or the first character outside the alphabet.
func decodeBase64(src []byte) []byte {
	clean := make([]byte, 0, len(src))
scan:
	for _, c := range src {
		switch {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '+', c == '/':
			clean = append(clean, c)
		case c == ' ', c == '\t', c == '\r', c == '\n':
		default:
			break scan // '=' padding, or garbage: what came before is the body
		}
	}
	if len(clean)%4 == 1 {
		clean = clean[:len(clean)-1] // six bits make no byte
	}
	dst := make([]byte, base64.RawStdEncoding.DecodedLen(len(clean)))
	n, _ := base64.RawStdEncoding.Decode(dst, clean)
	return dst[:n]
}
