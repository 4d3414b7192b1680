package state

import (
	"strconv"
	"time"
)

// msTime turns Unix milliseconds into a UTC time.
func MsTime(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

const (
	MsPerSecond = int64(1000)
	MsPerMinute = 60 * MsPerSecond
	MsPerHour   = 60 * MsPerMinute
	MsPerDay    = 24 * MsPerHour
)

// Time is a point in time in Unix milliseconds, shown as
// YYYY-MM-DDTHH:MM:SS.mmmZ.
type Time int64

// MarshalJSON writes the time in the contract's format.
// Millis returns the time as Unix milliseconds.
func (t Time) Millis() int64 { return int64(t) }

// MarshalJSON writes the time as a timestamp.
func (t Time) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 26)
	return AppendTime(b, int64(t)), nil
}

// NullTime is a Time that is null when zero.
type NullTime int64

// MarshalJSON writes null for zero, else the time.
func (t NullTime) MarshalJSON() ([]byte, error) {
	if t == 0 {
		return []byte("null"), nil
	}
	return Time(t).MarshalJSON()
}

// AppendTime appends ms as a quoted contract timestamp.
func AppendTime(b []byte, ms int64) []byte {
	b = append(b, '"')
	b = MsTime(ms).AppendFormat(b, "2006-01-02T15:04:05.000Z")
	return append(b, '"')
}

// FormatTime returns ms as a contract timestamp (unquoted).
func FormatTime(ms int64) string { return MsTime(ms).Format("2006-01-02T15:04:05.000Z") }

// MarshalJSON writes null for a rate with nothing to rate, else the
// percentage with one decimal.
func (r Rate) MarshalJSON() ([]byte, error) {
	if !r.Valid {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, r.Float(), 'f', 1, 64), nil
}

// Percent is a percentage shown with at least one decimal (95.0, 99.95).
type Percent float64

// MarshalJSON writes the percentage with at least one decimal.
func (p Percent) MarshalJSON() ([]byte, error) {
	b := strconv.AppendFloat(nil, float64(p), 'f', -1, 64)
	for _, c := range b {
		if c == '.' || c == 'e' {
			return b, nil
		}
	}
	return append(b, '.', '0'), nil
}
