package mailrules

import (
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"backupmon/mailparse"
)

// Set is a workspace's rules in their order, compiled.
type Set struct {
	rules []*compiled
}

// NewSet compiles specs (each a rule's JSON as Decode returned it). A spec
// that no longer compiles is left out and logged: rules are checked when
// saved, so only a build that reads them differently can meet one.
func NewSet(specs []string) *Set {
	s := &Set{rules: make([]*compiled, 0, len(specs))}
	for _, spec := range specs {
		r, _, err := Decode([]byte(spec))
		if err != nil {
			slog.Warn("parsing rule left out", "err", err)
			continue
		}
		c, _ := Compile(r)
		s.rules = append(s.rules, c)
	}
	return s
}

// slots bounds the rule readings running at once, those cut at their time
// included (a regular expression cannot be stopped; it ends in time linear
// in the mail): a slow rule holds its slot until it ends, so slow rules
// slow down rule readings only, and use at most this many processors.
var slots = make(chan struct{}, max(2, runtime.GOMAXPROCS(0)))

// Outcome is what a workspace's rules made of a mail.
type Outcome struct {
	// Matched says a rule took the mail: Reading holds its result, or,
	// when Reading.Status is "", Reason says why the mail stays unparsed.
	// Not matched: the vendor's parser reads the mail.
	Matched bool
	Reading Reading
	Reason  string
	Route   string // the rule's route ("" or "address", or "jobName")
}

// Read runs the rules on m in their order, within TimePerMail: only the
// rules with Override unless custom (the job's vendor is "custom"). The
// first rule that matches reads the mail. A mail the rules take too long on
// is Matched with a Reason, never handed on: a slow rule must not let
// another parser guess.
func (s *Set) Read(m *mailparse.Message, custom bool) Outcome {
	return s.read(m, custom, TimePerMail)
}

func (s *Set) read(m *mailparse.Message, custom bool, limit time.Duration) Outcome {
	if s == nil || m == nil || !slices.ContainsFunc(s.rules, func(c *compiled) bool { return custom || c.Override }) {
		return Outcome{}
	}
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case slots <- struct{}{}:
	case <-timer.C:
		return timedOut() // every slot is taken by rules still running
	}
	var spent atomic.Bool
	done := make(chan Outcome, 1)
	go func() {
		defer func() { <-slots }()
		t := newMailText(m, spent.Load)
		for _, c := range s.rules {
			if !custom && !c.Override {
				continue
			}
			if ok, _ := c.matches(t); !ok || spent.Load() {
				continue // out of time: the next rule's first check says so
			}
			rd := c.read(t)
			o := Outcome{Matched: true, Reading: rd, Route: c.Route}
			if rd.Status == "" {
				o.Reason = rd.Why
			}
			done <- o
			return
		}
		done <- Outcome{}
	}()
	select {
	case o := <-done:
		if spent.Load() {
			return timedOut()
		}
		return o
	case <-timer.C:
		spent.Store(true)
		return timedOut()
	}
}

func timedOut() Outcome {
	return Outcome{Matched: true, Reason: errOutOfTime()}
}

// Try reads m with r alone, whatever its Override, within TimePerMail:
// whether it matches (or why not) and each field with why it is empty.
func Try(r Rule, m *mailparse.Message) (Reading, error) {
	c, err := Compile(r)
	if err != nil {
		return Reading{}, err
	}
	timer := time.NewTimer(TimePerMail)
	defer timer.Stop()
	out := Reading{Rule: c.Name, Why: errOutOfTime(), Fields: []FieldReading{}}
	select {
	case slots <- struct{}{}:
	case <-timer.C:
		return out, nil
	}
	var spent atomic.Bool
	done := make(chan Reading, 1)
	go func() {
		defer func() { <-slots }()
		t := newMailText(m, spent.Load)
		ok, why := c.matches(t)
		if !ok {
			done <- Reading{Rule: c.Name, Why: why, Fields: []FieldReading{}}
			return
		}
		done <- c.read(t)
	}()
	select {
	case rd := <-done:
		if spent.Load() {
			return out, nil
		}
		return rd, nil
	case <-timer.C:
		spent.Store(true)
		return out, nil
	}
}

// Cache keeps compiled sets by a key that names one version of a
// workspace's rules, so that a mail does not compile them again.
type Cache struct {
	mu sync.Mutex
	m  map[string]*Set
}

// maxCached bounds the sets kept; the cache starts over past it.
const maxCached = 1024

// Get returns the set of specs under key, compiling it the first time.
func (c *Cache) Get(key string, specs []string) *Set {
	if len(specs) == 0 {
		return nil
	}
	c.mu.Lock()
	s := c.m[key]
	c.mu.Unlock()
	if s != nil {
		return s
	}
	s = NewSet(specs)
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxCached {
		c.m = map[string]*Set{}
	}
	c.m[key] = s
	c.mu.Unlock()
	return s
}

// String names the set's rules, for logs.
func (s *Set) String() string { return fmt.Sprintf("%d parsing rules", len(s.rules)) }
