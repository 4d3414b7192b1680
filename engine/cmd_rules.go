package engine

import (
	"slices"
	"strconv"
	"strings"

	"backupmon/jsonx"
	"backupmon/state"
)

// Commands and reads of a workspace's parsing rules (decisions.md, parsing
// rules). The engine keeps each rule's JSON as the transport checked it
// (package mailrules) and hands the list to the mail listener; it never
// reads a rule itself.

// MaxParseRules bounds a workspace's parsing rules.
const MaxParseRules = 50

// MailRules is a workspace's parsing rules as the mail listener gets them:
// Specs in their order, Key naming this version of them (a digest), so
// that the listener compiles each version once. The slice is never changed
// in place.
type MailRules struct {
	Key   string   `json:"key,omitempty"`
	Specs []string `json:"specs,omitempty"`
}

// mailRules returns the workspace's rules for the mail listener, nil when
// it has none.
func (w *workspace) mailRules() *MailRules {
	if len(w.RuleSpecs) == 0 {
		return nil
	}
	return &MailRules{Key: w.RulesKey, Specs: w.RuleSpecs}
}

// ParseRuleView is a rule as the admin API and the dashboard show it: its
// id, name, place in the order (from 1) and the rule's JSON.
type ParseRuleView struct {
	ID, Name string
	Position int              // from 1: the order the rules are tried in
	Rule     jsonx.RawMessage // the rule as saved (canonical JSON)
	// CreatedAt and UpdatedAt are when it was made and last changed.
	CreatedAt, UpdatedAt state.Time
}

// MarshalJSON writes the view with the admin API's member names.
func (v ParseRuleView) MarshalJSON() ([]byte, error) {
	return jsonx.Marshal(map[string]any{"id": v.ID, "name": v.Name, "position": v.Position, "rule": v.Rule, "createdAt": v.CreatedAt, "updatedAt": v.UpdatedAt})
}

func ruleView(w *workspace, p *state.ParseRule) ParseRuleView {
	return ParseRuleView{
		ID: p.ID.String(), Name: p.Name, Position: slices.Index(w.ParseRules, p) + 1,
		Rule: jsonx.RawMessage(p.Spec), CreatedAt: state.Time(p.CreatedAt), UpdatedAt: state.Time(p.UpdatedAt),
	}
}

// ParseRules returns the workspace's rules in their order.
func (e *Engine) ParseRules(wsID string) ([]ParseRuleView, error) {
	return read(e, wsID, func(w *workspace) []ParseRuleView {
		out := make([]ParseRuleView, len(w.ParseRules))
		for i, p := range w.ParseRules {
			out[i] = ruleView(w, p)
		}
		return out
	})
}

// GetParseRule returns one rule; KindNotFound when there is none.
func (e *Engine) GetParseRule(wsID, id string) (ParseRuleView, error) {
	v, err := read(e, wsID, func(w *workspace) *ParseRuleView {
		if p := w.ParseRule(id); p != nil {
			v := ruleView(w, p)
			return &v
		}
		return nil
	})
	if err != nil {
		return ParseRuleView{}, err
	}
	if v == nil {
		return ParseRuleView{}, notFound("parsing rule")
	}
	return *v, nil
}

