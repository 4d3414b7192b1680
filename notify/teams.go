package notify

import (
	"context"
	"net/http"

	"backupmon/engine"
	"backupmon/jsonx"
)

// Microsoft Teams (decisions.md 7, the pages cited there): a POST to the
// channel's incoming webhook or Workflows URL of a message whose one
// attachment is an Adaptive Card: the event and headline, the alert's
// facts, and a button that opens the job in the dashboard. Workflows take
// Adaptive Cards only.

// TeamsBody returns the message a Teams channel receives for nt.
func TeamsBody(nt engine.Notice, dashboard string) []byte {
	f := noticeFacts(nt, dashboard)
	var factSet []map[string]string
	if sev := oneLine(nt.Severity); sev != "" {
		factSet = append(factSet, map[string]string{"title": "Severity", "value": sev})
	}
	for _, l := range f.lines() {
		if l[0] != "Job in backupmon" {
			factSet = append(factSet, map[string]string{"title": l[0], "value": l[1]})
		}
	}
	card := map[string]any{
		"$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
		"type":    "AdaptiveCard",
		"version": "1.4",
		"body": []any{
			map[string]any{"type": "TextBlock", "text": eventWording(nt.Event), "weight": "Bolder", "size": "Medium", "wrap": true},
			map[string]any{"type": "TextBlock", "text": headline(nt), "wrap": true},
			map[string]any{"type": "FactSet", "facts": factSet},
		},
	}
	if f.link != "" {
		card["actions"] = []any{map[string]any{"type": "Action.OpenUrl", "title": "Open the job", "url": f.link}}
	}
	msg := map[string]any{
		"type":        "message",
		"attachments": []any{map[string]any{"contentType": "application/vnd.microsoft.card.adaptive", "contentUrl": nil, "content": card}},
	}
	return jsonBody(msg)
}

// teamsMessage reads a Workflows error body: {"error":{"code","message"}}.
func teamsMessage(b []byte) string {
	var e struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if jsonx.Unmarshal(b, &e) != nil {
		return ""
	}
	return e.Error.Message
}

func (n *Notifier) sendTeams(ctx context.Context, nt engine.Notice) error {
	_, err := n.call(ctx, apiRequest{method: http.MethodPost, url: secretOf(nt.Channel, "url"), body: TeamsBody(nt, n.dashboard)}, teamsMessage)
	return err
}
