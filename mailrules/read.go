package mailrules

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"backupmon/mailparse"
)

// Reading is what one rule read from a mail, field by field, with why a
// field is empty: what the dashboard's "try it" shows.
type Reading struct {
	Rule    string         `json:"rule"`
	Matched bool           `json:"matched"`
	Why     string         `json:"why,omitempty"` // why the rule does not match, or why its reading is no report
	Status  string         `json:"status"`        // ok, warn, failed; "" when no status word was found
	Fields  []FieldReading `json:"fields"`
	// Result is the report the mail becomes (valid when Status is set).
	Result mailparse.Result `json:"-"`
	// JobName is the job name read, for Route "jobName".
	JobName string `json:"-"`
}

// FieldReading is one field of a Reading: the text found where the rule
// says, the value read from it, or why there is none.
type FieldReading struct {
	Field string `json:"field"`
	Text  string `json:"text"`
	Value string `json:"value"`
	Why   string `json:"why,omitempty"`
}

// mailText is a message's texts as rules read them, built once per mail.
type mailText struct {
	m     *mailparse.Message
	lines []string
	body  string
	stop  func() bool // true once the mail's time is spent
}

// newMailText takes the plain-text body's lines as written (the
// message's own lines collapse the runs of spaces that make a plain-text
// table's columns), else the HTML body's rendered lines.
func newMailText(m *mailparse.Message, stop func() bool) *mailText {
	lines := m.HTMLLines
	if m.Text != "" {
		lines = nil
		for l := range strings.SplitSeq(m.Text, "\n") {
			if l = strings.TrimSpace(l); l != "" {
				lines = append(lines, l)
			}
		}
	}
	return &mailText{m: m, lines: lines, body: strings.Join(lines, "\n"), stop: stop}
}

// errOutOfTime is the reason of a mail whose rules ran out of time.
func errOutOfTime() string {
	return fmt.Sprintf("the parsing rules ran out of time (%d ms per mail)", TimePerMail.Milliseconds())
}

// matches reports whether the rule matches the mail, or why not.
func (c *compiled) matches(t *mailText) (bool, string) {
	for _, x := range []struct {
		name string
		tst  *test
		text string
	}{{"sender", c.from, t.m.From}, {"subject", c.subject, t.m.Subject}, {"body", c.body, t.body}} {
		if x.tst == nil {
			continue
		}
		if t.stop() {
			return false, errOutOfTime()
		}
		if x.tst.re != nil {
			if !x.tst.re.MatchString(x.text) {
				return false, fmt.Sprintf("the %s does not match the regexp %q", x.name, x.tst.re.String())
			}
			continue
		}
		if !strings.Contains(strings.ToLower(x.text), x.tst.contains) {
			return false, fmt.Sprintf("the %s does not contain %q", x.name, x.tst.contains)
		}
	}
	return true, ""
}

// read reads the mail with the rule; the rule must match it.
func (c *compiled) read(t *mailText) Reading {
	rd := Reading{Rule: c.Name, Matched: true, Result: mailparse.Result{DurationSeconds: -1, SizeBytes: -1}}
	rd.Status, rd.Fields = c.readStatus(t)
	if c.jobName != nil {
		fr := c.readText(t, "jobName", c.jobName)
		rd.JobName, rd.Result.JobName = fr.Value, fr.Value
		rd.Fields = append(rd.Fields, fr)
	}
	if c.started != nil {
		fr := c.readTime(t, "startedAt", c.started, &rd.Result.StartedAt)
		rd.Fields = append(rd.Fields, fr)
	}
	if c.completed != nil {
		fr := c.readTime(t, "completedAt", c.completed, &rd.Result.CompletedAt)
		rd.Fields = append(rd.Fields, fr)
	}
	if c.size != nil {
		fr := c.readSize(t, &rd.Result.SizeBytes)
		rd.Fields = append(rd.Fields, fr)
	}
	if c.errText != nil {
		fr := c.readText(t, "error", c.errText)
		rd.Result.Summary = fr.Value
		rd.Fields = append(rd.Fields, fr)
	}
	if t.stop() {
		rd.Status, rd.Why = "", errOutOfTime()
		return rd
	}
	switch rd.Status {
	case "ok":
		rd.Result.Status = mailparse.OK
	case "warn":
		rd.Result.Status = mailparse.Warn
	case "failed":
		rd.Result.Status = mailparse.Failed
	default:
		rd.Why = fmt.Sprintf("parsing rule %q found none of its status words", c.Name)
		return rd
	}
	if c.Route == "jobName" && rd.JobName == "" {
		rd.Status, rd.Why = "", fmt.Sprintf("parsing rule %q routes by job name and read none", c.Name)
		return rd
	}
	if rd.Result.Status == mailparse.OK {
		rd.Result.Summary = "" // a clean success has no error text
	}
	rd.Result.Finish()
	return rd
}