// SaveParseRule makes a rule (id "": it goes last) or changes rule id
// (it keeps its place), as made by actor ("": the admin API). name and
// spec are the rule's name and checked JSON. Errors: KindNotFound for an
// unknown id, KindConflict past MaxParseRules.
func (e *Engine) SaveParseRule(wsID, id, name, spec, actor string) (ParseRuleView, error) {
	return command(e, wsID, func(w *workspace, now int64) (decision[ParseRuleView], error) {
		rec := &state.RuleSavedBy{
			RuleSaved: state.RuleSaved{ParseRule: state.ParseRule{Name: strings.TrimSpace(name), Spec: spec, CreatedAt: now, UpdatedAt: now}},
			Acted:     state.Acted{ActivityID: w.IDs.Next(now), Actor: actor},
		}
		if id == "" {
			if len(w.ParseRules) >= MaxParseRules {
				return decision[ParseRuleView]{}, conflict("a workspace has at most %d parsing rules", MaxParseRules)
			}
			rec.ID = w.IDs.Next(now)
		} else {
			p := w.ParseRule(id)
			if p == nil {
				return decision[ParseRuleView]{}, notFound("parsing rule")
			}
			rec.ID = p.ID
		}
		return decision[ParseRuleView]{rec: rec, answer: func(w *workspace) ParseRuleView {
			return ruleView(w, w.ParseRule(rec.ID.String()))
		}}, nil
	})
}

// DeleteParseRule deletes a rule, as done by actor ("": the admin API);
// KindNotFound when there is none.
func (e *Engine) DeleteParseRule(wsID, id, actor string) error {
	return e.remove(wsID, actor, func(w *workspace) (state.ID, error) {
		return lookup(id, "parsing rule", func(id state.ID) bool { return w.ParseRule(id.String()) != nil })
	}, func(r state.Removal) state.Record { return &state.RuleDeleted{Removal: r} })
}

// OrderParseRules puts the rules in the order ids gives, which must name
// every rule once (KindInvalid otherwise), as done by actor ("": the admin
// API). It returns the rules in order.
func (e *Engine) OrderParseRules(wsID string, ids []string, actor string) ([]ParseRuleView, error) {
	return command(e, wsID, func(w *workspace, now int64) (decision[[]ParseRuleView], error) {
		if len(ids) != len(w.ParseRules) {
			return decision[[]ParseRuleView]{}, invalid("ids", "ids must name each of the workspace's %d parsing rules once", len(w.ParseRules))
		}
		rec := &state.RulesOrderedBy{RulesOrdered: state.RulesOrdered{At: now, IDs: make([]state.ID, 0, len(ids))}, Acted: state.Acted{ActivityID: w.IDs.Next(now), Actor: actor}}
		for _, id := range ids {
			p := w.ParseRule(id)
			if p == nil || slices.Contains(rec.IDs, p.ID) {
				return decision[[]ParseRuleView]{}, invalid("ids", "ids must name each of the workspace's %d parsing rules once", len(w.ParseRules))
			}
			rec.IDs = append(rec.IDs, p.ID)
		}
		return decision[[]ParseRuleView]{rec: rec, answer: func(w *workspace) []ParseRuleView {
			out := make([]ParseRuleView, len(w.ParseRules))
			for i, p := range w.ParseRules {
				out[i] = ruleView(w, p)
			}
			return out
		}}, nil
	})
}

// UnparsedRefs returns every unparsed e-mail's reference (with the
// workspace's rules), oldest first: what a re-read of all of them needs.
func (e *Engine) UnparsedRefs(wsID string) ([]UnparsedRef, error) {
	return read(e, wsID, func(w *workspace) []UnparsedRef {
		out := make([]UnparsedRef, 0, len(w.Unparsed))
		for _, u := range w.Unparsed {
			out = append(out, w.unparsedRef(u))
		}
		return out
	})
}

// routeMail returns the job an e-mail is recorded for: the addressed job
// j, or, when a rule routes it by job name, the workspace's job of that
// name (without case). A name that names no job makes the e-mail
// unreadable (in's Status cleared, Reason set) on j.
func (w *workspace) routeMail(j *state.Job, in *MailInput) *state.Job {
	if in.Status == 0 || !in.RouteByName {
		return j
	}
	for _, c := range w.JobList {
		if strings.EqualFold(c.Name, in.JobName) && w.Jobs[c.ID] == c {
			return c
		}
	}
	in.Status = 0
	in.Reason = "parsing rule " + strconv.Quote(in.Rule) + ": no job of the workspace is named " + strconv.Quote(in.JobName)
	return j
}
