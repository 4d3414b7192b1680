package transport

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"unicode/utf8"

	"backupmon/engine"
	"backupmon/jsonx"
)

// refReportBody reads a Report API body the way api.md 2.9 and decisions.md
// 3 describe it, with encoding/json: the reference parseReportBody is
// checked against.
func refReportBody(body []byte, header string) (status string, in engine.ReportInput, problem string) {
	var fields map[string]json.RawMessage
	// Text that is not Unicode is not JSON (RFC 8259 8.1): encoding/json
	// would read it as U+FFFD. jsonx.ValidText has tests of its own.
	if err := json.Unmarshal(body, &fields); err != nil || fields == nil || !jsonx.ValidText(body) {
		return "", in, msgInvalidJSON
	}
	get := func(name string) (json.RawMessage, bool) {
		raw, ok := fields[name]
		if !ok || string(raw) == "null" {
			return nil, false
		}
		return raw, true
	}
	number := func(raw json.RawMessage) (float64, bool) {
		var v float64
		if raw[0] == '"' || json.Unmarshal(raw, &v) != nil {
			return 0, false
		}
		return v, true
	}
	var s string
	raw, ok := get("status")
	if !ok || json.Unmarshal(raw, &s) != nil {
		return "", in, msgBadStatus
	}
	switch s {
	case "ok":
		in.Status = engine.ReportOK
	case "warn":
		in.Status = engine.ReportWarn
	case "failed":
		in.Status = engine.ReportFailed
	default:
		return "", in, msgBadStatus
	}
	in.SizeBytes = -1
	if raw, ok := get("size_bytes"); ok {
		v, ok := number(raw)
		if !ok || v < 0 || v >= math.MaxInt64 {
			return "", in, msgBadSize
		}
		in.SizeBytes = int64(math.Round(v))
	}
	in.DurationSeconds = -1
	if raw, ok := get("duration_seconds"); ok {
		v, ok := number(raw)
		if !ok || v < 0 || v > 604800 {
			return "", in, msgBadDuration
		}
		in.DurationSeconds = int64(math.Round(v)) // half up: v is not negative
	}
	if raw, ok := get("timestamp"); ok {
		var ts string
		if json.Unmarshal(raw, &ts) == nil {
			if t, ok := parseTimestamp(ts); ok {
				in.TimestampMs, in.TimestampLocal = t.T.UnixMilli(), !t.Zoned
			}
		}
	}
	key := header
	if key == "" {
		if raw, ok := get("idempotency_key"); ok {
			if json.Unmarshal(raw, &key) != nil {
				return "", in, msgIdemNotString
			}
		}
	}
	if utf8.RuneCountInString(key) > 255 {
		return "", in, msgIdemTooLong
	}
	in.IdempotencyKey = key
	return s, in, ""
}

var reportBodySeeds = []string{
	`{"status":"ok"}`, `{"status":"warn"}`, `{"status":"failed"}`, `{"status":"OK"}`, `{"STATUS":"ok"}`,
	`{"status":"ok","size_bytes":0}`, `{"status":"ok","size_bytes":-0}`, `{"status":"ok","size_bytes":-1}`,
	`{"status":"ok","size_bytes":1.5}`, `{"status":"ok","size_bytes":1e400}`, `{"status":"ok","size_bytes":"10"}`,
	`{"status":"ok","size_bytes":9223372036854775807}`, `{"status":"ok","size_bytes":9223372036854774784}`,
	`{"status":"ok","size_bytes":-1e-400}`, `{"status":"ok","size_bytes":null}`, `{"status":"ok","size_bytes":true}`,
	`{"status":"ok","duration_seconds":604800}`, `{"status":"ok","duration_seconds":604800.4}`,
	`{"status":"ok","duration_seconds":604799.5}`, `{"status":"ok","duration_seconds":0.5}`,
	`{"status":"ok","duration_seconds":-0.1}`, `{"status":"ok","duration_seconds":"60"}`,
	`{"status":"ok","timestamp":"2024-01-01T00:00:00Z"}`, `{"status":"ok","timestamp":"2024-01-01 00:00"}`,
	`{"status":"ok","timestamp":12}`, `{"status":"ok","timestamp":"\u0032024-01-01T00:00:00Z"}`,
	`{"status":"ok","idempotency_key":"k"}`, `{"status":"ok","idempotency_key":5}`,
	`{"status":"ok","idempotency_key":"` + strings.Repeat("é", 255) + `"}`,
	`{"status":"ok","idempotency_key":"` + strings.Repeat("é", 256) + `"}`,
	`{"status":"ok","status":"failed"}`, `{"status":"failed","status":null}`, `{"st\u0061tus":"\u006fk"}`,
	`{"status":"ok"}x`, `{"status":"ok"}{}`, `{"status":"ok"} `, "\ufeff{\"status\":\"ok\"}", `null`, `[]`,
	`[{"status":"ok"}]`, `"ok"`, ``, ` `, `{`, `{"status":"ok",}`, "{\"status\":\"ok\",\"x\":\"\xff\"}",
	"{\"status\":\"ok\",\"idempotency_key\":\"\xff\xfe\"}", `{"status":"ok","x":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`,
	`{"status":"ok","x":` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + `}`,
	`{"status":"ok","duration_seconds":0.49999999999999994}`, `{"status":"ok","size_bytes":4503599627370497}`,
	`{"status":"ok","x":"\u00"}`, `{"status":"ok","x":"\ud800"}`, "{\"status\":\"ok\",\"x\":\"\t\"}",
	`{"status":"ok","x":01}`, `{"status":"ok","x":1.}`, `{"status":"ok","x":-}`, `{"status":"ok","x":1e}`,
	`{"status":"ok","x":tru}`, `{"status":"ok" "x":1}`, `{"status" "ok"}`, `{"\u0073tatus":"ok"}`,
}

