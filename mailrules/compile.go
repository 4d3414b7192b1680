package mailrules

import (
	"regexp"
	"strings"
	"time"
	"unicode/utf8"
)

// compiled is a checked rule ready to run.
type compiled struct {
	Rule
	from, subject, body *test
	status              *place
	ok, warn, failed    []string // lowercased
	jobName, errText    *place
	started, completed  *timePlace
	size                *sizePlace
}

// test is a compiled Test.
type test struct {
	contains string // lowercased
	re       *regexp.Regexp
}

// place is a compiled Field.
type place struct {
	subject bool
	re      *regexp.Regexp
	group   int
	after   string
	column  string
}

type timePlace struct {
	place
	layout string // "" : the usual layouts (mailparse.ParseTime)
	zone   *time.Location
}

type sizePlace struct {
	place
	unit     string
	grouping string
}

// Compile checks r and makes it ready to run. It returns a *Problem that
// names the member at fault.
func Compile(r Rule) (*compiled, error) {
	c := &compiled{Rule: r}
	name := strings.TrimSpace(r.Name)
	if name == "" || utf8.RuneCountInString(name) > MaxName {
		return nil, problem("name", "name must be 1 to %d characters", MaxName)
	}
	var err error
	if r.Match.From == nil && r.Match.Subject == nil && r.Match.Body == nil {
		return nil, problem("match", "match needs at least one of from, subject and body")
	}
	if c.from, err = compileTest("match.from", r.Match.From); err != nil {
		return nil, err
	}
	if c.subject, err = compileTest("match.subject", r.Match.Subject); err != nil {
		return nil, err
	}
	if c.body, err = compileTest("match.body", r.Match.Body); err != nil {
		return nil, err
	}
	if c.status, err = compilePlace("status.in", r.Status.In); err != nil {
		return nil, err
	}
	if c.ok, err = compileWords("status.ok", r.Status.OK, true); err != nil {
		return nil, err
	}
	if c.warn, err = compileWords("status.warning", r.Status.Warning, false); err != nil {
		return nil, err
	}
	if c.failed, err = compileWords("status.failed", r.Status.Failed, true); err != nil {
		return nil, err
	}
	if c.jobName, err = compilePlace("jobName", r.JobName); err != nil {
		return nil, err
	}
	if c.errText, err = compilePlace("error", r.Error); err != nil {
		return nil, err
	}
	if c.started, err = compileTime("startedAt", r.StartedAt); err != nil {
		return nil, err
	}
	if c.completed, err = compileTime("completedAt", r.CompletedAt); err != nil {
		return nil, err
	}
	if c.size, err = compileSize("size", r.Size); err != nil {
		return nil, err
	}
	switch r.Route {
	case "", "address":
	case "jobName":
		if r.JobName == nil {
			return nil, problem("route", `route "jobName" needs jobName: where the mail names its job`)
		}
	default:
		return nil, problem("route", `route must be "address" or "jobName"`)
	}
	return c, nil
}

// compileRegexp compiles a pattern within MaxPattern bytes.
func compileRegexp(field, pattern string) (*regexp.Regexp, error) {
	if len(pattern) > MaxPattern {
		return nil, problem(field, "%s must be at most %d bytes", field, MaxPattern)
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, problem(field, "%s is not a valid regular expression (RE2 syntax): %s", field, strings.TrimPrefix(err.Error(), "error parsing regexp: "))
	}
	return re, nil
}

func compileTest(field string, t *Test) (*test, error) {
	if t == nil {
		return nil, nil
	}
	switch {
	case (t.Contains == "") == (t.Regexp == ""):
		return nil, problem(field, "%s needs exactly one of contains and regexp", field)
	case t.Contains != "":
		if len(t.Contains) > MaxPattern {
			return nil, problem(field+".contains", "%s.contains must be at most %d bytes", field, MaxPattern)
		}
		return &test{contains: strings.ToLower(t.Contains)}, nil
	}
	re, err := compileRegexp(field+".regexp", t.Regexp)
	if err != nil {
		return nil, err
	}
	return &test{re: re}, nil
}

func compileWords(field string, words []string, required bool) ([]string, error) {
	if required && len(words) == 0 {
		return nil, problem(field, "%s needs at least one word", field)
	}
	if len(words) > MaxWords {
		return nil, problem(field, "%s has at most %d words", field, MaxWords)
	}
	out := make([]string, len(words))
	for i, w := range words {
		w = strings.ToLower(strings.TrimSpace(w))
		if w == "" || len(w) > MaxPattern {
			return nil, problem(field, "%s: each word is 1 to %d bytes", field, MaxPattern)
		}
		out[i] = w
	}
	return out, nil
}

func compilePlace(field string, f *Field) (*place, error) {
	if f == nil {
		return nil, nil
	}
	p := &place{}
	switch f.From {
	case "", "body":
	case "subject":
		p.subject = true
	default:
		return nil, problem(field+".from", `%s.from must be "body" or "subject"`, field)
	}
	n := 0
	for _, s := range []string{f.Regexp, f.After, f.Column} {
		if s != "" {
			n++
		}
		if len(s) > MaxPattern {
			return nil, problem(field, "%s: a pattern, heading or column is at most %d bytes", field, MaxPattern)
		}
	}
	if n != 1 {
		return nil, problem(field, "%s needs exactly one of regexp, after and column", field)
	}
	switch {
	case f.Regexp != "":
		re, err := compileRegexp(field+".regexp", f.Regexp)
		if err != nil {
			return nil, err
		}
		p.re, p.group = re, 1
		if i := re.SubexpIndex("value"); i > 0 {
			p.group = i
		}
		if re.NumSubexp() < 1 {
			return nil, problem(field+".regexp", "%s.regexp needs a group: the value is what its first group (or the group named value) matched", field)
		}
	case f.After != "":
		p.after = strings.ToLower(strings.TrimSpace(f.After))
	default:
		p.column = strings.ToLower(strings.TrimSuffix(strings.TrimSpace(f.Column), ":"))
	}
	return p, nil
}

func compileTime(field string, f *TimeField) (*timePlace, error) {
	if f == nil {
		return nil, nil
	}
	p, err := compilePlace(field, &f.Field)
	if err != nil {
		return nil, err
	}
	tp := &timePlace{place: *p}
	if f.Format != "" {
		if len(f.Format) > 64 {
			return nil, problem(field+".format", "%s.format is at most 64 bytes", field)
		}
		tp.layout = goLayout(f.Format)
	}
	if f.Zone != "" {
		loc, err := time.LoadLocation(f.Zone)
		if err != nil || f.Zone == "Local" {
			return nil, problem(field+".zone", "%s.zone %q is not an IANA time zone", field, f.Zone)
		}
		tp.zone = loc
	}
	return tp, nil
}

// compileSize checks a size's unit and grouping, then its place.
func compileSize(field string, f *SizeField) (*sizePlace, error) {
	if f == nil {
		return nil, nil
	}
	unit := strings.ToLower(f.Unit)
	if _, ok := unitBytes[unit]; !ok && unit != "" {
		return nil, problem(field+".unit", `%s.unit must be one of B, KB, MB, GB, TB (or "" to read it from the mail)`, field)
	}
	if !strings.Contains(`,. '`, f.Grouping) || len(f.Grouping) > 1 {
		return nil, problem(field+".grouping", `%s.grouping must be one of "," "." " " "'" or ""`, field)
	}
	p, err := compilePlace(field, &f.Field)
	if err != nil {
		return nil, err
	}
	return &sizePlace{place: *p, unit: unit, grouping: f.Grouping}, nil
}
