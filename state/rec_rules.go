package state

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"

	"backupmon/codec"
)

// Records of a workspace's parsing rules (decisions.md, parsing rules):
// saved (made or changed), deleted, put in order, each with its activity
// entry. A rule's body is its canonical JSON (package mailrules checks it
// before the engine sees it); the state keeps it as text and never reads
// it. RuleSaved and RulesOrdered carry no activity: logs of earlier builds
// hold them; this build writes RuleSavedBy and RulesOrderedBy.

// Record type numbers of this file.
const (
	TypeRuleSaved      byte = 50
	TypeRuleDeleted    byte = 51
	TypeRulesOrdered   byte = 52
	TypeRuleSavedBy    byte = 70
	TypeRulesOrderedBy byte = 71
)

// ParseRule is one parsing rule of a workspace.
type ParseRule struct {
	ID                   ID
	Name, Spec           string
	CreatedAt, UpdatedAt int64
}

// fields walks a rule, in its record and in snapshots.
func (p *ParseRule) fields(f *codec.Fields) {
	f.Walk(p.ID[:], &p.Name, &p.Spec, &p.CreatedAt, &p.UpdatedAt)
}

// RuleSaved records a rule made (an id not yet in the list: it goes last)
// or changed (it keeps its place).
type RuleSaved struct {
	Header
	ParseRule
}

func (r *RuleSaved) apply(w *Workspace) error {
	p := new(ParseRule)
	*p = r.ParseRule
	list := slices.Clone(w.ParseRules) // copy on write: the mail listener reads the old list
	if i := w.ruleIndex(p.ID); i >= 0 {
		p.CreatedAt = list[i].CreatedAt
		list[i] = p
	} else {
		list = append(list, p)
	}
	w.setRules(list)
	w.IDs.Observe(p.ID)
	return nil
}

// Acted is what a record of an earlier layout lacked for its activity
// entry: the entry's id and who made the change ("": the admin API).
type Acted struct {
	ActivityID ID
	Actor      string
}

func (a *Acted) walk(f *codec.Fields) { f.Walk(a.ActivityID[:], &a.Actor) }

type (
	// RuleSavedBy is RuleSaved with its activity entry (rule.created or
	// rule.updated).
	RuleSavedBy struct {
		RuleSaved
		Acted
	}
	// RulesOrderedBy is RulesOrdered with its activity entry
	// (rules.reordered).
	RulesOrderedBy struct {
		RulesOrdered
		Acted
	}
)

func (r *RuleSavedBy) fields(f *codec.Fields)    { r.ParseRule.fields(f); r.Acted.walk(f) }
func (r *RulesOrderedBy) fields(f *codec.Fields) { r.RulesOrdered.fields(f); r.Acted.walk(f) }

func (r *RuleSavedBy) apply(w *Workspace) error {
	typ := "rule.updated"
	if w.ruleIndex(r.ID) < 0 {
		typ = "rule.created"
	}
	if err := r.RuleSaved.apply(w); err != nil {
		return err
	}
	w.addActivity(Activity{ID: r.ActivityID, At: r.UpdatedAt, Type: typ, Actor: actorOr(r.Actor), SubjectID: r.ID, SubjectName: r.Name})
	return nil
}

// ruleIndex returns the place of rule id in the order, or -1.
func (w *Workspace) ruleIndex(id ID) int {
	return slices.IndexFunc(w.ParseRules, func(x *ParseRule) bool { return x.ID == id })
}

// RuleDeleted records that a rule is gone, with its activity entry
// (rule.deleted; the records of earlier builds, which wrote none, carry
// the entry's id and actor too).
type RuleDeleted struct{ Removal }

func (r *RuleDeleted) apply(w *Workspace) error {
	var p *ParseRule
	if i := w.ruleIndex(r.ID); i >= 0 {
		p = w.ParseRules[i]
	}
	return remove(w, &r.Removal, "delete unknown parsing rule", p, func(p *ParseRule) Activity {
		w.setRules(slices.DeleteFunc(slices.Clone(w.ParseRules), func(x *ParseRule) bool { return x == p }))
		return Activity{Type: "rule.deleted", SubjectID: p.ID, SubjectName: p.Name}
	})
}

// RulesOrdered records the rules' new order: IDs names every rule once.
type RulesOrdered struct {
	Header
	IDs []ID
	At  int64
}

func (r *RulesOrdered) fields(f *codec.Fields) {
	codec.Slice(f, &r.IDs, len(ID{}), func(f *codec.Fields, id *ID) { f.Fixed(id[:]) })
	f.Varint(&r.At)
}

func (r *RulesOrderedBy) apply(w *Workspace) error {
	if err := r.RulesOrdered.apply(w); err != nil {
		return err
	}
	w.addActivity(Activity{ID: r.ActivityID, At: r.At, Type: "rules.reordered", Actor: actorOr(r.Actor)})
	return nil
}

func (r *RulesOrdered) apply(w *Workspace) error {
	if len(r.IDs) != len(w.ParseRules) {
		return fmt.Errorf("order %d parsing rules of %d", len(r.IDs), len(w.ParseRules))
	}
	list := make([]*ParseRule, 0, len(r.IDs))
	for _, id := range r.IDs {
		i := w.ruleIndex(id)
		if i < 0 || slices.Contains(list, w.ParseRules[i]) {
			return fmt.Errorf("order unknown or repeated parsing rule %s", id)
		}
		list = append(list, w.ParseRules[i])
	}
	w.setRules(list)
	return nil
}

// setRules replaces the rule list (never changed in place) and the specs
// the mail listener reads, and names this version of them.
func (w *Workspace) setRules(list []*ParseRule) {
	w.ParseRules = list
	specs := make([]string, len(list))
	h := sha256.New()
	h.Write(w.ID[:])
	for i, p := range list {
		specs[i] = p.Spec
		fmt.Fprintf(h, "%d:%s", len(p.Spec), p.Spec)
	}
	w.RuleSpecs = specs
	w.RulesKey = hex.EncodeToString(h.Sum(nil))
}

// ParseRule returns the rule id names, nil when none.
func (w *Workspace) ParseRule(id string) *ParseRule {
	if pid, ok := ParseID(id); ok {
		if i := w.ruleIndex(pid); i >= 0 {
			return w.ParseRules[i]
		}
	}
	return nil
}

func (p *ParseRule) key() ID { return p.ID }

func (p *ParseRule) walk(s *snap, w *Workspace) error {
	p.fields(s.f)
	return s.observe(p.ID)
}

// RulesState is a workspace's parsing rules: ParseRules in their order,
// RuleSpecs their specs (the list the mail listener is handed), RulesKey a
// digest that names this version of them. The lists are replaced, never
// changed in place.
type RulesState struct {
	ParseRules []*ParseRule
	RuleSpecs  []string
	RulesKey   string
}

// walkRules walks the rules, then the suggestions' state, at the end of a
// snapshot (layout 8).
func (w *Workspace) walkRules(s *snap) error {
	if err := walkList(s, &w.ParseRules, func() *ParseRule { return &ParseRule{} }, (*ParseRule).walk); err != nil {
		return err
	}
	if s.reading() {
		w.setRules(w.ParseRules)
	}
	return w.walkAI(s)
}
