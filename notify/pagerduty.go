package notify

import (
	"context"
	"net/http"
	"strings"

	"backupmon/engine"
	"backupmon/jsonx"
	"backupmon/state"
)

// PagerDuty Events API v2 (decisions.md 7, the pages cited there): one
// POST of an event to /v2/enqueue with the integration's routing_key;
// event_action trigger on open, raise and escalation, acknowledge on
// acknowledge and snooze, resolve on resolve; dedup_key our alert id, so
// that every event of an alert is about one PagerDuty alert and a retried
// trigger adds nothing.

// DefaultPagerDutyURL is the Events API v2 endpoint.
const DefaultPagerDutyURL = "https://events.pagerduty.com/v2/enqueue"

// pdSummaryMax is the most characters payload.summary takes.
const pdSummaryMax = 1024

// pdMessage reads the Events API's error body: {"status","message",
// "errors":[...]}.
func pdMessage(b []byte) string {
	var e struct {
		Message string   `json:"message"`
		Errors  []string `json:"errors"`
	}
	if jsonx.Unmarshal(b, &e) != nil {
		return ""
	}
	if len(e.Errors) > 0 {
		return e.Message + ": " + strings.Join(e.Errors, "; ")
	}
	return e.Message
}

// pdAction is the event_action of an event.
func pdAction(event string) string {
	switch event {
	case state.EventAcknowledged, state.EventSnoozed:
		return "acknowledge"
	case engine.EventResolved:
		return "resolve"
	}
	return "trigger"
}

// PagerDutyBody returns the event nt sends to PagerDuty; dashboard is the
// dashboard's base URL for the job's link ("" none).
func PagerDutyBody(nt engine.Notice, dashboard string, dedupKey string) []byte {
	action := pdAction(nt.Event)
	ev := map[string]any{"routing_key": secretOf(nt.Channel, "routingKey"), "event_action": action, "dedup_key": dedupKey}
	if action == "trigger" {
		f := noticeFacts(nt, dashboard)
		details := map[string]string{"event": nt.Event, "alertId": nt.AlertID.String()}
		for _, l := range f.lines() {
			details[l[0]] = l[1]
		}
		severity := "warning"
		if nt.Severity == "critical" {
			severity = "critical"
		}
		source := f.device
		if f.hostname != "" {
			source = f.hostname
		}
		if source == "" {
			source = f.client
		}
		if source == "" {
			source = "backupmon"
		}
		payload := map[string]any{
			"summary": truncate(headline(nt), pdSummaryMax), "source": source, "severity": severity,
			"component": f.job, "group": f.client, "class": nt.AlertType, "custom_details": details,
		}
		ev["payload"] = payload
		ev["client"] = "backupmon"
		if f.link != "" {
			ev["client_url"] = f.link
			ev["links"] = []map[string]string{{"href": f.link, "text": "The job in backupmon"}}
		}
	}
	return jsonBody(ev)
}

func (n *Notifier) pagerDutyURL(ch engine.NoticeChannel) string {
	if u := settingOf(ch, "url"); u != "" {
		return u
	}
	return DefaultPagerDutyURL
}

// sendPagerDuty sends nt's event; its answer's dedup_key is returned.
func (n *Notifier) sendPagerDuty(ctx context.Context, nt engine.Notice, dedupKey string) (string, error) {
	b, err := n.call(ctx, apiRequest{method: http.MethodPost, url: n.pagerDutyURL(nt.Channel), body: PagerDutyBody(nt, n.dashboard, dedupKey)}, pdMessage)
	if err != nil {
		return "", err
	}
	var ok struct {
		Message  string `json:"message"`
		DedupKey string `json:"dedup_key"`
	}
	_ = jsonx.Unmarshal(b, &ok)
	return ok.Message, nil
}
