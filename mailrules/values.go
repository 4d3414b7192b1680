package mailrules

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"backupmon/mailparse"
)

// readTime reads a time field into *at.
func (c *compiled) readTime(t *mailText, name string, p *timePlace, at *time.Time) FieldReading {
	fr := c.readText(t, name, &p.place)
	if fr.Text == "" {
		return fr
	}
	zone := p.zone
	if zone == nil {
		zone = t.m.Zone
	}
	if zone == nil {
		zone = time.UTC
	}
	var v time.Time
	var err error
	if p.layout == "" {
		ok := false
		if v, ok = mailparse.ParseTime(fr.Text, zone, t.m.Date); !ok {
			err = fmt.Errorf("no date and time of a usual layout")
		}
	} else {
		v, err = time.ParseInLocation(p.layout, fr.Text, zone)
	}
	if err != nil {
		fr.Value, fr.Why = "", fmt.Sprintf("%q does not read as a time (format %q)", fr.Text, p.layout)
		return fr
	}
	*at = v
	fr.Value = v.UTC().Format("2006-01-02T15:04:05Z")
	return fr
}

// numberRe is a number with any of the grouping and decimal marks.
var numberRe = regexp.MustCompile(`\d[\d.,' \x{00a0}\x{202f}]*`)

// unitBytes are the size units a rule names or a mail prints: binary
// multiples, as products mean them.
var unitBytes = map[string]float64{
	"b": 1, "byte": 1, "bytes": 1,
	"k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10,
	"m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20,
	"g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30,
	"t": 1 << 40, "tb": 1 << 40, "tib": 1 << 40,
}

// readSize reads the size field into *bytes.
func (c *compiled) readSize(t *mailText, bytes *int64) FieldReading {
	p := c.size
	fr := c.readText(t, "size", &p.place)
	if fr.Text == "" {
		return fr
	}
	loc := numberRe.FindStringIndex(fr.Text)
	if loc == nil {
		fr.Value, fr.Why = "", fmt.Sprintf("%q holds no number", fr.Text)
		return fr
	}
	num := strings.TrimRight(fr.Text[loc[0]:loc[1]], " .,'\u00a0\u202f")
	rest := fr.Text[loc[0]+len(num):]
	if p.grouping != "" {
		num = strings.ReplaceAll(num, p.grouping, "")
		if p.grouping == " " {
			num = strings.NewReplacer("\u00a0", "", "\u202f", "").Replace(num)
		}
	}
	if p.grouping == "." {
		num = strings.ReplaceAll(num, ",", ".")
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || f < 0 {
		fr.Value, fr.Why = "", fmt.Sprintf("%q does not read as a number with grouping %q", fr.Text[loc[0]:loc[1]], p.grouping)
		return fr
	}
	unit := p.unit
	if unit == "" {
		unit = strings.ToLower(strings.TrimSpace(rest))
		if i := strings.IndexFunc(unit, func(r rune) bool { return r < 'a' || r > 'z' }); i >= 0 {
			unit = unit[:i]
		}
	}
	mult, ok := unitBytes[unit]
	if !ok {
		fr.Value, fr.Why = "", fmt.Sprintf("no unit after the number in %q: set size.unit", fr.Text)
		return fr
	}
	v := f * mult
	if v > math.MaxInt64/2 {
		fr.Value, fr.Why = "", fmt.Sprintf("%q is too large for a backup", fr.Text)
		return fr
	}
	*bytes = int64(math.Round(v))
	fr.Value = strconv.FormatInt(*bytes, 10)
	return fr
}

// layoutTokens map a rule's time format tokens to Go's layout, longest
// first.
var layoutTokens = strings.NewReplacer(
	"YYYY", "2006", "YY", "06",
	"MMMM", "January", "MMM", "Jan", "MM", "01", "M", "1",
	"dddd", "Monday", "ddd", "Mon",
	"DD", "02", "D", "2",
	"HH", "15", "H", "15", "hh", "03", "h", "3",
	"mm", "04", "ss", "05", "A", "PM",
	"Z", "Z07:00",
)

// goLayout turns a rule's format into a Go layout; a format that already
// is one (it holds "2006") is kept.
func goLayout(format string) string {
	if strings.Contains(format, "2006") {
		return format
	}
	return layoutTokens.Replace(format)
}