// FuzzReportBody: parseReportBody never panics, what it accepts is within
// the contract's ranges, and it answers as the encoding/json reference does.
func FuzzReportBody(f *testing.F) {
	for i, s := range reportBodySeeds {
		header := ""
		if i%5 == 0 {
			header = "hdr-" + s[:min(len(s), 4)]
		}
		f.Add([]byte(s), header)
	}
	f.Add([]byte(`{"status":"ok"}`), strings.Repeat("k", 256))
	f.Fuzz(func(t *testing.T, body []byte, header string) {
		var in engine.ReportInput
		status, problem := parseReportBody(body, header, &in)
		if problem == "" {
			if in.Status < 1 || in.Status > 3 {
				t.Fatalf("%q: status %d", body, in.Status)
			}
			if in.SizeBytes < -1 {
				t.Fatalf("%q: size %d", body, in.SizeBytes)
			}
			if in.DurationSeconds < -1 || in.DurationSeconds > 604800 {
				t.Fatalf("%q: duration %d", body, in.DurationSeconds)
			}
			if utf8.RuneCountInString(in.IdempotencyKey) > 255 {
				t.Fatalf("%q: key of %d characters", body, utf8.RuneCountInString(in.IdempotencyKey))
			}
		}
		wantStatus, want, wantProblem := refReportBody(body, header)
		if problem != wantProblem {
			t.Fatalf("parseReportBody(%q, %q) = %q; encoding/json reference says %q", body, header, problem, wantProblem)
		}
		if problem != "" {
			return
		}
		if status != wantStatus || in != want {
			t.Fatalf("parseReportBody(%q, %q) = %q %+v; reference %q %+v", body, header, status, in, wantStatus, want)
		}
	})
}

