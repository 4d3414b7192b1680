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

func (f *fields) str(n string) engine.Opt[string] {
	raw, null, ok := f.raw(n)
	if !ok {
		return engine.Opt[string]{}
	}
	if null {
		return engine.Opt[string]{Set: true, Null: true}
	}
	var s string
	if raw[0] != '"' || jsonx.Unmarshal(raw, &s) != nil {
		f.fail(f.name(n), "%s must be a string", f.name(n))
		return engine.Opt[string]{}
	}
	if !jsonx.ValidText(raw) { // decoded, bad bytes and lone surrogates would be U+FFFD
		f.fail(f.name(n), "%s must be valid UTF-8 text", f.name(n))
		return engine.Opt[string]{}
	}
	return engine.Some(strings.Clone(s))
}

func (f *fields) integer(n string) engine.Opt[int64] {
	raw, null, ok := f.raw(n)
	if !ok {
		return engine.Opt[int64]{}
	}
	if null {
		return engine.Opt[int64]{Set: true, Null: true}
	}
	v, ok := jsonNumber(raw)
	if !ok || v != math.Trunc(v) || math.Abs(v) > 1<<53 {
		f.fail(f.name(n), "%s must be an integer", f.name(n))
		return engine.Opt[int64]{}
	}
	return engine.Some(int64(v))
}

func (f *fields) number(n string) engine.Opt[float64] {
	raw, null, ok := f.raw(n)
	if !ok {
		return engine.Opt[float64]{}
	}
	if null {
		return engine.Opt[float64]{Set: true, Null: true}
	}
	v, ok := jsonNumber(raw)
	if !ok {
		f.fail(f.name(n), "%s must be a number", f.name(n))
		return engine.Opt[float64]{}
	}
	return engine.Some(v)
}

func (f *fields) boolean(n string) engine.Opt[bool] {
	raw, null, ok := f.raw(n)
	if !ok {
		return engine.Opt[bool]{}
	}
	switch {
	case null:
		return engine.Opt[bool]{Set: true, Null: true}
	case string(raw) == "true":
		return engine.Some(true)
	case string(raw) == "false":
		return engine.Some(false)
	}
	f.fail(f.name(n), "%s must be true or false", f.name(n))
	return engine.Opt[bool]{}
}

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

func (f *fields) strings(n string) engine.Opt[[]string] {
	raw, null, ok := f.raw(n)
	if !ok {
		return engine.Opt[[]string]{}
	}
	if null {
		return engine.Opt[[]string]{Set: true, Null: true}
	}
	var list []string
	if raw[0] != '[' || jsonx.Unmarshal(raw, &list) != nil {
		f.fail(f.name(n), "%s must be a list of strings", f.name(n))
		return engine.Opt[[]string]{}
	}
	for i := range list {
		list[i] = strings.Clone(list[i])
	}
	return engine.Some(list)
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
