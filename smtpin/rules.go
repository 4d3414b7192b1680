package smtpin

import (
	"errors"
	"fmt"

	"backupmon/engine"
	"backupmon/mailparse"
	"backupmon/mailrules"
)

// Parsing rules: a workspace's own rules read a mail before its vendor's
// parser (rules with override) or instead of it (jobs of the vendor
// "custom").

// CustomVendor is the vendor of jobs whose mails only parsing rules read.
const CustomVendor = "custom"

// ruleSets compiles each version of a workspace's rules once.
var ruleSets mailrules.Cache

// readWith decodes raw and reads it: with the workspace's rules first,
// then (no rule took it, the vendor is not custom) with vendor's parser.
// It sets the rule's name and routing on in. It returns the decoded
// message (nil when its header cannot be read) and an
// *mailparse.UnreadableError when the mail is no report.
func readWith(vendor string, rules *engine.MailRules, raw []byte, in *engine.MailInput) (mailparse.Result, *mailparse.Message, error) {
	m, err := mailparse.Read(raw)
	if err != nil {
		return mailparse.Result{}, m, &mailparse.UnreadableError{Reason: err.Error()}
	}
	var set *mailrules.Set
	if rules != nil {
		set = ruleSets.Get(rules.Key, rules.Specs)
	}
	o := set.Read(m, vendor == CustomVendor)
	switch {
	case o.Matched && o.Reason != "":
		return mailparse.Result{}, m, &mailparse.UnreadableError{Reason: o.Reason}
	case o.Matched:
		in.Rule, in.JobName, in.RouteByName = o.Reading.Rule, o.Reading.JobName, o.Route == "jobName"
		return o.Reading.Result, m, nil
	case vendor == CustomVendor:
		return mailparse.Result{}, m, &mailparse.UnreadableError{Reason: "no parsing rule of the workspace matches the mail"}
	}
	res, err := mailparse.ParseMessage(vendor, m)
	return res, m, err
}

// Reread is what became of one unparsed e-mail in a re-read of several:
// the engine's reply, or why it is still unparsed (Reason).
type Reread struct {
	UnparsedID string
	Reply      engine.MailReply
	Reason     string
}

// ReparseMatching reads again every unparsed e-mail of the workspace that
// the rule spec (checked JSON) matches and would read (jobs of vendor
// custom, or any job when the rule overrides), each with the workspace's
// rules in their order as a new mail would be. It returns one Reread per
// e-mail the rule matches, or the engine's error.
func ReparseMatching(eng *engine.Engine, store RawStore, suggest func(vendor, text string) (engine.Suggestion, bool), wsID, spec string) ([]Reread, error) {
	r, _, err := mailrules.Decode([]byte(spec))
	if err != nil {
		return nil, fmt.Errorf("parsing rule: %w", err)
	}
	refs, err := eng.UnparsedRefs(wsID)
	if err != nil {
		return nil, err
	}
	out := []Reread{}
	for _, ref := range refs {
		if ref.Vendor != CustomVendor && !r.Override {
			continue
		}
		raw, err := store.Get(ref.RawRef)
		if err != nil {
			continue // gone meanwhile
		}
		m, err := mailparse.Read(raw)
		if err != nil {
			continue
		}
		if rd, err := mailrules.Try(r, m); err != nil || !rd.Matched {
			continue
		}
		rep, err := Reparse(eng, store, suggest, wsID, ref.ID)
		var ue *mailparse.UnreadableError
		var ee *engine.Error
		switch {
		case errors.As(err, &ue):
			out = append(out, Reread{UnparsedID: ref.ID, Reason: ue.Reason})
		case errors.As(err, &ee):
			out = append(out, Reread{UnparsedID: ref.ID, Reason: ee.Message})
		case err != nil:
			return out, err
		default:
			out = append(out, Reread{UnparsedID: ref.ID, Reply: rep})
		}
	}
	return out, nil
}

// Raw returns the raw message of an unparsed e-mail: the engine's error for
// an unknown one, mailstore.ErrNotFound when it is no longer kept.
func Raw(eng *engine.Engine, store RawStore, wsID, id string) ([]byte, error) {
	ref, err := eng.UnparsedMail(wsID, id)
	if err != nil {
		return nil, err
	}
	return store.Get(ref.RawRef)
}

// RulesMail is the mail path of the parsing-rule pages and endpoints: the
// raw message of an unparsed e-mail (Raw), and the re-read of the ones a
// rule (its checked JSON) matches (ReparseMatching). A nil member means
// mails are not kept.
type RulesMail struct {
	Raw    func(wsID, unparsedID string) ([]byte, error)
	Reread func(wsID, spec string) ([]Reread, error)
}

// RulesFor returns the RulesMail over eng and store.
func RulesFor(eng *engine.Engine, store RawStore) RulesMail {
	return RulesMail{
		Raw: func(wsID, id string) ([]byte, error) { return Raw(eng, store, wsID, id) },
		Reread: func(wsID, spec string) ([]Reread, error) {
			return ReparseMatching(eng, store, Suggestions, wsID, spec)
		},
	}
}
