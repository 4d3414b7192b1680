package mailparse

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// MaxSummary is the longest summary kept, in characters (decisions.md 10).
const MaxSummary = 500

// Result is what a report e-mail says about one run.
type Result struct {
	JobName         string    // the job as the mail names it
	Status          Status    // never Unknown in a Result Parse returns
	StartedAt       time.Time // zero: not stated
	CompletedAt     time.Time // zero: not stated
	DurationSeconds int64     // -1: not stated
	SizeBytes       int64     // -1: not stated
	Summary         string    // the first error or warning text, or objectsSummary's for several objects; "" for a clean success
	IntegrityFailed bool      // a verification, integrity check or recovery test failed
}

// Parser reads one product's report e-mails.
type Parser interface {
	// Parse reads m. It returns an *UnreadableError when m's status cannot
	// be read; every other field is best effort (-1, zero or "" when the
	// mail does not state it).
	Parse(m *Message) (Result, error)
}

// UnreadableError says why a mail is not a report.
type UnreadableError struct {
	Reason string
}

// Error returns the reason.
func (e *UnreadableError) Error() string { return e.Reason }

// unreadable builds an *UnreadableError.
func unreadable(format string, args ...any) error {
	return &UnreadableError{Reason: fmt.Sprintf(format, args...)}
}

// parsers holds one parser per vendor identifier of decisions.md 6.
var parsers = map[string]Parser{}

// register adds p under vendor; each vendor's file calls it from init.
func register(vendor string, p Parser) {
	if _, dup := parsers[vendor]; dup {
		panic("mailparse: two parsers for " + vendor)
	}
	parsers[vendor] = p
}

// Vendors lists the vendor identifiers that have a parser.
func Vendors() []string {
	out := make([]string, 0, len(parsers))
	for v := range parsers {
		out = append(out, v)
	}
	return out
}

// Parse reads raw with vendor's parser. It returns the decoded message
// with the result (the message is nil when its header cannot be read), and
// an *UnreadableError when the mail is not a report: no readable body, an
// unknown vendor or a status the parser cannot find.
func Parse(vendor string, raw []byte) (Result, *Message, error) {
	p := parsers[vendor]
	if p == nil {
		return Result{}, nil, unreadable("no parser for vendor %q", vendor)
	}
	m, err := Read(raw)
	if err != nil {
		return Result{}, m, &UnreadableError{Reason: err.Error()}
	}
	r, err := ParseMessage(vendor, m)
	return r, m, err
}

// ParseMessage reads a decoded message with vendor's parser: Parse after
// Read. It returns an *UnreadableError as Parse does.
func ParseMessage(vendor string, m *Message) (Result, error) {
	p := parsers[vendor]
	if p == nil {
		return Result{}, unreadable("no parser for vendor %q", vendor)
	}
	r, err := p.Parse(m)
	if err != nil {
		var ue *UnreadableError
		if !errors.As(err, &ue) {
			err = &UnreadableError{Reason: err.Error()}
		}
		return Result{}, err
	}
	if r.Status == Unknown {
		return Result{}, unreadable("the %s parser found no status in the mail", vendor)
	}
	r.finish()
	return r, nil
}

// Finish completes a result read elsewhere (a workspace's parsing rules)
// as Parse completes its own: the duration from the start and end, or a
// missing end from the other two, and the summary and job name cleaned and
// cut.
func (r *Result) Finish() { r.finish() }

// finish fills what follows from the rest: the duration from the start and
// end, a missing end or start from the other and the duration; and cuts the
// summary to MaxSummary characters.
func (r *Result) finish() {
	switch {
	case !r.StartedAt.IsZero() && !r.CompletedAt.IsZero():
		if d := r.CompletedAt.Sub(r.StartedAt); d >= 0 {
			r.DurationSeconds = int64(d / time.Second)
		}
	case r.CompletedAt.IsZero() && !r.StartedAt.IsZero() && r.DurationSeconds >= 0:
		r.CompletedAt = r.StartedAt.Add(time.Duration(r.DurationSeconds) * time.Second)
	case r.StartedAt.IsZero() && !r.CompletedAt.IsZero() && r.DurationSeconds >= 0:
		r.StartedAt = r.CompletedAt.Add(-time.Duration(r.DurationSeconds) * time.Second)
	}
	r.Summary = Truncate(clean(r.Summary), MaxSummary)
	r.JobName = Truncate(clean(r.JobName), 200)
}

// Truncate cuts s to at most n characters, ending in "…" when it cut.
func Truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	var b strings.Builder
	i := 0
	for _, r := range s {
		if i == n-1 {
			break
		}
		b.WriteRune(r)
		i++
	}
	b.WriteString("…")
	return b.String()
}

// noResult is a Result with nothing stated, to start a parser's answer from.
func noResult() Result {
	return Result{DurationSeconds: -1, SizeBytes: -1}
}
