// Package mailrules reads report e-mails with a workspace's own parsing
// rules: a rule matches mails by sender, subject and body, and says which
// words give the status and where the job name, the run's start and end,
// the size and the error text are. Patterns are Go's RE2 regular
// expressions, so matching stays linear in the mail's length; a rule's
// bounds (Limits) keep a workspace's rules cheap to run on every mail.
package mailrules

import (
	"fmt"
	"strings"
	"time"

	"backupmon/jsonx"
)

// Limits of rules (decisions.md, parsing rules).
const (
	MaxRules      = 50                     // rules per workspace
	MaxPattern    = 500                    // bytes of one pattern, heading, column or word
	MaxWords      = 20                     // words in one status list
	MaxName       = 100                    // characters of a rule's name
	MaxSpec       = 16 << 10               // bytes of a rule's JSON
	TimePerMail   = 200 * time.Millisecond // all of a workspace's rules on one mail
	maxValueBytes = 1000                   // bytes of a field's value kept
)

// Rule is one parsing rule as its owner writes it (its JSON is the admin
// API's body and what the log keeps).
type Rule struct {
	Name string `json:"name"`
	// Override runs the rule before the vendor's parser for jobs of any
	// vendor; without it the rule reads only jobs of the vendor "custom".
	Override bool  `json:"override"`
	Match    Match `json:"match"`
	// Status says which words mean ok, warning and failed, and where to
	// look for them (default: the subject, then the body).
	Status StatusWords `json:"status"`
	Places             // where the fields are (their members sit in the rule's JSON)
	// Route says which job a mail belongs to: "address" (default) the job
	// of the ingest address it was sent to; "jobName" the workspace's job
	// whose name is the job name the rule read (an address shared by
	// several jobs).
	Route string `json:"route,omitempty"`
}

// Places says where a rule finds each field; nil: not read.
type Places struct {
	JobName *Field `json:"jobName,omitempty"`
	// StartedAt and CompletedAt are where the run's start and end are.
	StartedAt   *TimeField `json:"startedAt,omitempty"`
	CompletedAt *TimeField `json:"completedAt,omitempty"`
	Size        *SizeField `json:"size,omitempty"`
	Error       *Field     `json:"error,omitempty"` // the error or warning text
}

// Match says which mails a rule reads: every test given must hold, and at
// least one must be given.
type Match struct {
	From *Test `json:"from,omitempty"` // the From header as written
	// Subject is the decoded subject; Body the text body's lines (or the
	// HTML body's, rendered), joined by line breaks.
	Subject *Test `json:"subject,omitempty"`
	Body    *Test `json:"body,omitempty"`
}

// Test is one match: the text contains a string (without case), or a
// regular expression matches it. Exactly one is set.
type Test struct {
	Contains string `json:"contains,omitempty"`
	Regexp   string `json:"regexp,omitempty"`
}

// StatusWords are the words (or phrases) that mean each status, matched
// without case as whole words; failed is looked for first, then warning,
// then ok. In, when set, says where they are.
type StatusWords struct {
	In      *Field   `json:"in,omitempty"`
	OK      []string `json:"ok"`
	Warning []string `json:"warning,omitempty"`
	Failed  []string `json:"failed"`
}

// Field says where a value is: a regular expression's first group (or its
// group named "value"), the text after a heading (on its line, or the next
// line when the heading stands alone), or a table column (the cell under a
// header cell). Exactly one is set. From is "body" (default) or "subject".
type Field struct {
	From   string `json:"from,omitempty"`
	Regexp string `json:"regexp,omitempty"`
	After  string `json:"after,omitempty"`
	Column string `json:"column,omitempty"`
}

// TimeField is a time's place with how to read it: Format with the
// tokens YYYY YY MMMM MMM MM M DD D dddd ddd HH H hh h mm ss A Z (or a Go
// layout, or "" for the usual layouts products print), Zone an IANA zone
// (default: the zone of the mail's Date header) for times that state none.
type TimeField struct {
	Field
	Format string `json:"format,omitempty"`
	Zone   string `json:"zone,omitempty"`
}

// SizeField is a size's place with how to read it: Unit (B, KB, MB, GB, TB,
// or "" when the mail prints it after the number; binary multiples, as
// products mean them), Grouping the character that groups thousands
// ("," "." " " "'" or "" for none); the decimal mark is "," when Grouping
// is ".", else ".".
type SizeField struct {
	Field
	Unit     string `json:"unit,omitempty"`
	Grouping string `json:"grouping,omitempty"`
}

// Problem is a rule that cannot be kept: Field names the member (JSON
// path), Message says why.
type Problem struct {
	Field, Message string
}

// Error returns the message.
func (p *Problem) Error() string { return p.Message }

func problem(field, format string, args ...any) *Problem {
	return &Problem{Field: field, Message: fmt.Sprintf(format, args...)}
}

// Decode reads a rule's JSON, refusing unknown members, and checks it
// (Check). It returns the rule and its canonical JSON (what the log keeps),
// or a *Problem.
func Decode(spec []byte) (Rule, string, error) {
	var r Rule
	if len(spec) > MaxSpec {
		return r, "", problem("body", "a rule's JSON is at most %d bytes", MaxSpec)
	}
	if err := jsonx.UnmarshalStrict(spec, &r); err != nil {
		return r, "", problem("body", "the rule is not valid: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	if _, err := Compile(r); err != nil {
		return r, "", err
	}
	canon, err := jsonx.Marshal(r)
	if err != nil {
		return r, "", fmt.Errorf("encode rule: %w", err)
	}
	return r, string(canon), nil
}
