package notify

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"backupmon/engine"
	"backupmon/jsonx"
	"backupmon/state"
)

// What a ticket, an incident or a card says of an alert: the same facts
// everywhere (client, job, device, the run's status, size and duration,
// the product's error text, the suggestion, a link to the job).

// facts are the facts of a notice, read from its alert and job objects.
type facts struct {
	client, job, device, hostname string
	lastResult                    string
	size, duration                string // "" when the run has none
	errorText, suggestion         string
	jobID, link                   string
}

// noticeFacts reads nt's facts; dashboard is the dashboard's base URL
// ("" none: no link).
func noticeFacts(nt engine.Notice, dashboard string) facts {
	var job struct {
		ID     string `json:"id"`
		Device struct {
			Name     string `json:"name"`
			Hostname string `json:"hostname"`
		} `json:"device"`
		LastResult string `json:"lastResult"`
	}
	var alert struct {
		JobID string `json:"jobId"`
		AI    *struct {
			LikelyCause string `json:"likelyCause"`
		} `json:"ai"`
	}
	_ = jsonx.Unmarshal(nt.Job, &job) // a notice's objects are the engine's own; a test has none
	_ = jsonx.Unmarshal(nt.Alert, &alert)
	f := facts{
		client: oneLine(nt.ClientName), job: oneLine(nt.JobName), device: oneLine(job.Device.Name),
		hostname: oneLine(job.Device.Hostname), lastResult: oneLine(job.LastResult), errorText: strings.TrimSpace(nt.Summary),
		jobID: job.ID,
	}
	if f.jobID == "" {
		f.jobID = alert.JobID
	}
	if alert.AI != nil {
		f.suggestion = oneLine(alert.AI.LikelyCause)
	}
	if nt.SizeBytes >= 0 {
		f.size = humanBytes(nt.SizeBytes)
	}
	if nt.DurationSeconds >= 0 {
		f.duration = humanDuration(nt.DurationSeconds)
	}
	if dashboard != "" && f.jobID != "" {
		f.link = strings.TrimRight(dashboard, "/") + "/jobs/" + f.jobID
	}
	return f
}

// lines are the facts as "Name: value" lines, those without a value left
// out.
func (f facts) lines() [][2]string {
	var out [][2]string
	add := func(k, v string) {
		if v != "" {
			out = append(out, [2]string{k, v})
		}
	}
	add("Client", f.client)
	add("Job", f.job)
	dev := f.device
	if f.hostname != "" && f.hostname != f.device {
		dev = strings.TrimSpace(dev + " (" + f.hostname + ")")
	}
	add("Device", dev)
	add("Last run", f.lastResult)
	add("Size", f.size)
	add("Duration", f.duration)
	add("Error", oneLine(f.errorText))
	if f.suggestion != "" {
		add("Suggestion (a likely cause, not a diagnosis)", f.suggestion)
	}
	add("Job in backupmon", f.link)
	return out
}

// ticketDescription is a new ticket's description: the event, the facts,
// and the alert's id (by which a retry finds the ticket).
func ticketDescription(nt engine.Notice, f facts) string {
	var b strings.Builder
	b.WriteString(headline(nt) + "\n\n")
	for _, l := range f.lines() {
		b.WriteString(l[0] + ": " + l[1] + "\n")
	}
	b.WriteString("\nbackupmon alert " + nt.AlertID.String() + " (severity " + oneLine(nt.Severity) + ")\n")
	return b.String()
}

// eventNote is the note an event adds to a ticket: what happened, with
// the person's note or the alert's text.
func eventNote(nt engine.Notice) string {
	switch nt.Event {
	case state.EventAcknowledged, state.EventSnoozed:
		return nt.Note
	case engine.EventResolved:
		if nt.Note != "" {
			return nt.Note
		}
		return "Recovered: the job reported success and backupmon resolved the alert."
	}
	s := eventWording(nt.Event) + ": " + headline(nt)
	if sev := oneLine(nt.Severity); sev != "" {
		s += " (severity " + sev + ")"
	}
	if t := oneLine(nt.Summary); t != "" {
		s += "\n" + t
	}
	return s
}

// truncate cuts s to at most max runes, ending with "…" when cut.
func truncate(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	return strings.TrimRight(string(r[:max-1]), " ") + "…"
}

// humanBytes writes a size for people: 1.5 GB.
func humanBytes(n int64) string {
	const unit = 1000
	if n < unit {
		return strconv.FormatInt(n, 10) + " B"
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %cB", float64(n)/float64(div), "kMGTPE"[exp])
}

// humanDuration writes seconds for people: 1h 02m 03s.
func humanDuration(s int64) string {
	h, m, sec := s/3600, s/60%60, s%60
	switch {
	case h > 0:
		return fmt.Sprintf("%dh %02dm %02ds", h, m, sec)
	case m > 0:
		return fmt.Sprintf("%dm %02ds", m, sec)
	}
	return fmt.Sprintf("%ds", sec)
}