func TestReportBodyTricky(t *testing.T) {
	type want struct {
		problem  string
		status   uint8
		size     int64
		duration int64
		key      string
	}
	ok := func(st uint8) want { return want{status: st, size: -1, duration: -1} }
	for _, c := range []struct {
		name, body, header string
		want               want
	}{
		{"duplicate keys, last wins", `{"status":"failed","status":"ok"}`, "", ok(engine.ReportOK)},
		{"duplicate keys, last is null", `{"status":"ok","status":null}`, "", want{problem: msgBadStatus}},
		{"duplicate size, last wins", `{"status":"ok","size_bytes":-1,"size_bytes":5}`, "", want{status: 1, size: 5, duration: -1}},
		{"status is case-sensitive", `{"status":"OK"}`, "", want{problem: msgBadStatus}},
		{"STATUS is not status", `{"STATUS":"ok"}`, "", want{problem: msgBadStatus}},
		{"escaped key and value", `{"st\u0061tus":"w\u0061rn"}`, "", ok(engine.ReportWarn)},
		{"status not a string", `{"status":1}`, "", want{problem: msgBadStatus}},
		{"deep nesting in an ignored field", `{"status":"ok","x":` + strings.Repeat("[", 500) + strings.Repeat("]", 500) + `}`, "", ok(engine.ReportOK)},
		{"nesting at encoding/json's limit", `{"status":"ok","x":` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + `}`, "", ok(engine.ReportOK)},
		{"nesting beyond encoding/json's 10000", `{"status":"ok","x":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`, "", want{problem: msgInvalidJSON}},
		{"huge size", `{"status":"ok","size_bytes":1e400}`, "", want{problem: msgBadSize}},
		{"size at 2^63", `{"status":"ok","size_bytes":9223372036854775808}`, "", want{problem: msgBadSize}},
		{"negative zero size", `{"status":"ok","size_bytes":-0}`, "", want{status: 1, size: 0, duration: -1}},
		{"negative zero duration", `{"status":"ok","duration_seconds":-0.0}`, "", want{status: 1, size: -1, duration: 0}},
		{"tiny negative size", `{"status":"ok","size_bytes":-1e-9}`, "", want{problem: msgBadSize}},
		{"size as a string", `{"status":"ok","size_bytes":"10"}`, "", want{problem: msgBadSize}},
		{"duration as a string", `{"status":"ok","duration_seconds":"10"}`, "", want{problem: msgBadDuration}},
		{"duration rounds half up", `{"status":"ok","duration_seconds":2.5}`, "", want{status: 1, size: -1, duration: 3}},
		{"duration just under one half", `{"status":"ok","duration_seconds":0.49999999999999994}`, "", want{status: 1, size: -1, duration: 0}},
		{"size above 2^52 kept exactly", `{"status":"ok","size_bytes":4503599627370497}`, "", want{status: 1, size: 4503599627370497, duration: -1}},
		{"size with exponent", `{"status":"ok","size_bytes":1.5E3}`, "", want{status: 1, size: 1500, duration: -1}},
		{"duration just over the limit", `{"status":"ok","duration_seconds":604800.1}`, "", want{problem: msgBadDuration}},
		{"duration at the limit", `{"status":"ok","duration_seconds":604800}`, "", want{status: 1, size: -1, duration: 604800}},
		{"null means absent", `{"status":"ok","size_bytes":null,"duration_seconds":null,"idempotency_key":null}`, "", ok(engine.ReportOK)},
		{"invalid UTF-8 in an ignored field", "{\"status\":\"ok\",\"note\":\"\xff\"}", "", want{problem: msgInvalidJSON}},
		{"invalid UTF-8 in the key", "{\"status\":\"ok\",\"idempotency_key\":\"a\xffb\"}", "", want{problem: msgInvalidJSON}},
		{"a lone surrogate in the key", `{"status":"ok","idempotency_key":"a\ud800b"}`, "", want{problem: msgInvalidJSON}},
		{"a surrogate pair in the key", `{"status":"ok","idempotency_key":"a\ud83d\ude00b"}`, "", want{status: 1, size: -1, duration: -1, key: "a😀b"}},
		{"BOM", "\ufeff{\"status\":\"ok\"}", "", want{problem: msgInvalidJSON}},
		{"leading whitespace", " \r\n\t{\"status\":\"ok\"}", "", ok(engine.ReportOK)},
		{"trailing whitespace", "{\"status\":\"ok\"}\n", "", ok(engine.ReportOK)},
		{"trailing garbage", `{"status":"ok"}x`, "", want{problem: msgInvalidJSON}},
		{"two objects", `{"status":"ok"}{"status":"ok"}`, "", want{problem: msgInvalidJSON}},
		{"trailing comma", `{"status":"ok",}`, "", want{problem: msgInvalidJSON}},
		{"null body", `null`, "", want{problem: msgInvalidJSON}},
		{"array", `[{"status":"ok"}]`, "", want{problem: msgInvalidJSON}},
		{"string", `"ok"`, "", want{problem: msgInvalidJSON}},
		{"empty", ``, "", want{problem: msgInvalidJSON}},
		{"NUL after the object", "{\"status\":\"ok\"}\x00", "", want{problem: msgInvalidJSON}},
		{"header wins", `{"status":"ok","idempotency_key":"body"}`, "head", want{status: 1, size: -1, duration: -1, key: "head"}},
		{"header wins over a bad body key", `{"status":"ok","idempotency_key":5}`, "head", want{status: 1, size: -1, duration: -1, key: "head"}},
		{"key not a string", `{"status":"ok","idempotency_key":5}`, "", want{problem: msgIdemNotString}},
		{"key of 255 characters", `{"status":"ok","idempotency_key":"` + strings.Repeat("€", 255) + `"}`, "", want{status: 1, size: -1, duration: -1, key: strings.Repeat("€", 255)}},
		{"key of 256 characters", `{"status":"ok","idempotency_key":"` + strings.Repeat("a", 256) + `"}`, "", want{problem: msgIdemTooLong}},
		{"header of 256 characters", `{"status":"ok"}`, strings.Repeat("a", 256), want{problem: msgIdemTooLong}},
		{"status checked before size", `{"status":"nope","size_bytes":-1}`, "", want{problem: msgBadStatus}},
		{"size checked before duration", `{"status":"ok","size_bytes":-1,"duration_seconds":-1}`, "", want{problem: msgBadSize}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var in engine.ReportInput
			_, problem := parseReportBody([]byte(c.body), c.header, &in)
			got := want{problem: problem}
			if problem == "" {
				got = want{status: in.Status, size: in.SizeBytes, duration: in.DurationSeconds, key: in.IdempotencyKey}
			}
			if got != c.want {
				t.Errorf("parseReportBody(%.80q, %q) = %+v; want %+v", c.body, c.header, got, c.want)
			}
			// The encoding/json reference agrees.
			_, ref, refProblem := refReportBody([]byte(c.body), c.header)
			if refProblem != problem || problem == "" && (ref.Status != in.Status || ref.SizeBytes != in.SizeBytes || ref.DurationSeconds != in.DurationSeconds || ref.IdempotencyKey != in.IdempotencyKey) {
				t.Errorf("reference disagrees: %q %+v", refProblem, ref)
			}
		})
	}
}