// readStatus finds the first status word: failed, then warning, then ok,
// in the status place, else in the subject and then the body.
func (c *compiled) readStatus(t *mailText) (string, []FieldReading) {
	fr := FieldReading{Field: "status"}
	var texts []string
	if c.status != nil {
		in := c.readText(t, "status", c.status)
		if in.Value == "" {
			in.Why = "no status: " + in.Why
			return "", []FieldReading{in}
		}
		fr.Text = in.Text
		texts = []string{in.Value}
	} else {
		texts = []string{t.m.Subject, t.body}
	}
	for _, text := range texts {
		low := strings.ToLower(text)
		for _, set := range []struct {
			status string
			words  []string
		}{{"failed", c.failed}, {"warn", c.warn}, {"ok", c.ok}} {
			for _, w := range set.words {
				if t.stop() {
					fr.Why = errOutOfTime()
					return "", []FieldReading{fr}
				}
				if hasWord(low, w) {
					if fr.Text == "" {
						fr.Text = w
					}
					fr.Value = set.status
					return set.status, []FieldReading{fr}
				}
			}
		}
	}
	if c.status != nil {
		fr.Why = "none of the status words is in the text found"
	} else {
		fr.Why = "none of the status words is in the subject or the body"
	}
	return "", []FieldReading{fr}
}

// readText reads a text field: its place's text, clean and cut.
func (c *compiled) readText(t *mailText, name string, p *place) FieldReading {
	fr := FieldReading{Field: name}
	fr.Text, fr.Why = p.find(t)
	fr.Value = fr.Text
	return fr
}

// find returns the text at p, or "" and why there is none.
func (p *place) find(t *mailText) (string, string) {
	if t.stop() {
		return "", errOutOfTime()
	}
	src, where := t.body, "body"
	lines := t.lines
	if p.subject {
		src, where, lines = t.m.Subject, "subject", []string{t.m.Subject}
	}
	var v string
	switch {
	case p.re != nil:
		sm := p.re.FindStringSubmatchIndex(src)
		if sm == nil {
			return "", fmt.Sprintf("the regexp %q matches nothing in the %s", p.re.String(), where)
		}
		if sm[2*p.group] < 0 {
			return "", "the regexp matched, but its group took no part in the match"
		}
		v = src[sm[2*p.group]:sm[2*p.group+1]]
	case p.after != "":
		var ok bool
		if v, ok = afterHeading(lines, p.after); !ok {
			return "", fmt.Sprintf("no line of the %s starts with %q", where, p.after)
		}
	default:
		var ok bool
		if v, ok = underColumn(lines, p.column); !ok {
			return "", fmt.Sprintf("no table row of the %s has a %q header cell with a row below it", where, p.column)
		}
	}
	v = strings.TrimSpace(v)
	if len(v) > maxValueBytes {
		v = mailparse.Truncate(strings.ToValidUTF8(v[:maxValueBytes], ""), maxValueBytes)
	}
	if v == "" {
		return "", fmt.Sprintf("the text found in the %s is empty", where)
	}
	return v, ""
}

// afterHeading returns the text after the first line that starts with
// heading (without case): the rest of that line after a colon or dash, or
// the next line when nothing follows the heading.
func afterHeading(lines []string, heading string) (string, bool) {
	for i, l := range lines {
		l = strings.TrimSpace(l)
		if len(l) < len(heading) || !strings.EqualFold(l[:len(heading)], heading) {
			continue
		}
		rest := strings.TrimSpace(strings.TrimLeft(l[len(heading):], " \t:-–—"))
		if rest == "" && i+1 < len(lines) {
			rest = lines[i+1]
		}
		return rest, true
	}
	return "", false
}

// underColumn returns the cell under the first header cell that reads
// column (without case, a trailing colon ignored), in the next row.
func underColumn(lines []string, column string) (string, bool) {
	for i := 0; i+1 < len(lines); i++ {
		for j, cell := range cells(lines[i]) {
			if strings.ToLower(strings.TrimSuffix(strings.TrimSpace(cell), ":")) != column {
				continue
			}
			below := cells(lines[i+1])
			if j < len(below) {
				return below[j], true
			}
		}
	}
	return "", false
}

// cells splits a table row: at tabs (rendered HTML tables), else at runs
// of two spaces or more (plain-text tables).
func cells(line string) []string {
	if strings.IndexByte(line, '\t') >= 0 {
		return strings.Split(line, "\t")
	}
	var out []string
	for {
		i := strings.Index(line, "  ")
		if i < 0 {
			return append(out, line)
		}
		out = append(out, line[:i])
		line = strings.TrimLeft(line[i:], " ")
	}
}

// hasWord reports whether w occurs in s with no letter or digit on either
// side.
func hasWord(s, w string) bool {
	for from := 0; from < len(s); {
		i := strings.Index(s[from:], w)
		if i < 0 {
			return false
		}
		i += from
		before, _ := utf8.DecodeLastRuneInString(s[:i])
		after, _ := utf8.DecodeRuneInString(s[i+len(w):])
		if !wordRune(before) && !wordRune(after) {
			return true
		}
		from = i + 1
	}
	return false
}

func wordRune(r rune) bool {
	return r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsDigit(r))
}
