package mailparse

import (
	"math"
	"regexp"
	"strconv"
	"strings"
)

var (
	sizeRe = regexp.MustCompile(`(?i)(\d[\d,.' \x{00a0}\x{202f}]*)\s*(bytes?|octets?|kib|mib|gib|tib|pib|kb|mb|gb|tb|pb|ko|mo|go|to|b|k|m|g|t)\b`)
	// byteCountRe is a number alone, with thousands separators.
	byteCountRe = regexp.MustCompile(`^\d[\d,.' ]*$`)
)

// sizeUnits are binary: products print "GB" without saying which they mean,
// and most of them (Windows-based) mean 1024³. The samples' README accepts
// either reading within 6%.
var sizeUnits = map[string]float64{
	"b": 1, "byte": 1, "bytes": 1, "octet": 1, "octets": 1,
	"k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10, "ko": 1 << 10,
	"m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20, "mo": 1 << 20,
	"g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30, "go": 1 << 30,
	"t": 1 << 40, "tb": 1 << 40, "tib": 1 << 40, "to": 1 << 40,
	"pb": 1 << 50, "pib": 1 << 50,
}

// ParseSize reads the first size in s ("6.84 GB", "0 B", "3,42 GB",
// "184,302,118,912 bytes", "1.2 TB (1,319,413,953,331 bytes)") as an
// English mail writes it: a comma before exactly three digits groups
// thousands ("1,536 MB" is 1536 MB). A size that s also prints in exact
// bytes is read exactly. It returns false when s holds no size ("-",
// "n/a", "").
func ParseSize(s string) (int64, bool) {
	return parseSize(s, false)
}

// parseSize is ParseSize in a mail whose language writes decimals with a
// comma (decimalComma: "1.536,5 GB", "1.536 MB" is 1536 MB) or with a
// point (English); see parseNumber.
func parseSize(s string, decimalComma bool) (int64, bool) {
	all := sizeRe.FindAllStringSubmatch(s, 4)
	if len(all) == 0 {
		return 0, false
	}
	// Prefer an exact byte count when the text gives one beside a rounded size.
	for _, m := range all {
		unit := strings.ToLower(m[2])
		if sizeUnits[unit] == 1 && len(strings.TrimSpace(m[1])) > 0 {
			if v, ok := parseNumber(m[1], true, decimalComma); ok {
				if v > math.MaxInt64/2 {
					return 0, false // no backup writes 4 EiB: a misread number
				}
				return int64(math.Round(v)), true
			}
		}
	}
	m := all[0]
	v, ok := parseNumber(m[1], false, decimalComma)
	if !ok {
		return 0, false
	}
	f := v * sizeUnits[strings.ToLower(m[2])]
	if f > math.MaxInt64/2 {
		return 0, false
	}
	return int64(math.Round(f)), true
}

// parseNumber reads a decimal number with thousands separators (decisions.md,
// "Report e-mails"). Spaces, non-breaking spaces and apostrophes always
// group. With both a comma and a point, the last of them marks the
// decimals ("1,536.5", "1.536,5"); a separator printed twice or more
// groups ("1,234,567", "1.234.567"). A lone separator followed by exactly
// three digits, after a whole part other than 0, is read by the mail's
// language: in English (decimalComma false) a comma groups and a point
// marks decimals ("1,536" is 1536, "1.536" is 1.536); in a language that
// writes a decimal comma, the other way round ("1.536" is 1536, "1,536" is
// 1.536). wholeBytes says the number counts bytes, so such a separator
// groups in either language. Any other lone separator marks decimals
// ("3,42", "6.84").
func parseNumber(s string, wholeBytes, decimalComma bool) (float64, bool) {
	s = strings.TrimSpace(s)
	s = strings.NewReplacer(" ", "", "\u00a0", "", "\u202f", "", "'", "").Replace(s)
	s = strings.TrimRight(s, ".,")
	if s == "" {
		return 0, false
	}
	lastComma, lastDot := strings.LastIndexByte(s, ','), strings.LastIndexByte(s, '.')
	commas, dots := strings.Count(s, ","), strings.Count(s, ".")
	// groups says a lone separator at i, followed by exactly three digits,
	// groups thousands; grouping is the reading the language gives it.
	groups := func(i int, grouping bool) bool {
		return len(s)-i-1 == 3 && s[:i] != "0" && (wholeBytes || grouping)
	}
	decimal := byte(0)
	switch {
	case commas > 0 && dots > 0:
		if lastComma > lastDot {
			decimal = ','
		} else {
			decimal = '.'
		}
		if strings.Count(s, string(decimal)) > 1 {
			return 0, false // "1.2.3,4,5": no reading
		}
	case commas == 1 && dots == 0:
		if !groups(lastComma, !decimalComma) {
			decimal = ','
		}
	case dots == 1 && commas == 0:
		if !groups(lastDot, decimalComma) {
			decimal = '.'
		}
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			b.WriteByte(c)
		case c == decimal:
			b.WriteByte('.')
		}
	}
	v, err := strconv.ParseFloat(b.String(), 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, false
	}
	return v, true
}

// sizeValue returns the size v prints (parseSize in m's language), -1
// when it prints none.
func sizeValue(m *Message, v string) int64 {
	if n, ok := parseSize(v, m != nil && m.DecimalComma); ok {
		return n
	}
	return -1
}

// sizeIn returns sizeValue(m, v), except 0 for a bare "0" (which has no
// unit for ParseSize to read).
func sizeIn(m *Message, v string) int64 {
	if strings.TrimSpace(v) == "0" {
		return 0
	}
	return sizeValue(m, v)
}

// byteCount returns v read as a bare number of bytes ("4096", "1,234,567"),
// false when v is not a number alone.
func byteCount(v string) (int64, bool) {
	if !byteCountRe.MatchString(strings.TrimSpace(v)) {
		return 0, false
	}
	n, ok := parseNumber(v, true, false)
	return int64(n), ok
}
