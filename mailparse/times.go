package mailparse

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

var (
	clockRe  = regexp.MustCompile(`(?i)(?:^|\D)(\d{1,2}):(\d{2})(?::(\d{2}))?(?:[.,]\d{1,7})?\s*(a\.?m\.?|p\.?m\.?)?(?:$|[^\d:])`)
	offsetRe = regexp.MustCompile(`(?i)(?:\b(?:utc|gmt)\s*)?([+\x{2212}-])\s?(\d{1,2})(?::?(\d{2}))?\b`)
	isoRe    = regexp.MustCompile(`\b(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?:T|\b)`)
	numRe    = regexp.MustCompile(`\b(\d{1,2})[-/.](\d{1,2})[-/.](\d{4}|\d{2})\b`)
	wordRe   = regexp.MustCompile(`\p{L}+\.?`)
	numTokRe = regexp.MustCompile(`\b\d{1,4}\b`)
)

// months maps month names and abbreviations of the languages backup
// products localize into (English, German, French, Dutch, Spanish, Italian,
// Portuguese, the Scandinavian ones) to their number.
var months = map[string]time.Month{}

// init fills months.
func init() {
	names := [12][]string{
		{"january", "jan", "januar", "jänner", "janvier", "janv", "januari", "enero", "ene", "gennaio", "gen", "janeiro", "janu"},
		{"february", "feb", "febr", "februar", "février", "févr", "fevrier", "fevr", "februari", "febrero", "febbraio", "fevereiro", "fev"},
		{"march", "mar", "märz", "mär", "mrz", "maerz", "mars", "maart", "mrt", "marzo", "março", "marco", "marts"},
		{"april", "apr", "avril", "avr", "abril", "abr", "aprile"},
		{"may", "mai", "mei", "mayo", "maggio", "mag", "maio", "maj"},
		{"june", "jun", "juni", "juin", "junio", "giugno", "giu", "junho"},
		{"july", "jul", "juli", "juillet", "juil", "julio", "luglio", "lug", "julho"},
		{"august", "aug", "août", "aout", "augustus", "agosto", "ago", "augusti"},
		{"september", "sep", "sept", "septembre", "septiembre", "settembre", "set", "setembro"},
		{"october", "oct", "oktober", "okt", "octobre", "octubre", "ottobre", "ott", "outubro", "out"},
		{"november", "nov", "novembre", "noviembre", "novembro"},
		{"december", "dec", "dezember", "dez", "décembre", "déc", "decembre", "diciembre", "dic", "dicembre", "dezembro", "desember", "des"},
	}
	for i, list := range names {
		for _, n := range list {
			months[n] = time.Month(i + 1)
		}
	}
}

// ParseTime reads a date and time of day as products print them, in many
// layouts and languages: "2/12/2026 11:00:04 PM (UTC+01:00)", "21/02/2026
// 23:00:02", "Feb 16, 2026 2:00:12 PM EST", "Wednesday, February 25, 2026 at
// 8:00:02 PM", "Tue, 24 Feb 2026 at 1:00:03 AM (UTC -05:00)", "2026-02-18
// 20:00:12", "16. Februar 2026 14:00:12", "14.01.2026 09:12".
//
// A numeric offset in s gives the zone; otherwise the time is read in zone
// (the Date header's, by the samples' rule) and zone abbreviations are
// ignored. When a numeric date reads both day-first and month-first, the
// reading nearer to ref (the mail's Date) wins, else month-first with AM/PM
// and day-first without. It returns false when s holds no full date and time.
func ParseTime(s string, zone *time.Location, ref time.Time) (time.Time, bool) {
	if zone == nil {
		zone = time.UTC
	}
	low := strings.ToLower(s)
	cm := clockRe.FindStringSubmatchIndex(low)
	hour, minute, sec, twelveHour, ok := clockOf(low, cm)
	if !ok {
		return time.Time{}, false
	}
	datePart := low[:cm[0]]
	rest := low[cm[1]-1:]
	if cm[1] == len(low) {
		rest = ""
	}
	loc := zone
	if om := offsetRe.FindStringSubmatchIndex(rest); om != nil && om[0] <= 10 {
		om := submatches(rest, om)
		h, _ := strconv.Atoi(om[2])
		m := 0
		if om[3] != "" {
			m, _ = strconv.Atoi(om[3])
		}
		if h <= 14 && m < 60 {
			off := h*3600 + m*60
			if om[1] != "+" {
				off = -off
			}
			loc = time.FixedZone(zoneName(off), off)
		}
	}
	// The date may come before the time (usual) or after it.
	y, mo, d, ok := readDate(datePart, twelveHour, ref, hour, minute, sec, loc)
	if !ok {
		y, mo, d, ok = readDate(rest, twelveHour, ref, hour, minute, sec, loc)
	}
	if !ok {
		return time.Time{}, false
	}
	return time.Date(y, mo, d, hour, minute, sec, 0, loc), true
}

// ParseClock reads a time of day alone ("22:00:41", "1:00:40 AM") and
// returns it on day's date in day's zone, false when s holds none.
func ParseClock(s string, day time.Time) (time.Time, bool) {
	low := strings.ToLower(s)
	hour, minute, sec, _, ok := clockOf(low, clockRe.FindStringSubmatchIndex(low))
	if !ok {
		return time.Time{}, false
	}
	return time.Date(day.Year(), day.Month(), day.Day(), hour, minute, sec, 0, day.Location()), true
}

