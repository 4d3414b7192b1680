package transport

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"backupmon/engine"
)

// Report API messages (api.md 7.2, decisions.md 3). Their bytes are part of
// the contract.
const (
	msgInvalidJSON     = "Invalid JSON body"
	msgBadStatus       = "status must be one of: ok, warn, failed"
	msgBadSize         = "size_bytes must be a non-negative number"
	msgBadDuration     = "duration_seconds must be a number of seconds between 0 and 604800"
	msgIdemTooLong     = "idempotency_key must be at most 255 characters"
	msgIdemNotString   = "idempotency_key must be a string"
	msgBodyTooLarge    = "Request body too large"
	msgMalformedAuth   = "Missing or malformed Authorization header"
	msgInvalidKey      = "Invalid API key"
	msgKeyExpired      = "API key has expired"
	msgWrongKeyType    = "API key cannot use the Report API"
	msgSuspended       = "Workspace suspended"
	msgJobNotFound     = "Job not found"
	msgReportRateLimit = "Rate limit exceeded — max 60 requests/minute"
	msgDailyCap        = "Daily ingest cap (100 reports/job) reached — try again after the trailing 24h window rolls over"
	msgNotRecorded     = "Failed to record report"
	msgInFlight        = "A report with this Idempotency-Key is still being processed — retry shortly"
)

// Report body limits.
const (
	maxReportBody       = 64 << 10
	maxDurationSeconds  = 604800
	maxIdempotencyChars = 255
)

// parseReportBody reads a Report API body into in (api.md 2.9, decisions.md
// 3). idemHeader is the Idempotency-Key header (empty when absent), which
// wins over the body's idempotency_key. It returns the contract's message
// for the first problem found, in the order JSON, status, size_bytes,
// duration_seconds, idempotency key; or "" when the body is good.
func parseReportBody(body []byte, idemHeader string, in *engine.ReportInput) (status string, problem string) {
	var spans [len(reportFields)][2]int
	if !scanObject(body, reportFields[:], spans[:]) {
		return "", msgInvalidJSON
	}
	var vals [len(reportFields)][]byte // nil: the member is not there
	for i, sp := range spans {
		if sp[1] > 0 {
			vals[i] = body[sp[0]:sp[1]]
		}
	}
	raw, ok := present(vals[fStatus])
	if !ok {
		return "", msgBadStatus
	}
	switch string(raw) {
	case `"ok"`:
		status, in.Status = "ok", engine.ReportOK
	case `"warn"`:
		status, in.Status = "warn", engine.ReportWarn
	case `"failed"`:
		status, in.Status = "failed", engine.ReportFailed
	default:
		// A string with escapes ("\u006fk") still names a status.
		switch s, _ := jsonString(raw); s {
		case "ok":
			status, in.Status = "ok", engine.ReportOK
		case "warn":
			status, in.Status = "warn", engine.ReportWarn
		case "failed":
			status, in.Status = "failed", engine.ReportFailed
		default:
			return "", msgBadStatus
		}
	}
	in.SizeBytes = -1
	if raw, ok := present(vals[fSize]); ok {
		v, ok := jsonNumber(raw)
		if !ok || v < 0 || v >= math.MaxInt64 {
			return "", msgBadSize
		}
		in.SizeBytes = int64(math.Round(v)) // half up (v ≥ 0); Floor(v+0.5) rounded 0.49999999999999994 up and odd sizes above 2^52 up by one
	}
	in.DurationSeconds = -1
	if raw, ok := present(vals[fDuration]); ok {
		v, ok := jsonNumber(raw)
		if !ok || v < 0 || v > maxDurationSeconds {
			return "", msgBadDuration
		}
		in.DurationSeconds = int64(math.Round(v)) // half up (v ≥ 0)
	}
	if raw, ok := present(vals[fTimestamp]); ok {
		if s, ok := jsonString(raw); ok {
			if ts, ok := parseTimestamp(s); ok {
				in.TimestampMs = ts.T.UnixMilli()
				in.TimestampLocal = !ts.Zoned
			}
		}
	}
	key := idemHeader
	if key == "" {
		if raw, ok := present(vals[fIdem]); ok {
			if key, ok = jsonString(raw); !ok {
				return "", msgIdemNotString
			}
		}
	}
	if utf8.RuneCountInString(key) > maxIdempotencyChars {
		return "", msgIdemTooLong
	}
	// The engine keeps the key: copy it out of the request's buffers.
	in.IdempotencyKey = strings.Clone(key)
	return status, ""
}

// The body fields a report reads, by index.
const (
	fStatus = iota
	fSize
	fDuration
	fTimestamp
	fIdem
)

var reportFields = [...]string{"status", "size_bytes", "duration_seconds", "timestamp", "idempotency_key"}

// present returns a field's raw value unless it is absent or null (null in
// an optional field means absent).
func present(raw []byte) ([]byte, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, false
	}
	return raw, true
}

// jsonNumber reads a JSON number (not a string holding one). It returns
// false for anything else or a number too large for a float64.
func jsonNumber(raw []byte) (float64, bool) {
	if len(raw) == 0 || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) {
		return 0, false
	}
	// Plain integers below 2^53 (what backup tools send) are read exactly
	// without ParseFloat. A leading zero is left to ParseFloat's rules.
	if len(raw) <= 15 && raw[0] != '0' {
		var n int64
		digits := true
		for _, c := range raw {
			if c < '0' || c > '9' {
				digits = false
				break
			}
			n = n*10 + int64(c-'0')
		}
		if digits {
			return float64(n), true
		}
	}
	v, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, false
	}
	return v, true
}
