package notify

import (
	"strings"
	"unicode"

	"backupmon/engine"
	"backupmon/state"
)

// eventTexts are what a person reads for each event: its wording (the
// Slack message's lead and the e-mail body's event line) and what follows
// the e-mail subject (nothing for the opening).
var eventTexts = map[string]struct{ wording, subjectSuffix string }{
	engine.EventOpened:      {"Alert opened", ""},
	engine.EventRaised:      {"Alert raised", " (alert raised)"},
	engine.EventEscalated:   {"Alert still open (escalated)", " (still open, escalated)"},
	engine.EventResolved:    {"Recovered", " (recovered)"},
	state.EventAcknowledged: {"Alert acknowledged", " (acknowledged)"},
	state.EventSnoozed:      {"Alert snoozed", " (snoozed)"},
	engine.EventTest:        {"Test notification", " (test)"},
	engine.EventSizeDrop:    {"Notice", " (notice, no alert)"},
}

// eventWording is what a person reads for an event (see eventTexts); an
// event it does not know reads as itself, on one line.
func eventWording(event string) string {
	if t, ok := eventTexts[event]; ok {
		return t.wording
	}
	return oneLine(event)
}

// subjectSuffix follows the e-mail subject of every event but the opening
// (see eventTexts); an event it does not know follows in brackets.
func subjectSuffix(event string) string {
	if t, ok := eventTexts[event]; ok {
		return t.subjectSuffix
	}
	return " (" + oneLine(event) + ")"
}

// typeWording says what an alert of type t is about.
func typeWording(t string) string {
	switch t {
	case "failed":
		return "Backup failed"
	case "missing":
		return "Backup missing"
	case "warning":
		return "Backup warning"
	case "integrity":
		return "Integrity check failed"
	case engine.SizeDropType:
		return "Backup size dropped"
	}
	return "Backup alert"
}

// headline is "<what> on <client> / <job>", the heart of the Slack message
// and the e-mail subject, on one line.
func headline(nt engine.Notice) string {
	var b strings.Builder
	b.WriteString(typeWording(nt.AlertType))
	client, job := oneLine(nt.ClientName), oneLine(nt.JobName)
	switch {
	case client != "" && job != "":
		b.WriteString(" on " + client + " / " + job)
	case client != "" || job != "":
		b.WriteString(" on " + client + job)
	}
	return b.String()
}

// slackText is the Slack message of nt:
// "[<severity>] <event wording>: <headline> — <summary>", with the
// characters Slack reads as markup (& < >) escaped as Slack asks, so that a
// client named "<!channel>" cannot mention a whole channel.
func slackText(nt engine.Notice) string {
	var b strings.Builder
	if sev := oneLine(nt.Severity); sev != "" {
		b.WriteString("[" + sev + "] ")
	}
	b.WriteString(eventWording(nt.Event) + ": " + headline(nt))
	if s := oneLine(nt.Summary); s != "" {
		b.WriteString(" — " + s)
	}
	return slackEscape.Replace(b.String())
}

var slackEscape = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// emailSubject is the e-mail's subject, unencoded:
// "[backupmon] <severity>: <headline>[ (<event>)]".
func emailSubject(nt engine.Notice) string {
	s := "[backupmon] "
	if sev := oneLine(nt.Severity); sev != "" {
		s += sev + ": "
	}
	return s + headline(nt) + subjectSuffix(nt.Event)
}

// oneLine returns s with every run of white space and control characters
// (CR and LF among them) turned into one space, trimmed, and invalid UTF-8
// replaced: safe in a header, a subject or a chat line.
func oneLine(s string) string {
	return strings.Join(strings.FieldsFunc(strings.ToValidUTF8(s, "\uFFFD"), func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsControl(r) || r == '\u2028' || r == '\u2029'
	}), " ")
}