// clockOf returns the time of day of clockRe's match cm in low: the hour
// on the 24-hour clock (an AM or PM after it applied), the minute, the
// second (0 when not printed; a leap second, 60, reads as the second
// before it), whether the clock was a 12-hour one, and false when there is
// no match (cm nil) or one of them is out of range.
func clockOf(low string, cm []int) (hour, minute, sec int, twelveHour, ok bool) {
	if cm == nil {
		return 0, 0, 0, false, false
	}
	group := func(i int) string {
		if cm[2*i] < 0 {
			return ""
		}
		return low[cm[2*i]:cm[2*i+1]]
	}
	hour, _ = strconv.Atoi(group(1))
	minute, _ = strconv.Atoi(group(2))
	if g := group(3); g != "" {
		sec, _ = strconv.Atoi(g)
	}
	switch strings.ReplaceAll(group(4), ".", "") {
	case "am":
		twelveHour = true
		if hour == 12 {
			hour = 0
		}
	case "pm":
		twelveHour = true
		if hour < 12 {
			hour += 12
		}
	}
	if hour > 23 || minute > 59 || sec > 60 {
		return 0, 0, 0, false, false
	}
	return hour, minute, min(sec, 59), twelveHour, true
}

// readDate returns the date s prints (ISO, numeric day-first or
// month-first, or with a month name), choosing between day-first and
// month-first readings as ParseTime says; false when s holds none.
func readDate(s string, twelveHour bool, ref time.Time, h, mi, sec int, loc *time.Location) (int, time.Month, int, bool) {
	if m := isoRe.FindStringSubmatch(s); m != nil {
		y, _ := strconv.Atoi(m[1])
		mo, _ := strconv.Atoi(m[2])
		d, _ := strconv.Atoi(m[3])
		if valid(y, mo, d) {
			return y, time.Month(mo), d, true
		}
	}
	if m := numRe.FindStringSubmatch(s); m != nil {
		a, _ := strconv.Atoi(m[1])
		b, _ := strconv.Atoi(m[2])
		y, _ := strconv.Atoi(m[3])
		if len(m[3]) == 2 {
			y += 2000
		}
		dotted := strings.Contains(s[strings.Index(s, m[1]):], m[1]+".")
		dayFirst, monthFirst := valid(y, b, a), valid(y, a, b)
		switch {
		case dayFirst && monthFirst && a != b:
			pick := !twelveHour || dotted // day-first unless a US-style 12-hour clock
			if !ref.IsZero() {
				df := time.Date(y, time.Month(b), a, h, mi, sec, 0, loc)
				mf := time.Date(y, time.Month(a), b, h, mi, sec, 0, loc)
				pick = absDur(ref.Sub(df)) <= absDur(ref.Sub(mf))
			}
			if pick {
				return y, time.Month(b), a, true
			}
			return y, time.Month(a), b, true
		case dayFirst:
			return y, time.Month(b), a, true
		case monthFirst:
			return y, time.Month(a), b, true
		}
	}
	// A month by name, with a day and a four-digit year among the numbers.
	// "mar" is also Tuesday in French, Spanish and Italian ("mar. 10 févr.
	// 2026"): another month's name after it wins.
	var mo time.Month
	for _, w := range wordRe.FindAllString(s, -1) {
		w = strings.TrimSuffix(w, ".")
		if v, ok := months[w]; ok {
			mo = v
			if w != "mar" {
				break
			}
		}
	}
	if mo == 0 {
		return 0, 0, 0, false
	}
	y, d := 0, 0
	for _, n := range numTokRe.FindAllString(s, -1) {
		v, _ := strconv.Atoi(n)
		switch {
		case len(n) == 4 && y == 0:
			y = v
		case len(n) <= 2 && d == 0 && v >= 1 && v <= 31:
			d = v
		}
	}
	if y == 0 || d == 0 || !valid(y, int(mo), d) {
		return 0, 0, 0, false
	}
	return y, mo, d, true
}

// valid reports whether y-m-d is a date between 1970 and 2200.
func valid(y, m, d int) bool {
	if y < 1970 || y > 2200 || m < 1 || m > 12 || d < 1 {
		return false
	}
	return d <= time.Date(y, time.Month(m)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// absDur returns d without its sign.
func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// submatches turns FindStringSubmatchIndex's answer into strings ("" for a
// group that did not take part).
func submatches(s string, ix []int) []string {
	out := make([]string, len(ix)/2)
	for i := range out {
		if ix[2*i] >= 0 {
			out[i] = s[ix[2*i]:ix[2*i+1]]
		}
	}
	return out
}

// Time reads s with ParseTime in the zone of m's Date header, the Date
// itself deciding between day-first and month-first readings.
func (m *Message) Time(s string) (time.Time, bool) {
	if m == nil {
		return ParseTime(s, time.UTC, time.Time{})
	}
	return ParseTime(s, m.Zone, m.Date)
}

// readSize sets r's SizeBytes to the size (sizeValue) that get finds
// under the labels, when there is one.
func (r *Result) readSize(m *Message, get func(labels ...string) (string, bool), labels []string) {
	if v, ok := get(labels...); ok {
		r.SizeBytes = sizeValue(m, v)
	}
}

// readRun sets r's StartedAt and CompletedAt to the times (m.Time) that
// get finds under the start and end labels, zero when one does not read,
// and DurationSeconds to the duration (ParseDuration) under the duration
// labels when it reads. get is f.Value, which passes over placeholders to
// the next label, or f.Get, which takes the first label present.
func (r *Result) readRun(m *Message, get func(labels ...string) (string, bool), start, end, duration []string) {
	if v, ok := get(start...); ok {
		r.StartedAt, _ = m.Time(v)
	}
	if v, ok := get(end...); ok {
		r.CompletedAt, _ = m.Time(v)
	}
	if v, ok := get(duration...); ok {
		if d, ok := ParseDuration(v); ok {
			r.DurationSeconds = d
		}
	}
}
