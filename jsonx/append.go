package jsonx

import (
	"strconv"
	"time"
	"unicode/utf8"
)

// The appenders write JSON values by hand, for the hot paths (REST pages,
// Report API answers) where reflection would cost more than the page.

// AppendString appends s as a JSON string. Invalid UTF-8 is written as
// U+FFFD, as encoding/json does; < > & and the line separators are escaped
// so that the bytes are safe to embed in HTML as well.
func AppendString(b []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// AppendTime appends a Unix-millisecond time as a quoted
// YYYY-MM-DDTHH:MM:SS.mmmZ string, the contract's format.
func AppendTime(b []byte, ms int64) []byte {
	secs := floorDiv(ms, 1000)
	milli := int(ms - secs*1000)
	days := floorDiv(secs, 86400)
	sod := int(secs - days*86400)
	y, m, d := civil(days)
	if y < 0 || y > 9999 {
		b = append(b, '"')
		b = time.UnixMilli(ms).UTC().AppendFormat(b, "2006-01-02T15:04:05.000Z")
		return append(b, '"')
	}
	var buf [26]byte
	buf[0] = '"'
	put4(buf[1:], y)
	buf[5] = '-'
	put2(buf[6:], m)
	buf[8] = '-'
	put2(buf[9:], d)
	buf[11] = 'T'
	put2(buf[12:], sod/3600)
	buf[14] = ':'
	put2(buf[15:], sod/60%60)
	buf[17] = ':'
	put2(buf[18:], sod%60)
	buf[20] = '.'
	buf[21] = byte('0' + milli/100)
	buf[22] = byte('0' + milli/10%10)
	buf[23] = byte('0' + milli%10)
	buf[24] = 'Z'
	buf[25] = '"'
	return append(b, buf[:]...)
}

// AppendNullTime appends null for 0, else the time.
func AppendNullTime(b []byte, ms int64) []byte {
	if ms == 0 {
		return append(b, "null"...)
	}
	return AppendTime(b, ms)
}

// AppendWords appends words as a JSON array of strings, as they are: each
// must be a plain word (a day, a scope) that needs no escaping.
func AppendWords(b []byte, words []string) []byte {
	b = append(b, '[')
	for i, w := range words {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, w...)
		b = append(b, '"')
	}
	return append(b, ']')
}

// AppendInt appends an integer.
func AppendInt(b []byte, n int64) []byte { return strconv.AppendInt(b, n, 10) }

// AppendBool appends true or false.
func AppendBool(b []byte, v bool) []byte {
	if v {
		return append(b, "true"...)
	}
	return append(b, "false"...)
}

// AppendTenths appends a number kept in tenths with exactly one decimal
// (975 → 97.5, 1000 → 100.0).
func AppendTenths(b []byte, tenths int64) []byte {
	if tenths < 0 {
		b = append(b, '-')
		tenths = -tenths
	}
	b = strconv.AppendInt(b, tenths/10, 10)
	return append(b, '.', byte('0'+tenths%10))
}

// AppendPercent appends a percentage with at least one decimal (95.0, 99.95).
func AppendPercent(b []byte, v float64) []byte {
	start := len(b)
	b = strconv.AppendFloat(b, v, 'f', -1, 64)
	for _, c := range b[start:] {
		if c == '.' {
			return b
		}
	}
	return append(b, '.', '0')
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// civil converts days since 1970-01-01 to a proleptic Gregorian date
// (Howard Hinnant's days-to-civil algorithm).
func civil(days int64) (y, m, d int) {
	z := days + 719468
	era := floorDiv(z, 146097)
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	yy := yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	dd := doy - (153*mp+2)/5 + 1
	mm := mp + 3
	if mm > 12 {
		mm -= 12
	}
	if mm <= 2 {
		yy++
	}
	return int(yy), int(mm), int(dd)
}

func put2(b []byte, v int) {
	b[0] = byte('0' + v/10)
	b[1] = byte('0' + v%10)
}

func put4(b []byte, v int) {
	b[0] = byte('0' + v/1000)
	b[1] = byte('0' + v/100%10)
	b[2] = byte('0' + v/10%10)
	b[3] = byte('0' + v%10)
}
