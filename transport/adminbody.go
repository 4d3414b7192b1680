package transport

import (
	"bytes"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"backupmon/engine"
	"backupmon/jsonx"
)

// fields reads a JSON object's members one by one into typed optional
// values. The first problem is kept (its message names the field); fields the
// reader never asked for are unknown and refused.
type fields struct {
	prefix string
	m      map[string]jsonx.RawMessage
	used   map[string]bool
	err    *engine.Error
	subs   []*fields // the nested objects read, in the order read
}

// parseFields reads body as a JSON object. An empty body is an empty object
// when emptyOK.
func parseFields(body []byte, emptyOK bool) (*fields, *engine.Error) {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 && emptyOK {
		return &fields{m: map[string]jsonx.RawMessage{}, used: map[string]bool{}}, nil
	}
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, &engine.Error{Kind: engine.KindInvalid, Field: "body", Message: "body must be a JSON object"}
	}
	var m map[string]jsonx.RawMessage
	if err := jsonx.Unmarshal(trimmed, &m); err != nil {
		return nil, &engine.Error{Kind: engine.KindInvalid, Field: "body", Message: "body must be a JSON object"}
	}
	return &fields{m: m, used: map[string]bool{}}, nil
}

func (f *fields) name(n string) string { return f.prefix + n }

func (f *fields) fail(field, format string, args ...any) {
	if f.err == nil {
		f.err = &engine.Error{Kind: engine.KindInvalid, Field: field, Message: fmt.Sprintf(format, args...)}
	}
}

// raw returns a member's bytes, or ok false when absent; null is reported
// with null true.
func (f *fields) raw(n string) (raw []byte, null, ok bool) {
	f.used[n] = true
	v, ok := f.m[n]
	if !ok {
		return nil, false, false
	}
	v = bytes.TrimSpace(v)
	return v, string(v) == "null", true
}

// member reads member n: unset when absent, set and null when null, or
// else what parse makes of its bytes; parse says what the member must be
// when they are not a value of its kind, and that is f's problem.
func member[T any](f *fields, n string, parse func(raw []byte) (T, string)) engine.Opt[T] {
	raw, null, ok := f.raw(n)
	switch {
	case !ok:
		return engine.Opt[T]{}
	case null:
		return engine.Opt[T]{Set: true, Null: true}
	}
	v, must := parse(raw)
	if must != "" {
		f.fail(f.name(n), "%s %s", f.name(n), must)
		return engine.Opt[T]{}
	}
	return engine.Some(v)
}

func (f *fields) str(n string) engine.Opt[string] { return member(f, n, parseString) }

func (f *fields) integer(n string) engine.Opt[int64] { return member(f, n, parseInteger) }

func (f *fields) number(n string) engine.Opt[float64] { return member(f, n, parseNumber) }

func (f *fields) boolean(n string) engine.Opt[bool] { return member(f, n, parseBool) }

func (f *fields) strings(n string) engine.Opt[[]string] { return member(f, n, parseStrings) }

// timestamp reads an ISO 8601 date-time with a time zone.
func (f *fields) timestamp(n string) engine.Opt[time.Time] {
	s := f.str(n)
	if !s.Set || s.Null {
		return engine.Opt[time.Time]{Set: s.Set, Null: s.Null}
	}
	ts, ok := parseTimestamp(s.V)
	if !ok || !ts.Zoned || ts.T.Year() < 2000 || ts.T.Year() > 9999 {
		f.fail(f.name(n), "%s must be an ISO 8601 date-time with a time zone, e.g. 2026-01-31T23:00:00Z", f.name(n))
		return engine.Opt[time.Time]{}
	}
	return engine.Some(ts.T)
}

// The parsers of member's values: each returns the value, or what the
// member must be.

func parseString(raw []byte) (string, string) {
	var s string
	if raw[0] != '"' || jsonx.Unmarshal(raw, &s) != nil {
		return "", "must be a string"
	}
	if !jsonx.ValidText(raw) { // decoded, bad bytes and lone surrogates would be U+FFFD
		return "", "must be valid UTF-8 text"
	}
	return strings.Clone(s), ""
}

func parseInteger(raw []byte) (int64, string) {
	v, ok := jsonNumber(raw)
	if !ok || v != math.Trunc(v) || math.Abs(v) > 1<<53 {
		return 0, "must be an integer"
	}
	return int64(v), ""
}

func parseNumber(raw []byte) (float64, string) {
	v, ok := jsonNumber(raw)
	if !ok {
		return 0, "must be a number"
	}
	return v, ""
}

func parseBool(raw []byte) (bool, string) {
	switch string(raw) {
	case "true":
		return true, ""
	case "false":
		return false, ""
	}
	return false, "must be true or false"
}

func parseStrings(raw []byte) ([]string, string) {
	var list []string
	if raw[0] != '[' || jsonx.Unmarshal(raw, &list) != nil {
		return nil, "must be a list of strings"
	}
	for i := range list {
		list[i] = strings.Clone(list[i])
	}
	return list, ""
}

// object returns the fields of a nested object member (nil when absent or
// null; set and null report which).
func (f *fields) object(n string) (sub *fields, set, null bool) {
	raw, null, ok := f.raw(n)
	if !ok {
		return nil, false, false
	}
	if null {
		return nil, true, true
	}
	var m map[string]jsonx.RawMessage
	if raw[0] != '{' || jsonx.Unmarshal(raw, &m) != nil {
		f.fail(f.name(n), "%s must be an object", f.name(n))
		return nil, false, false
	}
	sub = &fields{prefix: f.name(n) + ".", m: m, used: map[string]bool{}}
	f.subs = append(f.subs, sub)
	return sub, true, false
}

// finish returns the first problem: an unknown member (named with its path)
// or a member of the wrong type, of f itself first, then of each nested
// object it read, in order.
func (f *fields) finish() *engine.Error {
	var unknown []string
	for k := range f.m {
		if !f.used[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return &engine.Error{Kind: engine.KindInvalid, Field: f.name(unknown[0]), Message: "unknown field " + strconv.Quote(f.name(unknown[0]))}
	}
	if f.err != nil {
		return f.err
	}
	for _, sub := range f.subs {
		if err := sub.finish(); err != nil {
			return err
		}
	}
	return nil
}
