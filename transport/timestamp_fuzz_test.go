package transport

import (
	"strings"
	"testing"
	"time"
)

// rfc3339Limits reports whether parseTimestamp refuses s on purpose although
// time.Parse(time.RFC3339Nano) accepts it: text over 64 bytes (a fraction
// with dozens of digits) and offsets beyond ±18:00 or with a minute of 60,
// which time.Parse lets through (it accepts up to ±24:60).
//
// time.Parse also takes a one-digit hour ("2024-01-01T0:00:00Z"), which
// neither RFC 3339 nor ISO 8601 allows; parseTimestamp refuses it.
func rfc3339Limits(s string, t time.Time) bool {
	if len(s) > 64 {
		return true
	}
	if len(s) > 12 && s[12] == ':' {
		return true
	}
	_, off := t.Zone()
	if off < 0 {
		off = -off
	}
	if off > 18*3600 {
		return true
	}
	// "+hh:60" is read by time.Parse as one more hour.
	if n := len(s); n >= 6 && (s[n-6] == '+' || s[n-6] == '-') && s[n-2:] == "60" {
		return true
	}
	return false
}

var timestampSeeds = []string{
	"2024-03-10T02:30:00Z", "2024-03-10T02:30:00.123456789Z", "2024-03-10T02:30:00.1234567891234Z",
	"2024-03-10T02:30:00+01:00", "2024-03-10T02:30:00-0530", "2024-03-10T02:30:00+05", "2024-03-10 02:30:00",
	"2024-03-10T02:30", "2024-03-10T02:30Z", "2024-03-10t02:30:00z", "2024-03-10T02:30:00,5Z",
	"2024-02-29T00:00:00Z", "2023-02-29T00:00:00Z", "2024-12-31T23:59:60Z", "2024-12-31T24:00:00Z",
	"2024-13-01T00:00:00Z", "2024-00-01T00:00:00Z", "2024-01-00T00:00:00Z", "0000-01-01T00:00:00Z",
	"9999-12-31T23:59:59.999999999-18:00", "2024-01-01T00:00:00+18:01", "2024-01-01T00:00:00+23:59",
	"2024-01-01T00:00:00+00:60", "2024-01-01T00:00:00.Z", "2024-01-01T00:00:00Z ", " 2024-01-01T00:00:00Z",
	"2024-01-01T00:00:00+01:00:00", "2024-01-01T00:00:00+1", "2024-01-01T00:00:00+001", "2024-01-01",
	"2024-1-01T00:00:00Z", "+2024-01-01T00:00:00Z", "2024-01-01T00:00:00ZZ", "2024-01-01T00:00:00+01:0a",
	"2024-01-01T00:00:00." + strings.Repeat("9", 50) + "Z", "2024-01-01T00:00:0", "2024-01-01T0:00:00Z",
	"2024-01-01T00:00:00-00:00", "2024-01-01T00:00:00−01:00",
}

// FuzzParseTimestamp: parseTimestamp never panics; what it accepts
// round-trips; and it accepts, with the same instant, everything
// time.Parse(time.RFC3339Nano) accepts (but for the limits above).
func FuzzParseTimestamp(f *testing.F) {
	for _, s := range timestampSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ts, ok := parseTimestamp(s)
		if ok {
			if ts.T.Location() != time.UTC {
				t.Fatalf("parseTimestamp(%q) = %v, not in UTC", s, ts.T)
			}
			// Format with an offset (or none when the text had none)
			// and read again: the same instant.
			var again string
			if ts.Zoned {
				// The offset the text had: its wall clock minus the instant.
				y, _ := digits(s, 0, 4)
				mo, _ := digits(s, 5, 2)
				d, _ := digits(s, 8, 2)
				h, _ := digits(s, 11, 2)
				mi, _ := digits(s, 14, 2)
				wall := time.Date(y, time.Month(mo), d, h, mi, ts.T.Second(), ts.T.Nanosecond(), time.UTC)
				off := wall.Sub(ts.T)
				if off%time.Minute != 0 || off < -18*time.Hour || off > 18*time.Hour {
					t.Fatalf("parseTimestamp(%q) = %v: offset %v", s, ts.T, off)
				}
				again = ts.T.In(time.FixedZone("", int(off/time.Second))).Format(time.RFC3339Nano)
			} else {
				again = ts.T.Format("2006-01-02T15:04:05.999999999")
			}
			ts2, ok2 := parseTimestamp(again)
			if !ok2 || !ts2.T.Equal(ts.T) || ts2.Zoned != ts.Zoned {
				t.Fatalf("parseTimestamp(%q) = %v (zoned %v); formatted %q reads back as %v (zoned %v, ok %v)", s, ts.T, ts.Zoned, again, ts2.T, ts2.Zoned, ok2)
			}
		}
		want, err := time.Parse(time.RFC3339Nano, s)
		if err == nil && !rfc3339Limits(s, want) {
			if !ok {
				t.Fatalf("parseTimestamp(%q) refused; time.Parse reads %v", s, want)
			}
			if !ts.Zoned || !ts.T.Equal(want) {
				t.Fatalf("parseTimestamp(%q) = %v (zoned %v); time.Parse reads %v", s, ts.T, ts.Zoned, want)
			}
		}
	})
}

