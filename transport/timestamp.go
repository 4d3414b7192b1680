package transport

import (
	"time"
)

// Timestamp is an ISO 8601 time read from outside input. When the text had no
// offset, Zoned is false and T holds the wall-clock time as if in UTC; the
// reader decides which zone that wall clock belongs to.
type Timestamp struct {
	T     time.Time
	Zoned bool
}

// parseTimestamp reads an ISO 8601 date-time: YYYY-MM-DD, a 'T' (or 't' or
// a space), hh:mm, optional :ss and a fraction of any length (kept to the
// nanosecond), then optionally Z, ±hh:mm, ±hhmm or ±hh. It returns false for
// anything else, including out-of-range fields (month 13, 24:00, Feb 30,
// leap seconds) and offsets beyond ±18:00.
func parseTimestamp(s string) (Timestamp, bool) {
	var ts Timestamp
	if len(s) < 16 || len(s) > 64 {
		return ts, false
	}
	year, ok1 := digits(s, 0, 4)
	month, ok2 := digits(s, 5, 2)
	day, ok3 := digits(s, 8, 2)
	if !ok1 || !ok2 || !ok3 || s[4] != '-' || s[7] != '-' {
		return ts, false
	}
	if c := s[10]; c != 'T' && c != 't' && c != ' ' {
		return ts, false
	}
	hour, ok1 := digits(s, 11, 2)
	minute, ok2 := digits(s, 14, 2)
	if !ok1 || !ok2 || s[13] != ':' {
		return ts, false
	}
	i := 16
	sec, nsec := 0, 0
	if i < len(s) && s[i] == ':' {
		v, ok := digits(s, i+1, 2)
		if !ok {
			return ts, false
		}
		sec = v
		i += 3
		if i < len(s) && (s[i] == '.' || s[i] == ',') {
			i++
			start := i
			scale := 100000000
			for i < len(s) && s[i] >= '0' && s[i] <= '9' {
				nsec += int(s[i]-'0') * scale
				scale /= 10
				i++
			}
			if i == start {
				return ts, false
			}
		}
	}
	if month < 1 || month > 12 || day < 1 || day > daysIn(year, month) || hour > 23 || minute > 59 || sec > 59 {
		return ts, false
	}
	loc := time.UTC
	switch {
	case i == len(s):
	case s[i] == 'Z' || s[i] == 'z':
		if i+1 != len(s) {
			return ts, false
		}
		ts.Zoned = true
	case s[i] == '+' || s[i] == '-':
		sign := 1
		if s[i] == '-' {
			sign = -1
		}
		rest := s[i+1:]
		var oh, om int
		var ok bool
		switch len(rest) {
		case 2:
			oh, ok = digits(rest, 0, 2)
		case 4:
			oh, ok = digits(rest, 0, 2)
			if ok {
				om, ok = digits(rest, 2, 2)
			}
		case 5:
			oh, ok = digits(rest, 0, 2)
			if ok && rest[2] == ':' {
				om, ok = digits(rest, 3, 2)
			} else {
				ok = false
			}
		}
		if !ok || om > 59 || oh*60+om > 18*60 {
			return ts, false
		}
		loc = time.FixedZone("", sign*(oh*3600+om*60))
		ts.Zoned = true
	default:
		return ts, false
	}
	ts.T = time.Date(year, time.Month(month), day, hour, minute, sec, nsec, loc).UTC()
	return ts, true
}

// parseDate reads a plain date YYYY-MM-DD.
func parseDate(s string) (time.Time, bool) {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return time.Time{}, false
	}
	year, ok1 := digits(s, 0, 4)
	month, ok2 := digits(s, 5, 2)
	day, ok3 := digits(s, 8, 2)
	if !ok1 || !ok2 || !ok3 || month < 1 || month > 12 || day < 1 || day > daysIn(year, month) {
		return time.Time{}, false
	}
	return time.Date(year, time.Month(month), day, 0, 0, 0, 0, time.UTC), true
}

func digits(s string, at, n int) (int, bool) {
	if at+n > len(s) {
		return 0, false
	}
	v := 0
	for i := at; i < at+n; i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	return v, true
}

func daysIn(year, month int) int {
	return time.Date(year, time.Month(month)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}