func TestParseTimestampTable(t *testing.T) {
	utc := func(y int, mo time.Month, d, h, mi, s, ns int) time.Time {
		return time.Date(y, mo, d, h, mi, s, ns, time.UTC)
	}
	for _, c := range []struct {
		in    string
		ok    bool
		want  time.Time
		zoned bool
	}{
		{"2024-03-10T02:30:00Z", true, utc(2024, 3, 10, 2, 30, 0, 0), true},
		{"2024-03-10T02:30:00.5Z", true, utc(2024, 3, 10, 2, 30, 0, 5e8), true},
		{"2024-03-10T02:30:00,25Z", true, utc(2024, 3, 10, 2, 30, 0, 25e7), true},
		{"2024-03-10T02:30:00.1234567899Z", true, utc(2024, 3, 10, 2, 30, 0, 123456789), true},
		{"2024-03-10T02:30:00+01:00", true, utc(2024, 3, 10, 1, 30, 0, 0), true},
		{"2024-03-10T02:30:00-0530", true, utc(2024, 3, 10, 8, 0, 0, 0), true},
		{"2024-03-10T02:30:00+05", true, utc(2024, 3, 9, 21, 30, 0, 0), true},
		{"2024-03-10T02:30:00-00:00", true, utc(2024, 3, 10, 2, 30, 0, 0), true},
		{"2024-03-10T02:30Z", true, utc(2024, 3, 10, 2, 30, 0, 0), true},         // no seconds
		{"2024-03-10 02:30:00", true, utc(2024, 3, 10, 2, 30, 0, 0), false},      // space, no offset
		{"2024-03-10t02:30:00z", true, utc(2024, 3, 10, 2, 30, 0, 0), true},      // lowercase
		{"2024-03-10T02:30", true, utc(2024, 3, 10, 2, 30, 0, 0), false},         // no offset
		{"2024-02-29T12:00:00Z", true, utc(2024, 2, 29, 12, 0, 0, 0), true},      // leap year
		{"2024-01-01T00:00:00+18:00", true, utc(2023, 12, 31, 6, 0, 0, 0), true}, // largest offset
		{"9999-12-31T23:59:59.999999999Z", true, utc(9999, 12, 31, 23, 59, 59, 999999999), true},
		{"2023-02-29T12:00:00Z", false, time.Time{}, false}, // not a leap year
		{"2024-04-31T12:00:00Z", false, time.Time{}, false},
		{"2024-12-31T23:59:60Z", false, time.Time{}, false}, // leap second
		{"2024-12-31T24:00:00Z", false, time.Time{}, false}, // 24:00
		{"2024-12-31T23:60:00Z", false, time.Time{}, false},
		{"2024-13-01T00:00:00Z", false, time.Time{}, false},
		{"2024-01-01T00:00:00+18:01", false, time.Time{}, false},
		{"2024-01-01T00:00:00+01:60", false, time.Time{}, false},
		{"2024-01-01T00:00:00+1", false, time.Time{}, false},
		{"2024-01-01T00:00:00+001", false, time.Time{}, false},
		{"2024-01-01T00:00:00+01:00:00", false, time.Time{}, false},
		{"2024-01-01T00:00:00.Z", false, time.Time{}, false},
		{"2024-01-01T00:00:00ZZ", false, time.Time{}, false},
		{"2024-01-01T00:00:00Z ", false, time.Time{}, false},
		{" 2024-01-01T00:00:00Z", false, time.Time{}, false},
		{"2024-01-01", false, time.Time{}, false},
		{"2024-01-01T0:00:00Z", false, time.Time{}, false},
		{"2024-01-01T00:00:0Z", false, time.Time{}, false},
		{"2024-01-01X00:00:00Z", false, time.Time{}, false},
		{"+2024-01-01T00:00:00Z", false, time.Time{}, false},
		{"2024-01-01T00:00:00−01:00", false, time.Time{}, false}, // U+2212, not a minus
		{"2024-01-01T00:00:00." + strings.Repeat("1", 60) + "Z", false, time.Time{}, false},
		{"", false, time.Time{}, false},
	} {
		got, ok := parseTimestamp(c.in)
		if ok != c.ok || ok && (!got.T.Equal(c.want) || got.Zoned != c.zoned) {
			t.Errorf("parseTimestamp(%q) = %v zoned %v ok %v; want %v zoned %v ok %v", c.in, got.T, got.Zoned, ok, c.want, c.zoned, c.ok)
		}
	}
}
